"""Library regressions in the backtest: an update whose regression shows only in its
dependents' crashes is caught by the sequential judge, through the real controller; a
dependent's own new version crashing more never blames the library it depends on."""

from __future__ import annotations

import re

import pytest

from overview.backtest.runner import run_here
from overview.backtest.scenarios import ScenarioError, parse
from overview.backtest.summary import summarise, table
from packages.domain.policy import SEQUENTIAL

pytestmark = [pytest.mark.django_db]


def library(name: str, **dependents) -> dict:
    return {
        "id": name,
        "release": "noble",
        "source_package": name,
        "version": "3.0.13-0ubuntu3.2",
        "previous_version": "3.0.13-0ubuntu3.1",
        "machines": 200_000,
        "uptake_hours": 6,
        # The library itself hardly crashes: 20 a day, the same with either version.
        "previous_crashes_per_machine_day": 0.0001,
        "new_crashes_per_machine_day": 0.0001,
        # Its dependents: 1,000 crashes a day.
        "dependents": {"crashes_per_machine_day": 0.005, **dependents},
    }


def scenario(*updates: dict, hours: int = 36):
    return parse({"start": "2026-01-05T00:00:00Z", "hours": hours, "updates": list(updates)})


def test_a_clear_dependents_only_regression_is_caught_and_an_innocent_library_is_not_blamed():
    world = scenario(
        library("libclear", ratio=3.0),
        library("libinnocent", own_update={"version": "1.0-2", "ratio": 5.0}),
        library("libquiet"),
    )
    outcomes = {o.id: o for o in run_here(world, judge=SEQUENTIAL)}
    assert outcomes["libclear"].halted
    assert outcomes["libclear"].halt_reason == "dependents"
    assert outcomes["libclear"].percentage_at_halt < 100
    assert not outcomes["libinnocent"].halted
    assert not outcomes["libquiet"].halted

    summary = summarise(world, list(outcomes.values()), SEQUENTIAL)
    assert summary.caught == {"dependents only": (1, 1)}
    assert dict(summary.halts_by_problem) == {"dependents": 1}
    assert summary.own_version_blamed == (0, 1)
    assert (summary.healthy, summary.healthy_halted) == (2, 0)
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in table([summary]).splitlines()[1:])
    assert rows["caught before 100%: dependents only"] == "1 of 1 (100%)"
    assert rows["halts by problem: dependents"] == "1"
    assert rows["library blamed for a dependent's own new version"] == "0 of 1 (0%)"


def test_the_dependents_field_is_checked_and_names_the_key():
    with pytest.raises(ScenarioError, match="dependents: unknown key 'ratios'"):
        scenario(library("liba", ratios=2))
    with pytest.raises(ScenarioError, match="own_update: version must be above 1.0-1"):
        scenario(library("liba", own_update={"version": "0.9-1"}))
    with pytest.raises(ScenarioError, match="dependents: ratio must be at least 0"):
        scenario(library("liba", ratio=-1))
    plain = scenario(library("liba")).updates[0]
    assert plain.dependents is not None and plain.dependents.ratio == 1.0
    assert not plain.regressed
    assert scenario(library("liba", ratio=1.5)).updates[0].regressed


@pytest.mark.parametrize("agents", [0, 200])
def test_where_machines_install_at_their_daily_timer_fleet_agents_make_a_doubling_clear(agents):
    # Machines install within a day of becoming eligible: without a measured share, a
    # doubling of the dependents' crashes looks like everyone eligible having it already.
    world = parse(
        {
            "start": "2026-01-05T00:00:00Z",
            "hours": 36,
            "world": {"uptake": "timers", "fleet_agents_per_hour": agents},
            "updates": [library("libdouble", ratio=2.0, crashes_per_machine_day=0.01)],
        }
    )
    [outcome] = run_here(world, judge=SEQUENTIAL)
    assert outcome.halted == bool(agents)
