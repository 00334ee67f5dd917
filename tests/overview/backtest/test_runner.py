"""`manage.py phasing_backtest`: the real controller against scenarios with known truth.

Run as a person runs it, in a process of its own, on the embedded default (SQLite) and on
PostgreSQL when configured: it makes and drops a scratch database, so it never touches the
test database or the deployment's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SERVERS = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")


def update(update_id: str, **fields) -> dict:
    values = {
        "id": update_id,
        "release": "noble",
        "source_package": update_id,
        "version": "1.2-1ubuntu0.2",
        "previous_version": "1.2-1ubuntu0.1",
        "machines": 200_000,
        "uptake_hours": 3,
        "previous_crashes_per_machine_day": 0.005,  # 1,000 crashes a day
        "new_crashes_per_machine_day": 0.005,
    }
    values.update(fields)
    return values


SCENARIO = {
    "start": "2026-01-05T00:00:00Z",
    "hours": 24,
    "updates": [
        update("busy-tripled", new_crashes_per_machine_day=0.015),
        update(
            "new-crash",
            new_buckets=[
                {"signature": "new-crash:crash_in_new_code", "crashes_per_machine_day": 0.002}
            ],
        ),
        update("healthy"),
    ],
}


def backtest(tmp_path: Path, *args: str, scenario: object = SCENARIO, database_url: str | None):
    path = tmp_path / "scenarios.json"
    path.write_text(json.dumps(scenario) if not isinstance(scenario, str) else scenario)
    env = {k: v for k, v in os.environ.items() if k not in SERVERS}
    env.update(DJANGO_SETTINGS_MODULE="phasing_site.settings", PHASING_VAR_DIR=str(tmp_path))
    if database_url:
        env["DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, "manage.py", "phasing_backtest", "--scenarios", str(path), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def outcomes(result: subprocess.CompletedProcess) -> dict[tuple[str, str], dict]:
    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {(line["id"], line["judge"]): line for line in lines}


DATABASES = [pytest.param(None, id="sqlite", marks=pytest.mark.embedded)]
if os.environ.get("DATABASE_URL", "").startswith("postgres"):
    DATABASES.append(pytest.param(os.environ["DATABASE_URL"], id="postgresql"))


@pytest.mark.parametrize("database_url", DATABASES)
def test_both_judges_catch_a_tripled_busy_package_and_a_new_crash_and_let_a_healthy_one_through(
    tmp_path, database_url
):
    result = backtest(tmp_path, "--judge", "all", database_url=database_url)
    got = outcomes(result)

    assert len(got) == 6
    for judge in ("ubuntu", "sequential"):
        tripled = got["busy-tripled", judge]
        assert tripled["halted"] and tripled["halt_reason"] == "increased-rate"
        assert tripled["final_percentage"] == 0 and tripled["percentage_at_halt"] < 100
        new_crash = got["new-crash", judge]
        assert new_crash["halted"] and new_crash["halt_reason"] == "new-bucket"
    healthy = got["healthy", "sequential"]
    assert not healthy["halted"] and healthy["final_percentage"] > 10
    assert healthy["machine_hours_on_new_version"] > 0
    assert got["busy-tripled", "sequential"]["verdict"] == "regressed"
    assert "healthy updates halted" in result.stderr
    assert "2 judge(s)" in result.stderr


def test_the_output_and_summary_files_hold_every_line_and_the_figures(tmp_path):
    output, summary = tmp_path / "lines.jsonl", tmp_path / "summary.json"
    result = backtest(
        tmp_path,
        "--judge", "sequential", "--jobs", "1",
        "--output", str(output), "--summary", str(summary),
        database_url=None,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr[-3000:]
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == ["busy-tripled", "healthy", "new-crash"]
    assert set(lines[0]) == {
        "id", "judge", "halted", "halted_at_hour", "halt_reason", "percentage_at_halt",
        "final_percentage", "final_state", "hours_to_100", "machine_hours_on_new_version",
        "crashes_on_new_version", "verdict", "machine_hours_before_halt",
    }  # fmt: skip
    figures = json.loads(summary.read_text())["judges"]["sequential"]
    assert figures["healthy"] == 1 and figures["healthy_halted"] == 0
    assert figures["caught"]["new bucket"] == [1, 1]


@pytest.mark.parametrize(
    ("scenario", "args", "says"),
    [
        (
            {**SCENARIO, "updates": [{**update("foo"), "colour": "red"}]},
            (),
            "update 'foo': unknown key 'colour'",
        ),
        (
            {**SCENARIO, "updates": [update("foo", new_crashes_per_machine_day=-0.1)]},
            (),
            "new_crashes_per_machine_day must be at least 0",
        ),
        (SCENARIO, ("--judge", "astrology"), "unknown judge 'astrology'"),
        (SCENARIO, ("--jobs", "0"), "--jobs is 1 or more"),
        (SCENARIO, ("--uptake-estimate-factor", "-1"), "--uptake-estimate-factor"),
        ("{not json", (), "is not JSON"),
        ({**SCENARIO, "start": "2026-01-05T00:30:00Z"}, (), "must be on the hour"),
    ],
    ids=[
        "unknown-key",
        "negative-rate",
        "unknown-judge",
        "no-jobs",
        "bad-factor",
        "not-json",
        "start-off-hour",
    ],
)
@pytest.mark.embedded
def test_a_scenario_or_option_that_cannot_be_run_says_why_and_exits_2(
    tmp_path, scenario, args, says
):
    result = backtest(tmp_path, *args, scenario=scenario, database_url=None)

    assert result.returncode == 2
    assert says in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
