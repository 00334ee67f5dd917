"""Library regressions: an update whose dependents crash more on machines that have it is
halted with a problem of its own kind, which says which dependents and how much; a
dependent's own new version never puts the blame on the library.

The arithmetic alone first (overview.judges.dependents.judge_counts), then end to end:
crash reports of other packages listing the library's version, through the real ingest
and the controller's tick.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from overview.controller import tick as controller
from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashReportRecord
from overview.judges import dependents
from overview.judges.local import LocalCrashSource
from overview.judges.sequential import SequentialTest
from overview.models import DependentCrashCount, FleetReport, Override, Problem, ProblemKind
from overview.triage.overrides import override_create
from packages.models import EventKind, PhasingState
from tests.factories import (
    PolicyFactory,
    PublicationFactory,
    SourcePackageFactory,
    UserFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # a Tuesday
HOUR = timedelta(hours=1)
NEW, OLD = "3.0.13-0ubuntu3.2", "3.0.13-0ubuntu3.1"
SHARE = 51 / 101  # 50 % eligible, installing at once
TEST = SequentialTest()


def _poisson(rng: random.Random, mean: float) -> int:
    count, total = 0, rng.expovariate(1.0)
    while total < mean:
        count += 1
        total += rng.expovariate(1.0)
    return count


# The judgement's arithmetic ---------------------------------------------------------------


def simulated(ratios: dict[str, float], *, per_hour: float, hours: int = 48, seed: int = 1):
    """dependent → hour → (crash events with the new library, with the old) at SHARE."""
    rng = random.Random(seed)
    return {
        name: {
            h: (
                _poisson(rng, per_hour * SHARE * ratio),
                _poisson(rng, per_hour * (1 - SHARE)),
            )
            for h in range(hours)
        }
        for name, ratio in ratios.items()
    }


def judged(counts, hours: int = 48, share: float = SHARE):
    shares = [share] * hours
    return dependents.judge_counts(
        TEST, counts, share_low=shares, share_high=shares, share_middle=shares
    )


def test_dependents_that_crash_three_times_as_often_with_the_new_library_are_a_regression():
    found = judged(simulated({"firefox": 3.0, "curl": 1.0, "git": 1.0}, per_hour=4))
    assert found.assessment.verdict == "regressed"
    assert found.dependents[0].name == "firefox"
    assert 2.0 < found.dependents[0].result.ratio < 4.5
    assert found.counted == 3


def test_dependents_crashing_as_often_with_either_version_are_not_a_regression_at_alpha():
    # 300 libraries whose dependents do not care: at α = 1 % the pooled test's halts are
    # few (Ville's bound; 300 runs see 3 on average at the bound, usually fewer).
    halts = sum(
        judged(simulated({"a": 1.0, "b": 1.0, "c": 1.0}, per_hour=3, seed=seed)).assessment.verdict
        == "regressed"
        for seed in range(300)
    )
    assert halts <= 6


def test_the_problem_says_which_dependents_and_how_much_in_plain_words():
    found = judged(simulated({"firefox": 4.0, "thunderbird": 3.0, "curl": 1.0}, per_hour=4))
    record = dependents.problem_of(found, alpha=0.01)
    assert record is not None and record.kind == ProblemKind.DEPENDENTS
    words = record.detail
    assert words.startswith("its dependents crash ")
    assert "firefox" in words and "thunderbird" in words and "curl" not in words
    assert "with 99% confidence" in words and "3 dependents" in words
    for garbled in ("None", "[", "{", "'", "nan", "inf"):
        assert garbled not in words
    assert record.difference > 1  # the lower bound of the pooled ratio


def test_no_problem_while_the_pooled_test_has_not_decided():
    found = judged(simulated({"firefox": 1.0}, per_hour=1, hours=6), hours=6)
    assert dependents.problem_of(found, alpha=0.01) is None


# End to end: ingest, tick, problem, override --------------------------------------------


def library(percentage=50):
    """libssl3 NEW at `percentage` (50 %), published 24 hours before T0."""
    return PublicationFactory(
        source_package=SourcePackageFactory(name="openssl"),
        version=NEW,
        previous_version=OLD,
        binaries=["libssl3", "openssl"],
        date_published=T0 - 24 * HOUR,
        last_increase_at=T0 - 24 * HOUR,
        phased_update_percentage=percentage,
    )


def dependents_reports(
    ratios: dict[str, float],
    *,
    per_hour: float = 4,
    hours: int = 24,
    seed: int = 1,
    own: dict[str, tuple[str, str, float]] | None = None,
    share: float = SHARE,
):
    """Crash reports of dependents listing libssl3 at the machine's version. `own`: a
    dependent whose own new version (its version, previous version, its crash ratio) went
    out on exactly the machines that took the library too."""
    rng = random.Random(seed)
    own = own or {}
    records = []
    for h in range(hours):
        at = T0 - (hours - h) * HOUR + timedelta(minutes=20)
        for name, ratio in ratios.items():
            version, previous, own_ratio = own.get(name, ("1.0-1", "1.0-1", 1.0))
            for library_version, mean, app in (
                (OLD, per_hour * (1 - share), previous),
                (NEW, per_hour * share * ratio * own_ratio, version),
            ):
                for n in range(_poisson(rng, mean)):
                    machine = f"{name}/{library_version}/{h}/{n}"
                    records.append(
                        CrashReportRecord(
                            external_id=machine,
                            signature=f"/usr/bin/{name}:11:somewhere",
                            release="noble",
                            source_package=name,
                            version=app,
                            architecture="amd64",
                            reported_at=at,
                            system_id=machine,
                            stack_trace="#0 somewhere ()",
                            package_versions={"libssl3": library_version, "libc6": "2.39"},
                        )
                    )
    return records


def tick(now=T0):
    return controller.tick(now=now, crash_source=LocalCrashSource())


def test_the_ingest_counts_dependents_crashes_by_the_library_version_on_their_machine():
    publication = library()
    reports = dependents_reports({"firefox": 1.0}, hours=2)
    crash_reports_ingest(reports)
    rows = DependentCrashCount.objects.filter(library=publication)
    assert {r.dependent.name for r in rows} == {"firefox"}
    on_new = sum(r.on_new for r in rows)
    on_old = sum(r.on_old for r in rows)
    assert on_new == sum(r.package_versions["libssl3"] == NEW for r in reports)
    assert on_old == sum(r.package_versions["libssl3"] == OLD for r in reports)


def test_a_library_whose_dependents_crash_more_is_halted_with_a_problem_of_its_own_kind():
    publication = library()
    crash_reports_ingest(dependents_reports({"firefox": 4.0, "curl": 1.0, "git": 1.0}))
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
    problem = Problem.objects.get(publication=publication)
    assert problem.kind == ProblemKind.DEPENDENTS
    assert str(problem) == "dependents crash more with this version"
    assert "firefox" in problem.detail and "curl" not in problem.detail
    halt = publication.events.get(kind=EventKind.HALTED)
    assert "its dependents crash" in halt.reason and "firefox" in halt.reason


def test_machines_that_ignore_phasing_do_not_make_the_library_look_guilty():
    # At 10 %, with 5 % of machines taking the library whatever the percentage, 14.5 % have
    # it: a test counting only the phased machines would read busy dependents as 1.5×.
    publication = library(percentage=10)
    crash_reports_ingest(
        dependents_reports(
            {"firefox": 1.0, "curl": 1.0}, per_hour=150, share=0.05 + 0.95 * 11 / 101
        )
    )
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert not Problem.objects.filter(publication=publication).exists()


def test_an_override_of_the_dependents_problem_lets_the_library_go_on():
    publication = library()
    crash_reports_ingest(dependents_reports({"firefox": 4.0, "curl": 1.0}))
    override_create(
        source_package=publication.source_package,
        version=NEW,
        kind=ProblemKind.DEPENDENTS,
        bucket=None,
        actor=UserFactory(),
        reason="firefox's own bug, fixed in its next upload",
    )
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert Problem.objects.with_covering_override().get(publication=publication).is_overridden
    assert str(Override.objects.get()).endswith("dependents")


def test_a_dependents_own_new_version_that_crashes_more_does_not_blame_the_library():
    publication = library()
    PublicationFactory(  # firefox's own update, phasing beside the library
        source_package=SourcePackageFactory(name="firefox"),
        version="130.0-1ubuntu0.2",
        previous_version="130.0-1ubuntu0.1",
        binaries=["firefox"],
        date_published=T0 - 24 * HOUR,
        phased_update_percentage=50,
    )
    own = {"firefox": ("130.0-1ubuntu0.2", "130.0-1ubuntu0.1", 5.0)}
    crash_reports_ingest(dependents_reports({"firefox": 1.0, "curl": 1.0}, own=own))
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert not Problem.objects.filter(publication=publication).exists()


def test_without_the_new_version_left_out_the_same_reports_would_blame_the_library():
    # The control of the test above: the same crashes with firefox's update unknown here.
    publication = library()
    own = {"firefox": ("130.0-1ubuntu0.2", "130.0-1ubuntu0.1", 5.0)}
    crash_reports_ingest(dependents_reports({"firefox": 1.0, "curl": 1.0}, own=own))
    tick()
    assert Problem.objects.filter(publication=publication, kind=ProblemKind.DEPENDENTS).exists()


def test_under_ubuntus_rules_the_dependents_are_not_judged():
    publication = library()
    PolicyFactory(source_package=publication.source_package, judge="ubuntu")
    crash_reports_ingest(dependents_reports({"firefox": 4.0, "curl": 1.0}))
    tick()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING


def fleet(publication, *, share: float, per_hour: int = 50, hours: int = 24):
    """The fleet agents' reports: `per_hour` machines an hour, `share` of them on NEW."""
    FleetReport.objects.bulk_create(
        FleetReport(
            machine=f"agent-{h}-{n}",
            publication=publication,
            installed_version=NEW if n < share * per_hour else OLD,
            on_new_version=n < share * per_hour,
            reported_at=T0 - (hours - h) * HOUR + timedelta(minutes=40),
            day=(T0 - (hours - h) * HOUR).date(),
        )
        for h in range(hours)
        for n in range(per_hour)
    )


@pytest.mark.parametrize("measured", [False, True])
def test_the_fleet_agents_measured_share_gives_the_test_its_power(measured):
    # Half the machines may take it, a fifth have: doubled crashes on a fifth look, to a
    # judge that must allow for everyone eligible having it, like no rise at all.
    publication = library()
    if measured:
        fleet(publication, share=0.2)
    crash_reports_ingest(dependents_reports({"firefox": 2.0, "curl": 2.0}, per_hour=20, share=0.2))
    tick()
    found = Problem.objects.filter(publication=publication, kind=ProblemKind.DEPENDENTS)
    assert found.exists() == measured


def test_a_library_s_dependents_found_the_same_again_keep_their_judgement(
    reuse_on, settings, monkeypatch
):
    """Most ticks of an hour find every library's dependents' crashes as the tick before:
    the judgement it kept stands, the one judging them again would give; a new crash of a
    dependent, or another hour, judges them again."""
    publication = library()
    crash_reports_ingest(dependents_reports({"firefox": 4.0, "curl": 1.0}))
    judged = []
    real = dependents.judge_counts
    monkeypatch.setattr(
        dependents, "judge_counts", lambda *a, **k: judged.append(1) or real(*a, **k)
    )

    def judgement(now):
        return dependents.publications_judge([publication], test=TEST, now=now)

    first = judgement(T0)
    again = judgement(T0 + timedelta(minutes=5))
    assert again == first and len(judged) == 1

    crash_reports_ingest(dependents_reports({"curl": 1.0}, hours=1, seed=9))
    after_a_crash = judgement(T0 + timedelta(minutes=10))
    next_hour = judgement(T0 + HOUR)
    assert len(judged) == 3
    settings.PHASING_JUDGEMENT_REUSE = False
    assert after_a_crash == judgement(T0 + timedelta(minutes=10))
    assert next_hour == judgement(T0 + HOUR)
    assert after_a_crash != first
