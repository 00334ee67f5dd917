"""The error tracker's regression rules, in plain Python."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from overview.judges.ubuntu import (
    BucketCounts,
    Thresholds,
    baseline_days,
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


def days_before(day: date, counts: dict[int, int]) -> dict[date, int]:
    """{days ago: crashes} as {day: crashes}."""
    return {day - timedelta(days=ago): n for ago, n in counts.items()}


TODAY = NOON.date()
END_OF_DAY = NOON.replace(hour=23, minute=59)


def test_fewer_than_three_crashes_today_never_count_as_a_rise():
    previous = days_before(TODAY, {1: 4})
    assert not crash_rate(today=2, previous_daily=previous, percentage=100, now=NOON).increase


def test_a_rise_is_today_against_mean_plus_stddev_scaled_by_percentage_and_time_of_day():
    # mean 10, population stddev 0 → baseline round(10) × 50% × half a day = 2.5
    previous = days_before(TODAY, {ago: 10 for ago in range(1, 16)})
    assert not crash_rate(today=3, previous_daily=previous, percentage=50, now=NOON).increase
    judgement = crash_rate(today=4, previous_daily=previous, percentage=50, now=NOON)
    assert judgement.baseline == 2.5
    assert judgement.difference == 1.5
    assert judgement.increase
    assert judgement.previous_period_in_days == 15


def test_the_day_fraction_is_whole_minutes_of_the_utc_day():
    assert fraction_of_day(NOON) == 0.5
    assert fraction_of_day(NOON.replace(second=59, microsecond=999_999)) == 0.5
    assert fraction_of_day(NOON.replace(minute=1)) == 721 / 1440


def test_the_rise_must_be_more_than_one_above_the_scaled_baseline():
    # mean 8, stddev 0 → baseline 8 × 50% × half a day = 2; the minimum is 3 crashes today.
    previous = days_before(TODAY, {ago: 8 for ago in range(1, 16)})
    exactly_one_above = crash_rate(today=3, previous_daily=previous, percentage=50, now=NOON)
    assert (exactly_one_above.difference, exactly_one_above.increase) == (1.0, False)
    # A minute before noon the baseline is 4 × 719/1440 = 1.997: a rise.
    just_above = crash_rate(
        today=3, previous_daily=previous, percentage=50, now=NOON.replace(hour=11, minute=59)
    )
    assert just_above.difference > 1.0 and just_above.increase


def test_the_baseline_is_the_mean_plus_the_population_stddev_over_unequal_days():
    # 1, 3 and 11 crashes: mean 5, population stddev 4.32 → round(9.32) = 9 (the sample
    # stddev, 5.29, would make it 10; the median, 3, would make it 7).
    previous = days_before(TODAY, {3: 1, 2: 3, 1: 11})
    judgement = crash_rate(today=10, previous_daily=previous, percentage=100, now=END_OF_DAY)
    assert judgement.previous_average == 9.0
    assert judgement.baseline == 9.0 * 1439 / 1440
    assert judgement.previous_period_in_days == 3


def test_the_period_runs_from_the_oldest_of_the_15_latest_crash_days_with_empty_days_as_zero():
    # Crash days 40, 30, 28, 26, ... 2 days before publication: the 15 latest are 30..2,
    # so the period is the 30 calendar days from 30 days before, half of them empty.
    published = TODAY - timedelta(days=5)
    previous = days_before(published, {40: 50, **{ago: 2 for ago in range(30, 1, -2)}})
    assert baseline_days(previous, published=published) == [2, 0] * 14 + [2, 0]
    judgement = crash_rate(
        today=5, previous_daily=previous, percentage=100, now=NOON, published=published
    )
    assert judgement.previous_period_in_days == 30
    assert judgement.previous_average == 2.0  # round(1 + 1)


def test_the_previous_versions_days_after_publication_are_not_in_the_baseline():
    published = TODAY - timedelta(days=3)
    previous = days_before(TODAY, {5: 1, 4: 1, 2: 500, 1: 500})
    assert baseline_days(previous, published=published) == [1, 1]
    judgement = crash_rate(
        today=4, previous_daily=previous, percentage=100, now=NOON, published=published
    )
    assert judgement.increase  # 4 against round(1) × ½ day, not against 500 a day


def test_a_previous_version_with_no_crashes_up_to_publication_makes_any_crash_today_a_rise():
    # cassie checks this before the "fewer than 3 crashes today" rule.
    published = TODAY - timedelta(days=3)
    only_after = days_before(TODAY, {2: 7})
    judgement = crash_rate(
        today=1, previous_daily=only_after, percentage=10, now=NOON, published=published
    )
    assert (judgement.increase, judgement.difference, judgement.no_previous_data) == (
        True,
        1.0,
        True,
    )


def test_an_update_without_a_previous_version_is_never_rate_checked():
    judgement = crash_rate(
        today=50, previous_daily={}, percentage=10, now=NOON, has_previous_version=False
    )
    assert judgement.increase is False


def test_a_zero_percentage_scales_the_baseline_to_zero_as_cassies_if_pup_on_a_string():
    # The API hands cassie the percentage as the request's string: "0" is true in
    # `if pup:`, so the baseline is multiplied by 0 and any three crashes are a rise.
    previous = days_before(TODAY, {1: 4, 2: 4})
    judgement = crash_rate(today=3, previous_daily=previous, percentage=0, now=NOON)
    assert (judgement.previous_average, judgement.baseline, judgement.increase) == (0, 0, True)


def test_the_baseline_is_rounded_to_whole_crashes_before_scaling():
    spread = days_before(TODAY, {4: 1})  # 1, 0, 0, 0: 0.25 + 0.433 → round(0.683) = 1
    judgement = crash_rate(today=9, previous_daily=spread, percentage=50, now=NOON)
    assert (judgement.previous_average, judgement.baseline) == (0.5, 0.25)


# The error tracker's own scenarios (ubuntu/error-tracker src/tests/create_test_data.py and
# test_cassie.py, test_get_package_crash_rate_*), with the day of the test as `date` as
# those tests pass it, and -proposed reports left out as phased-updater always asks.


def test_cassie_increase_rate_depends_on_the_time_of_day():
    # Version 1 crashed once 30, 20, 10, 5 and 2 days ago; version 2 four times today
    # (its fifth report today came from -proposed). Period 30 days, 5 of them with one
    # crash: round(1/6 + 0.37) = 1, × 70% = 0.7. cassie's test expects 3.4 ± 10%, which
    # holds from about 09:00 UTC; at noon it is 4 − 0.35.
    previous = days_before(TODAY, {30: 1, 20: 1, 10: 1, 5: 1, 2: 1})
    judgement = crash_rate(today=4, previous_daily=previous, percentage=70, now=NOON)
    assert judgement.increase
    assert judgement.previous_period_in_days == 30
    assert judgement.previous_average == 0.7
    assert judgement.difference == 4 - 0.35
    assert abs(judgement.difference - 3.4) <= 0.34
    early = crash_rate(today=4, previous_daily=previous, percentage=70, now=NOON.replace(hour=2))
    assert early.increase and abs(early.difference - 3.4) > 0.34  # 3.94 at 02:00


def test_cassie_no_crashes_today():
    previous = days_before(TODAY, {30: 1, 20: 1, 10: 1, 5: 1, 2: 1})
    assert not crash_rate(today=0, previous_daily=previous, percentage=100, now=NOON).increase


def test_cassie_few_crashes():
    previous = days_before(TODAY, {30: 1, 20: 1, 10: 1, 5: 1, 2: 1})
    assert not crash_rate(today=2, previous_daily=previous, percentage=100, now=NOON).increase


def test_cassie_new_package():
    judgement = crash_rate(today=5, previous_daily={}, percentage=100, now=NOON)
    assert (judgement.increase, judgement.difference) == (True, 5)


def test_cassie_low_difference():
    previous = days_before(TODAY, {ago: 1 for ago in range(1, 31)})
    judgement = crash_rate(today=1, previous_daily=previous, percentage=100, now=NOON)
    assert not judgement.increase


def test_cassie_all_proposed():
    # All four crashes today came from -proposed: none counts.
    previous = days_before(TODAY, {30: 1, 20: 1, 10: 1})
    assert not crash_rate(today=0, previous_daily=previous, percentage=100, now=NOON).increase
