"""What could have changed in an update's evidence since its last judgement, read in a few
grouped queries that return one short row per update (overview.judges.reuse keeps each
judgement under its update's stamp).

The counters the judge reads only grow: the ingest adds reports (rows, or more to a row's
counts), never takes any away within the judge's window (retention drops whole days long
past it). So a group's number of rows and the sums of its counts change whenever anything
in it changes, and those few figures stand for the hundreds of rows the judge would read.
The stamps are conservative: an update's package counts all its versions, its sightings all
its binaries, so a change near an update may cost it a read, never a stale judgement.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db.models import Aggregate, Count, Max, Min, Q, QuerySet, Sum

from overview.judges import reads
from overview.models import CrashCounter, FleetReport, HourlyCrashCount, VersionSighting
from packages.models import PhasingEvent, Publication


def stamps_of(
    publications: Sequence[Publication],
    *,
    since: datetime,
    last_hour: datetime,
    activity: dict[int, dict[datetime, int]],
    others: dict[int, reads.Controls],
) -> dict[int, tuple[Any, ...]]:
    """Each publication's evidence stamp, by id: equal stamps, equal judgements (five
    queries however many updates; `activity` and `others` are the release's, already read)."""
    if not publications:
        return {}
    releases = {p.release_id for p in publications}
    # These updates' own packages, sent as one array: every package published in the
    # release would group every counter of the archive (at ten times today's archive a
    # settled tick of 200 updates took 10.5 s that way, 4.1 s this one).
    packages = {p.source_package_id for p in publications}
    ids = [p.pk for p in publications]
    hourly = _grouped(
        HourlyCrashCount.objects.filter(
            release_id__in=releases, source_package_id__any=packages, hour__gte=since
        ),
        ("release_id", "source_package_id"),
        rows=Count("id"),
        events=Sum("events"),
        reports=Sum("reports"),
        newest=Max("hour"),
    )
    # Every day: the baselines read the days before publication, the crash source today's.
    daily = _grouped(
        CrashCounter.objects.filter(release_id__in=releases, source_package_id__any=packages),
        ("release_id", "source_package_id"),
        rows=Count("id"),
        count=Sum("count"),
        newest=Max("day"),
    )
    binaries = {b for p in publications for b in (p.binaries or ()) if isinstance(b, str)}
    seen = _grouped(
        VersionSighting.objects.filter(
            release_id__in=releases, binary__any=binaries, hour__gte=since
        ),
        ("release_id", "binary"),
        rows=Count("id"),
        machines=Sum("machines"),
        newest=Max("hour"),
    )
    events = _grouped(
        PhasingEvent.objects.filter(publication_id__any=ids),
        ("publication_id",),
        rows=Count("id"),
        newest=Max("id"),
    )
    # One row per machine, replaced by its next report: a replacement moves the newest time.
    fleet = _grouped(
        FleetReport.objects.filter(publication_id__any=ids, reported_at__gte=since),
        ("publication_id",),
        rows=Count("id"),
        on_new=Count("id", filter=Q(on_new_version=True)),
        first=Min("reported_at"),
        newest=Max("reported_at"),
    )
    # The tick's versions: a package's own hours, against which how busy an hour was is
    # measured, are those of its versions among them (reads.hourly_counts).
    versions = sorted(
        {p.version for p in publications} | {p.previous_version for p in publications}
    )
    # Hashed once per release: every update's stamp carries it.
    release = {
        r: digest(
            (versions, release_stamp(activity.get(r, {}), others.get(r), last_hour=last_hour))
        )
        for r in releases
    }
    return {
        p.pk: (
            last_hour,
            p.release_id,
            p.source_package_id,
            p.version,
            p.previous_version,
            p.date_published,
            p.phased_update_percentage,
            tuple(p.binaries or ()),
            hourly.get((p.release_id, p.source_package_id)),
            daily.get((p.release_id, p.source_package_id)),
            tuple(seen.get((p.release_id, b)) for b in p.binaries or ()),
            events.get((p.pk,)),
            fleet.get((p.pk,)),
            release[p.release_id],
        )
        for p in publications
    }


def release_stamp(
    activity: dict[datetime, int], others: reads.Controls | None, *, last_hour: datetime
) -> tuple[Any, ...]:
    """What every update of a release reads of it (how busy each hour was, its other
    packages' days and hours), up to the last complete hour: the current hour's reports,
    which arrive all through it, are never read for a deficit."""
    return (
        min(activity, default=None),
        tuple(sorted((h, n) for h, n in activity.items() if h < last_hour)),
        tuple(sorted(others.days.items())) if others else (),
        tuple(sorted((h, n) for h, n in others.hours.items() if h < last_hour)) if others else (),
    )


def digest(value: Any) -> str:
    return hashlib.blake2b(pickle.dumps(value, protocol=5), digest_size=16).hexdigest()


def _grouped(
    queryset: QuerySet[Any], by: tuple[str, ...], **figures: Aggregate
) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """One row of `figures` per group of `by`, by its `by` values."""
    names = list(figures)
    rows = queryset.order_by().values(*by).annotate(**figures).values_list(*by, *names)
    return {tuple(row[: len(by)]): tuple(row[len(by) :]) for row in rows}
