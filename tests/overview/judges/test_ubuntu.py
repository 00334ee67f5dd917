"""The error tracker's regression rules, in plain Python."""

from __future__ import annotations

from datetime import UTC, datetime

from overview.judges.ubuntu import (
    BucketCounts,
    Thresholds,
    crash_rate,
    fraction_of_day,
    new_buckets,
)

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


def test_the_rise_must_be_more_than_one_above_the_scaled_baseline():
    # mean 8, stddev 0 → baseline 8 × 50% × half a day = 2; the minimum is 3 crashes today.
    previous = {day: 8 for day in range(15)}
    exactly_one_above = crash_rate(today=3, previous_daily=previous, percentage=50, now=NOON)
    assert (exactly_one_above.difference, exactly_one_above.increase) == (1.0, False)
    # 1.01 above is a rise: a little before noon the baseline is 1.99.
    just_above = crash_rate(
        today=3,
        previous_daily=previous,
        percentage=50,
        now=NOON.replace(hour=11, minute=56, second=24),
    )
    assert just_above.difference > 1.0 and just_above.increase


def test_the_baseline_is_the_mean_plus_the_population_stddev_over_unequal_days():
    # 1, 3 and 11 crashes: mean 5, population stddev 4.32 → round(9.32) = 9 (the sample
    # stddev, 5.29, would make it 10; the median, 3, would make it 7).
    previous = dict(enumerate([1, 3, 11]))
    end_of_day = NOON.replace(hour=23, minute=59, second=59, microsecond=999999)
    judgement = crash_rate(today=10, previous_daily=previous, percentage=100, now=end_of_day)
    assert judgement.previous_average == 5.0
    assert round(judgement.baseline, 3) == 9.0
    assert judgement.previous_period_in_days == 3


def test_below_the_minimum_nothing_is_judged_and_the_previous_average_is_still_told():
    judgement = crash_rate(today=2, previous_daily={1: 4, 2: 6}, percentage=100, now=NOON)
    assert judgement.increase is False
    assert (judgement.baseline, judgement.difference, judgement.previous_average) == (0.0, 0.0, 5.0)


def test_without_previous_days_the_baseline_is_zero_and_one_day_has_no_spread():
    end_of_day = NOON.replace(hour=23, minute=59, second=59, microsecond=999999)
    empty = crash_rate(today=3, previous_daily={}, percentage=100, now=end_of_day)
    assert (empty.previous_average, empty.baseline, empty.difference) == (0.0, 0.0, 3.0)
    one_day = crash_rate(today=9, previous_daily={1: 4}, percentage=100, now=end_of_day)
    assert round(one_day.baseline, 3) == 4.0  # round(4 + 0): a single day has no spread


def test_the_day_fraction_counts_from_midnight_to_the_microsecond():
    assert fraction_of_day(NOON.replace(microsecond=500_000)) > 0.5
