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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings

from overview.evidence.counters import hour_of
from overview.evidence.fleet_reads import fleet_sightings
from overview.judges import anchored, exposure, reads, release_uptake, reuse, sequential
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
    """The sequential test's judgement of each publication, by publication id."""
    if not publications:
        return {}
    last_hour = hour_of(now)
    starts = {p.pk: max(hour_of(p.date_published), last_hour - WINDOW) for p in publications}
    first = min(starts.values())
    histories = reads.histories(publications)
    counts, reports = reads.hourly_counts(publications, since=first)
    seen = reads.sightings(publications, since=first)
    baselines = reads.baselines(publications)
    activity = reads.activity(publications, since=first - DAY)
    others = reads.controls(publications, since=first)

    hours_of = {
        p.pk: int((last_hour - starts[p.pk]) / timedelta(hours=1)) + 1 for p in publications
    }
    percentages = {
        p.pk: exposure.hourly_percentages(histories[p.pk], start=starts[p.pk], hours=hours_of[p.pk])
        for p in publications
    }
    own_sightings = {
        p.pk: reads.sightings_of(p, seen, start=starts[p.pk], percentages=percentages[p.pk])
        for p in publications
    }
    # Machines that report their version themselves (the fleet agent): measured uptake.
    reported = fleet_sightings(publications, starts=starts, hours=hours_of)
    for pk, (new, old) in reported.items():
        own_sightings[pk] = exposure.with_reported(own_sightings[pk], new, old)
    by_package = reads.reports_by_package(reports)
    deficits = {
        p.pk: reads.deficit(
            p,
            reports,
            baselines,
            activity,
            start=starts[p.pk],
            hours=hours_of[p.pk] - 1,
            by_package=by_package,
            others=others.get(p.release_id),
        )
        for p in publications
    }
    # The previous version's history counts where a level shift of the whole release
    # cancels in it (measured against the release's other packages); against its own days
    # alone only with PHASING_JUDGE_HISTORY (docs/judges.md, "the previous version's history").
    history = settings.PHASING_JUDGE_HISTORY
    deficits = {
        pk: deficit if deficit is not None and (history or deficit.relative) else None
        for pk, deficit in deficits.items()
    }
    default = exposure.prior(settings.PHASING_UPTAKE_HOURS)
    by_release: dict[int, list[tuple[exposure.Sightings, exposure.Deficit | None]]] = defaultdict(
        list
    )
    for p in publications:
        by_release[p.release_id].append((own_sightings[p.pk], deficits[p.pk]))
    beliefs = {
        release: release_uptake.pooled(found, default) for release, found in by_release.items()
    }

    test = judge_settings()
    keys = {
        p.pk: reuse.input_key(
            p.pk,
            version_keys=(
                (p.release_id, p.source_package_id, p.version),
                (p.release_id, p.source_package_id, p.previous_version),
            ),
            counts=counts,
            reports=reports,
            start=starts[p.pk],
            hours=hours_of[p.pk],
            inputs=(
                test,
                getattr(settings, "PHASING_UPTAKE_ESTIMATE_FACTOR", 1),
                bool(p.previous_version),
                percentages[p.pk],
                own_sightings[p.pk],
                deficits[p.pk],
                beliefs[p.release_id],
            ),
        )
        for p in publications
    }
    judgements = reuse.recall(keys)  # unchanged evidence: the judgement it had
    fresh = {}
    for p in publications:
        if p.pk in judgements:
            continue
        uptake = _biased(exposure.fit(own_sightings[p.pk], beliefs[p.release_id], deficits[p.pk]))
        judgement = _judge(
            p,
            test,
            uptake,
            percentages[p.pk],
            counts,
            start=starts[p.pk],
            now=now,
        )
        anchor = _anchor(p, deficits[p.pk], counts, reports, start=starts[p.pk])
        if anchor is not None and judgement.comparable:
            judgement = _anchored(
                judgement,
                test,
                anchor,
                own_sightings[p.pk],
                _biased(beliefs[p.release_id]),
                counts,
                publication=p,
                start=starts[p.pk],
            )
        judgements[p.pk] = fresh[keys[p.pk]] = judgement
    reuse.remember(fresh)
    return judgements


def _anchor(
    publication: Publication,
    deficit: exposure.Deficit | None,
    counts: reads.Counts,
    reports: reads.Counts,
    *,
    start: datetime,
) -> anchored.Anchor | None:
    """The previous version's history as the anchored test's yardstick, in crash events
    (the history counts reports: scaled by the events a report makes since publication)."""
    if deficit is None or not deficit.hours:
        return None
    key = (publication.release_id, publication.source_package_id, publication.previous_version)
    moments = [start + timedelta(hours=h) for h in range(len(deficit.hours))]
    events = sum(counts.get(key, {}).get(m, 0) for m in moments)
    stored = sum(reports.get(key, {}).get(m, 0) for m in moments)
    per_report = events / stored if stored else 1.0
    return anchored.Anchor(
        expected=[per_report * e for e in deficit.expected],
        spread=deficit.spread,
        level_error=deficit.level_error,
        noise=deficit.block_noise((len(deficit.hours) + 23) // 24),
        day_sums_only=deficit.relative,
    )


def _anchored(
    judgement: Judgement,
    test: sequential.SequentialTest,
    anchor: anchored.Anchor,
    sightings: exposure.Sightings,
    belief: exposure.Uptake,
    counts: reads.Counts,
    *,
    publication: Publication,
    start: datetime,
) -> Judgement:
    """The judgement with the anchored test deciding whether the rate rose: it needs no
    share taken at the fast end, so it is the one that halts where a history exists."""
    key = (publication.release_id, publication.source_package_id)
    moments = [start + timedelta(hours=h) for h in range(len(anchor.expected))]
    new_counts = counts.get((*key, publication.version), {})
    old_counts = counts.get((*key, publication.previous_version), {})
    found = anchored.anchored(
        test,
        new=[new_counts.get(m, 0) for m in moments],
        old=[old_counts.get(m, 0) for m in moments],
        shares=exposure.shares_by_uptake(sightings.percentages[: len(moments)]),
        log_belief=exposure.log_belief(belief),
        side=exposure.sightings_log_likelihood(sightings),
        anchor=anchor,
    )
    assessment = judgement.assessment
    if found.evidence >= 1 / test.alpha:
        assessment = replace(
            assessment,
            verdict=sequential.Finding.REGRESSED,
            ratio=found.ratio,
            lower=found.lower,
            evidence=found.evidence,
            needed=0,
        )
    else:
        verdict = assessment.verdict
        if verdict == sequential.Finding.REGRESSED:
            verdict = sequential.Finding.INSUFFICIENT
        assessment = replace(
            assessment,
            verdict=verdict,
            ratio=found.ratio if found.ratio is not None else assessment.ratio,
            lower=min(assessment.lower, 1.0),
            evidence=found.evidence,
        )
    return replace(judgement, assessment=assessment)


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
) -> Judgement:
    # Fast uptake: the most machines on the new version (the regression test's share).
    high = exposure.installed_shares(percentages, uptake.fast)
    low = exposure.installed_shares(percentages, uptake.slow)
    middle = exposure.installed_shares(percentages, uptake.hours)
    key = (publication.release_id, publication.source_package_id)
    new_counts = counts.get((*key, publication.version), {})
    old_counts = (
        counts.get((*key, publication.previous_version), {}) if publication.previous_version else {}
    )
    comparable = bool(publication.previous_version) and bool(old_counts or new_counts)
    hours = []
    excess = 0.0
    for h in range(len(percentages)):
        moment = start + timedelta(hours=h)
        new, old = new_counts.get(moment, 0), old_counts.get(moment, 0)
        if not comparable or new + old == 0:
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
