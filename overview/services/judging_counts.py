"""The counters the sequential judge reads, kept up to date by the crash report ingest.

- HourlyCrashCount: crash events per release, package, version and UTC hour, a machine
  counted once per bucket and hour.
- VersionSighting: machines whose crash report of *another* package lists a binary at a
  version (apport's dependency versions), per release and hour: how the share of
  machines on a new version is measured (overview.exposure).

Both are recounted from the stored reports for exactly the hours a batch touched, so a
rerun, a late report or two ingests at once end in the same numbers. Reports from
automated testing and -proposed never count, as in the error tracker's counters.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection, models
from django.db.models import CharField, Count, Value
from django.db.models.functions import Cast, Concat, TruncHour

from overview.models import CrashReport, HourlyCrashCount, VersionSighting
from packages.models import Publication
from packages.services import bulk

# (release id, source package id, version, hour)
HourKey = tuple[int, int, str, datetime]


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def judging_counts_recount(keys: Iterable[HourKey]) -> None:
    """Recount both counters for these (release, package, version, hour) keys."""
    keys = set(keys)
    if not keys:
        return
    if bulk.uses_postgresql():
        _recount_sql(keys)
    else:
        _recount_orm(keys)


def _recount_orm(keys: set[HourKey]) -> None:
    hours = {k[3] for k in keys}
    releases = {k[0] for k in keys}
    reports = CrashReport.objects.filter(
        automated_testing=False,
        from_proposed=False,
        release_id__in=releases,
        reported_at__gte=min(hours),
        reported_at__lt=max(hours) + timedelta(hours=1),
    ).annotate(hour=TruncHour("reported_at"))
    events = Concat("system_id", Value(":"), Cast("bucket_id", CharField()))
    rows = (
        reports.filter(
            source_package_id__in={k[1] for k in keys}, version__in={k[2] for k in keys}
        )
        .values("release_id", "source_package_id", "version", "hour")
        .annotate(reports=Count("id"), events=Count(events, distinct=True))
    )
    HourlyCrashCount.objects.bulk_create(
        [
            HourlyCrashCount(
                release_id=r["release_id"],
                source_package_id=r["source_package_id"],
                version=r["version"],
                hour=r["hour"],
                reports=r["reports"],
                events=r["events"],
            )
            for r in rows
            if (r["release_id"], r["source_package_id"], r["version"], r["hour"]) in keys
        ],
        update_conflicts=True,
        unique_fields=("source_package", "release", "version", "hour"),
        update_fields=("reports", "events"),
        batch_size=1000,
    )
    touched = {(k[0], k[3]) for k in keys}
    own = _own_binaries()
    machines: dict[tuple[int, str, str, datetime], set[str]] = defaultdict(set)
    for release_id, package_id, hour, system, versions in reports.values_list(
        "release_id", "source_package_id", "hour", "system_id", "package_versions"
    ):
        if (release_id, hour) not in touched or not isinstance(versions, dict):
            continue
        mine = own.get(package_id, frozenset())
        for binary, version in versions.items():
            if binary not in mine and isinstance(version, str):
                machines[(release_id, binary[:200], version[:200], hour)].add(system)
    VersionSighting.objects.bulk_create(
        [
            VersionSighting(
                release_id=key[0], binary=key[1], version=key[2], hour=key[3], machines=len(seen)
            )
            for key, seen in machines.items()
        ],
        update_conflicts=True,
        unique_fields=("release", "binary", "version", "hour"),
        update_fields=("machines",),
        batch_size=1000,
    )


def _own_binaries() -> dict[int, frozenset[str]]:
    """The binary packages each source builds (a report of a package says nothing about
    its own uptake: those versions are the very labels the judge tests)."""
    own: dict[int, set[str]] = defaultdict(set)
    for package_id, binaries in Publication.objects.values_list("source_package_id", "binaries"):
        own[package_id].update(b for b in binaries or () if isinstance(b, str))
    return {package_id: frozenset(names) for package_id, names in own.items()}


def _table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _recount_sql(keys: set[HourKey]) -> None:
    """The same counts in two statements, for the keys given as arrays (a fixed number of
    parameters however many keys)."""
    report, hourly, sighting = _table(CrashReport), _table(HourlyCrashCount), _table(VersionSighting)
    publication = _table(Publication)
    ordered = sorted(keys)
    columns = [list(column) for column in zip(*ordered, strict=True)]
    counted = "NOT r.automated_testing AND NOT r.from_proposed"
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {hourly} AS h "
            "(release_id, source_package_id, version, hour, reports, events) "
            "SELECT k.release_id, k.source_package_id, k.version, k.hour, count(r.id), "
            "count(DISTINCT (r.system_id, r.bucket_id)) "
            "FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::timestamptz[]) "
            "AS k(release_id, source_package_id, version, hour) "
            f"JOIN {report} r ON r.release_id = k.release_id "
            "AND r.source_package_id = k.source_package_id AND r.version = k.version "
            "AND r.reported_at >= k.hour AND r.reported_at < k.hour + interval '1 hour' "
            f"AND {counted} "
            "GROUP BY k.release_id, k.source_package_id, k.version, k.hour "
            "ON CONFLICT (source_package_id, release_id, version, hour) "
            "DO UPDATE SET reports = EXCLUDED.reports, events = EXCLUDED.events",
            columns,
        )
        hours = sorted({(k[0], k[3]) for k in keys})
        cursor.execute(
            f'INSERT INTO {sighting} (release_id, "binary", version, hour, machines) '
            "SELECT k.release_id, left(v.key, 200), left(v.value, 200), k.hour, "
            "count(DISTINCT r.system_id) "
            "FROM unnest(%s::bigint[], %s::timestamptz[]) AS k(release_id, hour) "
            f"JOIN {report} r ON r.release_id = k.release_id "
            "AND r.reported_at >= k.hour AND r.reported_at < k.hour + interval '1 hour' "
            f"AND {counted} "
            "CROSS JOIN LATERAL jsonb_each_text("
            "CASE jsonb_typeof(r.package_versions) WHEN 'object' THEN r.package_versions "
            "ELSE '{}'::jsonb END) AS v "
            f"WHERE v.value IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {publication} p "
            "WHERE p.source_package_id = r.source_package_id "
            "AND jsonb_exists(p.binaries, v.key)) "
            "GROUP BY k.release_id, left(v.key, 200), left(v.value, 200), k.hour "
            'ON CONFLICT (release_id, "binary", version, hour) '
            "DO UPDATE SET machines = EXCLUDED.machines",
            [[h[0] for h in hours], [h[1] for h in hours]],
        )
