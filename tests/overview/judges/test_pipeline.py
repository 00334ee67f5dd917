"""The sequential judge end to end: reports ingested, the controller's tick, the verdict kept.

Crash reports go through the real ingest into the hourly counters; the tick reads them
through LocalCrashSource, judges by the policy's judge and records each update's verdict.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import Sum

from overview.controller import tick as controller
from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashReportRecord
from overview.judges import exposure, installs, pipeline, reads, sequential
from overview.judges.local import LocalCrashSource
from overview.judges.reads import busy_hours
from overview.models import Assessment, HourlyCrashCount, Problem, ProblemKind, VersionSighting
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState
from tests.factories import PolicyFactory, PublicationFactory, SourcePackageFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # a Tuesday
HOUR = timedelta(hours=1)
NEW, OLD = "2.0-1ubuntu0.2", "2.0-1ubuntu0.1"


def update(percentage=50):
    """tool NEW at 50 %, published 24 hours before T0."""
    return PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        version=NEW,
        previous_version=OLD,
        binaries=["tool"],
        date_published=T0 - 24 * HOUR,
        last_increase_at=T0 - 24 * HOUR,
        phased_update_percentage=percentage,
    )


def crashes(
    *, ratio: float, per_hour: float, hours: int = 24, seed: int = 1, share: float = 51 / 101
):
    """Crash reports of both versions over the last `hours`, each machine crashing once:
    by default about half the machines (50 % eligible, installing at once) run the new
    version."""
    rng = random.Random(seed)
    records = []
    for h in range(hours):
        at = T0 - (hours - h) * HOUR + timedelta(minutes=30)
        for version, expected in ((OLD, per_hour * (1 - share)), (NEW, per_hour * share * ratio)):
            for n in range(_poisson(rng, expected)):
                records.append(report(f"{version}-{h}-{n}", version, at, f"{version}/{h}/{n}"))
    return records


def report(external_id, version, at, machine, *, package="tool", versions=None):
    return CrashReportRecord(
        external_id=external_id,
        signature=f"/usr/bin/{package}:11:known_crash",
        release="noble",
        source_package=package,
        version=version,
        architecture="amd64",
        reported_at=at,
        system_id=machine,
        stack_trace="#0 known_crash ()",
        package_versions=versions or {},
    )


def _poisson(rng: random.Random, mean: float) -> int:
    count, total = 0, rng.expovariate(1.0)
    while total < mean:
        count += 1
        total += rng.expovariate(1.0)
    return count


def tick():
    return controller.tick(now=T0, crash_source=LocalCrashSource())


def test_a_tripled_crash_rate_halts_the_update_with_the_test_and_figures_in_its_event():
    publication = update()
    crash_reports_ingest(crashes(ratio=3.0, per_hour=12))
    [decision] = tick()
    publication.refresh_from_db()
    assert (decision.action, publication.state) == ("halt", PhasingState.HALTED)
    halt = publication.events.get(kind=EventKind.HALTED)
    assert "sequential test" in halt.reason and "crash events" in halt.reason
    problem = Problem.objects.get(publication=publication, kind=ProblemKind.INCREASED_RATE)
    assert problem.difference > 1  # the lower bound of the rate ratio
    assessment = Assessment.objects.get(publication=publication)
    assert assessment.verdict == "regressed"
    assert assessment.averted is not None and assessment.averted > 0


def test_an_unchanged_rate_does_not_halt_and_its_verdict_says_why():
    publication = update()
    crash_reports_ingest(crashes(ratio=1.0, per_hour=12))
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assessment = Assessment.objects.get(publication=publication)
    assert assessment.verdict in ("insufficient", "healthy")
    assert "crash events" in assessment.evidence
    assert 0.3 < assessment.share < 0.7
    assert assessment.crashes_new + assessment.crashes_old > 200


def test_machines_that_ignore_phasing_do_not_read_as_a_rise():
    # At 10 %, with 5 % of machines taking the update whatever the percentage, 14.5 % run
    # it: busy enough that a test counting only the phased machines would see 1.5×.
    publication = update(percentage=10)
    crash_reports_ingest(crashes(ratio=1.0, per_hour=300, share=0.05 + 0.95 * 11 / 101))
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert Assessment.objects.get(publication=publication).verdict != "regressed"


def test_a_machine_in_a_crash_loop_is_one_event_an_hour():
    publication = update()
    loop = [
        report(f"loop-{n}", NEW, T0 - HOUR + timedelta(minutes=n), "same-machine")
        for n in range(50)
    ]
    crash_reports_ingest(loop)
    [count] = HourlyCrashCount.objects.filter(version=NEW)
    assert (count.reports, count.events) == (50, 1)
    tick()
    assert Assessment.objects.get(publication=publication).crashes_new == 1


def test_by_ubuntus_rules_it_is_their_rate_rule_that_halts():
    publication = update()
    PolicyFactory(source_package=publication.source_package, judge="ubuntu")
    crash_reports_ingest(crashes(ratio=3.0, per_hour=12))
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
    halt = publication.events.get(kind=EventKind.HALTED)
    assert "Ubuntu's rules" in halt.reason and "sequential test" not in halt.reason


def test_by_ubuntus_rules_a_rise_only_the_sequential_test_sees_is_evidence_not_a_halt():
    publication = update()
    PolicyFactory(source_package=publication.source_package, judge="ubuntu")
    # Only yesterday's hours: nothing today for Ubuntu's rule to count.
    crash_reports_ingest(
        [r for r in crashes(ratio=3.0, per_hour=12) if r.reported_at < T0 - 12 * HOUR]
    )
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    evidence = Assessment.objects.get(publication=publication).evidence
    assert "Ubuntu's rules judge this update" in evidence


def test_the_uptake_is_measured_from_other_packages_reports_listing_this_one():
    publication = update()
    other = [
        report(
            f"other-{n}",
            "9.9",
            T0 - HOUR - timedelta(minutes=n),
            f"machine-{n}",
            package="other",
            versions={"tool": NEW if n % 2 else OLD, "libc6": "2.39"},
        )
        for n in range(40)
    ]
    crash_reports_ingest(other)
    seen = dict(
        VersionSighting.objects.filter(binary="tool")
        .values("version")
        .annotate(machines=Sum("machines"))
        .values_list("version", "machines")
    )
    assert seen == {NEW: 20, OLD: 20}
    tick()
    assert Assessment.objects.get(publication=publication).sightings == 40


def test_a_package_s_own_reports_never_count_as_sightings_of_itself():
    update()
    own = [report(f"own-{n}", NEW, T0 - HOUR, f"m{n}", versions={"tool": NEW}) for n in range(5)]
    crash_reports_ingest(own)
    assert not VersionSighting.objects.filter(binary="tool").exists()


def test_a_gate_holds_while_the_evidence_is_insufficient_then_lets_go_after_the_longest_hold():
    publication = update(percentage=30)
    PolicyFactory(
        source_package=publication.source_package,
        insufficient_gate=30,
        insufficient_max_hold=timedelta(hours=30),
    )
    crash_reports_ingest(crashes(ratio=1.0, per_hour=0.5))
    tick()
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.hold_reason) == (
        30,
        HoldReason.NOT_ENOUGH_DATA,
    )
    assert "holds at 30%" in publication.hold_detail
    controller.tick(now=T0 + 7 * HOUR, crash_source=LocalCrashSource())
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 40


def test_hours_before_any_report_was_counted_do_not_make_the_first_day_look_busy():
    """A deployment (or a backtest) whose hourly counts begin at the update's publication:
    read as quiet, the hours before would make each early hour look up to 24 times busier
    than its day, and a healthy busy package's crashes on the new version look like a rise."""
    publication = update()
    start = T0 - 24 * HOUR
    moments = [start + h * HOUR for h in range(24)]
    activity = {moment: 300 for moment in moments}  # other packages: steady, counted from start

    profile = busy_hours(publication, {}, activity, moments)

    assert profile == [1.0] * 24


def test_the_other_packages_are_the_release_s_packages_that_are_not_being_phased():
    """What the previous version's history is read against: every package of the release
    but the ones being phased, their days before the update and their hours since."""
    publication = update()
    before, since = T0 - 48 * HOUR, T0 - 2 * HOUR
    crash_reports_ingest(
        [
            report(f"{package}-{n}-{at}", version, at, f"{package}/{n}", package=package)
            for package, version, count in (("tool", OLD, 5), ("libother", "1.0-1", 3))
            for at in (before, since)
            for n in range(count)
        ]
    )
    found = reads.controls([publication], since=T0 - 24 * HOUR)[publication.release_id]
    assert found.days == {before.date(): 3}
    assert found.hours == {since.replace(minute=0): 3}


def test_how_busy_each_hour_was_as_defined_over_random_counts():
    """Against the definition read hour by hour: each hour's other reports over the mean of
    the counted hours among the 24 up to it (1.0 when fewer than 12 were counted or the
    mean is 0); None when the counted hours average under 200 reports."""
    rng = random.Random(4)
    publication = update()
    for _ in range(200):
        start = T0 - 48 * HOUR
        moments = [start + h * HOUR for h in range(rng.randrange(1, 60))]
        counted_from = start + rng.randrange(-30, 30) * HOUR
        activity = {
            counted_from + h * HOUR: rng.randrange(0, 800) for h in range(rng.randrange(1, 90))
        }
        own = [{start + rng.randrange(-20, 60) * HOUR: rng.randrange(0, 90) for _ in range(9)}]
        first = moments[0] - 23 * HOUR
        series = [
            activity.get(first + h * HOUR, 0) - sum(c.get(first + h * HOUR, 0) for c in own)
            if first + h * HOUR >= counted_from
            else None
            for h in range(len(moments) + 23)
        ]
        known = [v for v in series if v is not None]
        defined = None
        if known and sum(known) / len(known) >= 200:
            defined = []
            for h in range(len(moments)):
                day = [v for v in series[h : h + 24] if v is not None]
                mean = sum(day) / len(day) if len(day) >= 12 else 0.0
                here = series[h + 23]
                defined.append(here / mean if mean > 0 and here is not None else 1.0)

        assert busy_hours(publication, {}, activity, moments, own=own) == defined


ALPHA = 0.01


def test_deciding_together_the_concurrent_test_allows_for_an_uptake_twice_as_fast(settings):
    # Measured from a thousand sightings, the range is narrow; deciding alone the test keeps
    # it (it is all the power there is), deciding with the anchored test it allows for
    # update timers of another shape than the model's (exposure.SHAPE_MARGIN).
    settings.PHASING_JUDGE_IGNORERS = 0.0
    publication = update(percentage=30)
    measured = exposure.Uptake(16.0, 14.0, 18.0, sightings=1000)
    percentages = [10] * 6 + [20] * 6 + [30] * 12
    key = (publication.release_id, publication.source_package_id)
    moments = [T0 - 24 * HOUR + h * HOUR for h in range(24)]
    counts = {
        (*key, NEW): {m: 30 for m in moments},
        (*key, OLD): {m: 100 for m in moments},
    }

    def judged(together: bool) -> pipeline.Judgement:
        return pipeline._judge(
            publication,
            sequential.SequentialTest(alpha=ALPHA),
            measured,
            percentages,
            counts,
            start=T0 - 24 * HOUR,
            now=T0,
            together=together,
        )

    alone, together = judged(False), judged(True)
    assert alone.share_high == pytest.approx(installs.installed_shares(percentages, 14.0)[-1])
    assert together.share_high == pytest.approx(installs.installed_shares(percentages, 8.0)[-1])
    # The estimate and the health test's end do not move.
    assert (together.share, together.share_low) == (alone.share, alone.share_low)
    assert together.assessment.evidence < alone.assessment.evidence
