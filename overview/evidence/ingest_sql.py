"""The PostgreSQL ingest of crash reports as a handful of set-based statements.

The rows go over in COPY's stream into a scratch table; one INSERT ... SELECT stores the
new ones and keeps what it stored in a second scratch table; every counter is then
brought up to date from that table by one statement each, so no stored row comes back
to Python and no counter is recounted from the whole report table:

- daily counters (CrashCounter) and bucket statistics (BucketVersionStat) grow by exactly
  the rows stored (a report is stored once), distinct systems through the set of systems
  seen per bucket and version (BucketSystem), which only ever grows: so the counters stay
  right after a purge drops the reports they were counted from;
- the judges' hourly counts (HourlyCrashCount, VersionSighting) count distinct machines
  within an hour, so they are recounted from the reports of the hours touched (hours are
  inside the retention window: older reports are refused before they get here).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Model

from overview.evidence import dependents_counts, partitions
from overview.evidence.sources.base import CrashReportRecord
from overview.models import (
    BucketSystem,
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    ErrorBucket,
    HourlyCrashCount,
    VersionSighting,
)
from packages.models import Publication

REPORT_COLUMNS = (
    "bucket_id",
    "source_package_id",
    "version",
    "release_id",
    "architecture",
    "reported_at",
    "system_id",
    "stack_trace",
    "environment",
    "package_versions",
    "from_proposed",
    "automated_testing",
    "external_id",
)
_KEY = "release_id, source_package_id, version"


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def ingest_batch_sql(
    fresh: Sequence[CrashReportRecord],
    *,
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
    failing: set[int],
) -> int:
    """Store reports (distinct external ids) and bring every counter up to date, in the
    caller's transaction. `failing`: the buckets of install failures, counted in their
    buckets' statistics but not in the crash rates. Returns how many reports were new."""
    columns = ", ".join(REPORT_COLUMNS)
    with connection.cursor() as cursor:
        _stage(cursor, fresh, releases=releases, packages=packages, buckets=buckets)
        partitions.ensure_for_staged(cursor, "incoming_crash_report")
        cursor.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS stored_crash_report "
            "(release_id bigint, source_package_id bigint, version text, bucket_id bigint, "
            "reported_at timestamptz, hour timestamptz, system_id text, counted boolean, "
            "crashed boolean)"
        )
        cursor.execute("TRUNCATE stored_crash_report")
        cursor.execute(
            f"WITH stored AS (INSERT INTO {_table(CrashReport)} ({columns}) "
            f"SELECT {columns} FROM incoming_crash_report ON CONFLICT DO NOTHING "
            "RETURNING release_id, source_package_id, version, bucket_id, reported_at, "
            "system_id, NOT (automated_testing OR from_proposed) AS counted) "
            "INSERT INTO stored_crash_report SELECT release_id, source_package_id, version, "
            "bucket_id, reported_at, date_trunc('hour', reported_at AT TIME ZONE 'UTC') "
            "AT TIME ZONE 'UTC', system_id, counted, counted AND bucket_id <> ALL(%s) "
            "FROM stored",
            [sorted(failing)],
        )
        stored = cursor.rowcount
        if stored <= 0:
            return 0
        # A scratch table has no statistics until analysed: without them the planner
        # guesses its size and joins the hours to the reports row by row.
        cursor.execute("ANALYZE stored_crash_report")
        _count_days(cursor)
        _count_buckets(cursor)
        _recount_hours(cursor)
        _touch_buckets(cursor)
    return stored


def _stage(
    cursor: CursorWrapper,
    fresh: Sequence[CrashReportRecord],
    *,
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
) -> None:
    columns = ", ".join(REPORT_COLUMNS)
    cursor.execute(
        "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_crash_report AS "
        f"SELECT {columns} FROM {_table(CrashReport)} WITH NO DATA"
    )
    cursor.execute("TRUNCATE incoming_crash_report")
    dumps = json.dumps
    # COPY goes to the driver's own cursor; its errors are made Django's, as every other
    # statement's are, so the caller can skip what PostgreSQL refuses.
    with (
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY incoming_crash_report ({columns}) FROM STDIN") as copy,
    ):
        for r in fresh:
            copy.write_row(
                (
                    buckets[r.signature],
                    packages[r.source_package],
                    r.version,
                    releases[r.release],
                    r.architecture[:20],
                    r.reported_at,
                    r.system_id[:64],
                    r.stack_trace,
                    dumps(r.environment),
                    dumps(r.package_versions),
                    r.from_proposed,
                    r.automated_testing,
                    r.external_id,
                )
            )


def _count_days(cursor: CursorWrapper) -> None:
    """Daily crash counts grow by the crashes stored (install failures are not crashes)."""
    counter = _table(CrashCounter)
    cursor.execute(
        f"INSERT INTO {counter} AS c ({_KEY}, day, count) "
        f"SELECT {_KEY}, (reported_at AT TIME ZONE 'UTC')::date, count(*) "
        "FROM stored_crash_report WHERE crashed "
        f"GROUP BY {_KEY}, (reported_at AT TIME ZONE 'UTC')::date "
        "ON CONFLICT (release_id, source_package_id, version, day) "
        "DO UPDATE SET count = c.count + EXCLUDED.count"
    )


def _count_buckets(cursor: CursorWrapper) -> None:
    """Reports per bucket and version grow by the counted reports stored; distinct systems
    by the systems not seen before in that bucket and version."""
    systems, stat = _table(BucketSystem), _table(BucketVersionStat)
    cursor.execute(
        f"WITH seen AS (INSERT INTO {systems} ({_KEY}, bucket_id, system_id) "
        f"SELECT DISTINCT {_KEY}, bucket_id, system_id FROM stored_crash_report WHERE counted "
        f"ON CONFLICT DO NOTHING RETURNING {_KEY}, bucket_id), "
        f"new_systems AS (SELECT {_KEY}, bucket_id, count(*) AS n FROM seen "
        f"GROUP BY {_KEY}, bucket_id), "
        f"reports AS (SELECT {_KEY}, bucket_id, count(*) AS n, min(reported_at) AS first, "
        "max(reported_at) AS last FROM stored_crash_report WHERE counted "
        f"GROUP BY {_KEY}, bucket_id) "
        f"INSERT INTO {stat} AS s ({_KEY}, bucket_id, reports, systems, first_reported, "
        "last_reported) "
        "SELECT r.release_id, r.source_package_id, r.version, r.bucket_id, r.n, "
        "COALESCE(n.n, 0), r.first, r.last FROM reports r LEFT JOIN new_systems n "
        "USING (release_id, source_package_id, version, bucket_id) "
        "ON CONFLICT (release_id, source_package_id, version, bucket_id) DO UPDATE SET "
        "reports = s.reports + EXCLUDED.reports, systems = s.systems + EXCLUDED.systems, "
        "first_reported = LEAST(s.first_reported, EXCLUDED.first_reported), "
        "last_reported = GREATEST(s.last_reported, EXCLUDED.last_reported)"
    )


def _recount_hours(cursor: CursorWrapper) -> None:
    """The judges' counts of the hours this batch touched, recounted from their reports
    (a machine is counted once per bucket and hour, so hours cannot be added up)."""
    report, hourly, sighting = (
        _table(CrashReport),
        _table(HourlyCrashCount),
        _table(VersionSighting),
    )
    counted = "NOT r.automated_testing AND NOT r.from_proposed"
    cursor.execute(
        f"INSERT INTO {hourly} AS h ({_KEY}, hour, reports, events) "
        "SELECT k.release_id, k.source_package_id, k.version, k.hour, count(r.id), "
        "count(DISTINCT (r.system_id, r.bucket_id)) "
        f"FROM (SELECT DISTINCT {_KEY}, hour FROM stored_crash_report WHERE crashed) k "
        f"JOIN {report} r ON r.release_id = k.release_id "
        "AND r.source_package_id = k.source_package_id AND r.version = k.version "
        "AND r.reported_at >= k.hour AND r.reported_at < k.hour + interval '1 hour' "
        f"AND {counted} "
        "GROUP BY k.release_id, k.source_package_id, k.version, k.hour "
        "ON CONFLICT (source_package_id, release_id, version, hour) "
        "DO UPDATE SET reports = EXCLUDED.reports, events = EXCLUDED.events"
    )
    cursor.execute(
        f'INSERT INTO {sighting} (release_id, "binary", version, hour, machines) '
        "SELECT k.release_id, left(v.key, 200), left(v.value, 200), k.hour, "
        "count(DISTINCT r.system_id) "
        "FROM (SELECT DISTINCT release_id, hour FROM stored_crash_report WHERE crashed) k "
        f"JOIN {report} r ON r.release_id = k.release_id "
        "AND r.reported_at >= k.hour AND r.reported_at < k.hour + interval '1 hour' "
        f"AND {counted} "
        "CROSS JOIN LATERAL jsonb_each_text("
        "CASE jsonb_typeof(r.package_versions) WHEN 'object' THEN r.package_versions "
        "ELSE '{}'::jsonb END) AS v "
        f"WHERE v.value IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {_table(Publication)} p "
        "WHERE p.source_package_id = r.source_package_id "
        "AND jsonb_exists(p.binaries, v.key)) "
        "GROUP BY k.release_id, left(v.key, 200), left(v.value, 200), k.hour "
        'ON CONFLICT (release_id, "binary", version, hour) '
        "DO UPDATE SET machines = EXCLUDED.machines"
    )
    dependents_counts.recount_postgresql(
        cursor,
        f"(SELECT DISTINCT {_KEY}, hour FROM stored_crash_report WHERE crashed) k",
        [],
    )


def _touch_buckets(cursor: CursorWrapper) -> None:
    """Widen each bucket's first and last seen to the reports just stored."""
    cursor.execute(
        f"UPDATE {_table(ErrorBucket)} b SET "
        "first_seen = LEAST(COALESCE(b.first_seen, v.first), v.first), "
        "last_seen = GREATEST(COALESCE(b.last_seen, v.last), v.last) "
        "FROM (SELECT bucket_id, min(reported_at) AS first, max(reported_at) AS last "
        "FROM stored_crash_report GROUP BY bucket_id) AS v WHERE b.id = v.bucket_id "
        "AND (b.first_seen IS NULL OR b.last_seen IS NULL "
        "OR v.first < b.first_seen OR v.last > b.last_seen)"
    )
