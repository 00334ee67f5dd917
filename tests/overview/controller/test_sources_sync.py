"""The periodic sync holds a lease that dies with its holder, and a skipped or stalled
sync shows as the fault it is."""

from __future__ import annotations

from datetime import timedelta

import pytest

from overview.controller import sources_sync as syncing
from overview.monitoring.status import service_status
from packages.models import Lease, SourceSync
from packages.services.leases import Held, lease_acquire
from tests.overview.controller.fakes import ScriptedCrashes
from tests.packages.services.sync_fakes import T0, ListSource, record

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

LEASE = timedelta(minutes=5)


@pytest.fixture
def sources(monkeypatch, settings):
    settings.PHASING_SYNC_LEASE = LEASE
    monkeypatch.setattr(syncing, "publication_source", lambda: ListSource([record()]))
    monkeypatch.setattr(syncing, "crash_source", lambda: ScriptedCrashes())


def test_a_sync_takes_the_lease_and_gives_it_back(sources):
    result = syncing.sources_sync(now=T0)
    assert result["publications"]["new"] == 1
    lease = Lease.objects.get(name="sync")
    assert lease.holder == "" and lease.expires_at is None


def test_a_sync_while_another_runs_is_skipped_and_shown_as_a_fault(sources):
    other = lease_acquire("sync", duration=LEASE, now=T0)
    assert isinstance(other, Held)

    assert syncing.sources_sync(now=T0 + timedelta(minutes=1)) == {"skipped": True}

    [fault] = service_status(now=T0 + timedelta(minutes=1)).faults
    assert fault.what == "the periodic sync" and fault.since == T0 + timedelta(minutes=1)
    assert "another sync has held its lock since 2026-12-01 12:00 UTC" in fault.detail
    other.release()
    syncing.sources_sync(now=T0 + timedelta(minutes=2))
    assert service_status(now=T0 + timedelta(minutes=2)).faults == []


def test_a_lock_whose_holder_was_killed_is_free_once_its_lease_runs_out(sources):
    killed = lease_acquire("sync", duration=LEASE, now=T0)  # never renewed, never released
    assert isinstance(killed, Held)
    assert syncing.sources_sync(now=T0 + LEASE - timedelta(seconds=1)) == {"skipped": True}

    result = syncing.sources_sync(now=T0 + LEASE)

    assert result["publications"]["new"] == 1
    assert not killed.renew(now=T0 + LEASE + timedelta(minutes=1))  # it knows it lost it


def test_a_holder_that_keeps_working_keeps_its_lease(sources):
    held = lease_acquire("sync", duration=LEASE, now=T0)
    assert isinstance(held, Held)
    for minute in range(1, 20):
        assert held.renew(now=T0 + timedelta(minutes=minute))
    assert not isinstance(
        lease_acquire("sync", duration=LEASE, now=T0 + timedelta(minutes=20)), Held
    )


def test_the_tick_task_records_the_beat_that_sent_it(monkeypatch):
    from overview import tasks

    monkeypatch.setattr(tasks.controller, "tick", lambda: [])
    tasks.tick.apply(headers={"phasing_beat": "host-a:101"})
    tasks.tick.apply(headers={"phasing_beat": "host-b:202"})
    assert set(SourceSync.objects.filter(kind="beat").values_list("name", flat=True)) == {
        "beat:host-a:101",
        "beat:host-b:202",
    }
