"""Who installed: the percentage in force hour by hour, and the share of machines on a
new version for a given uptake, each of apt's 101 draws eligible from its own hour."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np

from overview.judges import installs

T0 = datetime(2026, 1, 5, tzinfo=UTC)
RAMP = [min(100, 10 + 10 * (h // 6)) for h in range(60)]


def by_hand(percentages, uptake_hours):
    """Each of apt's 101 draws on its own: eligible while the percentage is at least it."""
    eligible_for = np.zeros(101)
    shares = []
    for percentage in percentages:
        now_eligible = (np.arange(101) <= percentage).astype(float)
        middle = eligible_for + now_eligible / 2
        shares.append(np.mean(1 - np.exp(-middle / uptake_hours)))
        eligible_for += now_eligible
    return np.array(shares)


def test_the_share_follows_each_draw_from_when_it_became_eligible():
    for uptake in (1.0, 8.0, 48.0):
        assert np.allclose(installs.installed_shares(RAMP, uptake), by_hand(RAMP, uptake))


def test_the_share_follows_each_draw_over_random_histories():
    """Any history the controller can write: not yet published (-1), halted to 0, set by
    hand up and down, at 100; every draw on its own agrees with the draws grouped."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        hours = int(rng.integers(1, 90))
        choices = rng.choice([-1, 0, 1, 5, 10, 33, 50, 99, 100], size=int(rng.integers(1, 6)))
        percentages = sorted(rng.choice(choices, size=hours).tolist(), key=lambda p: p >= 0)
        uptakes = [0.25, float(rng.uniform(0.5, 60)), 288.0]
        shares = installs.installed_shares_for(percentages, uptakes)
        for row, uptake in zip(shares, uptakes, strict=True):
            assert np.allclose(row, by_hand(percentages, uptake), rtol=0, atol=1e-12)


def test_a_halt_stops_new_installs_but_nobody_uninstalls():
    halted = RAMP[:20] + [0] * 20
    shares = installs.installed_shares(halted, 8.0)
    assert np.all(np.diff(shares) >= -1e-12)
    # After the halt only the machines whose draw is 0 keep installing: 1 in 101.
    assert shares[-1] - shares[25] < 1 / 101


def test_slower_uptake_means_fewer_machines_on_the_new_version():
    fast, slow = installs.installed_shares(RAMP, 2.0), installs.installed_shares(RAMP, 24.0)
    assert np.all(fast[1:] > slow[1:])
    # With instant uptake the share is the eligible share, (p + 1) / 101.
    instant = installs.installed_shares([30] * 400, 0.01)
    assert math.isclose(instant[-1], 31 / 101, rel_tol=1e-3)


def test_the_percentage_of_each_hour_is_the_one_in_force_at_its_middle():
    history = [
        (T0, 10),
        (T0 + timedelta(hours=6, minutes=5), 20),
        (T0 + timedelta(hours=7, minutes=45), 0),
    ]
    hours = installs.hourly_percentages(history, start=T0 - timedelta(hours=1), hours=10)
    # Before publication nobody could take it (-1); the halt at 7:45 counts from hour 8:00.
    assert hours == [-1, 10, 10, 10, 10, 10, 10, 20, 20, 0]


def test_the_percentage_in_force_is_read_at_each_hour_s_middle_exactly():
    """A change at the very middle of an hour is in force for that hour; a microsecond
    later it is not; two changes at one moment leave the later."""
    middle = T0 + timedelta(minutes=30)
    history = [
        (T0 - timedelta(hours=2), 10),
        (middle, 20),
        (middle + timedelta(hours=1, microseconds=1), 30),
        (T0 + timedelta(hours=3), 40),
        (T0 + timedelta(hours=3), 50),
    ]
    hours = installs.hourly_percentages(history, start=T0, hours=5)
    assert hours == [20, 20, 30, 50, 50]
    assert installs.hourly_percentages(history, start=T0, hours=0) == []


def test_the_percentage_of_each_hour_as_defined_over_random_histories():
    """Against the definition read hour by hour: the last change at or before the hour's
    middle, -1 before the first."""
    rng = np.random.default_rng(8)
    for _ in range(300):
        moments = sorted(
            T0 + timedelta(minutes=int(m)) for m in rng.integers(-600, 6000, rng.integers(0, 6))
        )
        percentages = rng.choice([0, 10, 50, 100], len(moments))
        history = [(m, int(p)) for m, p in zip(moments, percentages, strict=True)]
        hours = int(rng.integers(0, 120))
        defined = []
        for h in range(hours):
            middle = T0 + timedelta(hours=h, minutes=30)
            in_force = [p for m, p in history if m <= middle]
            defined.append(in_force[-1] if in_force else -1)
        assert installs.hourly_percentages(history, start=T0, hours=hours) == defined


def test_the_hours_from_a_start_are_every_hour_in_order_however_many():
    for count in (-24, -1, 0, 1, 24 * 14, 24 * 31, 24 * 31 + 1, 2000):
        hours = installs.hours_from(T0, count)
        assert hours == [T0 + timedelta(hours=h) for h in range(count)]


def test_an_hourly_count_finds_the_hour_it_begins_and_nothing_else_does():
    rng = np.random.default_rng(2)
    for _ in range(2000):
        moment = T0 + timedelta(minutes=int(rng.integers(-300, 3000)))
        if rng.random() < 0.2:
            moment += timedelta(microseconds=1)
        hours = int(rng.integers(0, 60))
        begins = [h for h in range(hours) if T0 + timedelta(hours=h) == moment]
        assert installs.hour_index(moment, start=T0, hours=hours) == (begins or [None])[0]
