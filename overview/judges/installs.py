"""Who runs the new version, hour by hour, for a given uptake: the percentage history turned
into the share of machines that installed it. Plain Python with NumPy, no Django, no
measurement (overview.judges.exposure measures the uptake and gives the judges their ranges).

A machine takes the update at its next update run (unattended-upgrades, update-manager) when
apt's draw for it is at most the percentage then. Modelled as update runs arriving at random
(a Poisson process whose mean interval is the uptake time μ), a machine whose draw is d has
installed by time t with probability 1 − exp(−T_d(t)/μ), where T_d(t) is how long the
percentage has been at least d so far; draws are uniform over 0..100.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np

HOUR = timedelta(hours=1)
_MICROSECOND = timedelta(microseconds=1)
_HOUR_US = HOUR // _MICROSECOND


def hourly_percentages(
    history: Sequence[tuple[datetime, int]], *, start: datetime, hours: int
) -> list[int]:
    """The percentage in force at the middle of each hour from `start` (an hour boundary).

    `history` is (moment, percentage after it) in time order, the first at publication;
    before it, nobody could take the update (-1: not even draw 0).
    """
    if hours <= 0:
        return []
    # In whole microseconds from `start`, so that comparing with the hours' middles is
    # exact; one search for all hours (a tick asks this for every hour of 20,000 updates).
    moments = np.array([(moment - start) // _MICROSECOND for moment, _ in history], dtype=np.int64)
    values = np.array([-1, *(percentage for _, percentage in history)], dtype=np.int64)
    middles = np.arange(hours, dtype=np.int64) * _HOUR_US + _HOUR_US // 2
    found: list[int] = values[np.searchsorted(moments, middles, side="right")].tolist()
    return found


def hour_index(moment: datetime, *, start: datetime, hours: int) -> int | None:
    """Which of the `hours` hours from `start` (an hour boundary) `moment` begins, or None
    when it begins none of them: how counts kept by the hour find their place in a series."""
    h, rest = divmod(moment - start, HOUR)
    return h if not rest and 0 <= h < hours else None


# A month of hours, made once: a tick asks for weeks of hours for thousands of updates.
_OFFSETS = tuple(timedelta(hours=h) for h in range(24 * 31))


def hours_from(start: datetime, count: int) -> list[datetime]:
    """The `count` hours from `start`, in order: none for a count of 0 or less (an update
    published after the tick's hour has no hours yet)."""
    if count <= 0:
        return []
    if count <= len(_OFFSETS):
        return [start + offset for offset in _OFFSETS[:count]]
    return [start + timedelta(hours=h) for h in range(count)]


def _time_eligible(percentages: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Hours each group of draws has been eligible by the middle of each hour, and how many
    of the 101 draws each group holds. Draws between two percentages the history used are
    eligible at the same moments, so a group stands for all of them."""
    values = np.asarray(percentages)
    # The highest draw of each group: every percentage the history used from 0 up, and
    # 100 (marked in a table of the 101 draws: no sort, a tick asks this 40,000 times).
    used = np.zeros(101, dtype=bool)
    clipped = np.clip(values, -1, 100).astype(np.intp)  # whole numbers, as apt's percentages
    used[clipped[clipped >= 0]] = True
    used[100] = True
    tops = np.flatnonzero(used)
    counts = np.diff(tops, prepend=-1).astype(float)
    eligible = (tops[None, :] <= values[:, None]).astype(float)
    # The earlier hours whole, this one half.
    return np.cumsum(eligible, axis=0) - eligible / 2, counts / 101.0


def installed_shares(percentages: Sequence[int], uptake_hours: float) -> np.ndarray:
    """The share of machines on the new version in the middle of each hour."""
    return np.asarray(installed_shares_for(percentages, (uptake_hours,))[0])


def installed_shares_for(percentages: Sequence[int], uptakes: Sequence[float]) -> np.ndarray:
    """installed_shares for each of several uptake times: one row each."""
    return shares_for(percentages, np.asarray(uptakes, dtype=float))


def with_ignorers(shares: np.ndarray, ignorers: float) -> np.ndarray:
    """The most machines that may be on the new version when a share `ignorers` of them
    takes it whatever the percentage (a chroot, `APT::Get::Always-Include-Phased-Updates`,
    a tool that installs regardless): the regression test's shares, which must not be
    too low for the test to hold."""
    return ignorers + (1 - ignorers) * shares


def shares_for(percentages: Sequence[int], uptakes: np.ndarray) -> np.ndarray:
    """installed_shares for several uptake times at once: one row per uptake."""
    if not len(percentages):
        return np.zeros((len(uptakes), 0))
    time_eligible, weights = _time_eligible(percentages)
    rates = 1.0 / np.maximum(uptakes, 1e-3)
    installed = 1.0 - np.exp(-time_eligible[None, :, :] * rates[:, None, None])
    return np.asarray(installed @ weights)
