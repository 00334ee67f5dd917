"""Library regressions: do the packages that depend on an update crash more on machines
that have it? A problem of its own kind ("dependents crash more with this version"),
which Ubuntu's rules never look for.

A crash report lists the versions of the packages the crashing program depends on, so
each crash of a dependent is labelled by the library's version on that machine: the
update's, or the one it replaces (overview.evidence.dependents_counts keeps the counts).
Given that a dependent crashed in hour h, it was on a machine with the new library with
probability s_h under "the library changes nothing", s_h the share of machines that have
it: exactly the conditional test of two Poisson rates the sequential judge runs
(overview.judges.sequential), with the dependents' crashes in place of the package's own.
So its false-halt bound is the same: Ville's inequality, α per update over its whole ramp.

- The share s_h is the library's own exposure (overview.judges.exposure): its percentage
  history, with the uptake the fleet agents measured where they report it and the
  configured belief (PHASING_UPTAKE_HOURS, widely spread) otherwise; its fast end for the
  test of a rise, as there: an uncertain exposure makes a halt harder, never easier.
  Never the machines seen in other packages' crash reports, which the sequential judge
  also reads: those reports *are* the dependents' crashes, so a dependents' regression
  would raise the measured share until it explained the rise away (in the backtest's
  realistic world it hid every clear one).
- Every dependent's crashes are pooled into one test (so α holds however many dependents
  there are); which dependents and by how much is said from each one's own figures.
- A dependent's own new version is not the library's fault: crashes of a dependent at a
  version still phasing, or published from OWN_VERSION_WINDOW before the library on, are
  left out. Machines that take one update often take the other in the same run, so those
  crashes would sit on the library's new version whoever caused them.

Plain arithmetic in `judge_counts` (no database); `publications_judge` reads what it
needs in four queries however many updates.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q

from overview.evidence.counters import hour_of
from overview.evidence.fleet_reads import fleet_sightings
from overview.evidence.sources.base import CrashAnswer, ProblemRecord
from overview.judges import exposure, installs, reads, reuse, sequential, stamps
from overview.models import DependentCrashCount, ProblemKind
from packages.domain import policy
from packages.domain.change_words import plural, ratio_range
from packages.models import ACTIVE_STATES, Pocket, Publication

log = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
# The hours looked at: since publication, but no further back (as the sequential judge).
WINDOW = timedelta(days=14)
# A dependent's version published this long before the library, or later, is its own new
# version: its crashes are its own business, not the library's.
OWN_VERSION_WINDOW = timedelta(days=14)
# Dependents named in the problem's words, the most crashes beyond the expected first.
NAMED = 4
TEST_NAME = "sequential test of its dependents"


@dataclass(frozen=True)
class DependentFigures:
    """One dependent's crash events with and without the new library, and its own ratio
    (descriptive: the halt rests on the pooled test)."""

    name: str
    new: int
    old: int
    excess: float  # crash events with the new library beyond what the old one's rate gives
    result: sequential.SequentialResult


@dataclass(frozen=True)
class DependentsJudgement:
    assessment: sequential.SequentialResult  # every dependent pooled
    # When they crash more: those whose own test says so, else the largest contributors
    # (at most 2); none otherwise.
    dependents: tuple[DependentFigures, ...]
    share: float  # the library's share now (middle estimate)
    counted: int  # dependents with crashes counted
    left_out: tuple[str, ...] = ()  # dependents whose own new version was left out


def judge_counts(
    test: sequential.SequentialTest,
    counts: Mapping[str, Mapping[int, tuple[int, int]]],
    *,
    share_low: Sequence[float],
    share_high: Sequence[float],
    share_middle: Sequence[float],
    left_out: Sequence[str] = (),
) -> DependentsJudgement:
    """The judgement from dependent → hour index → (crash events with the new library,
    with the previous one), and the library's share of machines each hour."""
    hours = len(share_high)
    pooled = [[0, 0] for _ in range(hours)]
    excess: dict[str, float] = defaultdict(float)
    for name, by_hour in counts.items():
        for h, (new, old) in by_hour.items():
            if not 0 <= h < hours:
                continue
            pooled[h][0] += new
            pooled[h][1] += old
            # Beyond what the old library's rate gives at the fast end of the share: what
            # the test itself allows for, so a dependent is not named for a share guessed low.
            s = min(max(float(share_high[h]), 1e-6), 1 - 1e-6)
            excess[name] += new - old * s / (1 - s)

    def hours_of(by_hour: Mapping[int, tuple[int, int]]) -> list[sequential.Hour]:
        return [
            sequential.Hour(new, old, float(share_low[h]), float(share_high[h]))
            for h, (new, old) in sorted(by_hour.items())
            if 0 <= h < hours and new + old
        ]

    share_now = float(share_middle[-1]) if hours else 0.0
    assessment = test.assess(
        hours_of({h: (n, o) for h, (n, o) in enumerate(pooled)}), share_now=share_now
    )
    rising = sorted((name for name in counts if excess[name] > 0), key=lambda n: -excess[n])
    if assessment.verdict != sequential.Finding.REGRESSED:
        rising = []  # only a problem's words name dependents: no tests for nothing to say
    figures = []
    for name in rising[: 2 * NAMED]:
        result = test.assess(hours_of(counts[name]), share_now=share_now)
        figures.append(DependentFigures(name, result.new, result.old, excess[name], result))
    # Which dependents: those whose own test says they crash more (each at α, named, not
    # halted on); when none does alone, the largest contributors to the pooled rise.
    clear = [f for f in figures if f.result.verdict == sequential.Finding.REGRESSED]
    figures = clear[:NAMED] or figures[:2]
    return DependentsJudgement(
        assessment=assessment,
        dependents=tuple(figures),
        share=share_now,
        counted=sum(1 for by_hour in counts.values() if any(n + o for n, o in by_hour.values())),
        left_out=tuple(sorted(left_out)),
    )


def problem_of(found: DependentsJudgement, *, alpha: float) -> ProblemRecord | None:
    """The 'dependents crash more with this version' problem, when the pooled test says so."""
    result = found.assessment
    if result.verdict != sequential.Finding.REGRESSED:
        return None
    return ProblemRecord(
        kind=ProblemKind.DEPENDENTS,
        report_count=result.new,
        system_count=0,
        difference=round(result.lower, 3),
        detail=detail_words(found, alpha=alpha)[:500],
    )


def _ratio(result: sequential.SequentialResult) -> str:
    if result.ratio is None:
        return "crashes only with it" if result.new and not result.old else "too few crashes"
    return ratio_range(result.ratio, result.lower, result.upper)


def detail_words(found: DependentsJudgement, *, alpha: float) -> str:
    """'its dependents crash 2.4× (likely above 1.6×) as often with this version: firefox
    3.1× (likely above 1.8×, 140 crash events with it), …; 312 crash events of 3 dependents,
    about 40% of their machines on it: above 1 with 99% confidence (sequential test of its
    dependents)'. Every figure in words, never a list's repr."""
    result = found.assessment
    named = [
        f"{d.name} {_ratio(d.result)}, {plural(d.new, 'crash event')} with it"
        for d in found.dependents
    ]
    which = "; ".join(named) if named else "no one dependent stands out"
    rest = found.counted - len(found.dependents)
    if named and rest > 0:
        which += f"; {plural(rest, 'other dependent')}"
    words = (
        f"its dependents crash {_ratio(result)} as often with this version as with the "
        f"previous one ({which}); {plural(result.new + result.old, 'crash event')} of "
        f"{plural(found.counted, 'dependent')}, about {round(100 * found.share)}% of their "
        f"machines on it: above 1 with {100 * (1 - alpha):.0f}% confidence ({TEST_NAME})"
    )
    if found.left_out:
        words += f"; own new versions left out: {', '.join(found.left_out[:3])}"
        if len(found.left_out) > 3:
            words += f" and {len(found.left_out) - 3} more"
    return words


# Reads ------------------------------------------------------------------------------------


def publications_judge(
    publications: Sequence[Publication], *, test: sequential.SequentialTest, now: datetime
) -> dict[int, DependentsJudgement]:
    """The dependents' judgement of each update with a previous version, by publication
    id: four queries however many updates."""
    libraries = [p for p in publications if p.previous_version]
    if not libraries:
        return {}
    last_hour = hour_of(now)
    starts = {p.pk: max(hour_of(p.date_published), last_hour - WINDOW) for p in libraries}
    hours_of = {p.pk: int((last_hour - starts[p.pk]) / HOUR) + 1 for p in libraries}
    rows = list(
        DependentCrashCount.objects.filter(
            library_id__any=[p.pk for p in libraries], hour__gte=min(starts.values())
        ).values_list(
            "library_id",
            "dependent_id",
            "dependent__name",
            "dependent_version",
            "hour",
            "on_new",
            "on_old",
        )
    )
    if not rows:
        return {}
    own = _own_new_versions(libraries, {row[1] for row in rows})
    counts: dict[int, dict[str, dict[int, tuple[int, int]]]] = defaultdict(dict)
    left_out: dict[int, set[str]] = defaultdict(set)
    by_pk = {p.pk: p for p in libraries}
    for library_id, dependent_id, name, version, hour, on_new, on_old in rows:
        library = by_pk[library_id]
        if hour < starts[library_id]:
            continue
        if _is_own(own.get((library.release_id, dependent_id, version)), library):
            left_out[library_id].add(f"{name} {version}")
            continue
        h = int((hour - starts[library_id]) / HOUR)
        known = counts[library_id].setdefault(name, {}).get(h, (0, 0))
        counts[library_id][name][h] = (known[0] + on_new, known[1] + on_old)
    # The uptake of the libraries some dependent's crashes name only (hundreds of the
    # 20,000 updates a tick may hold).
    judged = [p for p in libraries if p.pk in counts or p.pk in left_out]
    histories = reads.histories(judged)
    reported = fleet_sightings(judged, starts={p.pk: starts[p.pk] for p in judged}, hours=hours_of)
    belief = exposure.prior(settings.PHASING_UPTAKE_HOURS)
    inputs = stamps.digest((test, settings.PHASING_UPTAKE_HOURS, settings.PHASING_JUDGE_IGNORERS))
    read: dict[
        int, tuple[list[int], exposure.Sightings, list[str], dict[str, dict[int, tuple[int, int]]]]
    ] = {}
    keys: dict[int, str] = {}
    for library in judged:
        hours = hours_of[library.pk]
        percentages = installs.hourly_percentages(
            histories[library.pk], start=starts[library.pk], hours=hours
        )
        seen = exposure.Sightings(percentages, [0] * hours, [0] * hours)
        if library.pk in reported:
            seen = exposure.with_reported(seen, *reported[library.pk])
        omitted = sorted(left_out.get(library.pk, ()))
        by_dependent = counts.get(library.pk, {})
        read[library.pk] = (percentages, seen, omitted, by_dependent)
        # Everything its judgement is a function of: found the same again (most ticks of an
        # hour), the judgement the tick before kept stands (overview.judges.reuse).
        keys[library.pk] = reuse.stamp_key(
            library.pk,
            (
                "dependents",
                inputs,
                tuple(percentages),
                tuple(seen.new),
                tuple(seen.old),
                tuple(sorted((name, tuple(sorted(h.items()))) for name, h in by_dependent.items())),
                tuple(omitted),
            ),
        )
    found: dict[int, DependentsJudgement] = reuse.recall(keys)
    fresh: dict[str, DependentsJudgement] = {}
    for library in judged:
        if library.pk in found:
            continue
        percentages, seen, omitted, by_dependent = read[library.pk]
        uptake = exposure.fit(seen, belief)
        high, low, middle = exposure.bracketed_shares(
            percentages, uptake, ignorers=settings.PHASING_JUDGE_IGNORERS
        )
        found[library.pk] = fresh[keys[library.pk]] = judge_counts(
            test,
            by_dependent,
            share_low=low.tolist(),
            share_high=high.tolist(),
            share_middle=middle.tolist(),
            left_out=omitted,
        )
    reuse.remember(fresh)
    return found


# (release, package, version) → (earliest publication, whether one of them still phases)
Own = dict[tuple[int, int, str], tuple[datetime, bool]]


def _own_new_versions(libraries: Sequence[Publication], dependents: set[int]) -> Own:
    """The dependents' publications that may be their own new versions: one query."""
    earliest = min(p.date_published for p in libraries) - OWN_VERSION_WINDOW
    rows = (
        Publication.objects.filter(
            release_id__in={p.release_id for p in libraries}, source_package_id__any=dependents
        )
        .exclude(pocket=Pocket.RELEASE)
        .filter(Q(state__in=ACTIVE_STATES) | Q(date_published__gte=earliest))
        .values_list("release_id", "source_package_id", "version", "date_published", "state")
    )
    own: Own = {}
    for release_id, package_id, version, published, state in rows:
        key = (release_id, package_id, version)
        first, phasing = own.get(key, (published, False))
        own[key] = (min(first, published), phasing or state in ACTIVE_STATES)
    return own


def _is_own(found: tuple[datetime, bool] | None, library: Publication) -> bool:
    if found is None:
        return False
    published, phasing = found
    return phasing or published >= library.date_published - OWN_VERSION_WINDOW


# The controller's hook -------------------------------------------------------------------


def judgements_of(
    candidates: Sequence[Publication], *, test: sequential.SequentialTest, now: datetime
) -> tuple[dict[int, DependentsJudgement], dict[int, str]]:
    """publications_judge for the tick, and why it failed for the updates it could not
    judge: each update alone after a failure, so one bad update fails alone (and holds,
    as when the sequential judge fails: never a silent pass)."""
    try:
        return publications_judge(candidates, test=test, now=now), {}
    except Exception:
        log.exception("the dependents' test could not judge this tick; judging each alone")
    found: dict[int, DependentsJudgement] = {}
    failures: dict[int, str] = {}
    for publication in candidates:
        try:
            found.update(publications_judge([publication], test=test, now=now))
        except Exception as exc:
            log.exception("the dependents' test could not judge publication %s", publication.pk)
            failures[publication.pk] = (
                f"the test of its dependents failed: {type(exc).__name__}: {exc}"
            )
    return found, failures


def with_problem(
    answer: CrashAnswer,
    rules: policy.Rules,
    found: DependentsJudgement | None,
    *,
    alpha: float,
) -> CrashAnswer:
    """The answer with the dependents' problem when the policy's judge is the sequential
    one (Ubuntu's rules have no such problem: an update they judge is judged as Ubuntu
    would) and the pooled test says the dependents crash more."""
    if answer.error or rules.judge != policy.SEQUENTIAL or found is None:
        return answer
    record = problem_of(found, alpha=alpha)
    if record is None:
        return answer
    return replace(answer, problems=(*answer.problems, record))
