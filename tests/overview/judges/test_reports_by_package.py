"""A package's own hourly reports found through the index read once a tick are the ones
the scan of every package's reports finds, and a release's activity made an array once
places each hour where the hour-by-hour placing does: the busy hours are the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from overview.judges.reads import HourlySeries, busy_hours, reports_by_package

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


def test_the_release_s_activity_as_one_array_gives_the_busy_hours_of_placing_each_hour():
    hour = timedelta(hours=1)
    # Three days of a release's reports, a gap of a day, and one key off the hour (no hour).
    activity = {T0 + h * hour: 300 + (h % 24) * 20 + h % 7 for h in range(72) if not 30 <= h < 54}
    activity[T0 + 40 * hour + timedelta(minutes=30)] = 5_000
    own = [{T0 + h * hour: h % 5 for h in range(0, 72, 3)}]
    series = HourlySeries.of(activity)
    publication = SimpleNamespace(release_id=1, source_package_id=1)
    # Updates published before the reports began, inside them, across the gap, after
    # them, and off the hour.
    for start in (T0 - 30 * hour, T0 + 5 * hour, T0 + 26 * hour, T0 + 60 * hour, T0 + 80 * hour):
        for offset in (timedelta(0), timedelta(minutes=30)):
            moments = [start + offset + h * hour for h in range(30)]
            placed = busy_hours(publication, {}, activity, moments, own=own)
            sliced = busy_hours(publication, {}, activity, moments, own=own, series=series)
            assert sliced == placed
    assert busy_hours(publication, {}, activity, [T0 + 20 * hour], own=own, series=series)


def test_a_series_is_not_made_of_hours_further_apart_than_any_window():
    assert HourlySeries.of({T0: 1, T0 + timedelta(days=500): 1}) is None
    assert HourlySeries.of({}).window(T0, 3).tolist() == [0.0, 0.0, 0.0]
