"""How many machines really run the new version: the exposure the sequential judge needs.

Plain Python with NumPy, no Django.

The percentage only says which machines *may* take the update. A machine takes it at its
next update run (unattended-upgrades, update-manager) when apt's draw for it is at most the
percentage then. Modelled as update runs arriving at random (a Poisson process whose mean
interval is the "uptake time" μ), a machine whose draw is d has installed by time t with
probability 1 − exp(−T_d(t)/μ), where T_d(t) is how long the percentage has been at least d
so far; draws are uniform over 0..100. That turns the percentage history into a share of
machines on the new version, hour by hour, for any μ.

μ is measured where the data allow: crash reports of *other* packages list the versions
of the packages installed with them (apport's dependency versions), so among the machines
that report a crash of anything that depends on this package, the share on the new version
is a random sample of the share we want, independent of this package's own crashes. The
likelihood of those sightings over a grid of μ, times a prior, gives μ with an interval.
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

    @property
    def measured(self) -> bool:
        return self.sightings > 0


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


def _posterior(log_likelihood: np.ndarray, belief: Uptake, sightings: int) -> Uptake:
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
    return Uptake(hours, min(fast, hours), max(slow, hours), sightings)


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


def fit(sightings: Sightings, belief: Uptake) -> Uptake:
    """The uptake of one update: its own sightings against what is believed beforehand."""
    if not sightings.total:
        return belief
    likelihood = _log_likelihood(sightings.percentages, sightings.new, sightings.old)
    return _posterior(likelihood, belief, sightings.total)


def pooled(updates: Sequence[Sightings], default: Uptake) -> Uptake:
    """What a release's updates measured together: the belief for each of its updates,
    widened by how much one update may differ from the others."""
    measured = [u for u in updates if u.total]
    if not measured:
        return default
    likelihood = sum(
        (_log_likelihood(u.percentages, u.new, u.old) for u in measured),
        np.zeros(len(UPTAKE_GRID)),
    )
    together = _posterior(likelihood, default, sum(u.total for u in measured))
    widened = prior(together.hours, UPDATE_SPREAD)
    return Uptake(widened.hours, widened.fast, widened.slow, together.sightings)
