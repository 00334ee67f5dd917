"""The judges in a realistic world, through the real controller (overview.backtest.runner):
the sequential judge compares the new version with the previous one over the same hours,
so a release-wide shock, a daily cycle and late reports halt no healthy update.

Small on purpose (a few busy updates over a day and a half): CI runs these; `make
backtest` runs the hundreds.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from overview.backtest.realism import Shock, WorldSpec
from overview.backtest.runner import run_here
from overview.backtest.scenarios import parse
from packages.domain.policy import SEQUENTIAL, UBUNTU

pytestmark = [pytest.mark.django_db]


def healthy(n: int, *, hours: int = 36, world: dict | None = None, **fields):
    updates = [
        {
            "id": f"healthy-{k}",
            "release": "noble",
            "source_package": f"healthy-{k}",
            "version": "1.2-1ubuntu0.2",
            "previous_version": "1.2-1ubuntu0.1",
            "machines": 200_000,
            "uptake_hours": 6,
            "previous_crashes_per_machine_day": 0.005,  # 1,000 crashes a day
            "new_crashes_per_machine_day": 0.005,
            **fields,
        }
        for k in range(n)
    ]
    scenario = {"start": "2026-01-05T00:00:00Z", "hours": hours, "updates": updates}
    if world:
        scenario["world"] = world
    return parse(scenario)


def halted(outcomes) -> list[str]:
    return [o.id for o in outcomes if o.halted]


def test_a_release_wide_3x_shock_for_12_hours_halts_no_healthy_update():
    world = {"shocks": [{"start_hour": 12, "hours": 12, "factor": 3.0}]}
    assert halted(run_here(healthy(3, world=world), judge=SEQUENTIAL)) == []


def test_a_daily_cycle_of_4_to_1_halts_no_healthy_update():
    world = {"daily_ratio": 4.0, "daily_peak_hour": 20}
    assert halted(run_here(healthy(3, world=world), judge=SEQUENTIAL)) == []


@pytest.mark.parametrize("judge", [SEQUENTIAL, UBUNTU])
def test_late_reports_never_make_a_judge_halt_on_a_partial_day(judge):
    world = {"late_share": 0.5, "late_mean_hours": 18.0}
    assert halted(run_here(healthy(3, world=world), judge=judge)) == []


def test_a_busier_release_than_its_history_halts_no_healthy_update():
    """Weekdays against a history that holds quiet weekends (the release 1.25x busier than
    the previous versions' fifteen days said), with a 3x shock on top: the previous
    version's history is read against the release's other packages, so neither reads as
    a rise."""
    world = {"weekend_factor": 0.4, "shocks": [{"start_hour": 12, "hours": 12, "factor": 3.0}]}
    assert halted(run_here(healthy(3, world=world), judge=SEQUENTIAL)) == []


def test_a_clear_regression_halts_against_its_history_read_against_the_others():
    """A hundred crashes a day, three times as many on the new version, machines taking
    it over about twelve hours and no other package's reports listing it (so the share
    on it is known only within a wide range): the two versions' crashes in the same hours
    cannot tell within a day and a half. Its history, read against the release's other
    packages' (three busy ones with many dependents), does, in the busy world above."""
    world = {"weekend_factor": 0.4, "shocks": [{"start_hour": 12, "hours": 12, "factor": 3.0}]}
    others = healthy(
        3,
        world=world,
        machines=2_000_000,
        previous_crashes_per_machine_day=0.0005,  # 1,000 crashes a day each
        new_crashes_per_machine_day=0.0005,
    )
    regressed = parse(
        {
            "start": "2026-01-05T00:00:00Z",
            "hours": 36,
            "world": world,
            "updates": [
                {
                    "id": "regressed",
                    "release": "noble",
                    "source_package": "slow",
                    "version": "1.2-1ubuntu0.2",
                    "previous_version": "1.2-1ubuntu0.1",
                    "machines": 200_000,
                    "uptake_hours": 12,
                    "previous_crashes_per_machine_day": 0.0005,  # 100 crashes a day
                    "new_crashes_per_machine_day": 0.0015,
                }
            ],
        }
    )
    scenario = replace(others, updates=[*others.updates, *regressed.updates])
    assert halted(run_here(scenario, judge=SEQUENTIAL)) == ["regressed"]


def test_the_shock_is_what_the_same_updates_would_show_otherwise():
    """The shock is real: the same busy updates' crashes triple for those hours."""
    spec = WorldSpec(shocks=(Shock(12, 12, 3.0),))
    assert spec.shock(11) == 1.0 and spec.shock(12) == 3.0 and spec.shock(24) == 1.0
