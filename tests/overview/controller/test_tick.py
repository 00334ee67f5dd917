"""The controller's rules, with injected time and a crash source the test controls."""

from __future__ import annotations

import gc
from datetime import timedelta

import pytest
from django.core import mail
from django.db import connection

from overview.controller import tick as controller
from overview.evidence.sources.base import CrashAnswer
from overview.judges.local import LocalCrashSource
from overview.models import Notification
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState, WriteBack
from packages.services import (
    publication_pause,
)
from packages.sources.simulator import Simulator
from tests.factories import (
    PersonFactory,
    PublicationFactory,
    UserFactory,
)
from tests.overview.controller.fakes import HOURS, T0, new_bucket, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_it_advances_one_step_when_the_interval_has_passed(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 20
    event = publication.events.get()
    assert (event.kind, event.old_percentage, event.new_percentage, event.actor_name) == (
        EventKind.ADVANCED,
        10,
        20,
        "controller",
    )


def test_it_holds_until_the_interval_has_passed(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    [decision] = tick(crashes, T0 + 5 * HOURS + timedelta(minutes=59))
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert decision.action == "hold"
    assert publication.hold_reason == HoldReason.WAITING
    assert "→ 20% at 2026-12-01 06:00" in publication.hold_detail


def test_catch_up_after_downtime_is_one_step_per_tick(crashes):
    publication = PublicationFactory(phased_update_percentage=30, last_increase_at=T0)
    after_two_days = T0 + 48 * HOURS
    tick(crashes, after_two_days)
    tick(crashes, after_two_days + timedelta(minutes=5))
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 40
    assert publication.events.count() == 1


def test_a_clean_update_goes_from_10_to_100_in_exactly_54_hours(crashes):
    publication = PublicationFactory(date_published=T0, last_increase_at=T0)
    seen = {}
    for hour in range(0, 61):
        tick(crashes, T0 + hour * HOURS)
        publication.refresh_from_db()
        seen[hour] = publication.phased_update_percentage
    assert [seen[h] for h in range(0, 55, 6)] == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert seen[53] == 90
    # At 100% the sequential judge still watches it for a week, then it is complete.
    assert publication.state == PhasingState.PHASING
    tick(crashes, T0 + 54 * HOURS + timedelta(days=3))
    publication.refresh_from_db()
    assert publication.state == PhasingState.COMPLETE
    assert publication.completed_at == T0 + 54 * HOURS + timedelta(days=3)
    assert publication.events.filter(kind=EventKind.COMPLETED).count() == 1


def test_the_controller_never_lifts_a_pause_a_person_set(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    publication_pause(
        publication=publication,
        actor=UserFactory(username="ana"),
        reason="checking a report",
        now=T0,
    )
    for hour in range(1, 20):
        tick(crashes, T0 + hour * HOURS)
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PAUSED, 10)
    assert publication.hold_reason == HoldReason.PAUSED
    assert publication.hold_detail == "checking a report"


def test_crash_data_unavailable_holds_and_remembers_since_when(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(
        error="crash data unavailable: timeout"
    )
    tick(crashes, T0 + 6 * HOURS)
    tick(crashes, T0 + 12 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert publication.hold_reason == HoldReason.CRASH_DATA_UNAVAILABLE
    assert publication.crash_data_unavailable_since == T0 + 6 * HOURS
    crashes.answers.clear()
    tick(crashes, T0 + 13 * HOURS)
    publication.refresh_from_db()
    assert publication.crash_data_unavailable_since is None
    assert publication.phased_update_percentage == 20


def test_a_broken_crash_source_holds_every_update_and_the_tick_goes_on(crashes):
    publications = [PublicationFactory(last_increase_at=T0) for _ in range(3)]
    crashes.failure = ConnectionError("tracker down")
    decisions = tick(crashes, T0 + 6 * HOURS)
    assert [d.hold_reason for d in decisions] == [HoldReason.CRASH_DATA_UNAVAILABLE] * 3
    for publication in publications:
        publication.refresh_from_db()
        assert publication.phased_update_percentage == 10


def test_ticking_twice_at_the_same_moment_changes_nothing_the_second_time(crashes):
    publications = [PublicationFactory(last_increase_at=T0) for _ in range(3)]
    crashes.answers[publications[0].source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + 6 * HOURS)
    before = [
        (p.phased_update_percentage, p.state) for p in type(publications[0]).objects.order_by("pk")
    ]
    events = sum(p.events.count() for p in publications)
    tick(crashes, T0 + 6 * HOURS)
    after = [
        (p.phased_update_percentage, p.state) for p in type(publications[0]).objects.order_by("pk")
    ]
    assert before == after
    assert sum(p.events.count() for p in publications) == events
    assert Notification.objects.count() == 2


# 600: past the 500 rows that one insert statement used to hold. PostgreSQL only: SQLite
# caps the variables of a statement, so Django splits its inserts there.
@pytest.mark.parametrize(
    "count",
    [
        5,
        60,
        pytest.param(
            600,
            marks=pytest.mark.skipif(
                connection.vendor != "postgresql", reason="SQLite splits large inserts"
            ),
        ),
    ],
)
def test_a_tick_costs_the_same_number_of_queries_whatever_the_number_of_updates(
    crashes, django_assert_num_queries, count
):
    if connection.vendor != "postgresql":
        pytest.skip("on SQLite, bulk writes come in batches under its 999-parameter limit")
    publications = [PublicationFactory(last_increase_at=T0) for _ in range(count)]
    for publication in publications[::5]:
        crashes.answers[publication.source_package.name] = CrashAnswer(
            problems=(new_bucket(publication.source_package.name),)
        )
    # 0 the releases in phasing (a tick decides one release at a time; here one), then for
    # the release: 1 candidates, 2 savepoint, 3 locked rows (as values onto the candidates), 4
    # policies, 5 savepoint of the problems, 6-8 buckets (read, create, read again), 9-11
    # problems (read, create, the active ones with their covering overrides), 12 release
    # of that savepoint, 13 one UPDATE of every changed row, 14 events, 15 assessments, 16
    # the halted updates' people, 17 notifications (emails are rendered and sent by a task
    # each, after commit), then the savepoint's release
    with django_assert_num_queries(19):
        tick(crashes, T0 + 6 * HOURS)


def test_an_outage_keeps_the_reason_a_person_gave_for_a_pause(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    publication_pause(
        publication=publication, actor=UserFactory(), reason="asking upstream", now=T0
    )
    crashes.answers[publication.source_package.name] = CrashAnswer(
        error="crash data unavailable: timeout"
    )
    tick(crashes, T0 + HOURS)
    crashes.answers.clear()
    tick(crashes, T0 + 2 * HOURS)
    publication.refresh_from_db()
    assert (publication.hold_reason, publication.hold_detail) == (
        HoldReason.PAUSED,
        "asking upstream",
    )
    assert publication.crash_data_unavailable_since is None


def test_a_broker_down_at_commit_still_sends_the_halt_emails_and_the_reconcile_writes_back(
    emails_sent_at_commit, crashes, monkeypatch, django_capture_on_commit_callbacks
):
    from packages import tasks

    publication = PublicationFactory(
        last_increase_at=T0, signer=PersonFactory(email="signer@example.org")
    )
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))

    def broker_down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.write_back_percentages, "delay", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + HOURS)
    assert "signer@example.org" in [m.to[0] for m in mail.outbox]
    halt = publication.events.get(kind=EventKind.HALTED)
    assert halt.write_back == WriteBack.PENDING

    from packages.services.writeback import percentages_reconcile

    simulator = Simulator(seed=1)
    percentages_reconcile(now=T0 + 2 * HOURS, source=simulator)
    halt.refresh_from_db()
    assert halt.write_back == WriteBack.APPLIED
    assert simulator.writes[-1][-1] == 0


def test_stale_crash_data_holds_the_update():
    from packages.models import SourceSync

    publication = PublicationFactory(last_increase_at=T0)
    source = LocalCrashSource(
        feed=type("Feed", (), {"name": "feed", "reports": lambda self, **kw: iter(())})()
    )
    [decision] = tick(source, T0 + 6 * HOURS)
    assert decision.hold_reason == HoldReason.CRASH_DATA_UNAVAILABLE
    assert "never been synced" in decision.detail
    SourceSync.objects.create(
        name="feed:crashes", kind="crashes", last_success_at=T0 + 5 * HOURS + timedelta(minutes=50)
    )
    tick(source, T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 20
    [decision] = tick(source, T0 + 12 * HOURS)
    assert "last synced at 2026-12-01 05:50" in decision.detail


def test_a_publication_the_controller_cannot_decide_for_holds_and_says_why(crashes, monkeypatch):
    publication = PublicationFactory(last_increase_at=T0)
    other = PublicationFactory(last_increase_at=T0)

    def broken(publication, *args, **kwargs):
        if publication.pk == other.pk:
            raise ValueError("bad policy row")
        return real(publication, *args, **kwargs)

    real = controller.outcome_of
    monkeypatch.setattr(controller, "outcome_of", broken)
    tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    other.refresh_from_db()
    assert publication.phased_update_percentage == 20
    assert (other.phased_update_percentage, other.hold_reason) == (10, HoldReason.CONTROLLER_ERROR)
    assert "bad policy row" in other.hold_detail


def test_a_pause_a_person_set_while_the_tick_judged_is_what_the_tick_decides_on(
    crashes, monkeypatch
):
    """The tick judges from rows read before its lock; a row a person changed in between
    is read again under the lock, so the tick holds the update rather than raising it."""
    from overview.controller import together

    publication = PublicationFactory(last_increase_at=T0)
    untouched = PublicationFactory(last_increase_at=T0)
    needs = together.tick_needs

    def pause_meanwhile(candidates):
        publication_pause(publication=publication, actor=UserFactory(), reason="wait", now=T0)
        return needs(candidates)

    monkeypatch.setattr(together, "tick_needs", pause_meanwhile)
    tick(crashes, T0 + 6 * HOURS)

    publication.refresh_from_db()
    untouched.refresh_from_db()
    assert (publication.phased_update_percentage, publication.hold_reason) == (10, "paused")
    assert untouched.phased_update_percentage == 20


def test_a_release_is_decided_with_the_cyclic_collector_paused_and_it_runs_again_after(
    crashes, monkeypatch
):
    # Its hundreds of thousands of objects at 20,000 updates cost a third of the tick's
    # CPU in the collector's passes over them (packages.collector).
    PublicationFactory(last_increase_at=T0)
    seen = []
    ask = crashes.problems

    def asked(queries, *, now):
        seen.append(gc.isenabled())
        return ask(queries, now=now)

    monkeypatch.setattr(crashes, "problems", asked)
    gc.enable()
    tick(crashes, T0 + 6 * HOURS)
    assert seen == [False]
    assert gc.isenabled()
