"""Crash reports kept for a set time: day partitions on PostgreSQL, a purge that drops
them whole, counters that outlive the reports; SQLite keeps one table and deletes rows."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection

from overview.evidence import partitions
from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.retention import crash_partitions_maintain
from overview.models import (
    BucketSystem,
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    HourlyCrashCount,
)
from overview.pages.selectors import bucket_report_totals
from packages.services.sync import publications_sync
from tests.overview.evidence.test_ingest import crash
from tests.packages.services.sync_fakes import ListSource, record

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="partitions are PostgreSQL's"
)


def days_ago(n: int, hour: int = 10) -> datetime:
    return (NOW - timedelta(days=n)).replace(hour=hour)


@pytest.fixture
def archive():
    publications_sync(ListSource([record()]), now=NOW)


@postgresql_only
def test_on_postgresql_the_reports_table_is_partitioned_by_day_and_a_late_report_gets_its_day(
    archive,
):
    assert partitions.is_partitioned()
    crash_reports_ingest(
        [crash(1, reported_at=days_ago(30)), crash(2, reported_at=days_ago(2))], now=NOW
    )
    assert {days_ago(30).date(), days_ago(2).date()} <= set(partitions.partition_days())
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {partitions.partition_name(days_ago(30).date())}")
        assert cursor.fetchone()[0] == 1
        cursor.execute(f"SELECT count(*) FROM {partitions.DEFAULT}")
        assert cursor.fetchone()[0] == 0


@postgresql_only
def test_the_maintenance_creates_the_coming_days_partitions(settings):
    settings.PHASING_CRASH_PARTITIONS_AHEAD = 3
    done = crash_partitions_maintain(now=NOW)
    coming = [NOW.date() + timedelta(days=n) for n in range(4)]
    assert set(coming) <= set(partitions.partition_days())
    assert set(done.created) <= set(coming)
    assert crash_partitions_maintain(now=NOW).created == []  # once


@postgresql_only
def test_a_report_written_outside_the_ingest_lands_in_the_default_partition_and_is_purged_with_its_day(
    archive, settings
):
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 90
    crash_reports_ingest([crash(1, reported_at=days_ago(5))], now=NOW)
    stray = CrashReport.objects.get()
    stray.pk, stray.external_id, stray.reported_at = None, "stray", days_ago(120)
    stray.save()  # no partition of that day: the default one takes it
    # Its day keeps its rows in the default partition: no partition is made for it.
    assert partitions.ensure([days_ago(120).date()]) == []
    crash_partitions_maintain(now=NOW)
    assert list(CrashReport.objects.values_list("external_id", flat=True)) == ["r1"]


def test_the_purge_forgets_reports_past_retention_and_keeps_every_counter(archive, settings):
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 120  # the reports came in while kept
    crash_reports_ingest(
        [crash(n, reported_at=days_ago(100)) for n in range(3)]
        + [crash(n, reported_at=days_ago(10)) for n in range(3, 5)],
        now=NOW,
    )
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 90
    counters = (
        sorted(CrashCounter.objects.values_list("day", "count")),
        list(BucketVersionStat.objects.values_list("reports", "systems")),
        sorted(HourlyCrashCount.objects.values_list("hour", "reports")),
        BucketSystem.objects.count(),
    )

    done = crash_partitions_maintain(now=NOW)

    assert sorted(CrashReport.objects.values_list("external_id", flat=True)) == ["r3", "r4"]
    if partitions.is_partitioned():
        assert days_ago(100).date() in done.dropped
        assert all(day >= date(2026, 9, 4) for day in partitions.partition_days())
    else:
        assert done.deleted == 3
    assert counters == (
        sorted(CrashCounter.objects.values_list("day", "count")),
        list(BucketVersionStat.objects.values_list("reports", "systems")),
        sorted(HourlyCrashCount.objects.values_list("hour", "reports")),
        BucketSystem.objects.count(),
    )


def test_counters_stay_right_when_reports_arrive_after_a_purge(archive, settings):
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 120
    crash_reports_ingest([crash(n, reported_at=days_ago(100)) for n in range(3)], now=NOW)
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 90
    crash_partitions_maintain(now=NOW)
    # The same bucket and version again: one system seen before (s0), one new (s3 ~ n=3).
    crash_reports_ingest(
        [crash(3, reported_at=days_ago(1)), crash(6, reported_at=days_ago(1))], now=NOW
    )
    stat = BucketVersionStat.objects.get()
    assert (stat.reports, stat.systems) == (5, 3)  # s0, s1, s2: 6 % 3 == 0 and 3 % 3 == 0
    assert stat.first_reported == days_ago(100)


def test_a_report_older_than_the_retention_is_logged_and_skipped_and_the_batch_kept(
    archive, settings, caplog
):
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 90
    summary = crash_reports_ingest(
        [crash(1, reported_at=days_ago(91)), crash(2, reported_at=days_ago(1))], now=NOW
    )
    assert (summary.inserted, summary.skipped) == (1, 1)
    assert "older than the crash reports kept" in caplog.text


def test_the_problem_page_shows_the_same_figures_after_the_purge(archive, settings, client):
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 120
    crash_reports_ingest(
        [crash(n, reported_at=days_ago(100)) for n in range(4)]
        + [crash(9, reported_at=days_ago(1))],
        now=NOW,
    )
    bucket = CrashReport.objects.first().bucket
    before = bucket_report_totals(bucket)
    page = client.get(f"/problems/{bucket.pk}/").content.decode()
    settings.PHASING_CRASH_REPORT_RETENTION_DAYS = 90

    crash_partitions_maintain(now=NOW)

    assert CrashReport.objects.count() == 1
    assert before == bucket_report_totals(bucket)
    assert (before["reports"], before["systems"]) == (5, 3)
    assert "5 from 3 systems" in " ".join(page.split())
    after = client.get(f"/problems/{bucket.pk}/").content.decode()
    assert "5 from 3 systems" in " ".join(after.split())
