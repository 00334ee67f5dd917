"""The PostgreSQL backend reads timestamps as Django's own backend reads them, faster."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import psycopg
import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's loader"),
]

MOMENTS = [
    datetime(2026, 12, 4, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(2026, 3, 29, 1, 30, tzinfo=timezone(timedelta(hours=2))),  # another offset
    datetime(1969, 12, 31, 23, 0, 0, 1, tzinfo=UTC),
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
]


def _read(cursor) -> list[datetime]:
    cursor.execute(
        "SELECT m FROM unnest(%s::timestamptz[]) WITH ORDINALITY AS t(m, n) ORDER BY n",
        [MOMENTS],
    )
    return [row[0] for row in cursor.fetchall()]


def test_timestamps_come_back_as_the_same_moments_in_utc_through_psycopgs_loader():
    timestamptz = psycopg.postgres.types["timestamptz"].oid
    with connection.cursor() as cursor:
        read = _read(cursor)
        loader = cursor.adapters.get_loader(timestamptz, psycopg.pq.Format.TEXT)

    # psycopg's own (compiled with psycopg[binary]), not Django's Python subclass of it.
    assert loader is psycopg.adapters.get_loader(timestamptz, psycopg.pq.Format.TEXT)

    assert read == MOMENTS
    assert all(moment.tzinfo is UTC for moment in read)


def test_timestamps_read_as_djangos_own_loader_reads_them():
    with connection.cursor() as cursor:
        fast = _read(cursor)
    with connection.cursor() as cursor:
        register_tzloader(connection.timezone, cursor)  # what Django alone would read with
        django = _read(cursor)

    assert [repr(m) for m in fast] == [repr(m) for m in django]
