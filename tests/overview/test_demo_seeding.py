"""While seed_demo replays the demo's week the site answers at once, says how far the
replay is, and the live tick, sync and reconcile wait for it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.management import call_command

from overview import demo_seeding, tasks
from packages.models import PhasingEvent, Publication
from packages.services.leases import lease_acquire
from tests.factories import NOW, PublicationFactory

pytestmark = pytest.mark.django_db

TINY = ("--packages", "20", "--days", "1", "--step-hours", "6", "--baseline-days", "1")


@pytest.fixture(autouse=True)
def no_progress_left():
    demo_seeding.progress_report(None)
    yield
    cache.clear()


def test_every_page_says_how_far_the_replay_is_while_it_runs(anonymous):
    demo_seeding.progress_report(demo_seeding.Progress(done=14, total=56, days=7))

    html = anonymous.get("/machine/").content.decode()

    assert "The demo is being seeded" in html
    assert "replaying the last 7 days of the simulated archive (25 % done)" in html
    demo_seeding.progress_report(None)
    assert "being seeded" not in anonymous.get("/machine/").content.decode()


def test_the_live_tick_sync_and_reconcile_wait_while_a_replay_holds_its_lease(frozen_now):
    publication = PublicationFactory(
        phased_update_percentage=10, last_increase_at=NOW.replace(hour=0)
    )
    held = demo_seeding.replay_claim(now=NOW)
    assert held is not None and demo_seeding.replay_running(now=NOW)

    assert tasks.tick.apply().get() == 0
    assert tasks.sync_sources.apply().get() == {}
    assert tasks.reconcile.apply().get() == {}
    assert not PhasingEvent.objects.filter(publication=publication).exists()

    held.release()
    assert not demo_seeding.replay_running(now=NOW)
    assert tasks.tick.apply().get() >= 1


def test_a_second_seed_waits_for_the_replay_that_holds_the_lease(capsys):
    assert isinstance(
        lease_acquire(demo_seeding.LEASE, duration=demo_seeding.LEASE_DURATION), object
    )

    call_command("seed_demo", *TINY)

    assert "Another seed_demo is replaying" in capsys.readouterr().out
    assert not Publication.objects.exists()


def test_the_replay_reports_its_progress_and_lets_go_when_done(monkeypatch, archive_admin_user):
    reported: list[demo_seeding.Progress | None] = []
    monkeypatch.setattr(demo_seeding, "progress_report", reported.append)

    call_command("seed_demo", *TINY)

    steps = [p for p in reported if p is not None]
    # From the start (the banner shows while the reports before the replay are read).
    assert [p.done for p in steps] == [0, 1, 2, 3, 4] and {p.total for p in steps} == {4}
    assert reported[-1] is None
    assert not demo_seeding.replay_running(now=NOW)


def test_a_replay_stopped_part_way_goes_on_from_there_with_if_empty(
    monkeypatch, archive_admin_user
):
    from overview.controller import tick as controller
    from packages.models import SourceSync

    real_tick, ticks = controller.tick, []

    def tick_then_stop(**kwargs):
        ticks.append(kwargs["now"])
        if len(ticks) == 3:
            raise KeyboardInterrupt  # make run stopped while seeding
        return real_tick(**kwargs)

    monkeypatch.setattr(controller, "tick", tick_then_stop)
    with pytest.raises(KeyboardInterrupt):
        call_command("seed_demo", *TINY)
    replay = SourceSync.objects.get(name="seed_demo:replay")
    assert replay.last_summary["finished"] is False and replay.last_success_at == ticks[1]
    assert not demo_seeding.replay_running(now=NOW)

    call_command("seed_demo", "--if-empty", *TINY)

    replay.refresh_from_db()
    assert replay.last_summary["finished"] is True
    # The tick that was stopped is replayed, then the rest; none twice that had finished.
    first = ticks[0]
    assert ticks == [first + timedelta(hours=6 * n) for n in (0, 1, 2, 2, 3)]
    assert Publication.objects.exists()
