"""The controller's rules, with injected time and a crash source the test controls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.core.management import call_command

from overview import controller
from overview.models import Notification, Problem, ProblemKind
from overview.services.ingest import crash_reports_ingest
from overview.sources.base import CrashAnswer, CrashReportRecord, ProblemRecord
from overview.sources.local import LocalCrashSource
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState, Policy, WriteBack
from packages.services import (
    publication_pause,
    publication_resume,
    release_freeze,
    release_unfreeze,
)
from packages.services.writeback import percentages_write_back
from packages.sources.simulator import Simulator
from tests.factories import (
    ErrorBucketFactory,
    OverrideFactory,
    PersonFactory,
    PublicationFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

# A Tuesday, so no test trips over the quiet weekend by accident.
T0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
HOURS = timedelta(hours=1)


class ScriptedCrashes:
    """A crash source whose answers the test sets per package."""

    name = "scripted"

    def __init__(self) -> None:
        self.answers: dict[str, CrashAnswer] = {}
        self.failure: Exception | None = None
        self.calls = 0

    def problems(self, queries, *, now):
        self.calls += 1
        if self.failure:
            raise self.failure
        return {q: self.answers.get(q.source_package, CrashAnswer()) for q in queries}

    def reports(self, *, since, now):
        return iter(())


@pytest.fixture
def crashes() -> ScriptedCrashes:
    return ScriptedCrashes()


def new_bucket(signature="/usr/bin/tool:11:g_main:1", systems=4) -> ProblemRecord:
    return ProblemRecord(
        kind="new_bucket",
        signature=signature,
        function="g_main",
        report_count=7,
        system_count=systems,
    )


def tick(crashes, at, **kwargs):
    return controller.tick(now=at, crash_source=crashes, **kwargs)


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
    assert publication.state == PhasingState.COMPLETE
    assert publication.completed_at == T0 + 54 * HOURS
    assert publication.events.filter(kind=EventKind.COMPLETED).count() == 1


def report(publication, signature, hour, system, n=0) -> CrashReportRecord:
    return CrashReportRecord(
        external_id=f"{publication.version}-{signature}-{hour}-{system}-{n}",
        signature=signature,
        release=publication.release.codename,
        source_package=publication.source_package.name,
        version=publication.version,
        architecture="amd64",
        reported_at=T0 + hour * HOURS - timedelta(minutes=10),
        system_id=f"system-{system}",
        stack_trace="#0 crash_here ()",
        function="crash_here",
    )


def test_a_regressing_update_is_halted_at_the_step_where_its_new_bucket_appears(
    django_capture_on_commit_callbacks,
):
    signer = PersonFactory(account_name="signer", email="signer@example.org")
    uploader = PersonFactory(account_name="uploader", email="uploader@example.org")
    publication = PublicationFactory(
        date_published=T0, last_increase_at=T0, signer=signer, uploader=uploader
    )
    source = LocalCrashSource()
    for hour in range(0, 40):
        if hour == 20:  # three machines crash in a place the previous version never did
            crash_reports_ingest(
                [report(publication, "/usr/bin/tool:11:new_crash", 20, s) for s in range(3)]
            )
        with django_capture_on_commit_callbacks(execute=True):
            tick(source, T0 + hour * HOURS)
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (0, PhasingState.HALTED)
    halt = publication.events.get(kind=EventKind.HALTED)
    assert halt.created_at == T0 + 20 * HOURS
    assert halt.old_percentage == 40
    assert "new bucket crash_here (3 systems" in halt.reason
    assert sorted(m.to[0] for m in mail.outbox) == ["signer@example.org", "uploader@example.org"]
    assert "crash_here" in mail.outbox[0].body
    assert "never resumes by itself" in mail.outbox[0].body


def test_two_systems_are_not_enough_for_a_new_bucket():
    publication = PublicationFactory(date_published=T0, last_increase_at=T0)
    crash_reports_ingest(
        [report(publication, "/usr/bin/tool:11:rare", 1, s, n) for s in range(2) for n in range(5)]
    )
    tick(LocalCrashSource(), T0 + 6 * HOURS)
    assert not Problem.objects.filter(publication=publication, kind=ProblemKind.NEW_BUCKET).exists()


def test_a_bucket_the_previous_version_had_is_not_new():
    publication = PublicationFactory(
        date_published=T0, last_increase_at=T0, previous_version="1.0-1ubuntu0"
    )
    signature = "/usr/bin/tool:11:old_crash"
    old = [
        CrashReportRecord(
            **{
                **report(publication, signature, 1, s).__dict__,
                "version": "1.0-1ubuntu0",
                "external_id": f"old-{s}",
            }
        )
        for s in range(3)
    ]
    crash_reports_ingest(old + [report(publication, signature, 1, s) for s in range(5)])
    tick(LocalCrashSource(), T0 + 6 * HOURS)
    assert not Problem.objects.filter(publication=publication, kind=ProblemKind.NEW_BUCKET).exists()


def test_signer_and_uploader_are_emailed_once_per_halt(crashes, django_capture_on_commit_callbacks):
    person = PersonFactory(email="same@example.org")
    sponsor = PersonFactory(email="sponsor@example.org")
    publication = PublicationFactory(signer=person, uploader=person, sponsor=sponsor)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + HOURS)
    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + 2 * HOURS)
    assert sorted(m.to[0] for m in mail.outbox) == ["same@example.org", "sponsor@example.org"]
    assert Notification.objects.get(person=person).roles == "signer, uploader"
    assert publication.events.filter(kind=EventKind.HALTED).count() == 1


def test_halted_update_never_resumes_by_itself(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + HOURS)
    crashes.answers.clear()  # the crashes stop, as they do when an update is pulled
    for hour in range(2, 30):
        tick(crashes, T0 + hour * HOURS)
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (0, PhasingState.HALTED)
    assert publication.hold_reason == HoldReason.PROBLEMS


def test_a_person_resumes_a_halted_update_and_phasing_goes_on(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + HOURS)
    problem = Problem.objects.get(publication=publication)
    OverrideFactory(
        source_package=publication.source_package,
        bucket=problem.bucket,
        version=publication.version,
    )
    publication_resume(
        publication=publication, actor=UserFactory(), reason="overridden", now=T0 + 2 * HOURS
    )
    tick(crashes, T0 + 8 * HOURS)
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (20, PhasingState.PHASING)


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


def test_a_problem_halts_a_paused_update_too(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    publication_pause(publication=publication, actor=UserFactory(), reason="look", now=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + HOURS)
    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED


def test_an_overridden_problem_does_not_halt_and_stays_visible(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    bucket = ErrorBucketFactory(signature="/usr/bin/tool:11:g_main:1")
    OverrideFactory(source_package=publication.source_package, bucket=bucket, version="")
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    [decision] = tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 20)
    assert decision.detail == "1 overridden problem(s)"
    assert Problem.objects.get(publication=publication).bucket == bucket


def test_an_override_for_another_version_does_not_cover_this_one(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    OverrideFactory(
        source_package=publication.source_package,
        kind=ProblemKind.INCREASED_RATE,
        bucket=None,
        version="0.9",
    )
    crashes.answers[publication.source_package.name] = CrashAnswer(
        problems=(ProblemRecord(kind="increased_rate", report_count=12, difference=6.5),)
    )
    [decision] = tick(crashes, T0 + HOURS)
    assert decision.action == "halt"
    assert "increased crash rate" in decision.detail


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


def test_a_frozen_release_holds_and_unfreezing_goes_on_from_where_it_was(crashes):
    publication = PublicationFactory(phased_update_percentage=40, last_increase_at=T0)
    admin = UserFactory()
    release_freeze(release=publication.release, actor=admin, reason="archive incident")
    [decision] = tick(crashes, T0 + 12 * HOURS)
    assert decision.hold_reason == HoldReason.RELEASE_FROZEN
    release_unfreeze(release=publication.release, actor=admin, reason="over")
    tick(crashes, T0 + 13 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 50


def test_a_policy_can_ask_for_reports_of_the_previous_version_first(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    Policy.objects.create(source_package=publication.source_package, min_previous_reports=50)
    crashes.answers[publication.source_package.name] = CrashAnswer(previous_reports=12)
    [decision] = tick(crashes, T0 + 6 * HOURS)
    assert decision.hold_reason == HoldReason.NOT_ENOUGH_DATA
    assert "12 reports" in decision.detail


def test_a_policy_can_ask_for_a_minimum_time_at_each_step(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    Policy.objects.create(interval=timedelta(hours=1), min_time_at_percentage=timedelta(hours=3))
    [decision] = tick(crashes, T0 + 2 * HOURS)
    assert decision.hold_reason == HoldReason.NOT_ENOUGH_DATA
    tick(crashes, T0 + 3 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 20


def test_the_quiet_weekend_keeps_an_update_from_reaching_100_until_monday_noon(crashes):
    friday = datetime(2026, 12, 4, 1, 0, tzinfo=UTC)
    publication = PublicationFactory(
        phased_update_percentage=90, last_increase_at=friday - 7 * HOURS
    )
    Policy.objects.create(quiet_weekend=True)
    [decision] = tick(crashes, friday)
    assert decision.hold_reason == HoldReason.QUIET_WEEKEND
    tick(crashes, datetime(2026, 12, 7, 12, 0, tzinfo=UTC))
    publication.refresh_from_db()
    assert publication.state == PhasingState.COMPLETE


def test_an_explicit_schedule_is_followed_one_step_a_day(crashes):
    publication = PublicationFactory(phased_update_percentage=1, last_increase_at=T0)
    Policy.objects.create(
        release=publication.release, schedule=[1, 2, 5, 10, 20, 50, 100], interval=timedelta(days=1)
    )
    seen = []
    for day in range(1, 7):
        tick(crashes, T0 + timedelta(days=day))
        publication.refresh_from_db()
        seen.append(publication.phased_update_percentage)
    assert seen == [2, 5, 10, 20, 50, 100]


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


def test_a_dry_run_prints_the_plan_and_changes_nothing(capsys, monkeypatch, crashes):
    publication = PublicationFactory(last_increase_at=T0)
    paused = PublicationFactory(last_increase_at=T0)
    publication_pause(
        publication=paused, actor=UserFactory(username="ana"), reason="asking upstream", now=T0
    )
    monkeypatch.setattr("overview.controller.configured_crash_source", lambda: crashes)
    call_command("phasing_tick", "--now", (T0 + 6 * HOURS).isoformat(), "--dry-run")
    out = capsys.readouterr().out
    assert f"{publication.source_package.name} {publication.version}: advance 10→20" in out
    assert "hold: paused by a person: asking upstream" in out
    assert "dry run, nothing changed" in out
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert publication.events.count() == 0


def test_the_tick_command_refuses_a_moment_without_a_time_zone():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="time zone"):
        call_command("phasing_tick", "--now", "2026-12-01T00:00:00")


@pytest.mark.parametrize("count", [5, 60])
def test_a_tick_costs_the_same_number_of_queries_whatever_the_number_of_updates(
    crashes, django_assert_max_num_queries, count
):
    publications = [PublicationFactory(last_increase_at=T0) for _ in range(count)]
    for publication in publications[::5]:
        crashes.answers[publication.source_package.name] = CrashAnswer(
            problems=(new_bucket(publication.source_package.name),)
        )
    # candidates, savepoint + locked rows, policies, buckets (read, create, read), problems
    # (read, create, active), overrides, bulk update + events insert of changes, people of
    # halts for the notifications, savepoint release
    with django_assert_max_num_queries(22):
        tick(crashes, T0 + 6 * HOURS)


def test_write_back_gives_the_new_percentages_to_the_publication_source(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    tick(crashes, T0 + 6 * HOURS)
    event = publication.events.get()
    simulator = Simulator(seed=1)
    percentages_write_back(event_ids=[event.pk], source=simulator)
    event.refresh_from_db()
    publication.refresh_from_db()
    assert simulator.writes == [
        (publication.release.codename, publication.source_package.name, publication.version, 20)
    ]
    assert event.write_back == WriteBack.APPLIED
    assert publication.source_percentage == 20
    percentages_write_back(event_ids=[event.pk], source=simulator)
    assert len(simulator.writes) == 1


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
    crashes, monkeypatch, django_capture_on_commit_callbacks
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


def test_a_failed_write_back_is_retried_until_the_source_takes_it(crashes):
    from packages.services.writeback import percentages_reconcile

    class Down:
        name = "down"

        def set_percentage(self, **kwargs):
            raise ConnectionError("archive unreachable")

    publication = PublicationFactory(last_increase_at=T0)
    tick(crashes, T0 + 6 * HOURS)
    event = publication.events.get()
    percentages_write_back(event_ids=[event.pk], source=Down())
    event.refresh_from_db()
    assert event.write_back == WriteBack.FAILED and "archive unreachable" in event.write_back_detail
    simulator = Simulator(seed=1)
    percentages_reconcile(now=T0 + 7 * HOURS, source=simulator)
    event.refresh_from_db()
    assert event.write_back == WriteBack.APPLIED


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


def test_an_override_imported_by_its_tracker_url_covers_the_trackers_problem(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    link = "https://errors.ubuntu.com/problem/5f3e"
    imported = ErrorBucketFactory(signature=link, web_link=link)
    OverrideFactory(
        source_package=publication.source_package, bucket=imported, version=publication.version
    )
    crashes.answers[publication.source_package.name] = CrashAnswer(
        problems=(
            ProblemRecord(
                kind="new_bucket", signature="/usr/bin/x:11:f", web_link=link, system_count=9
            ),
        )
    )
    [decision] = tick(crashes, T0 + 6 * HOURS)
    assert decision.action == "advance"
    assert Problem.objects.get(publication=publication).bucket == imported


def test_a_source_that_cannot_count_previous_reports_is_not_held_for_them(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    Policy.objects.create(min_previous_reports=50)
    crashes.answers[publication.source_package.name] = CrashAnswer(previous_reports=None)
    [decision] = tick(crashes, T0 + 6 * HOURS)
    assert decision.action == "advance"


def test_a_publication_the_controller_cannot_decide_for_holds_and_says_why(crashes, monkeypatch):
    publication = PublicationFactory(last_increase_at=T0)
    other = PublicationFactory(last_increase_at=T0)

    def broken(publication, *args):
        if publication.pk == other.pk:
            raise ValueError("bad policy row")
        return real(publication, *args)

    real = controller._decide
    monkeypatch.setattr(controller, "_decide", broken)
    tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    other.refresh_from_db()
    assert publication.phased_update_percentage == 20
    assert (other.phased_update_percentage, other.hold_reason) == (10, HoldReason.CONTROLLER_ERROR)
    assert "bad policy row" in other.hold_detail
