"""The PostgreSQL path of crash report ingest: COPY and a few set-based statements.

overview.evidence.ingest chooses it on PostgreSQL; elsewhere the portable ORM path runs.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db import connection

from overview.evidence.counters import hour_of, judging_counts_recount
from overview.evidence.sources.base import INSTALL_FAILURE, CrashReportRecord, bucket_type
from overview.models import BucketVersionStat, CrashCounter, CrashReport, ErrorBucket

_REPORT_COLUMNS = (
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


def ingest_batch_copy(
    fresh: Sequence[CrashReportRecord],
    *,
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
) -> int:
    """Store reports (distinct external ids) in the caller's transaction: COPY into a
    scratch table, then one INSERT ... ON CONFLICT.

    Building a model instance per report, and recounting through the ORM, cost more than
    the database work itself; here the rows go over in COPY's stream and the aggregates
    are recounted by the database for exactly the keys the inserted rows touched.
    """
    report = _table(CrashReport)
    columns = ", ".join(_REPORT_COLUMNS)
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_crash_report AS "
            f"SELECT {columns} FROM {report} WITH NO DATA"
        )
        cursor.execute("TRUNCATE incoming_crash_report")
        # COPY goes to the driver's own cursor; its errors are made Django's, as every
        # other statement's are, so the caller can skip what PostgreSQL refuses.
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
                        json.dumps(r.environment),
                        json.dumps(r.package_versions),
                        r.from_proposed,
                        r.automated_testing,
                        r.external_id,
                    )
                )
        cursor.execute(
            f"INSERT INTO {report} ({columns}) SELECT {columns} FROM incoming_crash_report "
            "ON CONFLICT (external_id) DO NOTHING "
            "RETURNING release_id, source_package_id, version, bucket_id, reported_at, "
            "automated_testing OR from_proposed"
        )
        inserted = cursor.fetchall()
        if not inserted:
            return 0
        counted = [row for row in inserted if not row[5]]
        # Install failures are judged by their buckets alone, not as crashes in the rates.
        failing = install_failure_buckets(fresh, buckets)
        crashed = [row for row in counted if row[3] not in failing]
        _recount_sql(
            cursor,
            days=Counter((r[0], r[1], r[2], r[4].date()) for r in crashed),
            stats={(r[0], r[1], r[2], r[3]) for r in counted},
        )
        judging_counts_recount((r[0], r[1], r[2], hour_of(r[4])) for r in crashed)
        _touch_buckets_sql(cursor, inserted)
    return len(inserted)


def install_failure_buckets(
    records: Sequence[CrashReportRecord], buckets: dict[str, int]
) -> set[int]:
    """The buckets of these records that hold package install failures, not crashes."""
    return {
        buckets[r.signature]
        for r in records
        if bucket_type(r.problem_type, r.signature) == INSTALL_FAILURE
    }


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _unnest(rows: Iterable[tuple], types: Sequence[str]) -> tuple[str, list]:
    """Rows as unnest() over one typed array per column: a handful of parameters however
    many rows, where a VALUES list would make the driver parse thousands of placeholders."""
    columns = list(zip(*rows, strict=True)) or [() for _ in types]
    sql = "unnest(" + ", ".join(f"%s::{t}[]" for t in types) + ")"
    return sql, [list(column) for column in columns]


def _recount_sql(cursor, *, days: dict[tuple, int], stats: set[tuple]) -> None:
    """Add to the daily counters; recount the touched bucket statistics (distinct systems)."""
    report = _table(CrashReport)
    counted = "NOT r.automated_testing AND NOT r.from_proposed"
    # Daily counts grow by exactly the rows this INSERT stored (RETURNING names them, and
    # a report is stored once), so they are added rather than recounted.
    for chunk in _chunks(sorted(days.items()), 10000):
        rows, params = _unnest(
            [(*key, n) for key, n in chunk], ("bigint", "bigint", "text", "date", "integer")
        )
        counter = _table(CrashCounter)
        cursor.execute(
            f"INSERT INTO {counter} AS c (release_id, source_package_id, version, day, count) "
            f"SELECT * FROM {rows} "
            "ON CONFLICT (release_id, source_package_id, version, day) "
            "DO UPDATE SET count = c.count + EXCLUDED.count",
            params,
        )
    for chunk in _chunks(sorted(stats), 10000):
        rows, params = _unnest(chunk, ("bigint", "bigint", "text", "bigint"))
        cursor.execute(
            f"INSERT INTO {_table(BucketVersionStat)} "
            "(release_id, source_package_id, version, bucket_id, reports, systems) "
            "SELECT k.release_id, k.source_package_id, k.version, k.bucket_id, "
            "count(r.id), count(DISTINCT r.system_id) "
            f"FROM {rows} AS k(release_id, source_package_id, version, bucket_id) "
            f"JOIN {report} r ON r.source_package_id = k.source_package_id "
            "AND r.version = k.version AND r.bucket_id = k.bucket_id "
            f"AND r.release_id = k.release_id AND {counted} "
            "GROUP BY k.release_id, k.source_package_id, k.version, k.bucket_id "
            "ON CONFLICT (release_id, source_package_id, version, bucket_id) "
            "DO UPDATE SET reports = EXCLUDED.reports, systems = EXCLUDED.systems",
            params,
        )


def _touch_buckets_sql(cursor, inserted: Sequence[tuple]) -> None:
    """Widen each bucket's first and last seen to the reports just stored."""
    spans: dict[int, tuple[datetime, datetime]] = {}
    for row in inserted:
        bucket, at = row[3], row[4]
        first, last = spans.get(bucket, (at, at))
        spans[bucket] = (min(first, at), max(last, at))
    for chunk in _chunks(sorted((b, f, la) for b, (f, la) in spans.items()), 10000):
        rows, params = _unnest(chunk, ("bigint", "timestamptz", "timestamptz"))
        cursor.execute(
            f"UPDATE {_table(ErrorBucket)} b SET "
            "first_seen = LEAST(COALESCE(b.first_seen, v.first), v.first), "
            "last_seen = GREATEST(COALESCE(b.last_seen, v.last), v.last) "
            f"FROM {rows} AS v(id, first, last) WHERE b.id = v.id "
            "AND (b.first_seen IS NULL OR b.last_seen IS NULL "
            "OR v.first < b.first_seen OR v.last > b.last_seen)",
            params,
        )


def _chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
