"""The counters the sequential judge reads, kept up to date by the crash report ingest.

- HourlyCrashCount: crash events per release, package, version and UTC hour, a machine
  counted once per bucket and hour (install failures are not crashes: left out).
- VersionSighting: machines whose crash report of *another* package lists a binary at a
  version (apport's dependency versions), per release and hour: how the share of
  machines on a new version is measured (overview.judges.exposure).
- DependentCrashCount: other packages' crash events on machines with an update's new
  version and with its previous one (overview.evidence.dependents_counts).

Here both are recounted from the stored reports for exactly the hours a batch touched:
SQLite's ingest does that, in SQL, since reading the rows back into Python cost more than
storing them. PostgreSQL's ingest adds to them instead (overview.evidence.ingest_sql),
to the same numbers (tests/overview/evidence/test_ingest.py holds the two to one
definition). Reports from
automated testing and -proposed never count, as in the error tracker's counters.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db import connection, models

from overview.evidence import dependents_counts
from overview.models import (
    CrashReport,
    ErrorBucket,
    HourlyCrashCount,
    ProblemType,
    VersionSighting,
)
from packages.binaries import own_binary_sql

# (release id, source package id, version, hour)
HourKey = tuple[int, int, str, datetime]


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def judging_counts_recount(keys: Iterable[HourKey]) -> None:
    """Recount both counters for these (release, package, version, hour) keys."""
    keys = set(keys)
    if not keys:
        return
    if connection.vendor == "postgresql":
        _recount_sql(keys)
    else:
        _recount_sqlite(keys)


def _recount_sqlite(keys: set[HourKey]) -> None:
    """The same counts as on PostgreSQL, in SQLite's SQL: the keys go into a scratch table
    (SQLite has no arrays), the dependency versions come out of json_each."""
    report, hourly, sighting = (
        _table(CrashReport),
        _table(HourlyCrashCount),
        _table(VersionSighting),
    )
    adapt = connection.ops.adapt_datetimefield_value
    counted = "NOT r.automated_testing AND NOT r.from_proposed"
    crash = _crash_bucket()
    hour = timedelta(hours=1)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS judging_keys "
            "(release_id, source_package_id, version, hour, hour_end)"
        )
        cursor.execute("CREATE TEMP TABLE IF NOT EXISTS judging_hours (release_id, hour, hour_end)")
        cursor.execute("DELETE FROM judging_keys")
        cursor.execute("DELETE FROM judging_hours")
        cursor.executemany(
            "INSERT INTO judging_keys VALUES (%s, %s, %s, %s, %s)",
            [(k[0], k[1], k[2], adapt(k[3]), adapt(k[3] + hour)) for k in sorted(keys)],
        )
        cursor.executemany(
            "INSERT INTO judging_hours VALUES (%s, %s, %s)",
            [(r, adapt(h), adapt(h + hour)) for r, h in sorted({(k[0], k[3]) for k in keys})],
        )
        # "WHERE true": SQLite needs it to read ON CONFLICT after a join as the upsert's.
        cursor.execute(
            f"INSERT INTO {hourly} "
            "(release_id, source_package_id, version, hour, reports, events) "
            "SELECT k.release_id, k.source_package_id, k.version, k.hour, count(r.id), "
            "count(DISTINCT r.system_id || ':' || r.bucket_id) "
            f"FROM judging_keys k JOIN {report} r ON r.release_id = k.release_id "
            "AND r.source_package_id = k.source_package_id AND r.version = k.version "
            f"AND r.reported_at >= k.hour AND r.reported_at < k.hour_end AND {counted} "
            f"AND {crash} WHERE true GROUP BY k.release_id, k.source_package_id, k.version, k.hour "
            "ON CONFLICT (source_package_id, release_id, version, hour) "
            "DO UPDATE SET reports = excluded.reports, events = excluded.events"
        )
        cursor.execute(
            f'INSERT INTO {sighting} (release_id, "binary", version, hour, machines) '
            "SELECT k.release_id, substr(v.key, 1, 200), substr(v.value, 1, 200), k.hour, "
            "count(DISTINCT r.system_id) "
            f"FROM judging_hours k JOIN {report} r ON r.release_id = k.release_id "
            f"AND r.reported_at >= k.hour AND r.reported_at < k.hour_end AND {counted} "
            "JOIN json_each(CASE WHEN json_valid(r.package_versions) "
            "AND json_type(r.package_versions) = 'object' THEN r.package_versions "
            "ELSE '{}' END) AS v "
            f"WHERE v.type = 'text' AND NOT {own_binary_sql('r.source_package_id', 'v.key')} "
            "GROUP BY k.release_id, substr(v.key, 1, 200), substr(v.value, 1, 200), k.hour "
            'ON CONFLICT (release_id, "binary", version, hour) '
            "DO UPDATE SET machines = excluded.machines"
        )
        dependents_counts.recount_sqlite(cursor)


def _crash_bucket() -> str:
    """SQL: report r is in a crash's bucket (an install failure is not a crash)."""
    return (
        f"r.bucket_id NOT IN (SELECT id FROM {_table(ErrorBucket)} "
        f"WHERE problem_type = '{ProblemType.INSTALL_FAILURE.value}')"
    )


def _table(model: type[models.Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _recount_sql(keys: set[HourKey]) -> None:
    """The same counts in two statements, for the keys given as arrays (a fixed number of
    parameters however many keys)."""
    report, hourly, sighting = (
        _table(CrashReport),
        _table(HourlyCrashCount),
        _table(VersionSighting),
    )
    ordered = sorted(keys)
    columns = [list(column) for column in zip(*ordered, strict=True)]
    counted = "NOT r.automated_testing AND NOT r.from_proposed"
    crash = _crash_bucket()
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
            f"AND {counted} AND {crash} "
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
            "WHERE v.value IS NOT NULL "
            f"AND NOT {own_binary_sql('r.source_package_id', 'v.key')} "
            "GROUP BY k.release_id, left(v.key, 200), left(v.value, 200), k.hour "
            'ON CONFLICT (release_id, "binary", version, hour) '
            "DO UPDATE SET machines = EXCLUDED.machines",
            [[h[0] for h in hours], [h[1] for h in hours]],
        )
        dependents_counts.recount_postgresql(
            cursor,
            "unnest(%s::bigint[], %s::bigint[], %s::text[], %s::timestamptz[]) "
            "AS k(release_id, source_package_id, version, hour)",
            columns,
        )
