"""The bench's verdicts on the tick's targets (issue 26), from the figures of one run."""

import json

from bench import report
from bench.report import table, tick_targets


def _tick(*, changed_10: float, changed_100: float, peak: int) -> dict:
    def ticked(changed: int, wall: float) -> dict:
        return {
            "changed": changed,
            "wall_s": wall,
            "judged": changed,
            "stepped": changed,
            "peak_rss_mib": peak,
        }

    return {
        "2000": {
            "publications": 2000,
            "wall_s": 1.0,
            "queries": 40,
            "peak_rss_mib": 90,
            "reusing": {"10%_changed": ticked(200, 0.5)},
        },
        "20000": {
            "publications": 20000,
            "wall_s": 40.0,
            "queries": 40,
            "peak_rss_mib": 200,
            "reusing": {
                "0%_changed": ticked(0, 1.0),
                "10%_changed": ticked(2000, changed_10),
                "100%_changed": ticked(20000, changed_100),
            },
        },
    }


def test_the_targets_are_read_at_the_largest_size_measured():
    verdicts = tick_targets(_tick(changed_10=9.5, changed_100=29.0, peak=250))

    assert verdicts == {
        "tick at 20,000, 2,000 changed <= 10 s": True,
        "tick at 20,000, 20,000 changed <= 30 s": True,
        "tick at 20,000 peaks <= 300 MiB": True,
    }


def test_a_slow_tick_or_a_high_peak_is_missed():
    verdicts = tick_targets(_tick(changed_10=10.5, changed_100=31.0, peak=301))

    assert not any(verdicts.values())


def test_the_tick_split_on_two_processes_has_targets_of_its_own_beside_the_one_process_ones():
    tick = _tick(changed_10=15.0, changed_100=45.0, peak=250)
    tick["20000"]["split"] = {
        "10%_changed": {**tick["20000"]["reusing"]["10%_changed"], "wall_s": 8.0},
        "100%_changed": {**tick["20000"]["reusing"]["100%_changed"], "wall_s": 31.0},
    }

    verdicts = tick_targets(tick)

    assert verdicts["tick at 20,000, 2,000 changed <= 10 s"] is False
    assert verdicts["tick at 20,000 split per release on 2 processes, 2,000 changed <= 10 s"]
    assert not verdicts["tick at 20,000 split per release on 2 processes, 20,000 changed <= 30 s"]
    assert "split per release on 2 processes" in table({"controller": tick})


def test_a_split_tick_that_failed_is_said_so_and_counts_as_missed():
    tick = _tick(changed_10=9.5, changed_100=29.0, peak=250)
    tick["20000"]["split"] = {"error": "Traceback: no template"}

    verdicts = tick_targets(tick)

    assert verdicts["tick at 20,000 split per release on 2 processes (failed)"] is False
    assert "split on 2 processes: error Traceback: no template" in table({"controller": tick})


def test_a_share_whose_split_tick_failed_misses_its_target():
    tick = _tick(changed_10=9.5, changed_100=29.0, peak=250)
    tick["20000"]["split"] = {"10%_changed": {"changed": 2000, "error": "a process gave no answer"}}

    verdicts = tick_targets(tick)

    assert (
        verdicts["tick at 20,000 split per release on 2 processes, 2,000 changed <= 10 s"] is False
    )
    assert "split: error a process gave no answer" in table({"controller": tick})


def test_no_reusing_ticks_no_verdicts():
    assert tick_targets({"200": {"publications": 200, "wall_s": 1.0}}) == {}


def test_the_table_shows_the_settled_ticks():
    text = table({"controller": _tick(changed_10=9.5, changed_100=29.0, peak=250)})

    assert "Controller tick keeping judgements, settled" in text
    assert "       20000     2000     9.50" in text


def test_a_run_at_scale_10_leaves_the_latest_run_at_scale_1(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "RESULTS", tmp_path)
    monkeypatch.setattr(report, "commit", lambda: "abc1234")
    monkeypatch.setattr(report, "machine", lambda: {})

    report.write({"run": "scale 1"}, scale=1)
    report.write({"run": "scale 10"}, scale=10)

    assert json.loads((tmp_path / "latest.json").read_text())["run"] == "scale 1"
    assert json.loads((tmp_path / "latest-scale-10.json").read_text())["run"] == "scale 10"


def test_a_database_measured_as_a_stopped_seeding_left_it_is_said_so():
    figures = {"data": {"crash_reports": 7_000_000}, "seeding": {"as_is": True}}

    assert "not completely seeded" in table(figures)
    assert "not completely seeded" not in table({"data": {}, "seeding": {"reused": True}})
