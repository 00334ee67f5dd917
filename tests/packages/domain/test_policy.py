"""Policy arithmetic: plain Python, no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from packages.domain import policy
from packages.domain.policy import (
    DEFAULT_RULES,
    Rules,
    in_quiet_weekend,
    next_percentage,
    projected_steps,
    step_allowed_at,
    time_to_reach,
)

MONDAY = datetime(2026, 11, 30, 13, 0, tzinfo=UTC)


def test_default_policy_starts_at_10_and_adds_10_points():
    assert DEFAULT_RULES.first_percentage == 10
    assert [next_percentage(DEFAULT_RULES, p) for p in (0, 10, 50, 90)] == [10, 20, 60, 100]
    assert next_percentage(DEFAULT_RULES, 100) is None


def test_default_policy_reaches_100_in_54_hours():
    steps = projected_steps(DEFAULT_RULES, percentage=10, last_increase_at=MONDAY, now=MONDAY)
    assert [p for _, p in steps] == [20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert steps[-1][0] - MONDAY == timedelta(hours=54)


def test_ubuntu_paces_are_expressible_as_steps_of_5_or_1_points():
    careful = Rules(start=5, step=5)
    very_careful = Rules(start=1, step=1)
    assert next_percentage(careful, 5) == 10
    assert next_percentage(very_careful, 41) == 42


def test_an_explicit_schedule_steps_through_its_percentages():
    apple = Rules(schedule=(1, 2, 5, 10, 20, 50, 100), interval=timedelta(days=1))
    assert apple.first_percentage == 1
    assert [next_percentage(apple, p) for p in (1, 2, 5, 10, 20, 50)] == [2, 5, 10, 20, 50, 100]
    steps = projected_steps(apple, percentage=1, last_increase_at=MONDAY, now=MONDAY)
    assert steps[-1] == (MONDAY + timedelta(days=6), 100)


def test_a_schedule_must_rise():
    with pytest.raises(ValueError, match="."):
        Rules(schedule=(10, 5, 100))


def test_a_ceiling_stops_the_ramp_below_100():
    rules = Rules(ceiling=50)
    assert next_percentage(rules, 40) == 50
    assert next_percentage(rules, 50) is None


@pytest.mark.parametrize(
    ("moment", "quiet"),
    [
        (datetime(2026, 12, 3, 23, 59, tzinfo=UTC), False),  # Thursday night
        (datetime(2026, 12, 4, 0, 0, tzinfo=UTC), True),  # Friday 00:00
        (datetime(2026, 12, 6, 18, 0, tzinfo=UTC), True),  # Sunday
        (datetime(2026, 12, 7, 11, 59, tzinfo=UTC), True),  # Monday morning
        (datetime(2026, 12, 7, 12, 0, tzinfo=UTC), False),  # Monday 12:00
    ],
)
def test_the_quiet_weekend_runs_from_friday_midnight_to_monday_noon(moment, quiet):
    assert in_quiet_weekend(moment) is quiet


def test_the_quiet_weekend_delays_only_the_step_to_100():
    rules = Rules(quiet_weekend=True)
    saturday = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
    assert step_allowed_at(rules, target=90, moment=saturday) == saturday
    assert step_allowed_at(rules, target=100, moment=saturday) == datetime(
        2026, 12, 7, 12, 0, tzinfo=UTC
    )


def test_time_to_reach_a_percentage_follows_the_projected_steps():
    at = time_to_reach(DEFAULT_RULES, percentage=30, last_increase_at=MONDAY, now=MONDAY, target=57)
    assert at == MONDAY + timedelta(hours=18)  # 40, 50, then 60 ≥ 57
    assert (
        time_to_reach(
            Rules(ceiling=50), percentage=30, last_increase_at=MONDAY, now=MONDAY, target=80
        )
        is None
    )


def test_an_overdue_step_is_projected_now_not_in_the_past():
    long_ago = MONDAY - timedelta(days=3)
    steps = projected_steps(DEFAULT_RULES, percentage=10, last_increase_at=long_ago, now=MONDAY)
    assert steps[0] == (MONDAY, 20)
    assert steps[1] == (MONDAY + timedelta(hours=6), 30)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"interval": timedelta(days=999_999_999)}, "the interval is between 1 minute and 30 days"),
        ({"interval": timedelta(seconds=5)}, "the interval is between 1 minute and 30 days"),
        ({"step": 0}, "the step is 1..100 points"),
        ({"step": 101}, "the step is 1..100 points"),
        ({"ceiling": 0}, "the ceiling is 1..100"),
        ({"ceiling": 101}, "percentages are 0..100"),
        ({"min_time_at_percentage": timedelta(days=31)}, "at most 30 days"),
        ({"min_previous_reports": 10**9}, "the previous reports wanted are 0..1,000,000"),
        ({"schedule": tuple(range(102))}, "a schedule has at most 101 steps"),
    ],
)
def test_every_setting_of_a_policy_has_bounds(fields, message):
    with pytest.raises(ValueError, match=message):
        policy.Rules(**fields)


def test_the_longest_policy_still_projects_its_steps_without_overflow():
    rules = policy.Rules(start=1, step=1, interval=policy.MAX_INTERVAL)
    start = datetime(2026, 12, 1, tzinfo=UTC)
    steps = policy.projected_steps(rules, percentage=1, last_increase_at=start, now=start)
    assert len(steps) == 99
    assert steps[-1][0] == start + 99 * policy.MAX_INTERVAL


@pytest.mark.parametrize(
    "fields",
    [
        {"step": 100},
        {"ceiling": 1},
        {"interval": timedelta(minutes=1)},
        {"interval": timedelta(days=30)},
        {"min_time_at_percentage": timedelta(0)},
        {"min_time_at_percentage": timedelta(days=30)},
        {"min_previous_reports": 1_000_000},
        {"schedule": tuple(range(101))},
        {"insufficient_gate": 0},
        {"insufficient_gate": 100},
        {"insufficient_max_hold": timedelta(0)},
    ],
)
def test_the_bounds_of_a_policy_are_themselves_allowed(fields):
    assert policy.Rules(**fields)


def test_the_quiet_weekend_ends_on_the_next_monday_at_noon_sharp():
    friday = datetime(2026, 12, 4, 15, 30, 45, 123, tzinfo=UTC)
    assert policy.end_of_quiet_weekend(friday) == datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    monday_afternoon = datetime(2026, 12, 7, 13, 0, tzinfo=UTC)
    assert policy.end_of_quiet_weekend(monday_afternoon) == datetime(
        2026, 12, 14, 12, 0, tzinfo=UTC
    )
    noon = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    assert policy.end_of_quiet_weekend(noon) == datetime(2026, 12, 14, 12, 0, tzinfo=UTC)
