"""The realistic world's factors, each tested for the effect it must have on the counts.

Plain simulation, no database: one update's machines hour by hour (overview.backtest.world)
with one factor of overview.backtest.realism switched on against the tidy world.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from overview.backtest import realism
from overview.backtest.realism import TIDY, Shock, WorldSpec
from overview.backtest.scenarios import ScenarioError, Update, parse
from overview.backtest.world import UpdateWorld

MONDAY = datetime(2026, 1, 5, tzinfo=UTC)
BUSY = Update(
    id="u",
    release="noble",
    source_package="systemd",  # the most depended-on: dependents' traffic is heavy
    version="1.2-1ubuntu0.2",
    previous_version="1.2-1ubuntu0.1",
    machines=100_000,
    uptake_hours=12,
    previous_crashes_per_machine_day=0.05,  # about 210 crashes an hour
    new_crashes_per_machine_day=0.05,
)


def hourly(spec: WorldSpec, hours: int, *, percentage: int = 0, update: Update = BUSY):
    """Reports delivered each hour, the package's own and its dependents' apart."""
    world = UpdateWorld(update, seed=7, spec=spec, start=MONDAY)
    own, dependents, all_reports = [], [], []
    for hour in range(hours):
        reports = world.hour(hour, MONDAY, percentage)
        all_reports.append(reports)
        own.append(sum(1 for r in reports if r.source_package == update.source_package))
        dependents.append(sum(1 for r in reports if r.source_package != update.source_package))
    return own, dependents, all_reports, world


def at_hours(counts: list[int], hours_of_day: set[int]) -> int:
    return sum(n for h, n in enumerate(counts) if h % 24 in hours_of_day)


def test_a_daily_cycle_of_4_to_1_makes_the_peak_hour_four_times_the_quietest():
    spec = WorldSpec(daily_ratio=4.0, daily_peak_hour=15)
    own, dependents, _, _ = hourly(spec, 48)
    peak, trough = at_hours(own, {14, 15, 16}), at_hours(own, {2, 3, 4})
    assert 3.2 < peak / trough < 4.8
    # Dependents' crash traffic follows the same cycle.
    assert at_hours(dependents, {14, 15, 16}) > 2.5 * at_hours(dependents, {2, 3, 4})
    tidy, _, _, _ = hourly(TIDY, 48)
    assert 0.8 < at_hours(tidy, {14, 15, 16}) / at_hours(tidy, {2, 3, 4}) < 1.25


def test_the_cycles_keep_the_weeks_mean():
    spec = WorldSpec(daily_ratio=4.0, weekend_factor=0.5)
    week = [spec.activity(MONDAY.replace(day=5 + d, hour=h)) for d in range(7) for h in range(24)]
    assert statistics.fmean(week) == pytest.approx(1.0, abs=0.01)


def test_a_weekly_cycle_makes_the_history_s_weekends_quieter():
    spec = WorldSpec(weekend_factor=0.5)
    world = UpdateWorld(BUSY, seed=7, spec=spec, start=MONDAY)
    daily, _ = world.history(14)  # from Monday two weeks before: days 5, 6, 12, 13 weekends
    weekend = statistics.fmean(daily[d] for d in (5, 6, 12, 13))
    weekday = statistics.fmean(daily[d] for d in range(14) if d not in (5, 6, 12, 13))
    assert 0.4 < weekend / weekday < 0.6


def test_overdispersed_counts_vary_far_more_than_poisson_ones():
    tidy, _, _, _ = hourly(TIDY, 72)
    mixed, _, _, _ = hourly(WorldSpec(overdispersion_shape=4.0), 72)
    assert statistics.variance(tidy) / statistics.fmean(tidy) < 2
    # Negative binomial: variance ≈ mean + mean² / 4, about 50 × the mean here.
    assert statistics.variance(mixed) / statistics.fmean(mixed) > 10
    assert 0.8 < statistics.fmean(mixed) / statistics.fmean(tidy) < 1.2


def test_a_machine_in_a_crash_loop_sends_many_reports_in_its_hour():
    _, _, reports, _ = hourly(WorldSpec(looping_share=0.05, looping_reports=10), 6)
    own = [r for hour in reports for r in hour if r.source_package == BUSY.source_package]
    per_machine_hour: dict[tuple[str, str, int], int] = {}
    for r in own:
        key = (r.system_id, r.signature, r.reported_at.hour)
        per_machine_hour[key] = per_machine_hour.get(key, 0) + 1
    loops = [n for n in per_machine_hour.values() if n >= 10]
    assert 0.02 < len(loops) / len(per_machine_hour) < 0.09
    assert len(own) > 1.3 * len(per_machine_hour)


def test_late_reports_arrive_hours_after_their_crash_and_are_booked_at_its_time():
    spec = WorldSpec(late_share=0.5, late_mean_hours=10.0)
    tidy, _, _, _ = hourly(TIDY, 72)
    late, _, reports, _ = hourly(spec, 72)
    assert late[0] < 0.7 * tidy[0]  # half of the first hour's reports are still to come
    delivered_late = [
        (hour, r)
        for hour, batch in enumerate(reports)
        for r in batch
        if r.reported_at.hour != hour % 24
    ]
    assert delivered_late and all(
        r.reported_at < MONDAY.replace(hour=0) + (hour + 1) * (MONDAY.replace(hour=1) - MONDAY)
        for hour, r in delivered_late
    )
    # Nothing is lost: once the delays are over, as many arrive as in the tidy world.
    assert 0.9 < sum(late[24:]) / sum(tidy[24:]) < 1.1


def test_uptake_by_daily_timers_is_complete_within_a_day_but_for_machines_that_were_off():
    def share_after(spec: WorldSpec, hours: int) -> float:
        world = UpdateWorld(BUSY, seed=7, spec=spec, start=MONDAY)
        world._eligible_hours[:] = hours - 0.5  # every draw eligible for `hours`
        return world.installed_share(100)

    assert share_after(WorldSpec(uptake="timers"), 24) == pytest.approx(1.0)
    assert share_after(WorldSpec(uptake="timers"), 12) == pytest.approx(0.5, abs=0.03)
    off = WorldSpec(uptake="timers", off_share=0.2, off_days=4)
    assert share_after(off, 24) == pytest.approx(0.8 + 0.2 * 0.25, abs=0.01)
    assert share_after(TIDY, 24) == pytest.approx(1 - 2.718281828**-2, abs=0.01)


def test_timers_uptake_is_what_the_machines_do():
    spec = WorldSpec(uptake="timers", off_share=0.2, off_days=4)
    world = UpdateWorld(BUSY, seed=7, spec=spec, start=MONDAY)
    for hour in range(12):
        world.hour(hour, MONDAY, 100)
    installed = sum(world._installed(i, 100) for i in range(4000)) / 4000
    assert installed == pytest.approx(world.installed_share(100), abs=0.04)


def test_phasing_ignorers_run_the_new_version_at_zero_percent():
    update = replace(BUSY, new_crashes_per_machine_day=0.05)
    _, _, tidy, _ = hourly(TIDY, 6, percentage=0, update=update)
    _, _, ignoring, world = hourly(WorldSpec(ignorers=0.05), 6, percentage=0, update=update)

    def on_new(batches):
        return sum(1 for b in batches for r in b if r.version == update.version)

    def own(batches):
        return sum(1 for b in batches for r in b if r.source_package == update.source_package)

    # Without ignorers only the machines apt draws 0 for (1 in 101) take it at 0 %.
    assert on_new(tidy) / own(tidy) < 0.015
    assert 0.04 < on_new(ignoring) / own(ignoring) < 0.09
    assert world.installed_share(0) == pytest.approx(0.05, abs=0.01)


def test_a_release_wide_shock_multiplies_every_versions_crashes_and_the_dependents():
    spec = WorldSpec(shocks=(Shock(start_hour=24, hours=12, factor=3.0),))
    own, dependents, _, _ = hourly(spec, 48, percentage=0)
    before, during = sum(own[12:24]), sum(own[24:36])
    assert 2.6 < during / before < 3.4
    assert sum(dependents[24:36]) > 2 * sum(dependents[12:24])


def test_the_tidy_world_is_the_default_and_draws_as_before():
    plain = UpdateWorld(BUSY, seed=7)
    tidy = UpdateWorld(BUSY, seed=7, spec=TIDY, start=MONDAY)
    assert [r.external_id for r in plain.hour(0, MONDAY, 10)] == [
        r.external_id for r in tidy.hour(0, MONDAY, 10)
    ]
    assert plain.history(15) == tidy.history(15)


SCENARIO = {
    "start": "2026-01-05T00:00:00Z",
    "hours": 24,
    "updates": [
        {
            "id": "u",
            "release": "noble",
            "source_package": "tool",
            "version": "1.2-1ubuntu0.2",
            "previous_version": "1.2-1ubuntu0.1",
            "machines": 1000,
            "uptake_hours": 3,
            "previous_crashes_per_machine_day": 0.005,
            "new_crashes_per_machine_day": 0.005,
        }
    ],
}


def test_a_scenario_file_sets_world_factors_over_the_named_world():
    scenario = parse(
        {
            **SCENARIO,
            "world": {"daily_ratio": 2, "shocks": [{"start_hour": 3, "hours": 2, "factor": 3}]},
        }
    )
    spec = scenario.world_spec("realistic")
    assert spec.daily_ratio == 2.0 and spec.shocks == (Shock(3, 2, 3.0),)
    assert spec.late_share == realism.REALISTIC.late_share  # the rest from the named world
    assert parse(SCENARIO).world_spec() == TIDY


@pytest.mark.parametrize(
    ("world", "says"),
    [
        ({"daily_ratio": 0.5}, "world: daily_ratio must be between 1 and 100"),
        ({"uptake": "weekly"}, "world: uptake must be one of exponential, timers"),
        ({"weather": 1}, "world: unknown key 'weather'"),
        ({"shocks": [{"start_hour": 1}]}, "world: shock 1 must be an object"),
        ([], "world must be an object"),
    ],
)
def test_a_world_that_cannot_be_simulated_says_which_key(world, says):
    with pytest.raises(ScenarioError, match=says):
        parse(json.loads(json.dumps({**SCENARIO, "world": world})))


def test_a_deployment_registers_its_own_world():
    realism.register("quiet-lab", WorldSpec(daily_ratio=1.5))
    try:
        assert parse(SCENARIO).world_spec("quiet-lab").daily_ratio == 1.5
    finally:
        del realism.WORLDS["quiet-lab"]
    with pytest.raises(realism.WorldSpecError, match="unknown world 'quiet-lab'"):
        realism.named("quiet-lab")


def test_the_command_refuses_an_unknown_world_naming_the_known_ones(tmp_path):
    from django.core.management import CommandError, call_command

    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(SCENARIO))
    with pytest.raises(CommandError, match="unknown world 'moon': use realistic, tidy") as error:
        call_command("phasing_backtest", "--scenarios", str(path), "--world", "moon")
    assert error.value.returncode == 2
