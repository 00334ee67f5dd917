"""The portable ingest of crash reports (SQLite, the embedded default): prepared
statements that SQLite and PostgreSQL both read, run once per batch, beside PostgreSQL's
set-based path (overview.evidence.ingest_sql). The judges' hourly counts are recounted for
the hours a batch touched (overview.evidence.counters); the daily counters and bucket
statistics are added to, as on PostgreSQL.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime

from django.db import connection
from django.db.models.constants import OnConflict

from overview.evidence.counters import hour_of, judging_counts_recount
from overview.evidence.ingest_sql import REPORT_COLUMNS
from overview.evidence.sources.base import CrashReportRecord, install_failure_buckets
from overview.models import BucketSystem, BucketVersionStat, CrashCounter, CrashReport, ErrorBucket
from overview.models.evidence import system_key


def ingest_batch_portable(
    fresh: Sequence[CrashReportRecord],
    *,
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
) -> None:
    """Store reports not stored before (distinct external ids) and bring every counter up
    to date, in the caller's transaction."""
    _insert_reports(fresh, releases=releases, packages=packages, buckets=buckets)
    _recount(fresh, releases, packages, buckets)
    # Install failures too: their hours' sightings and dependents' counts change (the
    # hourly crash counts leave them out in their own SQL).
    judging_counts_recount(
        (releases[r.release], packages[r.source_package], r.version, hour_of(r.reported_at))
        for r in fresh
        if not r.automated_testing and not r.from_proposed
    )
    _touch_buckets(fresh, buckets)


def _insert_reports(
    fresh: Sequence[CrashReportRecord],
    *,
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
) -> None:
    """One prepared INSERT run for every row (INSERT OR IGNORE on SQLite): building a
    model instance and compiling a statement per batch cost more than the database's own
    work."""
    adapt = connection.ops.adapt_datetimefield_value
    rows = [
        (
            buckets[r.signature],
            packages[r.source_package],
            r.version,
            releases[r.release],
            r.architecture[:20],
            adapt(r.reported_at),
            r.system_id[:64],
            r.stack_trace,
            json.dumps(r.environment),
            json.dumps(r.package_versions),
            r.from_proposed,
            r.automated_testing,
            r.external_id,
        )
        for r in fresh
    ]
    ops = connection.ops
    insert = ops.insert_statement(on_conflict=OnConflict.IGNORE)
    conflict = ops.on_conflict_suffix_sql([], OnConflict.IGNORE, [], []) or ""
    table = ops.quote_name(CrashReport._meta.db_table)
    placeholders = ", ".join(["%s"] * len(REPORT_COLUMNS))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"{insert} {table} ({', '.join(REPORT_COLUMNS)}) VALUES ({placeholders}) {conflict}",
            rows,
        )


def _recount(
    records: Sequence[CrashReportRecord],
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
) -> None:
    """Daily counters and per-bucket statistics, as the error tracker keeps them.

    Reports from automated testing and from -proposed never count; package install
    failures count in their buckets' statistics (the new-bucket rule) but not in the daily
    crash counts (the rate): they are judged as install failures, not as crashes. Daily counts grow by
    exactly the reports this batch stored (the caller stored only the ones not known
    before, in this transaction), so they are added; distinct systems cannot be added
    up, so the touched bucket statistics are recounted from the index that holds them.
    Plain SQL that SQLite and PostgreSQL both read, each statement prepared once.
    """
    counted = [r for r in records if not r.automated_testing and not r.from_proposed]
    if not counted:
        return
    failing = install_failure_buckets(counted, buckets)
    days = Counter(
        (
            releases[r.release],
            packages[r.source_package],
            r.version,
            r.reported_at.astimezone(UTC).date(),
        )
        for r in counted
        if buckets[r.signature] not in failing
    )
    spans: dict[tuple[int, int, str, int], tuple[int, datetime, datetime]] = {}
    for r in counted:
        key = (releases[r.release], packages[r.source_package], r.version, buckets[r.signature])
        n, first, last = spans.get(key, (0, r.reported_at, r.reported_at))
        spans[key] = (n + 1, min(first, r.reported_at), max(last, r.reported_at))
    seen = {
        (
            releases[r.release],
            packages[r.source_package],
            r.version,
            buckets[r.signature],
            r.system_id[:64],
        )
        for r in counted
    }
    counter, stat, systems = (
        connection.ops.quote_name(m._meta.db_table)
        for m in (CrashCounter, BucketVersionStat, BucketSystem)
    )
    adapt = connection.ops.adapt_datefield_value
    adapt_at = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {counter} (release_id, source_package_id, version, day, count) "
            "VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (release_id, source_package_id, version, day) "
            f"DO UPDATE SET count = {counter}.count + excluded.count",
            [(*key[:3], adapt(key[3]), n) for key, n in sorted(days.items())],
        )
        # Reports are added (the caller stored only new ones); systems are the ones seen,
        # kept apart from the reports so that a purge of old reports changes neither.
        cursor.executemany(
            f"INSERT INTO {systems} "
            "(release_id, source_package_id, version, bucket_id, system_id, key) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            [
                (
                    release,
                    package,
                    version,
                    bucket,
                    system,
                    system_key(release, package, version, system),
                )
                for release, package, version, bucket, system in sorted(seen)
            ],
        )
        cursor.executemany(
            f"INSERT INTO {stat} (release_id, source_package_id, version, bucket_id, "
            "reports, systems, first_reported, last_reported) "
            f"SELECT %s, %s, %s, %s, %s, count(*), %s, %s FROM {systems} s "
            "WHERE s.release_id = %s AND s.source_package_id = %s AND s.version = %s "
            "AND s.bucket_id = %s "
            "ON CONFLICT (release_id, source_package_id, version, bucket_id) "
            f"DO UPDATE SET reports = {stat}.reports + excluded.reports, "
            "systems = excluded.systems, "
            f"first_reported = CASE WHEN {stat}.first_reported IS NULL "
            f"OR excluded.first_reported < {stat}.first_reported "
            f"THEN excluded.first_reported ELSE {stat}.first_reported END, "
            f"last_reported = CASE WHEN {stat}.last_reported IS NULL "
            f"OR excluded.last_reported > {stat}.last_reported "
            f"THEN excluded.last_reported ELSE {stat}.last_reported END",
            [
                (*key, n, adapt_at(first), adapt_at(last), *key)
                for key, (n, first, last) in sorted(spans.items())
            ],
        )


def _touch_buckets(fresh: Sequence[CrashReportRecord], buckets: dict[str, int]) -> None:
    """Widen each bucket's first and last seen to the reports just stored: one prepared
    UPDATE per bucket, run as a batch (no read, no statement built per row)."""
    spans: dict[int, tuple[datetime, datetime]] = {}
    for record in fresh:
        bucket, at = buckets[record.signature], record.reported_at
        first, last = spans.get(bucket, (at, at))
        spans[bucket] = (min(first, at), max(last, at))
    adapt = connection.ops.adapt_datetimefield_value
    table = connection.ops.quote_name(ErrorBucket._meta.db_table)
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {table} SET "
            "first_seen = CASE WHEN first_seen IS NULL OR first_seen > %s THEN %s "
            "ELSE first_seen END, "
            "last_seen = CASE WHEN last_seen IS NULL OR last_seen < %s THEN %s "
            "ELSE last_seen END WHERE id = %s",
            [
                (adapt(first), adapt(first), adapt(last), adapt(last), bucket)
                for bucket, (first, last) in sorted(spans.items())
            ],
        )
