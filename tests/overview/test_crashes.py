"""The error tracker's regression rules, in plain Python."""

from __future__ import annotations

from datetime import UTC, datetime

from overview.crashes import BucketCounts, Thresholds, crash_rate, fraction_of_day, new_buckets

NOON = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def test_a_bucket_is_new_when_the_previous_version_never_had_it_and_three_systems_report_it():
    found = new_buckets(
        [
            BucketCounts("crash-a", reports=9, systems=3),
            BucketCounts("crash-b", reports=9, systems=2),  # one or two broken machines
            BucketCounts("crash-c", reports=9, systems=5),  # known from the previous version
            BucketCounts("crash-d", reports=9, systems=5, retrace_failed=True),
        ],
        previous_version_signatures={"crash-c"},
    )
    assert [b.signature for b in found] == ["crash-a"]


def test_the_system_threshold_is_configurable():
    buckets = [BucketCounts("crash-b", reports=2, systems=2)]
    assert new_buckets(buckets, set(), Thresholds(new_bucket_min_systems=2))


def test_fewer_than_three_crashes_today_never_count_as_a_rise():
    judgement = crash_rate(today=2, previous_daily={}, percentage=100, now=NOON)
    assert not judgement.increase


def test_a_rise_is_today_against_mean_plus_stddev_scaled_by_percentage_and_time_of_day():
    # mean 10, population stddev 0 → baseline round(10) × 50% × half a day = 2.5
    previous = {day: 10 for day in range(15)}
    assert not crash_rate(today=3, previous_daily=previous, percentage=50, now=NOON).increase
    judgement = crash_rate(today=4, previous_daily=previous, percentage=50, now=NOON)
    assert judgement.baseline == 2.5
    assert judgement.difference == 1.5
    assert judgement.increase
    assert judgement.previous_period_in_days == 15


def test_a_previous_version_without_crashes_makes_three_crashes_a_rise():
    assert crash_rate(today=3, previous_daily={}, percentage=10, now=NOON).increase


def test_the_day_fraction_is_measured_in_utc():
    assert fraction_of_day(NOON) == 0.5
