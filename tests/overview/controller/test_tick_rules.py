"""Rules of the controller that hand-made mutations once survived, each pinned by a test.

The rate rule end to end through the local crash source, stale and missing crash data,
the order of the rules (problems before a freeze), a new bucket that stays a problem,
and what an override covers.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashAnswer, CrashReportRecord
from overview.judges.local import LocalCrashSource
from overview.models import Problem, ProblemKind
from packages.domain.policy import UBUNTU
from packages.holds import HoldReason
from packages.models import PhasingState, SourceSync
from packages.services import publication_resume, release_freeze
from tests.factories import (
    OverrideFactory,
    PolicyFactory,
    PublicationFactory,
    SourcePackageFactory,
    UserFactory,
)
from tests.overview.controller.fakes import HOURS, T0, ScriptedCrashes, new_bucket, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

DAY = timedelta(days=1)


def crashes_of(publication, version, at, count, tag):
    return [
        CrashReportRecord(
            external_id=f"{tag}-{version}-{at:%Y%m%d%H}-{n}",
            signature="/usr/bin/tool:11:known_crash",
            release=publication.release.codename,
            source_package=publication.source_package.name,
            version=version,
            architecture="amd64",
            reported_at=at,
            system_id=f"system-{n}",
            stack_trace="#0 known_crash ()",
            function="known_crash",
        )
        for n in range(count)
    ]


def test_a_rise_in_the_crash_rate_halts_against_the_previous_versions_days_not_its_own():
    PolicyFactory(judge=UBUNTU)
    publication = PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        version="1.1-1",
        previous_version="1.0-1",
        date_published=T0 - 4 * DAY,
        last_increase_at=T0 - 4 * DAY,
    )
    records = []
    for day in range(1, 11):  # the previous version: 2 crashes a day
        records += crashes_of(publication, "1.0-1", T0 - day * DAY + 6 * HOURS, 2, "old")
    for day in range(1, 4):  # the new version's own past days: 200 a day
        records += crashes_of(publication, "1.1-1", T0 - day * DAY + 6 * HOURS, 200, "own")
    records += crashes_of(publication, "1.1-1", T0 + 6 * HOURS, 5, "today")
    crash_reports_ingest(records, now=T0 + 12 * HOURS)

    # Baseline round(2 + 0) × 10% × half a day = 0.1; 5 today is a rise. Against the new
    # version's own 200 a day it would be 10, and nothing would halt.
    tick(LocalCrashSource(), T0 + 12 * HOURS)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)
    problem = Problem.objects.get(publication=publication)
    assert problem.kind == ProblemKind.INCREASED_RATE and problem.report_count == 5


def test_a_crash_sync_that_keeps_failing_holds_as_stale_though_it_tried_a_minute_ago(settings):
    settings.PHASING_CRASH_DATA_MAX_AGE = timedelta(minutes=30)
    publication = PublicationFactory(last_increase_at=T0)
    now = T0 + 6 * HOURS
    SourceSync.objects.create(
        name="feed:crashes",
        kind="crashes",
        last_attempt_at=now - timedelta(minutes=1),
        last_success_at=now - 2 * HOURS,
        last_error="503 from the feed",
    )
    feed = type("Feed", (), {"name": "feed", "reports": lambda self, **kw: iter(())})()

    [decision] = tick(LocalCrashSource(feed=feed), now)

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert publication.hold_reason == HoldReason.CRASH_DATA_UNAVAILABLE
    assert "last synced at 2026-12-01 04:00 UTC: 503 from the feed" in decision.detail


def test_an_update_the_crash_source_did_not_answer_for_holds():
    class Forgetful(ScriptedCrashes):
        def problems(self, queries, *, now):
            return {q: CrashAnswer() for q in queries if q.source_package != "forgotten"}

    forgotten = PublicationFactory(
        last_increase_at=T0, source_package=SourcePackageFactory(name="forgotten")
    )
    answered = PublicationFactory(last_increase_at=T0)

    tick(Forgetful(), T0 + 6 * HOURS)

    forgotten.refresh_from_db()
    answered.refresh_from_db()
    assert (forgotten.phased_update_percentage, answered.phased_update_percentage) == (10, 20)
    assert forgotten.hold_reason == HoldReason.CRASH_DATA_UNAVAILABLE
    assert forgotten.hold_detail.startswith("crash data unavailable: no answer")


def test_an_update_of_a_frozen_release_that_regresses_is_halted(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    release_freeze(release=publication.release, actor=UserFactory(), reason="mirror outage")
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))

    tick(crashes, T0 + HOURS)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)


def test_a_new_bucket_stays_a_problem_when_the_source_stops_listing_it(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + HOURS)
    publication_resume(publication=publication, actor=UserFactory(), reason="try again")
    crashes.answers.clear()  # the tracker no longer lists the bucket

    tick(crashes, T0 + 2 * HOURS)

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
    assert Problem.objects.get(publication=publication).active


def test_an_override_of_one_bucket_does_not_cover_another_bucket_of_the_same_update(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    bucket_a, bucket_b = new_bucket("sig:a"), new_bucket("sig:b")
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(bucket_a,))
    tick(crashes, T0 + HOURS)  # halts on A
    problem_a = Problem.objects.get(publication=publication)
    OverrideFactory(source_package=publication.source_package, bucket=problem_a.bucket, version="")
    publication_resume(publication=publication, actor=UserFactory(), reason="A is old")
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(bucket_a, bucket_b))

    [decision] = tick(crashes, T0 + 2 * HOURS)

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
    assert decision.action == "halt"
    assert "new bucket g_main" in decision.detail and decision.detail.count("new bucket") == 1


def test_each_decision_names_its_update_and_its_percentages_before_and_after(crashes):
    steady = PublicationFactory(
        last_increase_at=T0, source_package=SourcePackageFactory(name="steady"), version="2.0-1"
    )
    regressed = PublicationFactory(
        last_increase_at=T0, source_package=SourcePackageFactory(name="broken"), version="3.0-1"
    )
    crashes.answers["broken"] = CrashAnswer(problems=(new_bucket(),))

    advance, halt = tick(crashes, T0 + 6 * HOURS)

    assert (advance.publication_id, advance.label, advance.action) == (
        steady.pk,
        "noble steady 2.0-1",
        "advance",
    )
    assert (advance.old_percentage, advance.new_percentage, advance.detail) == (
        10,
        20,
        "no problems",
    )
    assert (halt.publication_id, halt.label, halt.action, halt.hold_reason) == (
        regressed.pk,
        "noble broken 3.0-1",
        "halt",
        HoldReason.PROBLEMS,
    )
    assert (halt.old_percentage, halt.new_percentage) == (10, 0)
    assert halt.detail.startswith("new bucket g_main (4 systems, 7 reports)")
    steady.refresh_from_db()
    assert steady.events.get().reason == "no problems: 10% → 20%"


def test_exactly_the_previous_reports_a_policy_wants_are_enough(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    PolicyFactory(source_package=publication.source_package, min_previous_reports=50)
    crashes.answers[publication.source_package.name] = CrashAnswer(previous_reports=50)
    [decision] = tick(crashes, T0 + 6 * HOURS)
    assert decision.action == "advance"


def test_an_update_at_100_percent_still_phasing_completes_once_its_watch_is_over(crashes):
    publication = PublicationFactory(phased_update_percentage=100, last_increase_at=T0)
    [decision] = tick(crashes, T0 + HOURS)
    assert decision.hold_reason == "waiting"  # still judged at 100% (Rules.watch_at_full)
    [decision] = tick(crashes, T0 + timedelta(days=3))
    publication.refresh_from_db()
    assert (decision.action, decision.detail, decision.new_percentage) == (
        "complete",
        "at 100%",
        100,
    )
    assert publication.state == PhasingState.COMPLETE


def test_a_halted_update_keeps_the_reason_it_was_halted_for(crashes):
    from packages.services import publication_halt

    publication = PublicationFactory(last_increase_at=T0)
    publication_halt(publication=publication, actor=UserFactory(), reason="bad build", now=T0)
    [decision] = tick(crashes, T0 + HOURS)
    publication.refresh_from_db()
    assert (publication.hold_reason, publication.hold_detail) == (HoldReason.PULLED, "bad build")
    assert decision.detail == "pulled by a person: bad build"
    crashes.failure = ConnectionError("tracker down")  # an outage keeps it too
    tick(crashes, T0 + 2 * HOURS)
    publication.refresh_from_db()
    assert (publication.hold_reason, publication.hold_detail) == (HoldReason.PULLED, "bad build")
