"""The sequential judge over the crash data held locally: reads and arithmetic, no writes.

For each update in phasing: its percentage history (from its events), the crash events of
its version and of the previous one hour by hour (HourlyCrashCount), and the machines seen
with each version in other packages' reports (VersionSighting), and the previous version's
days before the update against the release's other packages' days and hours
(reads.controls) give the share of machines on the new version (overview.judges.exposure)
and the test's verdict (overview.judges.sequential, overview.judges.anchored). The same
number of queries however many updates; the controller writes what it decides from them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cached_property

from django.conf import settings

from overview.evidence.counters import hour_of
from overview.evidence.fleet_reads import fleet_sightings
from overview.judges import (
    exposure,
    installs,
    joint,
    reads,
    release_uptake,
    reuse,
    sequential,
    stamps,
)
from packages.domain import change_words as words
from packages.models import Publication

# The hours looked at: since publication, but no further back than this (a long-halted
# update's verdict does not need its first month).
WINDOW = timedelta(days=14)
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Judgement:
    """The sequential test's view of one update, and the exposure behind it."""

    assessment: sequential.SequentialResult
    uptake: exposure.Uptake
    share: float  # on the new version now (estimate)
    share_low: float
    share_high: float
    exposure_hours: float  # Σ share × hours: machine-hours on the new version per machine
    excess: float  # crash events on the new version beyond what its rate at the old would give
    comparable: bool  # there is a previous version, and crash data for it

    def averted(self, days: float) -> float | None:
        """Crashes a halt spares the machines that never took the update, over `days` at
        100%: the excess rate measured so far, on the share that did not get it."""
        if self.excess <= 0 or self.exposure_hours <= 0:
            return None
        rate = self.excess / self.exposure_hours  # excess per full-population hour
        return rate * (1 - self.share) * days * 24


def judge_settings() -> sequential.SequentialTest:
    return sequential.SequentialTest(
        alpha=settings.PHASING_JUDGE_ALPHA,
        tolerance=settings.PHASING_JUDGE_TOLERANCE,
        alpha_healthy=settings.PHASING_JUDGE_ALPHA_HEALTHY,
    )


def publications_judge(
    publications: Sequence[Publication], *, now: datetime
) -> dict[int, Judgement]:
    """The sequential test's judgement of each publication, by publication id.

    An update whose evidence stamp (overview.judges.stamps) is the one of its kept
    judgement is not read again: what its sightings and deficit measured counts in its
    release's belief, and its kept judgement stands while that belief is the one it was
    judged under (overview.judges.reuse)."""
    if not publications:
        return {}
    last_hour = hour_of(now)
    starts = {p.pk: max(hour_of(p.date_published), last_hour - WINDOW) for p in publications}
    first = min(starts.values())
    hours_of = {
        p.pk: int((last_hour - starts[p.pk]) / timedelta(hours=1)) + 1 for p in publications
    }
    activity = reads.activity(publications, since=first - DAY)
    others = reads.controls(publications, since=first)
    test = judge_settings()
    # The judge's settings, hashed once: every update's key carries them.
    inputs = stamps.digest(
        (
            test,
            getattr(settings, "PHASING_UPTAKE_ESTIMATE_FACTOR", 1),
            settings.PHASING_JUDGE_HISTORY,
            settings.PHASING_UPTAKE_HOURS,
            settings.PHASING_RATE_BASELINE_DAYS,
            settings.PHASING_JUDGE_IGNORERS,
        )
    )
    keys = {}
    if reuse.enabled():
        stamped = stamps.stamps_of(
            publications, since=first, last_hour=last_hour, activity=activity, others=others
        )
        keys = {pk: reuse.stamp_key(pk, (stamp, inputs)) for pk, stamp in stamped.items()}
    kept: dict[int, reuse.Kept] = reuse.recall(keys)  # unchanged evidence: not read again
    versions = {p.version for p in publications} | {
        p.previous_version for p in publications if p.previous_version
    }
    context = _Context(starts, hours_of, first, activity, others, versions)
    evidence = _evidence([p for p in publications if p.pk not in kept], context)
    beliefs, parts = _beliefs(publications, kept, evidence)
    # A kept judgement under another belief of its release: read and judged again.
    stale = [p for p in publications if p.pk in kept and kept[p.pk].belief != beliefs[p.release_id]]
    if stale:
        more = _evidence(stale, context)
        evidence.update(more)
        parts.update({pk: release_uptake.part_of(e.sightings, e.deficit) for pk, e in more.items()})
    judgements = {pk: k.judgement for pk, k in kept.items() if pk not in evidence}
    fresh = {}
    for p in publications:
        if p.pk not in evidence:
            continue
        found = evidence[p.pk]
        belief = beliefs[p.release_id]
        uptake = _biased(release_uptake.fitted(parts[p.pk], belief))
        anchor = joint.anchor_of(p, found.deficit, found.counts, found.reports, start=starts[p.pk])
        judgement = _judge(
            p,
            test,
            uptake,
            found.percentages,
            found.counts,
            start=starts[p.pk],
            now=now,
            together=anchor is not None,
        )
        if anchor is not None and judgement.comparable:
            judgement = joint.judged_together(
                judgement,
                test,
                anchor,
                found.sightings,
                _biased(belief),
                found.counts,
                publication=p,
                start=starts[p.pk],
            )
        judgements[p.pk] = judgement
        if p.pk in keys:
            fresh[keys[p.pk]] = reuse.Kept(parts[p.pk], belief, judgement)
    reuse.remember(fresh)
    return judgements


@dataclass(frozen=True)
class _Context:
    """What every update of the tick shares: its window, and the release's reads."""

    starts: dict[int, datetime]
    hours_of: dict[int, int]
    first: datetime
    activity: dict[int, dict[datetime, int]]
    others: dict[int, reads.Controls]
    versions: set[str]  # of every update of the tick, so a subset reads what the whole would

    @cached_property
    def series(self) -> dict[int, reads.HourlySeries | None]:
        """Each release's activity as an array, made once however often evidence is read
        (the fresh updates, then any whose kept judgement went stale)."""
        return {r: reads.HourlySeries.of(hours) for r, hours in self.activity.items()}


@dataclass(frozen=True)
class _Evidence:
    """What the judge read of one update."""

    percentages: list[int]
    sightings: exposure.Sightings
    deficit: exposure.Deficit | None
    counts: reads.Counts  # shared by the updates read together
    reports: reads.Counts


def _evidence(publications: Sequence[Publication], context: _Context) -> dict[int, _Evidence]:
    """Read what the judge needs of these updates: the same queries however many."""
    if not publications:
        return {}
    starts, hours_of, first = context.starts, context.hours_of, context.first
    histories = reads.histories(publications)
    counts, reports = reads.hourly_counts(publications, since=first, versions=context.versions)
    seen = reads.sightings(publications, since=first)
    baselines = reads.baselines(publications)
    percentages = {
        p.pk: installs.hourly_percentages(histories[p.pk], start=starts[p.pk], hours=hours_of[p.pk])
        for p in publications
    }
    own_sightings = {
        p.pk: reads.sightings_of(p, seen, start=starts[p.pk], percentages=percentages[p.pk])
        for p in publications
    }
    # Machines that report their version themselves (the fleet agent): measured uptake.
    reported = fleet_sightings(
        publications,
        starts={p.pk: starts[p.pk] for p in publications},
        hours={p.pk: hours_of[p.pk] for p in publications},
    )
    for pk, (new, old) in reported.items():
        own_sightings[pk] = exposure.with_reported(own_sightings[pk], new, old)
    by_package = reads.reports_by_package(reports)
    # The previous version's history counts where a level shift of the whole release
    # cancels in it (measured against the release's other packages); against its own days
    # alone only with PHASING_JUDGE_HISTORY (docs/judges.md, "the previous version's history").
    history = settings.PHASING_JUDGE_HISTORY
    found = {}
    for p in publications:
        deficit = reads.deficit(
            p,
            reports,
            baselines,
            context.activity,
            start=starts[p.pk],
            hours=hours_of[p.pk] - 1,
            by_package=by_package,
            others=context.others.get(p.release_id),
            series=context.series,
        )
        if deficit is not None and not (history or deficit.relative):
            deficit = None
        found[p.pk] = _Evidence(percentages[p.pk], own_sightings[p.pk], deficit, counts, reports)
    return found


def _beliefs(
    publications: Sequence[Publication],
    kept: dict[int, reuse.Kept],
    evidence: dict[int, _Evidence],
) -> tuple[dict[int, exposure.Uptake], dict[int, release_uptake.Part | None]]:
    """Each release's pooled belief about uptake, over every update of it, read or kept (in
    the tick's order, so that the sum is the one a tick reading every update makes), and
    the part of each update read."""
    default = exposure.prior(settings.PHASING_UPTAKE_HOURS)
    read = {pk: release_uptake.part_of(e.sightings, e.deficit) for pk, e in evidence.items()}
    by_release: dict[int, list[release_uptake.Part | None]] = defaultdict(list)
    for p in publications:
        by_release[p.release_id].append(read[p.pk] if p.pk in read else kept[p.pk].part)
    beliefs = {
        release: release_uptake.pooled_parts(parts, default)
        for release, parts in by_release.items()
    }
    return beliefs, read


def _biased(uptake: exposure.Uptake) -> exposure.Uptake:
    """The estimate scaled by PHASING_UPTAKE_ESTIMATE_FACTOR: unset (1) in production; the
    backtest sets it to show what a wrong estimate of uptake does."""
    factor = getattr(settings, "PHASING_UPTAKE_ESTIMATE_FACTOR", 1)  # set by the backtest only
    if factor == 1:
        return uptake
    return exposure.Uptake(
        uptake.hours * factor,
        uptake.fast * factor,
        uptake.slow * factor,
        uptake.sightings,
        uptake.deficit_hours,
    )


def _judge(
    publication: Publication,
    test: sequential.SequentialTest,
    uptake: exposure.Uptake,
    percentages: list[int],
    counts: dict[tuple[int, int, str], dict[datetime, int]],
    *,
    start: datetime,
    now: datetime,
    together: bool = False,
) -> Judgement:
    """The concurrent test's judgement; `together`: it decides with the anchored test,
    so its fast end takes the margin for a wrongly shaped uptake (exposure.SHAPE_MARGIN)."""
    # Fast uptake: the most machines on the new version (the regression test's share);
    # the three uptakes in one pass over the hours.
    high, low, middle = exposure.bracketed_shares(
        percentages,
        uptake,
        ignorers=settings.PHASING_JUDGE_IGNORERS,
        margin=exposure.SHAPE_MARGIN if together else 1.0,
    )
    key = (publication.release_id, publication.source_package_id)
    new_counts = counts.get((*key, publication.version), {})
    old_counts = (
        counts.get((*key, publication.previous_version), {}) if publication.previous_version else {}
    )
    comparable = bool(publication.previous_version) and bool(old_counts or new_counts)
    hours = []
    excess = 0.0
    # The hours with crashes only, in time order (not every hour since publication).
    for moment in sorted(new_counts.keys() | old_counts.keys()) if comparable else ():
        h = installs.hour_index(moment, start=start, hours=len(percentages))
        if h is None:
            continue
        new, old = new_counts.get(moment, 0), old_counts.get(moment, 0)
        if new + old == 0:
            continue
        hours.append(sequential.Hour(new, old, float(low[h]), float(high[h])))
        share = min(max(float(middle[h]), 1e-6), 1 - 1e-6)
        excess += new - old * share / (1 - share)
    share_now = float(middle[-1]) if len(middle) else 0.0
    return Judgement(
        assessment=test.assess(hours, share_now=share_now),
        uptake=uptake,
        share=share_now,
        share_low=float(low[-1]) if len(low) else 0.0,
        share_high=float(high[-1]) if len(high) else 0.0,
        exposure_hours=float(middle.sum()),
        excess=excess,
        comparable=comparable,
    )


def ratio_words(assessment: sequential.SequentialResult) -> str:
    """'1.1× (likely 0.8–1.6×)', '2.3× (likely above 1.2×)', or '' before any rate."""
    return words.ratio_range(assessment.ratio, assessment.lower, assessment.upper)
