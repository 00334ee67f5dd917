"""What the sequential judge reads of the crash data held locally: one query each however
many updates (overview.judges.pipeline does the arithmetic).

Percentage histories from the events, crash events and reports hour by hour
(HourlyCrashCount), the previous version's days before the update (CrashCounter), how busy
each hour of a release was, and the machines seen with each version in other packages'
reports (VersionSighting).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import numpy as np
from django.conf import settings
from django.db.models import Sum

from overview.evidence.counters import hour_of
from overview.judges import exposure, installs
from overview.models import CrashCounter, HourlyCrashCount, VersionSighting
from packages.models import PhasingEvent, Publication

DAY = timedelta(days=1)
# Reports an hour, on average, other packages of the release need before their hours say
# how busy each hour is (at 200, one hour's count is within about 7 % of its mean).
BUSY_HOURS_MIN_REPORTS = 200
# ... and hours counted among the 24 up to one before it says how busy that one is (fewer:
# even hours).
BUSY_HOURS_MIN_KNOWN = 12


def histories(publications: Sequence[Publication]) -> dict[int, list[tuple[datetime, int]]]:
    """(moment, percentage after it) of each publication, from publication on: one query."""
    histories: dict[int, list[tuple[datetime, int]]] = {
        p.pk: [(p.date_published, p.phased_update_percentage)] for p in publications
    }
    events = (
        PhasingEvent.objects.filter(publication_id__any=[p.pk for p in publications])
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


def hourly_counts(
    publications: Sequence[Publication], *, since: datetime, versions: set[str] | None = None
) -> tuple[Counts, Counts]:
    """(release, package, version) → hour → crash events, and reports, for both versions
    (and any other of `versions`, those of every update of a tick some of whose updates are
    read): one query."""
    if versions is None:
        versions = {p.version for p in publications} | {
            p.previous_version for p in publications if p.previous_version
        }
    rows = HourlyCrashCount.objects.filter(
        source_package_id__any={p.source_package_id for p in publications},
        release_id__in={p.release_id for p in publications},
        version__any=versions,
        hour__gte=since,
    ).values_list("release_id", "source_package_id", "version", "hour", "events", "reports")
    counts: Counts = defaultdict(dict)
    reports: Counts = defaultdict(dict)
    for release_id, package_id, version, hour, events, stored in rows:
        counts[(release_id, package_id, version)][hour] = events
        reports[(release_id, package_id, version)][hour] = stored
    return counts, reports


def baselines(publications: Sequence[Publication]) -> dict[int, list[int]]:
    """The previous version's crash reports, day by day, over the fifteen days before each
    update (every machine ran it then), by publication: one query."""
    days = settings.PHASING_RATE_BASELINE_DAYS
    rows = CrashCounter.objects.filter(
        release_id__in={p.release_id for p in publications},
        source_package_id__any={p.source_package_id for p in publications},
        version__any={p.previous_version for p in publications if p.previous_version},
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


def deficit(
    publication: Publication,
    reports: Counts,
    baselines: dict[int, list[int]],
    activity: dict[int, dict[datetime, int]],
    *,
    start: datetime,
    hours: int,
    by_package: dict[tuple[int, int], list[dict[datetime, int]]] | None = None,
    others: Controls | None = None,
    series: dict[int, HourlySeries | None] | None = None,
) -> exposure.Deficit | None:
    """The previous version's reports in each complete hour since publication (`hours` of
    them), against its history, with how busy each hour was: None without a history.
    With the release's `others` (controls), against its history relative to theirs when
    they are enough to say (exposure.Deficit.relative_to). `series`: each release's
    `activity` as HourlySeries.of made it, once for all its updates."""
    history = baselines.get(publication.pk, [])
    if not publication.previous_version or start != hour_of(publication.date_published):
        return None
    key = (publication.release_id, publication.source_package_id)
    old = reports.get((*key, publication.previous_version), {})
    moments = installs.hours_from(start, hours)
    counts = [old.get(moment, 0) for moment in moments]
    profile = busy_hours(
        publication,
        reports,
        activity.get(publication.release_id, {}),
        moments,
        own=None if by_package is None else by_package.get(key, []),
        series=None if series is None else series.get(publication.release_id),
    )
    if others is not None:
        # The history's days: the last len(history) before publication.
        end = publication.date_published.date()
        days = [end - timedelta(days=len(history) - d) for d in range(len(history))]
        relative = exposure.Deficit.relative_to(
            history,
            [others.days.get(day, 0) for day in days],
            counts,
            [others.hours.get(moment, 0) for moment in moments],
            profile,
        )
        if relative is not None:
            return relative
    return exposure.Deficit.from_history(history, counts, profile)


def reports_by_package(reports: Counts) -> dict[tuple[int, int], list[dict[datetime, int]]]:
    """Each package's hourly reports, every version, by (release, package): read once a
    tick, so that finding a package's own reports does not scan every package's."""
    found: dict[tuple[int, int], list[dict[datetime, int]]] = defaultdict(list)
    for (release_id, package_id, _version), counts in reports.items():
        found[(release_id, package_id)].append(counts)
    return found


def activity(
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


@dataclass(frozen=True)
class Controls:
    """The release's packages that are not being phased, all together: their crash
    reports day by day before the updates and hour by hour since. What the previous
    version's crashes are measured against, so that what moves every package (a busy
    weekday, a release-wide shock, the time of day, reports still on their way) cancels."""

    days: dict[date, int]
    hours: dict[datetime, int]


def controls(publications: Sequence[Publication], *, since: datetime) -> dict[int, Controls]:
    """The release's other packages (none of these publications' packages): reports by
    day over the baseline days before the earliest publication, and by hour from `since`,
    by release: two queries."""
    releases = {p.release_id for p in publications}
    phased = {p.source_package_id for p in publications}
    first = min(p.date_published.date() for p in publications) - timedelta(
        days=settings.PHASING_RATE_BASELINE_DAYS
    )
    found: dict[int, Controls] = {release: Controls({}, {}) for release in releases}
    days = (
        CrashCounter.objects.filter(
            release_id__in=releases,
            day__gte=first,
            day__lt=max(p.date_published.date() for p in publications),
        )
        .exclude(source_package_id__any=phased)
        .values("release_id", "day")
        .annotate(total=Sum("count"))
        .values_list("release_id", "day", "total")
    )
    for release_id, day, total in days:
        found[release_id].days[day] = total
    hours = (
        HourlyCrashCount.objects.filter(release_id__in=releases, hour__gte=since)
        .exclude(source_package_id__any=phased)
        .values("release_id", "hour")
        .annotate(total=Sum("reports"))
        .values_list("release_id", "hour", "total")
    )
    for release_id, hour, total in hours:
        found[release_id].hours[hour] = total
    return found


@dataclass(frozen=True)
class HourlySeries:
    """Counts kept by the hour (a release's activity) as an array, hour by hour from the
    earliest: made once for a release and sliced for each of its updates (busy_hours),
    where placing every hour of the release for every update was a tenth of a tick that
    judges every update."""

    earliest: datetime | None  # the first key, the array's hour 0
    counts: np.ndarray  # float: sums of whole numbers, exact in any order

    # More hours than a judge's window and history ever span: such a series is not made.
    LONGEST = 24 * 400

    @classmethod
    def of(cls, counts: dict[datetime, int]) -> HourlySeries | None:
        """The series, or None when the keys span more than LONGEST hours."""
        if not counts:
            return cls(None, np.zeros(0))
        earliest = min(counts)
        span = (max(counts) - earliest) // installs.HOUR + 1
        if span > cls.LONGEST:
            return None
        series = np.zeros(span)
        for moment, count in counts.items():
            # A key off the earliest's hours is no hour of the series (installs.hour_index).
            h = installs.hour_index(moment, start=earliest, hours=span)
            if h is not None:
                series[h] += count
        return cls(earliest, series)

    def window(self, start: datetime, length: int) -> np.ndarray | None:
        """The counts of the `length` hours from `start`, as installs.hour_index places
        them; None when `start` is not on the series' hours (then place them one by one)."""
        out = np.zeros(length)
        if self.earliest is None:
            return out
        offset, rest = divmod(start - self.earliest, installs.HOUR)
        if rest:
            return None
        low, high = max(offset, 0), min(offset + length, len(self.counts))
        if low < high:
            out[low - offset : high - offset] = self.counts[low:high]
        return out


def busy_hours(
    publication: Publication,
    reports: Counts,
    activity: dict[datetime, int],
    moments: list[datetime],
    *,
    own: list[dict[datetime, int]] | None = None,
    series: HourlySeries | None = None,
) -> list[float] | None:
    """How busy each hour was against the day around it, from the other packages' reports
    of the release (each hour over the mean of the 24 up to it, so that a slow rise over
    days, other updates' regressions say, is not read as the time of day): None, even
    hours, when they are too few to say. `series`: `activity` as HourlySeries.of made it."""
    if not moments:
        return None
    if own is None:
        key = (publication.release_id, publication.source_package_id)
        own = [counts for (r, p, _version), counts in reports.items() if (r, p) == key]

    first = moments[0] - timedelta(hours=23)
    # Hours before the first one with any report are hours nobody counted (a deployment
    # newer than a day, a backtest without hourly history), not quiet ones: read as zeros
    # they would make the first day's hours look many times busier than the day around
    # them, and a healthy update's crashes look like a rise.
    if series is not None and series.earliest is not None:
        counted_from = series.earliest
    else:
        counted_from = min(activity, default=moments[-1] + timedelta(hours=1))
    # As arrays over the hours from `first` (the counts are whole numbers, so every sum
    # below is exact in any order): a tick asks this for thousands of updates.
    length = len(moments) + 23
    others = series.window(first, length) if series is not None else None
    placed = [(-1, counts) for counts in own]
    if others is None:
        others = np.zeros(length)
        placed.insert(0, (1, activity))
    for sign, counts in placed:
        for moment, count in counts.items():
            h = installs.hour_index(moment, start=first, hours=length)
            if h is not None:
                others[h] += sign * count
    known = np.arange(length) >= -((first - counted_from) // installs.HOUR)  # counted on
    if not known.any() or others[known].sum() / known.sum() < BUSY_HOURS_MIN_REPORTS:
        return None
    # Each hour against the known hours of the 24 up to it.
    sums = np.concatenate(([0.0], np.cumsum(np.where(known, others, 0.0))))
    seen = np.concatenate(([0], np.cumsum(known)))
    window_sums, window_known = sums[24:] - sums[:-24], seen[24:] - seen[:-24]
    mean = np.where(
        window_known >= BUSY_HOURS_MIN_KNOWN, window_sums / np.maximum(window_known, 1), 0.0
    )
    here, here_known = others[23:], known[23:]
    ratio = np.divide(here, mean, out=np.ones(len(moments)), where=(mean > 0) & here_known)
    profile: list[float] = ratio.tolist()
    return profile


def sightings(
    publications: Sequence[Publication], *, since: datetime
) -> dict[tuple[int, str], dict[datetime, dict[str, int]]]:
    """(release, binary) → hour → version → machines: one query."""
    binaries = {b for p in publications for b in (p.binaries or ()) if isinstance(b, str)}
    rows = VersionSighting.objects.filter(
        release_id__in={p.release_id for p in publications}, binary__any=binaries, hour__gte=since
    ).values_list("release_id", "binary", "hour", "version", "machines")
    seen: dict[tuple[int, str], dict[datetime, dict[str, int]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for release_id, binary, hour, version, machines in rows:
        seen[(release_id, binary)][hour][version] = machines
    return seen


def sightings_of(
    publication: Publication,
    seen: dict[tuple[int, str], dict[datetime, dict[str, int]]],
    *,
    start: datetime,
    percentages: list[int],
) -> exposure.Sightings:
    """The publication's most widely seen binary, hour by hour: machines on its version,
    and on any other (a machine with two of its binaries would count twice if summed)."""
    best: dict[datetime, dict[str, int]] = {}
    most = 0
    for binary in publication.binaries or ():
        found = seen.get((publication.release_id, binary), {})
        total = sum(sum(v.values()) for v in found.values())
        if total > most:
            best, most = found, total
    # The hours with sightings only, not every hour since publication (weeks of hours for
    # an update long in phasing, for each of 20,000 updates a tick).
    hours = len(percentages)
    new, old = [0] * hours, [0] * hours
    for moment, versions in best.items():
        h = installs.hour_index(moment, start=start, hours=hours)
        if h is not None:
            on_new = versions.get(publication.version, 0)
            new[h] = on_new
            old[h] = sum(versions.values()) - on_new
    return exposure.Sightings(percentages=percentages, new=new, old=old)
