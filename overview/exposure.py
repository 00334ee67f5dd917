"""How many machines really run the new version: the exposure the sequential judge needs.

Plain Python with NumPy, no Django.

The percentage only says which machines *may* take the update. A machine takes it at its
next update run (unattended-upgrades, update-manager) when apt's draw for it is at most the
percentage then. Modelled as update runs arriving at random (a Poisson process whose mean
interval is the "uptake time" μ), a machine whose draw is d has installed by time t with
probability 1 − exp(−T_d(t)/μ), where T_d(t) is how long the percentage has been at least d
so far; draws are uniform over 0..100. That turns the percentage history into a share of
machines on the new version, hour by hour, for any μ.

μ is measured where the data allow, from two signals that do not depend on whether the
new version crashes more (so measuring the exposure never hides a regression):

- crash reports of *other* packages list the versions of the packages installed with them
  (apport's dependency versions), so among the machines that report a crash of anything
  that depends on this package, the share on the new version is a random sample of the
  share we want;
- machines that left the previous version stop crashing with it: its crashes per day,
  against its own average over the fifteen days before the update, fall by the share that
  moved (days, not hours, so the time of day does not count; how much a day differs from
  the average on its own, weekdays and weekends included, is measured from those fifteen
  days, taken at the high end of what they allow).

The likelihood of both over a grid of μ, times a prior, gives μ with an interval.
The prior is what this release's other updates measured (machines of one release run
their updates the same way whatever the package), widened because one update can differ
from the others; without any measurement at all, a configured default, wider still.

The judge uses the interval, not only the estimate: the fast end of it (more machines on
the new version) when testing for a regression, the slow end when testing for health, so
an exposure it is unsure of makes either verdict harder to reach, never easier.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

HOUR = timedelta(hours=1)
# Uptake times considered, 15 minutes to 12 days, log-spaced.
UPTAKE_GRID = np.exp(np.linspace(math.log(0.25), math.log(288.0), 48))
# How far one update's uptake may differ from its release's (a log-normal spread): a factor
# of about 2.7 either way is one standard deviation.
UPDATE_SPREAD = 1.0
# Without any measurement in the release: a factor of about 3.3.
DEFAULT_SPREAD = 1.2
# The range the judge uses. Its fast end (more machines on the new version) serves the
# regression test and is taken far out, at the 0.5 % quantile: a share taken too low by
# chance makes a busy package's crashes look like a rise, and a halt is costly. Its slow
# end serves the health test, at the 95 % quantile: calling an update healthy only
# relaxes a hold, so a nearer bound will do.
_INTERVAL = (0.005, 0.95)
_Z_FAST, _Z_SLOW = 2.576, 1.645


@dataclass(frozen=True)
class Uptake:
    """Mean hours from becoming eligible to installing, with a plausible range."""

    hours: float
    fast: float  # the short end: the most machines on the new version
    slow: float  # the long end: the fewest
    sightings: int = 0  # machines seen in other packages' reports that this rests on
    days: int = 0  # whole days of the previous version's crashes falling away it rests on

    @property
    def measured(self) -> bool:
        return self.sightings > 0 or self.days > 0


def prior(hours: float, spread: float = DEFAULT_SPREAD) -> Uptake:
    """An uptake known only up to a log-normal spread around `hours`."""
    return Uptake(hours, hours * math.exp(-_Z_FAST * spread), hours * math.exp(_Z_SLOW * spread))


def hourly_percentages(
    history: Sequence[tuple[datetime, int]], *, start: datetime, hours: int
) -> list[int]:
    """The percentage in force at the middle of each hour from `start` (an hour boundary).

    `history` is (moment, percentage after it) in time order, the first at publication;
    before it, nobody could take the update (-1: not even draw 0).
    """
    result = []
    index, current = 0, -1
    for h in range(hours):
        middle = start + h * HOUR + HOUR / 2
        while index < len(history) and history[index][0] <= middle:
            current = history[index][1]
            index += 1
        result.append(current)
    return result


def _time_eligible(percentages: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Hours each group of draws has been eligible by the middle of each hour, and how many
    of the 101 draws each group holds. Draws between two percentages the history used are
    eligible at the same moments, so a group stands for all of them."""
    values = np.asarray(percentages)
    cuts = np.unique(np.clip(values, -1, 100))
    edges = np.concatenate(([-1], cuts[cuts >= 0], [100]))
    tops = np.unique(edges[1:])  # the highest draw of each group
    counts = np.diff(np.concatenate(([-1], tops))).astype(float)
    eligible = (tops[None, :] <= values[:, None]).astype(float)
    # The earlier hours whole, this one half.
    return np.cumsum(eligible, axis=0) - eligible / 2, counts / 101.0


def installed_shares(percentages: Sequence[int], uptake_hours: float) -> np.ndarray:
    """The share of machines on the new version in the middle of each hour."""
    return _shares(percentages, np.array([uptake_hours]))[0]


def _shares(percentages: Sequence[int], uptakes: np.ndarray) -> np.ndarray:
    """installed_shares for several uptake times at once: one row per uptake."""
    if not len(percentages):
        return np.zeros((len(uptakes), 0))
    time_eligible, weights = _time_eligible(percentages)
    rates = 1.0 / np.maximum(uptakes, 1e-3)
    installed = 1.0 - np.exp(-time_eligible[None, :, :] * rates[:, None, None])
    return installed @ weights


def _log_likelihood(
    percentages: Sequence[int], new: Sequence[int], old: Sequence[int]
) -> np.ndarray:
    """log P(sightings | μ) for every μ of UPTAKE_GRID."""
    new_a, old_a = np.asarray(new, dtype=float), np.asarray(old, dtype=float)
    seen = (new_a + old_a) > 0
    if not seen.any():
        return np.zeros(len(UPTAKE_GRID))
    shares = np.clip(_shares(percentages, UPTAKE_GRID)[:, seen], 1e-9, 1 - 1e-9)
    return np.log(shares) @ new_a[seen] + np.log1p(-shares) @ old_a[seen]


def _posterior(
    log_likelihood: np.ndarray, belief: Uptake, sightings: int, days: int = 0
) -> Uptake:
    spread = max(math.log(belief.slow / belief.hours), 1e-6) / _Z_SLOW
    log_prior = -0.5 * ((np.log(UPTAKE_GRID) - math.log(belief.hours)) / spread) ** 2
    log_post = log_likelihood + log_prior
    weights = np.exp(log_post - log_post.max())
    weights /= weights.sum()
    cumulative = np.cumsum(weights)
    last = len(UPTAKE_GRID) - 1
    fast = float(UPTAKE_GRID[min(int(np.searchsorted(cumulative, _INTERVAL[0])), last)])
    slow = float(UPTAKE_GRID[min(int(np.searchsorted(cumulative, _INTERVAL[1])), last)])
    hours = float(UPTAKE_GRID[int(np.argmax(log_post))])
    return Uptake(hours, min(fast, hours), max(slow, hours), sightings, days)


# The least day-to-day spread assumed (a coefficient of variation), however steady the
# fifteen days looked.
MIN_DAY_TO_DAY = 0.02


@dataclass(frozen=True)
class Deficit:
    """The previous version's crashes in each whole day since publication, against the
    crashes a day it had before (every machine on it then), and how much a day differs
    from that on its own (a coefficient of variation beyond Poisson's)."""

    baseline_per_day: float
    days: Sequence[int]  # crashes of the previous version, day by day
    spread: float = 0.15

    @classmethod
    def from_history(cls, history: Sequence[int], days: Sequence[int]) -> Deficit | None:
        """From the previous version's daily crashes before the update (at least a week
        of them): their mean is the baseline; their spread, at the 95 % upper bound a
        sample of this size allows (Wilson and Hilferty's chi-square), plus the baseline's
        own error, is the spread."""
        n = len(history)
        if n < 7 or not sum(history):
            return None
        mean = sum(history) / n
        variance = sum((d - mean) ** 2 for d in history) / (n - 1)
        freedom = n - 1
        quantile = freedom * (1 - 2 / (9 * freedom) - 1.645 * math.sqrt(2 / (9 * freedom))) ** 3
        upper = max(variance, mean) * freedom / quantile
        extra = max(0.0, (upper - mean) / mean**2) + upper / (n * mean**2)
        return cls(baseline_per_day=mean, days=days, spread=max(math.sqrt(extra), MIN_DAY_TO_DAY))

    def log_likelihood(self, percentages: Sequence[int]) -> np.ndarray:
        """log P(those days | μ) for every μ of UPTAKE_GRID."""
        if self.baseline_per_day <= 0 or not len(self.days):
            return np.zeros(len(UPTAKE_GRID))
        hours = 24 * len(self.days)
        shares = _shares(percentages[:hours], UPTAKE_GRID)
        if shares.shape[1] < hours:
            return np.zeros(len(UPTAKE_GRID))
        staying = (1 - shares).reshape(len(UPTAKE_GRID), len(self.days), 24).mean(axis=2)
        means = np.maximum(self.baseline_per_day * staying, 1e-9)
        size = 1 / self.spread**2
        counts = np.asarray(self.days, dtype=float)
        # Negative binomial log-probability, without the terms that do not depend on μ.
        return (
            size * np.log(size / (size + means)) + counts * np.log(means / (size + means))
        ).sum(axis=1)


@dataclass(frozen=True)
class Sightings:
    """Machines seen on the new and on any other version of the package, hour by hour, in
    crash reports of other packages; with the percentage in force in each hour."""

    percentages: Sequence[int]
    new: Sequence[int]
    old: Sequence[int]

    @property
    def total(self) -> int:
        return int(sum(self.new) + sum(self.old))


def fit(sightings: Sightings, belief: Uptake, deficit: Deficit | None = None) -> Uptake:
    """The uptake of one update: its own sightings, and the previous version's crashes
    falling away, against what is believed beforehand."""
    has_deficit = deficit is not None and deficit.baseline_per_day > 0 and len(deficit.days)
    if not sightings.total and not has_deficit:
        return belief
    likelihood = _log_likelihood(sightings.percentages, sightings.new, sightings.old)
    days = 0
    if deficit is not None and has_deficit:
        likelihood = likelihood + deficit.log_likelihood(sightings.percentages)
        days = len(deficit.days)
    return _posterior(likelihood, belief, sightings.total, days)


def pooled(updates: Sequence[tuple[Sightings, Deficit | None]], default: Uptake) -> Uptake:
    """What a release's updates measured together: the belief for each of its updates,
    widened by how much one update may differ from the others."""
    likelihood = np.zeros(len(UPTAKE_GRID))
    sightings = days = 0
    for seen, deficit in updates:
        if seen.total:
            likelihood += _log_likelihood(seen.percentages, seen.new, seen.old)
            sightings += seen.total
        if deficit is not None and deficit.baseline_per_day > 0 and len(deficit.days):
            likelihood += deficit.log_likelihood(seen.percentages)
            days += len(deficit.days)
    if not sightings and not days:
        return default
    together = _posterior(likelihood, default, sightings, days)
    widened = prior(together.hours, UPDATE_SPREAD)
    return Uptake(widened.hours, widened.fast, widened.slow, sightings, days)
