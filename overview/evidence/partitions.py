"""Crash reports partitioned by UTC day on PostgreSQL (declarative range partitioning).

The migration `crash_reports_partitioned_by_day` makes the table partitioned on
PostgreSQL only; on SQLite it stays one plain table and everything here does nothing.
Partitions are named `overview_crashreport_pYYYYMMDD` and hold [day, day + 1). The beat
task creates them ahead (`crash_partitions_maintain`); the ingest creates a missing one
for a late report too. A default partition takes any row of a day without its own (a
report written by another path, say), so no write ever fails for want of a partition; a
day that has rows there keeps them there (PostgreSQL cannot create its partition then),
and the purge deletes them from it by date.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection, transaction

TABLE = "overview_crashreport"
PREFIX = f"{TABLE}_p"
DEFAULT = f"{TABLE}_default"
# The advisory lock held while partitions are created ("PHpa"), apart from the ingest's
# per-release locks (those take two keys: another key space).
CREATE_LOCK = 0x5048_7061


def partition_name(day: date) -> str:
    return f"{PREFIX}{day:%Y%m%d}"


def is_partitioned() -> bool:
    """Whether the crash report table is partitioned here (PostgreSQL after the migration)."""
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(%s)", [TABLE]
        )
        return cursor.fetchone() is not None


def partition_days() -> list[date]:
    """The days that have a partition, oldest first."""
    return _partition_days() if is_partitioned() else []


def _partition_days() -> list[date]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = to_regclass(%s)",
            [TABLE],
        )
        names = [row[0] for row in cursor.fetchall()]
    return sorted(
        datetime.strptime(name[len(PREFIX) :], "%Y%m%d").replace(tzinfo=UTC).date()
        for name in names
        if name.startswith(PREFIX)
    )


def create_sql(day: date) -> str:
    start = datetime.combine(day, time(), tzinfo=UTC)
    end = start + timedelta(days=1)
    return (
        f"CREATE TABLE IF NOT EXISTS {partition_name(day)} PARTITION OF {TABLE} "
        f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')"
    )


def ensure(days: Iterable[date]) -> list[date]:
    """Create the partitions of these days that are missing; the days created.

    Call it before the transaction that writes the reports: creating a partition takes
    the whole table's lock, so two ingests that each did it inside their own write
    transaction waited for each other for ever (PostgreSQL broke the tie by refusing one
    batch). Here one creates the day's partition and commits; the other waits for it and
    finds the day done. Called inside a caller's transaction, the locks are the caller's
    until it commits, as before."""
    wanted = set(days)
    if not wanted or not is_partitioned() or wanted <= set(_partition_days()):
        return []
    created = []
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CREATE_LOCK])
        for day in sorted(wanted - set(_partition_days())):
            start = datetime.combine(day, time(), tzinfo=UTC)
            cursor.execute(
                f"SELECT 1 FROM {DEFAULT} WHERE reported_at >= %s AND reported_at < %s LIMIT 1",
                [start, start + timedelta(days=1)],
            )
            if cursor.fetchone() is None:
                cursor.execute(create_sql(day))
                created.append(day)
    return created


def ensure_ahead(*, today: date, days_ahead: int) -> list[date]:
    """Today's partition and the next ones, so that the ingest seldom creates one."""
    return ensure(today + timedelta(days=n) for n in range(days_ahead + 1))


def drop_before(day: date) -> list[date]:
    """Drop whole partitions of days before this one (no row-by-row delete, no bloat)."""
    dropped = [d for d in partition_days() if d < day]
    with connection.cursor() as cursor:
        # Deferred foreign key checks of rows written earlier in this transaction would
        # make PostgreSQL refuse the DROP: run them now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for old in dropped:
            cursor.execute(f"DROP TABLE IF EXISTS {partition_name(old)}")
        cursor.execute(
            f"DELETE FROM {DEFAULT} WHERE reported_at < %s",
            [datetime.combine(day, time(), tzinfo=UTC)],
        )
    return dropped


def default_sql() -> str:
    return f"CREATE TABLE IF NOT EXISTS {DEFAULT} PARTITION OF {TABLE} DEFAULT"
