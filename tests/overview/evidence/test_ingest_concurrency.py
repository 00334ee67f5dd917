"""Ingests at once (the crash sync beside the intake's sync) on PostgreSQL, with real
commits: each stores its reports batch by batch, neither waits for ever on the other nor
makes the other give up a batch."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections

from overview.evidence import partitions
from overview.evidence.ingest import crash_reports_ingest
from overview.models import CrashCounter, CrashReport
from packages.services.sync import publications_sync
from tests.overview.evidence.test_ingest import crash
from tests.packages.services.sync_fakes import ListSource, record

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row and table locks are what is under test"
    ),
]

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
# A day no other test stores reports on, so that its partition is missing here.
DAY = NOW - timedelta(days=41)


@pytest.fixture
def no_partition_for_the_day():
    def drop() -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"DROP TABLE IF EXISTS {partitions.partition_name(DAY.date())}")

    drop()
    yield
    drop()


def run_at_once(*feeds: list) -> list:
    """Ingest each feed in its own thread, all starting their first batch together."""
    barrier = threading.Barrier(len(feeds), timeout=20)
    results: list = [None] * len(feeds)

    def together(feed: list) -> Iterator:
        barrier.wait()
        yield from feed

    def run(n: int) -> None:
        try:
            results[n] = crash_reports_ingest(together(feeds[n]), now=NOW)
        except BaseException as exc:  # surfaced below, in the test's thread
            results[n] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(feeds))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def test_two_ingests_that_both_bring_a_new_day_store_every_batch_whole(
    no_partition_for_the_day, caplog
):
    publications_sync(
        ListSource([record(), record(release="jammy", version="2.0-1ubuntu0.22.04.1")]), now=NOW
    )
    noble = [crash(n, reported_at=DAY + timedelta(minutes=n)) for n in range(40)]
    jammy = [
        crash(
            100 + n,
            release="jammy",
            version="2.0-1ubuntu0.22.04.1",
            signature="/usr/bin/apport:11:jammy",
            reported_at=DAY,
        )
        for n in range(40)
    ]

    with caplog.at_level(logging.WARNING, logger="overview.evidence.ingest"):
        results = run_at_once(noble, jammy)

    assert [r.inserted for r in results] == [40, 40]
    # Neither batch was refused and stored again one report at a time.
    assert not [r.message for r in caplog.records if "batch failed" in r.message]
    assert partitions.partition_name(DAY.date()) in {
        partitions.partition_name(day) for day in partitions.partition_days()
    }
    assert CrashReport.objects.filter(reported_at__date=DAY.date()).count() == 80
    assert sorted(CrashCounter.objects.values_list("count", flat=True)) == [40, 40]
