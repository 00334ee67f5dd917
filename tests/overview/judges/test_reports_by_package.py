"""A package's own hourly reports found through the index read once a tick are the ones
the scan of every package's reports finds: the busy hours are the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from overview.judges.reads import busy_hours, reports_by_package

T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)


def test_the_index_gives_the_busy_hours_of_the_scan():
    moments = [T0 + timedelta(hours=h) for h in range(30)]
    reports = {
        (1, package, version): {
            m: (package * 7 + h * 3 + len(version)) % 11 for h, m in enumerate(moments)
        }
        for package in range(1, 6)
        for version in ("1.0", "1.1", "1.2")
    }
    activity = {m: 200 + (h % 24) * 5 for h, m in enumerate(moments)}
    index = reports_by_package(reports)
    for package in range(1, 6):
        publication = SimpleNamespace(release_id=1, source_package_id=package)
        scanned = busy_hours(publication, reports, activity, moments[24:])
        indexed = busy_hours(
            publication, reports, activity, moments[24:], own=index.get((1, package), [])
        )
        assert scanned is not None and scanned == indexed
    assert len(index[(1, 3)]) == 3
