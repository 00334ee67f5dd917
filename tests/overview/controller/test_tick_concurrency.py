"""Two ticks at once (two workers, or beat overlapping itself) never step or email twice.

Runs against the configured database with real commits; on PostgreSQL the second tick
waits on the first one's row locks, then sees its result.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.db import connection, connections

from overview.controller import tick as controller
from overview.evidence.sources.base import CrashAnswer, ProblemRecord
from overview.models import Notification
from packages.models import EventKind, PhasingEvent, PhasingState, Publication
from tests.factories import PersonFactory, PublicationFactory

T0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)


class BarrierCrashes:
    """Both ticks fetch crash data, then race into their transactions together."""

    name = "barrier"

    def __init__(self, halting: str, parties: int) -> None:
        self.halting = halting
        self.barrier = threading.Barrier(parties, timeout=20)

    def problems(self, queries, *, now):
        self.barrier.wait()
        bucket = ProblemRecord(
            kind="new_bucket", signature="sig:race", function="race", system_count=5
        )
        return {
            q: CrashAnswer(problems=(bucket,) if q.source_package == self.halting else ())
            for q in queries
        }

    def reports(self, *, since, now):
        return iter(())


@pytest.mark.django_db(transaction=True)
def test_two_ticks_at_once_step_once_and_email_once(emails_sent_at_commit):
    if connection.vendor != "postgresql":
        pytest.skip("row locks are what is under test; SQLite serialises writers instead")
    steady = PublicationFactory(last_increase_at=T0)
    regressing = PublicationFactory(
        last_increase_at=T0,
        signer=PersonFactory(email="signer@example.org"),
        uploader=PersonFactory(email="uploader@example.org"),
    )
    crashes = BarrierCrashes(halting=regressing.source_package.name, parties=2)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            controller.tick(now=T0 + timedelta(hours=6), crash_source=crashes)
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors

    steady.refresh_from_db()
    regressing.refresh_from_db()
    assert steady.phased_update_percentage == 20
    assert PhasingEvent.objects.filter(publication=steady, kind=EventKind.ADVANCED).count() == 1
    assert regressing.state == PhasingState.HALTED
    assert PhasingEvent.objects.filter(publication=regressing, kind=EventKind.HALTED).count() == 1
    assert Notification.objects.count() == 2
    assert sorted(m.to[0] for m in mail.outbox) == ["signer@example.org", "uploader@example.org"]
    assert Publication.objects.count() == 2
