"""The backtest's figures per judge: clear regressions' median percentage and hours at
halt, the bar against Ubuntu's rules, and the plot of catches by regression size."""

from __future__ import annotations

from overview.backtest.plot import catches_png
from overview.backtest.runner import Outcome
from overview.backtest.scenarios import parse
from overview.backtest.summary import checks, summarise, table


def update(update_id: str, ratio: float) -> dict:
    return {
        "id": update_id,
        "release": "noble",
        "source_package": f"pkg-{update_id}",
        "version": "1.2-1ubuntu0.2",
        "previous_version": "1.2-1ubuntu0.1",
        "machines": 100_000,
        "uptake_hours": 6,
        "previous_crashes_per_machine_day": 0.002,  # 200 a day: busy
        "new_crashes_per_machine_day": 0.002 * ratio,
    }


SCENARIO = parse(
    {
        "start": "2026-01-05T00:00:00Z",
        "hours": 96,
        "updates": [update("a", 3.0), update("b", 2.5), update("c", 1.0)],
    }
)


def outcome(update_id, judge, *, halted_at=None, percentage=None, machine_hours=0.0):
    return Outcome(
        id=update_id,
        judge=judge,
        halted=halted_at is not None,
        halted_at_hour=halted_at,
        halt_reason="increased-rate" if halted_at else None,
        percentage_at_halt=percentage,
        final_percentage=0 if halted_at else 100,
        final_state="halted" if halted_at else "phasing",
        hours_to_100=None if halted_at else 60,
        machine_hours_on_new_version=machine_hours,
        crashes_on_new_version=0,
        verdict="regressed" if halted_at else "healthy",
        machine_hours_before_halt=machine_hours if halted_at else None,
    )


OUTCOMES = [
    outcome("a", "sequential", halted_at=10, percentage=20, machine_hours=100.0),
    outcome("b", "sequential", halted_at=20, percentage=30, machine_hours=200.0),
    outcome("c", "sequential"),
    outcome("a", "ubuntu", halted_at=30, percentage=50, machine_hours=400.0),
    outcome("b", "ubuntu", halted_at=40, percentage=60, machine_hours=500.0),
    outcome("c", "ubuntu", halted_at=12, percentage=20, machine_hours=50.0),
]


def test_clear_regressions_median_percentage_and_hours_at_halt_are_in_the_table():
    sequential = summarise(SCENARIO, OUTCOMES, "sequential")
    assert (sequential.large_busy_median_percentage, sequential.large_busy_median_hours) == (25, 15)
    text = table([sequential, summarise(SCENARIO, OUTCOMES, "ubuntu")])
    assert "clear regressions: median % at halt" in text and "25" in text


def test_the_bar_compares_machine_hours_on_bad_versions_with_ubuntus_rules():
    found = dict(
        checks(summarise(SCENARIO, OUTCOMES, "sequential"), summarise(SCENARIO, OUTCOMES, "ubuntu"))
    )
    assert found["sequential allows at most 0.8× Ubuntu's machine-hours on bad versions"]
    assert found["sequential halts clear regressions at a median of 30% or less"]
    assert found["sequential halts fewer healthy updates than Ubuntu's rules"]


def test_a_regression_halted_only_at_100_is_counted_apart_from_catches_before_it():
    late = [
        outcome("a", "sequential", halted_at=70, percentage=100, machine_hours=900.0),
        *OUTCOMES[1:3],
    ]

    summary = summarise(SCENARIO, late, "sequential")

    assert summary.large_busy_caught == (1, 2)  # b before 100 %; a only while watched
    assert summary.caught_at_full == 1
    assert summary.machine_hours_on_bad_versions == 900.0 + 200.0
    rows = {line[:55].strip(): line[55:].strip() for line in table([summary]).splitlines()}
    assert rows["caught at 100%, while still judged there"] == "1"


def test_the_plot_is_a_png(tmp_path):
    path = tmp_path / "catches.png"
    catches_png(
        {"tidy": [summarise(SCENARIO, OUTCOMES, j) for j in ("sequential", "ubuntu")]}, str(path)
    )
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
