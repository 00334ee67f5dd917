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
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.conf import settings

from overview import exposure, sequential
from overview.models import Assessment, HourlyCrashCount, VersionSighting
from overview.services.judging_counts import hour_of
from packages.models import PhasingEvent, Publication

# The hours looked at: since publication, but no further back than this (a long-halted
# update's verdict does not need its first month).
WINDOW = timedelta(days=14)


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
    frozen: dict[str, object]  # the shares of the completed hours, for Assessment.shares

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
    counts = _hourly_counts(publications, since=first)
    seen = _sightings(publications, since=first)
    frozen = dict(
        Assessment.objects.filter(publication__in=[p.pk for p in publications]).values_list(
            "publication_id", "shares"
        )
    )

    hours_of = {p.pk: int((last_hour - starts[p.pk]) / timedelta(hours=1)) + 1 for p in publications}
    percentages = {
        p.pk: exposure.hourly_percentages(histories[p.pk], start=starts[p.pk], hours=hours_of[p.pk])
        for p in publications
    }
    own_sightings = {
        p.pk: _sightings_of(p, seen, start=starts[p.pk], percentages=percentages[p.pk])
        for p in publications
    }
    default = exposure.prior(settings.PHASING_UPTAKE_HOURS)
    by_release: dict[int, list[exposure.Sightings]] = defaultdict(list)
    for p in publications:
        by_release[p.release_id].append(own_sightings[p.pk])
    beliefs = {release: exposure.pooled(found, default) for release, found in by_release.items()}

    test = test_settings()
    judgements = {}
    for p in publications:
        uptake = _biased(exposure.fit(own_sightings[p.pk], beliefs[p.release_id]))
        judgements[p.pk] = _judge(
            p,
            test,
            uptake,
            percentages[p.pk],
            counts,
            frozen=_Frozen.read(frozen.get(p.pk), start=starts[p.pk]),
            start=starts[p.pk],
            now=now,
        )
    return judgements


def _biased(uptake: exposure.Uptake) -> exposure.Uptake:
    """The estimate scaled by PHASING_UPTAKE_ESTIMATE_FACTOR: 1 in production; the
    backtest sets it to show what a wrong estimate of uptake does."""
    factor = settings.PHASING_UPTAKE_ESTIMATE_FACTOR
    if factor == 1:
        return uptake
    return exposure.Uptake(
        uptake.hours * factor, uptake.fast * factor, uptake.slow * factor, uptake.sightings
    )


def _judge(
    publication: Publication,
    test: sequential.SequentialTest,
    uptake: exposure.Uptake,
    percentages: list[int],
    counts: dict[tuple[int, int, str], dict[datetime, int]],
    *,
    frozen: _Frozen,
    start: datetime,
    now: datetime,
) -> Judgement:
    # Fast uptake: the most machines on the new version (the regression test's share).
    high = exposure.installed_shares(percentages, uptake.fast)
    low = exposure.installed_shares(percentages, uptake.slow)
    middle = exposure.installed_shares(percentages, uptake.hours)
    completed = int((hour_of(now) - start) / timedelta(hours=1))  # hours before this one
    low, high = frozen.apply(low, high, completed=completed)
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
        frozen=_Frozen.written(start, low[:completed], high[:completed]),
    )


@dataclass(frozen=True)
class _Frozen:
    """The shares of completed hours as the test first weighed them, from hour `start`."""

    start: datetime
    low: list[float]
    high: list[float]

    @classmethod
    def read(cls, stored: object, *, start: datetime) -> _Frozen:
        """What an Assessment kept, shifted to begin at `start` (the window moves on)."""
        if not isinstance(stored, dict) or "from" not in stored:
            return cls(start, [], [])
        try:
            begins = datetime.fromisoformat(str(stored["from"]))
            low = [float(x) for x in stored.get("low", [])]
            high = [float(x) for x in stored.get("high", [])]
        except (TypeError, ValueError):
            return cls(start, [], [])  # unreadable: weigh afresh rather than fail the tick
        skip = int((start - begins) / timedelta(hours=1))
        if skip < 0 or len(low) != len(high):
            return cls(start, [], [])
        return cls(start, low[skip:], high[skip:])

    def apply(
        self, low: np.ndarray, high: np.ndarray, *, completed: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The current estimates, with the hours already weighed as they were weighed."""
        low, high = low.copy(), high.copy()
        kept = min(len(self.low), completed, len(low))
        low[:kept], high[:kept] = self.low[:kept], self.high[:kept]
        return low, high

    @staticmethod
    def written(start: datetime, low: np.ndarray, high: np.ndarray) -> dict[str, object]:
        return {
            "from": start.isoformat(),
            "low": [round(float(x), 6) for x in low],
            "high": [round(float(x), 6) for x in high],
        }


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


def _hourly_counts(
    publications: Sequence[Publication], *, since: datetime
) -> dict[tuple[int, int, str], dict[datetime, int]]:
    """(release, package, version) → hour → crash events, for both versions: one query."""
    versions = {p.version for p in publications} | {
        p.previous_version for p in publications if p.previous_version
    }
    rows = HourlyCrashCount.objects.filter(
        source_package_id__in={p.source_package_id for p in publications},
        release_id__in={p.release_id for p in publications},
        version__in=versions,
        hour__gte=since,
    ).values_list("release_id", "source_package_id", "version", "hour", "events")
    counts: dict[tuple[int, int, str], dict[datetime, int]] = defaultdict(dict)
    for release_id, package_id, version, hour, events in rows:
        counts[(release_id, package_id, version)][hour] = events
    return counts


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
    """'about 34% (measured from 812 machines)' or 'about 34% (modelled)'."""
    share = round(100 * judgement.share)
    if judgement.uptake.measured:
        return f"about {share}% (measured from {judgement.uptake.sightings} machines)"
    return f"about {share}% (modelled: uptake not yet measured)"


def ratio_words(assessment: sequential.Assessment) -> str:
    """'1.1× (likely 0.8–1.6×)'."""
    if assessment.ratio is None:
        return "no rate yet"
    low = f"{assessment.lower:.2g}" if assessment.lower > 0 else "0"
    high = f"{assessment.upper:.2g}" if math.isfinite(assessment.upper) else "∞"
    return f"{assessment.ratio:.2g}× (likely {low}–{high}×)"
