"""The simulated crash stream: the same hour always draws the same reports."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from overview.sources.simulator import SimulatedCrashFeed
from packages.sources.simulator import Simulator

NOW = datetime(2026, 12, 3, 7, 0, tzinfo=UTC)


def test_crash_reports_of_an_hour_do_not_depend_on_the_window_asked_for():
    simulator = Simulator(packages=60)
    short = {r.external_id for r in SimulatedCrashFeed(simulator).reports(since=NOW - timedelta(hours=3), now=NOW)}
    long = {
        r.external_id
        for r in SimulatedCrashFeed(Simulator(packages=60)).reports(since=NOW - timedelta(hours=9), now=NOW)
    }
    assert short and short <= long
