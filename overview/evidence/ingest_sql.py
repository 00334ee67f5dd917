"""The PostgreSQL ingest of crash reports as a handful of set-based statements.

The rows go over in COPY's stream into a scratch table. Before they are stored, one
statement each asks which of them add a crash event or a sighting to the judges' hourly
counts (an index probe per report: has this machine already reported in this hour?).
One INSERT ... SELECT then stores the new ones and keeps what it stored in a second
scratch table, and every counter grows from those tables by one statement each: no
stored row comes back to Python and no counter is recounted from the report table, so
a batch costs the same however many reports are stored, and the counters stay right
after a purge drops the reports they were counted from.

- daily counters (CrashCounter) and bucket statistics (BucketVersionStat) grow by the
  rows stored (a report is stored once), distinct systems through the set of systems
  seen per bucket and version (BucketSystem);
- the judges' hourly counts (HourlyCrashCount, VersionSighting) grow by the reports
  stored and by the machines new to their hour. Two ingests at once take turns per
  release (an advisory lock), so that each sees what the other stored.

The first version recounted every report of each hour a batch touched; the recount stays
for SQLite (overview.evidence.counters), and a test holds both to the same numbers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Model

from overview.evidence import dependents_counts
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
from overview.models.evidence import SYSTEM_KEY_SQL
from packages.binaries import own_binary_sql

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
# A timestamp's UTC hour, in SQL: the hour the judges' counts are kept by.
_HOUR = "date_trunc('hour', {0} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'"
# The first key of the advisory lock an ingest holds per release (the second is the
# release's id): "PH".
INGEST_LOCK = 0x5048
# Ends a NOT EXISTS subquery that must stay an index probe per row: without it, the
# planner may turn it into an anti-join that reads every stored report.
_PROBE = "OFFSET 0"


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def ingest_batch_sql(
    fresh: Sequence[CrashReportRecord],
    *,
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
    failing: set[int],
    json_texts: dict[int, tuple[str, str] | None] | None = None,
) -> int:
    """Store reports (distinct external ids) and bring every counter up to date, in the
    caller's transaction. `failing`: the buckets of install failures, counted in their
    buckets' statistics but not in the crash rates. `json_texts`: each record's
    environment and package versions as JSON already (by id of the record), from its
    check. Returns how many reports were new."""
    columns = ", ".join(REPORT_COLUMNS)
    with connection.cursor() as cursor:
        _stage(
            cursor, fresh, releases=releases, packages=packages, buckets=buckets, texts=json_texts
        )
        # Two ingests at once (the crash sync and the intake) take turns per release, so
        # that each sees the other's reports when it asks what is new to an hour.
        for release in sorted({releases[r.release] for r in fresh}):
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [INGEST_LOCK, release])
        # These statements are short and many: compiling them (PostgreSQL's JIT, which
        # their estimated cost over the partitions triggers) took longer than running them.
        cursor.execute("SET LOCAL jit = off")
        # A batch's reports with each dependency they list (dependents_counts) outgrew the
        # default 4 MB and went to a temporary file on disk, batch after batch.
        cursor.execute("SET LOCAL work_mem = '32MB'")
        _new_to_their_hour(cursor, failing)
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
            f"INSERT INTO stored_crash_report SELECT release_id, source_package_id, version, "
            f"bucket_id, reported_at, {_HOUR.format('reported_at')}, system_id, counted, "
            "counted AND bucket_id <> ALL(%s) FROM stored",
            [sorted(failing)],
        )
        stored = cursor.rowcount
        if stored <= 0:
            return 0
        _count_days(cursor)
        _count_buckets(cursor)
        _count_hours(cursor)
        _touch_buckets(cursor)
    return stored


def _stage(
    cursor: CursorWrapper,
    fresh: Sequence[CrashReportRecord],
    *,
    releases: dict[str, int],
    packages: dict[str, int],
    buckets: dict[str, int],
    texts: dict[int, tuple[str, str] | None] | None,
) -> None:
    columns = ", ".join(REPORT_COLUMNS)
    cursor.execute(
        "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_crash_report AS "
        f"SELECT {columns} FROM {_table(CrashReport)} WITH NO DATA"
    )
    # Whether a report's machine has a stored report in its hour (_new_to_their_hour).
    cursor.execute(
        "ALTER TABLE incoming_crash_report "
        "ADD COLUMN IF NOT EXISTS repeat boolean NOT NULL DEFAULT false"
    )
    cursor.execute("TRUNCATE incoming_crash_report")
    dumps = json.dumps
    texts = texts or {}
    # COPY goes to the driver's own cursor; its errors are made Django's, as every other
    # statement's are, so the caller can skip what PostgreSQL refuses.
    with (
        connection.wrap_database_errors,
        cursor.cursor.copy(f"COPY incoming_crash_report ({columns}) FROM STDIN") as copy,
    ):
        for r in fresh:
            environment, package_versions = texts.get(id(r)) or (
                dumps(r.environment),
                dumps(r.package_versions),
            )
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
                    environment,
                    package_versions,
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
        f"WITH seen AS (INSERT INTO {systems} ({_KEY}, bucket_id, system_id, key) "
        f"SELECT DISTINCT {_KEY}, bucket_id, system_id, {SYSTEM_KEY_SQL} "
        "FROM stored_crash_report WHERE counted "
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


def _new_to_their_hour(cursor: CursorWrapper, failing: set[int]) -> None:
    """What the incoming reports add to the judges' hourly counts, asked before they are
    stored: a machine counts once per bucket and hour (crash events), and once per
    binary version and hour (sightings), so a report adds an event or a sighting only
    if no stored report of its hour already has. Each question is one index probe
    (`crashreport_release_system_idx`) into the day's partition; a report sent again
    finds its own first copy and adds nothing."""
    report = _table(CrashReport)
    hour = _HOUR.format("i.reported_at")
    same_hour = (
        "r.release_id = i.release_id AND r.system_id = i.system_id "
        f"AND r.reported_at >= {hour} AND r.reported_at < {hour} + interval '1 hour' "
        "AND NOT r.automated_testing AND NOT r.from_proposed"
    )
    counted = "NOT i.automated_testing AND NOT i.from_proposed"
    cursor.execute(
        "CREATE TEMPORARY TABLE IF NOT EXISTS new_crash_event (release_id bigint, "
        "source_package_id bigint, version text, hour timestamptz, events int)"
    )
    cursor.execute(
        "CREATE TEMPORARY TABLE IF NOT EXISTS new_sighting (release_id bigint, "
        '"binary" text, version text, hour timestamptz, machines int)'
    )
    cursor.execute("TRUNCATE new_crash_event, new_sighting")
    # One probe per report first: has its machine any stored report in its hour? Seldom
    # so; only those few reports are then probed again per bucket, binary and library.
    cursor.execute(
        f"UPDATE incoming_crash_report i SET repeat = true WHERE {counted} "
        f"AND EXISTS (SELECT 1 FROM {report} r WHERE {same_hour} {_PROBE})"
    )
    cursor.execute(
        f"INSERT INTO new_crash_event SELECT {_KEY}, hour, count(*) FROM ("
        f"SELECT DISTINCT i.release_id, i.source_package_id, i.version, {hour} AS hour, "
        "i.bucket_id, i.system_id FROM incoming_crash_report i "
        f"WHERE {counted} AND i.bucket_id <> ALL(%s) "
        f"AND (NOT i.repeat OR NOT EXISTS (SELECT 1 FROM {report} r WHERE {same_hour} "
        "AND r.source_package_id = i.source_package_id AND r.version = i.version "
        f"AND r.bucket_id = i.bucket_id {_PROBE}))) AS e GROUP BY {_KEY}, hour",
        [sorted(failing)],
    )
    cursor.execute(
        'INSERT INTO new_sighting SELECT release_id, "binary", version, hour, count(*) FROM ('
        'SELECT DISTINCT i.release_id, left(v.key, 200) AS "binary", '
        f"left(v.value, 200) AS version, {hour} AS hour, i.system_id "
        "FROM incoming_crash_report i CROSS JOIN LATERAL jsonb_each_text("
        "CASE jsonb_typeof(i.package_versions) WHEN 'object' THEN i.package_versions "
        "ELSE '{}'::jsonb END) AS v "
        f"WHERE {counted} AND v.value IS NOT NULL "
        f"AND NOT {own_binary_sql('i.source_package_id', 'v.key')} "
        f"AND (NOT i.repeat OR NOT EXISTS (SELECT 1 FROM {report} r WHERE {same_hour} "
        "AND r.package_versions ->> v.key = v.value "
        f"AND NOT {own_binary_sql('r.source_package_id', 'v.key')} {_PROBE}))) AS s "
        'GROUP BY release_id, "binary", version, hour'
    )
    dependents_counts.new_counted_postgresql(cursor, hour=hour, probe=_PROBE)


def _count_hours(cursor: CursorWrapper) -> None:
    """The judges' hourly counts grow by the crashes stored and by the events and
    sightings they added (`_new_to_their_hour`)."""
    hourly, sighting = _table(HourlyCrashCount), _table(VersionSighting)
    cursor.execute(
        f"INSERT INTO {hourly} AS h ({_KEY}, hour, reports, events) "
        "SELECT s.release_id, s.source_package_id, s.version, s.hour, s.reports, "
        "COALESCE(e.events, 0) "
        f"FROM (SELECT {_KEY}, hour, count(*) AS reports FROM stored_crash_report "
        f"WHERE crashed GROUP BY {_KEY}, hour) s "
        "LEFT JOIN new_crash_event e USING (release_id, source_package_id, version, hour) "
        "ON CONFLICT (source_package_id, release_id, version, hour) "
        "DO UPDATE SET reports = h.reports + EXCLUDED.reports, "
        "events = h.events + EXCLUDED.events"
    )
    cursor.execute(
        f'INSERT INTO {sighting} AS s (release_id, "binary", version, hour, machines) '
        'SELECT release_id, "binary", version, hour, machines FROM new_sighting '
        'ON CONFLICT (release_id, "binary", version, hour) '
        "DO UPDATE SET machines = s.machines + EXCLUDED.machines"
    )
    dependents_counts.add_postgresql(cursor)


def _touch_buckets(cursor: CursorWrapper) -> None:
    """Widen each bucket's first and last seen to the reports just stored.

    Buckets are shared by releases, which other connections store at once (the lanes
    of overview.evidence.ingest): the rows are locked in the order of their ids first,
    so that two batches touching the same buckets wait for each other one way only."""
    bucket = _table(ErrorBucket)
    cursor.execute(
        "WITH seen AS (SELECT bucket_id, min(reported_at) AS first, max(reported_at) AS last "
        "FROM stored_crash_report GROUP BY bucket_id), "
        f"widened AS (SELECT b.id FROM {bucket} b JOIN seen v ON b.id = v.bucket_id "
        "WHERE b.first_seen IS NULL OR b.last_seen IS NULL "
        "OR v.first < b.first_seen OR v.last > b.last_seen ORDER BY b.id FOR NO KEY UPDATE OF b) "
        f"UPDATE {bucket} b SET "
        "first_seen = LEAST(COALESCE(b.first_seen, v.first), v.first), "
        "last_seen = GREATEST(COALESCE(b.last_seen, v.last), v.last) "
        "FROM seen v WHERE b.id = v.bucket_id AND b.id IN (SELECT id FROM widened)"
    )
