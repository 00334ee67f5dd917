"""Two workers running due scheduled changes at once run each change once.

Real commits on the configured database; on PostgreSQL the second worker skips the row the
first one holds (and finds it done once the lock is gone), so the update is paused once.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections

from packages.models import EventKind, PhasingEvent, ScheduledAction, ScheduledState
from packages.services import rollouts
from packages.services.scheduled import scheduled_change_create, scheduled_changes_run_due
from tests.factories import NOW, PublicationFactory


@pytest.mark.django_db(transaction=True)
def test_two_runs_at_once_run_a_change_once(monkeypatch, archive_admin_user):
    if connection.vendor != "postgresql":
        pytest.skip("row locks are what is under test; SQLite serialises writers instead")
    publications = [PublicationFactory() for _ in range(3)]
    admin = archive_admin_user  # still an archive admin when the changes run
    changes = [
        scheduled_change_create(
            action=ScheduledAction.PAUSE,
            publication=p,
            actor=admin,
            reason="weekend",
            run_at=NOW + timedelta(hours=1),
            now=NOW,
        )
        for p in publications
    ]
    # Both workers are inside a change's transaction at the same time, holding its lock.
    barrier = threading.Barrier(2, timeout=2)
    pause = rollouts.publication_pause

    def slow_pause(**kwargs):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass  # the other worker found nothing left to run
        return pause(**kwargs)

    monkeypatch.setattr(rollouts, "publication_pause", slow_pause)
    ran: list[list[int]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            ran.append([c.pk for c in scheduled_changes_run_due(now=NOW + timedelta(hours=2))])
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
    assert sorted(pk for one in ran for pk in one) == sorted(c.pk for c in changes)
    assert all(ran), "both workers took part"
    assert PhasingEvent.objects.filter(kind=EventKind.PAUSED).count() == 3
    for change in changes:
        change.refresh_from_db()
        assert change.state == ScheduledState.DONE
