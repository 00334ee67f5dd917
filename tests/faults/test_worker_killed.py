"""A Celery worker killed with SIGKILL in the middle of a tick, and in the middle of a
sync: what it was doing is rolled back whole or finished by the next run, nothing is
doubled or lost, the overview says what is wrong while it lasts, and everything runs
again without anyone once a worker is back."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from overview.controller.sources_sync import SYNC
from overview.models import Notification
from overview.tasks import sync_sources
from packages.models import EventKind, Lease, PhasingEvent, PhasingState, Publication, WriteBack
from tests.faults.worker import (
    overview_faults,
    sent_until,
    tick_in_flight,
    wait_for,
    workers,
    write_in_flight,
)
from tests.test_deployment import (
    PHASING,
    REGRESSED,
    _always_due,
    _archive,
    assert_each_step_once,
)

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs the real broker (REDIS_URL)"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="worker processes: PostgreSQL"),
]


def _tasks(log: str, task: str, word: str) -> int:
    """How many of that task the worker's log says were received, or succeeded."""
    return sum(1 for line in log.splitlines() if f"overview.tasks.{task}[" in line and word in line)


def _advanced_since(moment) -> int:
    return (
        PhasingEvent.objects.filter(created_at__gt=moment, kind=EventKind.ADVANCED)
        .values("publication")
        .distinct()
        .count()
    )


def test_a_worker_killed_mid_tick_leaves_no_step_event_or_email_doubled_or_lost(
    tmp_path, anonymous, settings
):
    settings.PHASING_TICK_INTERVAL = timedelta(seconds=1)  # what the overview reads here
    publications = _archive()
    with (
        _always_due(),
        workers(tmp_path, PHASING_TICK_INTERVAL="1", PHASING_SYNC_INTERVAL="3600") as running,
    ):
        running.start("worker-1")
        running.start("beat", "beat")
        # The regressed updates halt and their emails go out; the others step on.
        assert wait_for(
            lambda: Notification.objects.filter(sent_at__isnull=False).count() == 2 * REGRESSED,
            60,
        ), running.logs()
        assert wait_for(lambda: tick_in_flight("worker-1"), 30, every=0.01), running.logs()
        running.kill("worker-1")
        killed_at = timezone.now()
        steps_at_kill = PhasingEvent.objects.count()

        # While no worker runs: nothing moves, and the overview says the ticks stopped.
        assert wait_for(lambda: "the controller" in overview_faults(anonymous), 20)
        assert PhasingEvent.objects.count() == steps_at_kill

        # A worker is back (a service manager restarts it): ticks resume by themselves.
        running.start("worker-2")
        assert wait_for(lambda: _advanced_since(killed_at) >= PHASING - REGRESSED, 60), (
            running.logs()
        )
        assert wait_for(lambda: overview_faults(anonymous) == "", 10)

    # No step twice, nothing half done.
    assert_each_step_once(publications)
    # Each regressed update halted once; its signer and uploader were emailed once each.
    assert Publication.objects.filter(state=PhasingState.HALTED).count() == REGRESSED
    assert PhasingEvent.objects.filter(kind=EventKind.HALTED).count() == REGRESSED
    assert (
        Notification.objects.count() == Notification.objects.filter(sent_at__isnull=False).count()
    )
    assert Notification.objects.count() == 2 * REGRESSED
    subjects = [
        line
        for mail in (tmp_path / "mail").iterdir()
        for line in mail.read_text().splitlines()
        if line.startswith("Subject: [phasing]")
    ]
    assert len(subjects) == 2 * REGRESSED and len(set(subjects)) == REGRESSED
    # No write-back failed; one whose task the killed worker held waits for the reconcile.
    assert not PhasingEvent.objects.filter(write_back=WriteBack.FAILED).exists()


def test_a_worker_killed_mid_sync_holds_the_next_sync_for_one_lease_then_it_finishes(
    tmp_path, anonymous
):
    with workers(
        tmp_path,
        PHASING_SIMULATOR_PACKAGES="60",
        PHASING_SYNC_LEASE="5",
        PHASING_TICK_INTERVAL="3600",
    ) as running:
        running.start("worker-1")
        running.start("worker-2")
        for name in ("worker-1", "worker-2"):
            assert wait_for(lambda name=name: "ready" in running.log(name), 30), running.logs()
        assert sent_until(
            sync_sources.delay,
            lambda: (
                Lease.objects.filter(name=SYNC).exclude(holder="").exists()
                and any(write_in_flight(w) for w in running.processes)
            ),
            30,
        ), running.logs()
        victim = next(w for w in running.processes if write_in_flight(w))  # mid-sync
        running.kill(victim)
        survivor = "worker-2" if victim == "worker-1" else "worker-1"

        # The next sync finds the lock of the dead one: skipped, and the overview says so.
        assert sent_until(
            sync_sources.delay, lambda: "sync skipped" in overview_faults(anonymous), 30
        ), running.logs()
        assert "the periodic sync" in overview_faults(anonymous)

        # The one after the lease (beat sends one each interval) runs and finishes it.
        assert wait_for(
            lambda: not Lease.objects.filter(name=SYNC, expires_at__gt=timezone.now()).exists(),
            10,
        )
        assert sent_until(
            sync_sources.delay, lambda: overview_faults(anonymous) == "", 30, again=15
        ), running.logs()
        assert wait_for(lambda: not Lease.objects.exclude(holder="").exists(), 30)
        synced = Publication.objects.count()

        # A sync over the same source again adds nothing: the killed one left no half.
        done = _tasks(running.log(survivor), "sync_sources", "succeeded")
        assert sent_until(
            sync_sources.delay,
            lambda: _tasks(running.log(survivor), "sync_sources", "succeeded") > done,
            30,
            again=15,
        ), running.logs()
        assert wait_for(lambda: not Lease.objects.exclude(holder="").exists(), 30)

    assert synced > 60
    assert Publication.objects.count() == synced
    published = Counter(
        PhasingEvent.objects.filter(kind=EventKind.PUBLISHED).values_list(
            "publication_id", flat=True
        )
    )
    assert set(published.values()) == {1}
    assert len(published) == synced
