"""Ingests at once (the crash sync beside the intake's sync), and one ingest storing a
batch's releases on several connections at once, on PostgreSQL with real commits: every
report is stored and counted once, no one waits for ever on another nor makes another
give up a batch."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections, transaction

from overview.evidence import ingest, ingest_store, partitions
from overview.evidence.ingest import crash_reports_ingest
from overview.models import (
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    ErrorBucket,
    HourlyCrashCount,
)
from packages.services.sync import publications_sync
from packages.sources.base import ReleaseRecord
from tests.overview.evidence.test_ingest import crash
from tests.packages.services.sync_fakes import ListSource, record

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="row and table locks are what is under test"
    ),
]

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_second_chances(monkeypatch):
    """A batch that loses a race is not stored again here: a deadlock fails the test
    instead of hiding behind the retry."""
    monkeypatch.setattr(ingest_store, "RACES_RETRIED", 0)


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
    for result in results:
        if isinstance(result, BaseException):
            raise result
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

    with caplog.at_level(logging.WARNING, logger="overview.evidence"):
        results = run_at_once(noble, jammy)

    assert [r.inserted for r in results] == [40, 40]
    # Neither batch was refused and stored again one report at a time.
    assert not [r.message for r in caplog.records if "batch failed" in r.message]
    assert partitions.partition_name(DAY.date()) in {
        partitions.partition_name(day) for day in partitions.partition_days()
    }
    assert CrashReport.objects.filter(reported_at__date=DAY.date()).count() == 80
    assert sorted(CrashCounter.objects.values_list("count", flat=True)) == [40, 40]


RELEASES = {
    "noble": "2.0-1ubuntu0.1",
    "jammy": "2.0-1ubuntu0.22.04.1",
    "focal": "2.0-1ubuntu0.20.04.1",
}


class ThreeReleases(ListSource):
    def releases(self):
        return [*super().releases(), ReleaseRecord("focal", "20.04")]


@pytest.fixture
def three_releases():
    publications_sync(
        ThreeReleases([record(release=r, version=v) for r, v in RELEASES.items()]), now=NOW
    )


@pytest.fixture
def stores(monkeypatch):
    """Which database connection stored each batch, of which releases and how many."""
    seen: list[tuple[int, frozenset[str], int]] = []
    store = ingest_store.ingest_batch_sql

    def recording(fresh, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            seen.append((cursor.fetchone()[0], frozenset(r.release for r in fresh), len(fresh)))
        return store(fresh, **kwargs)

    monkeypatch.setattr(ingest_store, "ingest_batch_sql", recording)
    return seen


def feed(count: int, *, start: datetime, machines: int = 7) -> list:
    """Reports of the three releases, interleaved as a crash source sends them, in a few
    buckets that every release shares (their first and last seen are touched by all)."""
    releases = list(RELEASES.items())
    return [
        crash(
            n,
            release=releases[n % 3][0],
            version=releases[n % 3][1],
            signature=f"/usr/bin/apport:11:shared{n % 4}",
            system_id=f"s{(n // 2) % machines}",
            reported_at=start + timedelta(minutes=n),
        )
        for n in range(count)
    ]


def test_a_batch_s_releases_are_stored_on_two_connections_at_once_and_counted_as_on_one(
    three_releases, stores, settings, monkeypatch, caplog
):
    settings.PHASING_INGEST_CONNECTIONS = 2
    monkeypatch.setattr(ingest, "BATCH", 30)
    reports = feed(120, start=NOW - timedelta(hours=3))

    with caplog.at_level(logging.WARNING, logger="overview.evidence"):
        summary = crash_reports_ingest(reports, now=NOW)

    assert (summary.received, summary.inserted, summary.skipped) == (120, 120, 0)
    assert not [r.message for r in caplog.records if "batch failed" in r.message]
    # Windows of two batches, each window's releases split between two connections.
    by_connection: dict[int, set[str]] = {}
    for pid, releases, _ in stores:
        by_connection.setdefault(pid, set()).update(releases)
    assert len(by_connection) == 2
    first, second = by_connection.values()
    assert first | second == set(RELEASES) and not first & second
    assert max(size for _, _, size in stores) <= 30
    assert sorted(CrashCounter.objects.values_list("count", flat=True)) == [40, 40, 40]
    assert sum(HourlyCrashCount.objects.values_list("reports", flat=True)) == 120
    assert sum(BucketVersionStat.objects.values_list("reports", flat=True)) == 120
    # Each bucket seen first and last where its reports say, whichever release brought them.
    for n, bucket in enumerate(ErrorBucket.objects.order_by("signature")):
        assert bucket.first_seen == reports[n].reported_at
        assert bucket.last_seen == reports[116 + n].reported_at

    again = crash_reports_ingest(reports, now=NOW)
    assert (again.inserted, again.duplicates) == (0, 120)


def test_inside_the_caller_s_transaction_everything_is_stored_on_its_own_connection(
    three_releases, stores, settings, monkeypatch
):
    settings.PHASING_INGEST_CONNECTIONS = 2
    monkeypatch.setattr(ingest, "BATCH", 30)
    with transaction.atomic():  # another connection could not see what this one writes
        summary = crash_reports_ingest(feed(60, start=NOW - timedelta(hours=3)), now=NOW)

    assert summary.inserted == 60
    assert len(stores) == 2 and len({pid for pid, _, _ in stores}) == 1
    assert all(releases == set(RELEASES) for _, releases, _ in stores)


def test_releases_sent_one_after_another_are_shared_evenly_by_the_connections(monkeypatch):
    monkeypatch.setattr(ingest, "BATCH", 5)
    window = [crash(n) for n in range(6)] + [crash(10 + n, release="jammy") for n in range(4)]

    lanes = ingest._by_lane(window, 2)

    # Batches of one release each; the second connection's jammy batch and the rest of
    # noble's weigh as much as the first connection's batch.
    assert [[len(batch) for batch in lane] for lane in lanes] == [[5], [4, 1]]
    assert [{r.release for r in batch} for batch in lanes[1]] == [{"jammy"}, {"noble"}]


def test_two_ingests_each_on_two_connections_over_the_same_releases_and_buckets_count_once(
    three_releases, settings, monkeypatch, caplog
):
    settings.PHASING_INGEST_CONNECTIONS = 2
    monkeypatch.setattr(ingest, "BATCH", 20)
    # Few machines, each crashing again in the same buckets and hours.
    reports = feed(240, start=NOW - timedelta(hours=5), machines=2)
    # The crash sync and the intake's sync at once, over the same hours of every release
    # in the same buckets; a quarter of the reports come both ways.
    intake = [r for n, r in enumerate(reports) if n // 3 % 2]
    sync = [r for n, r in enumerate(reports) if not n // 3 % 2] + intake[::4]

    with caplog.at_level(logging.WARNING, logger="overview.evidence"):
        results = run_at_once(sync, intake)

    assert sum(r.inserted for r in results) == 240
    assert sum(r.duplicates for r in results) == 30
    assert not [r.message for r in caplog.records if "batch failed" in r.message]
    assert sum(CrashCounter.objects.values_list("count", flat=True)) == 240
    assert sum(HourlyCrashCount.objects.values_list("reports", flat=True)) == 240
    # A machine counts once per bucket and hour, whichever ingest stored its report first.
    events = {
        (r.release, r.signature, r.system_id, r.reported_at.replace(minute=0)) for r in reports
    }
    assert sum(HourlyCrashCount.objects.values_list("events", flat=True)) == len(events)
    assert sum(BucketVersionStat.objects.values_list("reports", flat=True)) == 240
    for n, bucket in enumerate(ErrorBucket.objects.order_by("signature")):
        assert (bucket.first_seen, bucket.last_seen) == (
            reports[n].reported_at,
            reports[236 + n].reported_at,
        )
