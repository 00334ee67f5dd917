"""The sequential judge over the crash data held locally: reads and arithmetic, no writes.

For each update in phasing: its percentage history (from its events), the crash events of
its version and of the previous one hour by hour (HourlyCrashCount), and the machines seen
with each version in other packages' reports (VersionSighting) give the share of machines
on the new version (overview.exposure) and the test's verdict (overview.sequential). Three
queries however many updates; the controller writes what it decides from them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db.models import Sum

from overview import exposure, sequential
from overview.models import CrashCounter, HourlyCrashCount, VersionSighting
from overview.services.judging_counts import hour_of
from packages.models import PhasingEvent, Publication

# The hours looked at: since publication, but no further back than this (a long-halted
# update's verdict does not need its first month).
WINDOW = timedelta(days=14)
DAY = timedelta(days=1)
# Reports an hour, on average, other packages of the release need before their hours say
# how busy each hour is (at 200, one hour's count is within about 7 % of its mean).
BUSY_HOURS_MIN_REPORTS = 200
# ... and hours counted among the 24 up to one before it says how busy that one is (fewer:
# even hours).
BUSY_HOURS_MIN_KNOWN = 12


@dataclass(frozen=True)
class Judgement:
    """The sequential test's view of one update, and the exposure behind it."""

    assessment: sequential.Assessment
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


def test_settings() -> sequential.SequentialTest:
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
    histories = _histories(publications)
    counts, reports = _hourly_counts(publications, since=first)
    seen = _sightings(publications, since=first)
    baselines = _baselines(publications)
    activity = _activity(publications, since=first - DAY)

    hours_of = {
        p.pk: int((last_hour - starts[p.pk]) / timedelta(hours=1)) + 1 for p in publications
    }
    percentages = {
        p.pk: exposure.hourly_percentages(histories[p.pk], start=starts[p.pk], hours=hours_of[p.pk])
        for p in publications
    }
    own_sightings = {
        p.pk: _sightings_of(p, seen, start=starts[p.pk], percentages=percentages[p.pk])
        for p in publications
    }
    deficits = {
        p.pk: _deficit(
            p, reports, baselines, activity, start=starts[p.pk], hours=hours_of[p.pk] - 1
        )
        for p in publications
    }
    default = exposure.prior(settings.PHASING_UPTAKE_HOURS)
    by_release: dict[int, list[tuple[exposure.Sightings, exposure.Deficit | None]]] = defaultdict(
        list
    )
    for p in publications:
        by_release[p.release_id].append((own_sightings[p.pk], deficits[p.pk]))
    beliefs = {release: exposure.pooled(found, default) for release, found in by_release.items()}

    test = test_settings()
    judgements = {}
    for p in publications:
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
        judgements[p.pk] = judgement
    return judgements


def _anchor(
    publication: Publication,
    deficit: exposure.Deficit | None,
    counts: Counts,
    reports: Counts,
    *,
    start: datetime,
) -> sequential.Anchor | None:
    """The previous version's history as the anchored test's yardstick, in crash events
    (the history counts reports: scaled by the events a report makes since publication)."""
    if deficit is None or not deficit.hours:
        return None
    key = (publication.release_id, publication.source_package_id, publication.previous_version)
    moments = [start + timedelta(hours=h) for h in range(len(deficit.hours))]
    events = sum(counts.get(key, {}).get(m, 0) for m in moments)
    stored = sum(reports.get(key, {}).get(m, 0) for m in moments)
    per_report = events / stored if stored else 1.0
    return sequential.Anchor(
        expected=[per_report * e for e in deficit.expected],
        spread=deficit.spread,
        level_error=deficit.level_error,
    )


def _anchored(
    judgement: Judgement,
    test: sequential.SequentialTest,
    anchor: sequential.Anchor,
    sightings: exposure.Sightings,
    belief: exposure.Uptake,
    counts: Counts,
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
    found = sequential.anchored(
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
            verdict=sequential.Verdict.REGRESSED,
            ratio=found.ratio,
            lower=found.lower,
            evidence=found.evidence,
            needed=0,
        )
    else:
        verdict = assessment.verdict
        if verdict == sequential.Verdict.REGRESSED:
            verdict = sequential.Verdict.INSUFFICIENT
        assessment = replace(
            assessment,
            verdict=verdict,
            ratio=found.ratio if found.ratio is not None else assessment.ratio,
            lower=min(assessment.lower, 1.0),
            evidence=found.evidence,
        )
    return replace(judgement, assessment=assessment)


def _biased(uptake: exposure.Uptake) -> exposure.Uptake:
    """The estimate scaled by PHASING_UPTAKE_ESTIMATE_FACTOR: 1 in production; the
    backtest sets it to show what a wrong estimate of uptake does."""
    factor = settings.PHASING_UPTAKE_ESTIMATE_FACTOR
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


def _histories(publications: Sequence[Publication]) -> dict[int, list[tuple[datetime, int]]]:
    """(moment, percentage after it) of each publication, from publication on: one query."""
    histories: dict[int, list[tuple[datetime, int]]] = {
        p.pk: [(p.date_published, p.phased_update_percentage)] for p in publications
    }
    events = (
        PhasingEvent.objects.filter(publication__in=[p.pk for p in publications])
        .order_by("publication_id", "created_at", "id")
        .values_list("publication_id", "created_at", "old_percentage", "new_percentage")
    )
    started: set[int] = set()
    for publication_id, at, old, new in events:
        history = histories[publication_id]
        if publication_id not in started:
            started.add(publication_id)
            # What it was at publication: the first event's old percentage, or its new one.
            history[0] = (history[0][0], new if old is None else old)
        history.append((at, new))
    return histories


Counts = dict[tuple[int, int, str], dict[datetime, int]]


def _hourly_counts(
    publications: Sequence[Publication], *, since: datetime
) -> tuple[Counts, Counts]:
    """(release, package, version) → hour → crash events, and reports, for both versions:
    one query."""
    versions = {p.version for p in publications} | {
        p.previous_version for p in publications if p.previous_version
    }
    rows = HourlyCrashCount.objects.filter(
        source_package_id__in={p.source_package_id for p in publications},
        release_id__in={p.release_id for p in publications},
        version__in=versions,
        hour__gte=since,
    ).values_list("release_id", "source_package_id", "version", "hour", "events", "reports")
    counts: Counts = defaultdict(dict)
    reports: Counts = defaultdict(dict)
    for release_id, package_id, version, hour, events, stored in rows:
        counts[(release_id, package_id, version)][hour] = events
        reports[(release_id, package_id, version)][hour] = stored
    return counts, reports


def _baselines(publications: Sequence[Publication]) -> dict[int, list[int]]:
    """The previous version's crash reports, day by day, over the fifteen days before each
    update (every machine ran it then), by publication: one query."""
    days = settings.PHASING_RATE_BASELINE_DAYS
    rows = CrashCounter.objects.filter(
        release_id__in={p.release_id for p in publications},
        source_package_id__in={p.source_package_id for p in publications},
        version__in={p.previous_version for p in publications if p.previous_version},
        day__gte=min(p.date_published.date() for p in publications) - timedelta(days=days),
        day__lt=max(p.date_published.date() for p in publications),
    ).values_list("release_id", "source_package_id", "version", "day", "count")
    daily: dict[tuple[int, int, str], list[tuple[date, int]]] = defaultdict(list)
    for release_id, package_id, version, day, count in rows:
        daily[(release_id, package_id, version)].append((day, count))
    baselines = {}
    for p in publications:
        end = p.date_published.date()
        counted = {
            day: count
            for day, count in daily.get((p.release_id, p.source_package_id, p.previous_version), [])
            if end - timedelta(days=days) <= day < end
        }
        # From its first day with crashes: a version younger than the window has no days
        # before it, not days without crashes.
        first = min(counted, default=end)
        baselines[p.pk] = [
            counted.get(first + timedelta(days=d), 0) for d in range((end - first).days)
        ]
    return baselines


def _deficit(
    publication: Publication,
    reports: Counts,
    baselines: dict[int, list[int]],
    activity: dict[int, dict[datetime, int]],
    *,
    start: datetime,
    hours: int,
) -> exposure.Deficit | None:
    """The previous version's reports in each complete hour since publication (`hours` of
    them), against its history, with how busy each hour was: None without a history."""
    history = baselines.get(publication.pk, [])
    if not publication.previous_version or start != hour_of(publication.date_published):
        return None
    key = (publication.release_id, publication.source_package_id)
    old = reports.get((*key, publication.previous_version), {})
    moments = [start + timedelta(hours=h) for h in range(hours)]
    return exposure.Deficit.from_history(
        history,
        [old.get(moment, 0) for moment in moments],
        _busy_hours(publication, reports, activity.get(publication.release_id, {}), moments),
    )


def _activity(
    publications: Sequence[Publication], *, since: datetime
) -> dict[int, dict[datetime, int]]:
    """Reports of every package, by release and hour: one query."""
    rows = (
        HourlyCrashCount.objects.filter(
            release_id__in={p.release_id for p in publications}, hour__gte=since
        )
        .values("release_id", "hour")
        .annotate(total=Sum("reports"))
        .values_list("release_id", "hour", "total")
    )
    activity: dict[int, dict[datetime, int]] = defaultdict(dict)
    for release_id, hour, total in rows:
        activity[release_id][hour] = total
    return activity


def _busy_hours(
    publication: Publication,
    reports: Counts,
    activity: dict[datetime, int],
    moments: list[datetime],
) -> list[float] | None:
    """How busy each hour was against the day around it, from the other packages' reports
    of the release (each hour over the mean of the 24 up to it, so that a slow rise over
    days, other updates' regressions say, is not read as the time of day): None, even
    hours, when they are too few to say."""
    if not moments:
        return None
    own = [
        counts
        for (release_id, package_id, _version), counts in reports.items()
        if (release_id, package_id) == (publication.release_id, publication.source_package_id)
    ]

    def others(moment: datetime) -> float:
        return activity.get(moment, 0) - sum(c.get(moment, 0) for c in own)

    first = moments[0] - timedelta(hours=23)
    # Hours before the first one with any report are hours nobody counted (a deployment
    # newer than a day, a backtest without hourly history), not quiet ones: read as zeros
    # they would make the first day's hours look many times busier than the day around
    # them, and a healthy update's crashes look like a rise.
    counted_from = min(activity, default=moments[-1] + timedelta(hours=1))
    series: list[float | None] = [
        others(moment) if moment >= counted_from else None
        for moment in (first + timedelta(hours=h) for h in range(len(moments) + 23))
    ]
    known = [value for value in series if value is not None]
    if not known or sum(known) / len(known) < BUSY_HOURS_MIN_REPORTS:
        return None
    profile = []
    for h in range(len(moments)):
        day = [value for value in series[h : h + 24] if value is not None]
        mean = sum(day) / len(day) if len(day) >= BUSY_HOURS_MIN_KNOWN else 0.0
        here = series[h + 23]
        profile.append(here / mean if mean > 0 and here is not None else 1.0)
    return profile


def _sightings(
    publications: Sequence[Publication], *, since: datetime
) -> dict[tuple[int, str], dict[datetime, dict[str, int]]]:
    """(release, binary) → hour → version → machines: one query."""
    binaries = {b for p in publications for b in (p.binaries or ()) if isinstance(b, str)}
    rows = VersionSighting.objects.filter(
        release_id__in={p.release_id for p in publications}, binary__in=binaries, hour__gte=since
    ).values_list("release_id", "binary", "hour", "version", "machines")
    seen: dict[tuple[int, str], dict[datetime, dict[str, int]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for release_id, binary, hour, version, machines in rows:
        seen[(release_id, binary)][hour][version] = machines
    return seen


def _sightings_of(
    publication: Publication,
    seen: dict[tuple[int, str], dict[datetime, dict[str, int]]],
    *,
    start: datetime,
    percentages: list[int],
) -> exposure.Sightings:
    """The publication's most widely seen binary, hour by hour: machines on its version,
    and on any other (a machine with two of its binaries would count twice if summed)."""
    best: dict[datetime, dict[str, int]] = {}
    for binary in publication.binaries or ():
        found = seen.get((publication.release_id, binary), {})
        if sum(sum(v.values()) for v in found.values()) > sum(
            sum(v.values()) for v in best.values()
        ):
            best = found
    new, old = [], []
    for h in range(len(percentages)):
        versions = best.get(start + timedelta(hours=h), {})
        on_new = versions.get(publication.version, 0)
        new.append(on_new)
        old.append(sum(versions.values()) - on_new)
    return exposure.Sightings(percentages=percentages, new=new, old=old)


def share_words(judgement: Judgement) -> str:
    """'about 34% (measured: 812 machines seen, 2 days of the previous version's crashes)'."""
    share = round(100 * judgement.share)
    uptake = judgement.uptake
    if not uptake.measured:
        return f"about {share}% (modelled: uptake not yet measured)"
    signals = []
    if uptake.sightings:
        signals.append(f"{uptake.sightings} machines seen in other packages' reports")
    if uptake.deficit_hours:
        plural = "s" if uptake.deficit_hours != 1 else ""
        signals.append(
            f"{uptake.deficit_hours} hour{plural} of the previous version's crashes falling away"
        )
    return f"about {share}% (measured: {', '.join(signals)})"


def ratio_words(assessment: sequential.Assessment) -> str:
    """'1.1× (likely 0.8–1.6×)'."""
    if assessment.ratio is None:
        return "no rate yet"
    low = f"{assessment.lower:.2g}" if assessment.lower > 0 else "0"
    high = f"{assessment.upper:.2g}" if math.isfinite(assessment.upper) else "∞"
    return f"{assessment.ratio:.2g}× (likely {low}–{high}×)"
