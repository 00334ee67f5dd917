"""What is failing and since when, as the overview and the footer say it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from overview.monitoring.status import service_status
from packages.models import SourceSync
from tests.packages.services.sync_fakes import T0

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_a_sync_that_stopped_finishing_shows_as_stalled_though_it_never_failed(settings):
    settings.PHASING_CRASH_DATA_MAX_AGE = timedelta(minutes=30)
    SourceSync.objects.create(name="simulator:crashes", kind="crashes", last_success_at=T0)
    assert service_status(now=T0 + timedelta(minutes=29)).faults == []
    [fault] = service_status(now=T0 + timedelta(minutes=31)).faults
    assert fault.what == "simulator:crashes (crashes)"
    assert (fault.since, fault.detail) == (T0, "no sync has finished since")


def test_two_beats_scheduling_ticks_show_as_a_fault(settings):
    from packages.services.faults import beat_seen

    settings.PHASING_TICK_INTERVAL = timedelta(minutes=5)
    beat_seen("host-a:101", now=T0)
    beat_seen("host-a:101", now=T0 + timedelta(minutes=5))
    assert service_status(now=T0 + timedelta(minutes=5)).faults == []
    beat_seen("host-b:202", now=T0 + timedelta(minutes=6))
    beat_seen("host-a:101", now=T0 + timedelta(minutes=10))  # both go on
    [fault] = service_status(now=T0 + timedelta(minutes=10)).faults
    assert fault.what == "2 beats are running"
    assert fault.since == T0 + timedelta(minutes=6)
    assert fault.detail == "host-a:101, host-b:202"
    # The first one stopped: one beat again once it has been quiet for two intervals.
    beat_seen("host-b:202", now=T0 + timedelta(minutes=21))
    assert service_status(now=T0 + timedelta(minutes=21)).faults == []


def test_a_beat_taking_over_from_one_that_stopped_is_not_two_beats(settings):
    from packages.services.faults import beat_seen

    settings.PHASING_TICK_INTERVAL = timedelta(minutes=5)
    beat_seen("host-a:101", now=T0)
    beat_seen("host-a:101", now=T0 + timedelta(minutes=5))
    # host-a lost its database connection; host-b took the lock and schedules from now.
    beat_seen("host-b:202", now=T0 + timedelta(minutes=7))
    beat_seen("host-b:202", now=T0 + timedelta(minutes=12))

    assert service_status(now=T0 + timedelta(minutes=7)).faults == []
    assert service_status(now=T0 + timedelta(minutes=12)).faults == []
