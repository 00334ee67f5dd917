"""The simulated crash stream: the same hour always draws the same reports."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from overview.evidence.sources.simulator import SimulatedCrashFeed
from packages.sources.simulator import Simulator

NOW = datetime(2026, 12, 3, 7, 0, tzinfo=UTC)


def test_crash_reports_of_an_hour_do_not_depend_on_the_window_asked_for():
    simulator = Simulator(packages=60)
    short = {
        r.external_id
        for r in SimulatedCrashFeed(simulator).reports(since=NOW - timedelta(hours=3), now=NOW)
    }
    long = {
        r.external_id
        for r in SimulatedCrashFeed(Simulator(packages=60)).reports(
            since=NOW - timedelta(hours=9), now=NOW
        )
    }
    assert short and short <= long


def test_reports_list_the_libraries_a_package_depends_on_as_the_machine_has_them():
    world = Simulator(packages=120)
    feed = SimulatedCrashFeed(world)
    reports = list(feed.reports(since=NOW - timedelta(hours=6), now=NOW))
    listed = [r for r in reports if len(r.package_versions) > 2]
    assert listed, "no report names a library besides the package's own and libc6"
    report = listed[0]
    release = next(r for r in world.release_records if r.codename == report.release)
    for binary, version in report.package_versions.items():
        if binary in (report.source_package, "libc6") or binary.startswith(report.source_package):
            continue
        owner = next(
            p
            for p in world.packages
            if world.timeline(release, p, until=NOW)
            and world.timeline(release, p, until=NOW)[-1].binaries[0] == binary
        )
        current = world.timeline(release, owner, until=report.reported_at + timedelta(hours=1))[-1]
        assert version in (current.version, current.previous_version)
