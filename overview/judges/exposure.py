"""How many machines really run the new version: the exposure the sequential judge needs.

Plain Python with NumPy, no Django.

The percentage only says which machines *may* take the update; how many did by each hour,
for a given uptake time μ, is overview.judges.installs. μ itself is what this module finds.

μ is measured where the data allow, from two signals that do not depend on whether the
new version crashes more (so measuring the exposure never hides a regression):

- crash reports of *other* packages list the versions of the packages installed with them
  (apport's dependency versions), so among the machines that report a crash of anything
  that depends on this package, the share on the new version is a random sample of the
  share we want;
- machines that left the previous version stop crashing with it: its crashes, against
  its own average over the fifteen days before the update, fall by the share that moved.
  A day's total says how many left, up to how much a day differs from the average on its
  own (weekdays and weekends included, measured from those fifteen days and taken at the
  upper quartile of what they allow); how the day's crashes spread over its hours, against how
  busy each hour is (other packages' crashes), says when they left.

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
from dataclasses import dataclass, replace

import numpy as np

from overview.judges import installs

# Uptake times considered, 15 minutes to 12 days, log-spaced.
UPTAKE_GRID = np.exp(np.linspace(math.log(0.25), math.log(288.0), 48))
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
    deficit_hours: int = 0  # hours of the previous version's crashes falling away it rests on

    @property
    def measured(self) -> bool:
        return self.sightings > 0 or self.deficit_hours > 0


def prior(hours: float, spread: float = DEFAULT_SPREAD) -> Uptake:
    """An uptake known only up to a log-normal spread around `hours`."""
    return Uptake(hours, hours * math.exp(-_Z_FAST * spread), hours * math.exp(_Z_SLOW * spread))


# Where the concurrent test decides together with the anchored test (a busy package with a
# history), its fast end is never nearer the estimate than this factor of it, however
# narrow the measured range. The range is exact only for the model (update runs at random,
# at one mean interval); machines' real update timers differ in shape, and with a range
# from a thousand sightings a share taken a tenth too low reads a busy package's healthy
# crashes as a rise: an uptake estimated twice too slow halted 3 of 42 healthy updates in
# the backtest (docs/judges.md, "A margin for an uptake of another shape"). Where the
# concurrent test decides alone it keeps its measured range: there it is all the power
# there is.
SHAPE_MARGIN = 0.5


def bracketed_shares(
    percentages: Sequence[int], uptake: Uptake, *, ignorers: float, margin: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(high, low, middle) share hour by hour: the regression test's at the fast end (at
    least `margin` times the estimate), with phasing-ignorers on the new version; the
    health test's at the slow end; and the estimate's. Every test of a rise takes its
    shares here, so none forgets the ignorers."""
    fast = min(uptake.fast, uptake.hours * margin)
    high, low, middle = installs.installed_shares_for(
        percentages, (fast, uptake.slow, uptake.hours)
    )
    return installs.with_ignorers(high, ignorers), low, middle


def anchored_shares(percentages: Sequence[int], *, ignorers: float) -> np.ndarray:
    """The anchored test's shares for every uptake of UPTAKE_GRID, phasing-ignorers on the
    new version from the first hour: the null's best over uptakes must reach the true share
    (a share above the truth only makes a rise harder to show), and no uptake of the phased
    machines alone reaches it early in a ramp where machines ignore phasing."""
    return installs.with_ignorers(shares_by_uptake(percentages), ignorers)


def _log_likelihood(
    percentages: Sequence[int], new: Sequence[int], old: Sequence[int]
) -> np.ndarray:
    """log P(sightings | μ) for every μ of UPTAKE_GRID."""
    new_a, old_a = np.asarray(new, dtype=float), np.asarray(old, dtype=float)
    seen = (new_a + old_a) > 0
    if not seen.any():
        return np.zeros(len(UPTAKE_GRID))
    shares = np.clip(installs.shares_for(percentages, UPTAKE_GRID)[:, seen], 1e-9, 1 - 1e-9)
    return np.asarray(np.log(shares) @ new_a[seen] + np.log1p(-shares) @ old_a[seen])


def log_belief(belief: Uptake) -> np.ndarray:
    """The belief as a log-normal over UPTAKE_GRID (unnormalised log weights)."""
    spread = max(math.log(belief.slow / belief.hours), 1e-6) / _Z_SLOW
    return -0.5 * ((np.log(UPTAKE_GRID) - math.log(belief.hours)) / spread) ** 2


def shares_by_uptake(percentages: Sequence[int]) -> np.ndarray:
    """installed_shares for every uptake of UPTAKE_GRID: one row each."""
    return installs.shares_for(percentages, UPTAKE_GRID)


def sightings_log_likelihood(sightings: Sightings) -> np.ndarray:
    """log P(sightings | μ) for every μ of UPTAKE_GRID."""
    return _log_likelihood(sightings.percentages, sightings.new, sightings.old)


def _posterior(
    log_likelihood: np.ndarray, belief: Uptake, sightings: int, deficit_hours: int = 0
) -> Uptake:
    log_post = log_likelihood + log_belief(belief)
    weights = np.exp(log_post - log_post.max())
    weights /= weights.sum()
    cumulative = np.cumsum(weights)
    last = len(UPTAKE_GRID) - 1
    fast = float(UPTAKE_GRID[min(int(np.searchsorted(cumulative, _INTERVAL[0])), last)])
    slow = float(UPTAKE_GRID[min(int(np.searchsorted(cumulative, _INTERVAL[1])), last)])
    hours = float(UPTAKE_GRID[int(np.argmax(log_post))])
    return Uptake(hours, min(fast, hours), max(slow, hours), sightings, deficit_hours)


# The least day-to-day spread assumed (a coefficient of variation), however steady the
# fifteen days looked.
MIN_DAY_TO_DAY = 0.02
# The most it is taken to be when the history is too quiet to tell (weekdays against
# weekends, a quarter either way).
MAX_DAY_TO_DAY = 0.25
# The release's other packages' reports a day, at least, for the previous version's
# crashes to be measured against theirs: at 50, a day's count is within about 14 % of its
# mean (that noise is counted, but below it the comparison says little).
OTHERS_MIN_PER_DAY = 50
# The upper bound taken of how much days differ (its normal quantile): at 75 %, fifteen
# days of a package with 100 crashes a day allow for about 6 % (Poisson alone: 0); the
# anchored test's simulated false halts stayed under 1 % with days differing by 10 % to
# 30 % (tests/overview/judges/test_sequential.py), and a higher bound costs it a quarter of its
# power at 100 crashes a day.
_Z_DAYS = 0.674


@dataclass(frozen=True)
class Deficit:
    """The previous version's crashes hour by hour since publication, against the crashes a
    day it had before (every machine on it then), and how much a day differs from that on
    its own (a coefficient of variation beyond Poisson's).

    Read in blocks of a day (the last one partial): how many crashes a block has says how
    many machines left, up to the day's own noise; how they spread over the block's hours
    says *when* they left, and that part is free of the day's noise (given its total, a
    day's crashes fall into its hours in proportion to each hour's expected count), so a
    busy package's crashes tell an uptake of one hour from one of eight within a day.
    `profile` is how busy each hour is against an average hour (machines crash more by
    day than by night): what other packages' crashes show, or even.
    """

    baseline_per_day: float
    hours: Sequence[int]  # crashes of the previous version, hour by hour from publication
    spread: float = 0.15  # a day's own difference from the level, beyond Poisson's
    level_error: float = 0.0  # the level's relative standard error
    profile: Sequence[float] | None = None
    # Measured against the release's other packages (Deficit.relative_to): how busy each
    # hour since publication was by their reports, against an average hour of their days
    # before it (1 then); None: against the previous version's own days alone.
    busy: Sequence[float] | None = None
    # ... and each day block's relative variance beyond `spread`: one over their reports in
    # the block (the noise of the measure that scales the block's level).
    busy_noise: Sequence[float] | None = None

    @property
    def relative(self) -> bool:
        """Whether a level shift of the whole release (a busy weekday against a history
        with weekends, a release-wide shock, reports still on their way) cancels here."""
        return self.busy is not None

    @classmethod
    def relative_to(
        cls,
        history: Sequence[int],
        others_history: Sequence[int],
        hours: Sequence[int],
        others_hours: Sequence[int],
        profile: Sequence[float] | None = None,
    ) -> Deficit | None:
        """A difference in differences: the previous version's days before the update
        against the release's other packages' same days, and its hours since against
        theirs. Each of its days is scaled to an average day of the others (so a weekend,
        a shock or a busy week that moves every package cancels, and what is left of how
        much days differ is the package's own); each day block since publication expects
        that level times how busy the others were in it. None when the others are too few
        to say (a day without any of their reports, or fewer than OTHERS_MIN_PER_DAY)."""
        n = len(history)
        if n < 7 or len(others_history) != n or min(others_history) <= 0:
            return None
        mean = sum(others_history) / n
        if mean < OTHERS_MIN_PER_DAY:
            return None
        scaled = [h * mean / o for h, o in zip(history, others_history, strict=True)]
        plain = cls.from_history(scaled, hours, profile)
        if plain is None:
            return None
        noise = [
            1 / max(float(sum(others_hours[begin : begin + 24])), 1.0)
            for begin in range(0, len(hours), 24)
        ]
        busy = [24 * o / mean for o in others_hours[: len(hours)]]
        return replace(plain, profile=None, busy=busy, busy_noise=noise)

    @classmethod
    def from_history(
        cls,
        history: Sequence[float],
        hours: Sequence[int],
        profile: Sequence[float] | None = None,
    ) -> Deficit | None:
        """From the previous version's daily crashes before the update (at least a week
        of them): their mean is the level; how much a day differs from it, at the 75 %
        upper bound a sample of this size allows (Wilson and Hilferty's chi-square), is the
        spread; the mean's own error is the level's."""
        n = len(history)
        if n < 7 or not sum(history):
            return None
        mean = sum(history) / n
        variance = sum((d - mean) ** 2 for d in history) / (n - 1)
        freedom = n - 1
        quantile = freedom * (1 - 2 / (9 * freedom) - _Z_DAYS * math.sqrt(2 / (9 * freedom))) ** 3
        upper = max(variance, mean) * freedom / quantile
        # A few crashes a day cannot show how much days differ: there the upper bound is
        # mostly Poisson's own noise, and it is held to what busy packages' days show
        # unless this history itself shows more.
        seen = math.sqrt(max(0.0, (variance - mean) / mean**2))
        spread = min(math.sqrt(max(0.0, (upper - mean) / mean**2)), max(seen, MAX_DAY_TO_DAY))
        spread = max(spread, MIN_DAY_TO_DAY)
        return cls(
            baseline_per_day=mean,
            hours=hours,
            spread=spread,
            level_error=math.sqrt((mean + (spread * mean) ** 2) / n) / mean,
            profile=profile,
        )

    @property
    def expected(self) -> list[float]:
        """The crashes each hour would bring had nobody moved."""
        if self.busy is not None:
            # Each hour as busy as the other packages' reports say (no floor: an hour
            # without any of theirs expects none, and its crashes weigh only in the day).
            return [self.baseline_per_day / 24 * b for b in self.busy[: len(self.hours)]]
        busy = self.profile or [1.0] * len(self.hours)
        return [self.baseline_per_day / 24 * max(b, 1e-3) for b in busy[: len(self.hours)]]

    def block_noise(self, blocks: int) -> list[float]:
        """Each day block's relative variance beyond the day's own: the others' count's."""
        noise = list(self.busy_noise or ())
        return [noise[k] if k < len(noise) else 0.0 for k in range(blocks)]

    def log_likelihood(self, percentages: Sequence[int]) -> np.ndarray:
        """log P(those hours | μ) for every μ of UPTAKE_GRID."""
        count = min(len(self.hours), len(percentages))
        if self.baseline_per_day <= 0 or not count:
            return np.zeros(len(UPTAKE_GRID))
        staying = 1 - installs.shares_for(percentages[:count], UPTAKE_GRID)
        expected = staying * np.asarray(self.expected[:count])[None, :]
        counts = np.asarray(self.hours[:count], dtype=float)
        # The level's error counts here as more of a day's own (each day on its own).
        noise = self.block_noise((count + 23) // 24)
        total = np.zeros(len(UPTAKE_GRID))
        for day, begin in enumerate(range(0, count, 24)):
            size = 1 / (self.spread**2 + self.level_error**2 + noise[day])
            block = slice(begin, min(begin + 24, count))
            means = np.maximum(expected[:, block].sum(axis=1), 1e-9)
            seen = counts[block]
            # The block's total: negative binomial (a day's own noise on top of Poisson's),
            # without the terms that do not depend on μ.
            total += size * np.log(size / (size + means)) + seen.sum() * np.log(
                means / (size + means)
            )
            # Its spread over the hours: multinomial. Not when the hours' expected counts
            # come from other packages' reports hour by hour: each of those is too noisy a
            # measure of how busy that hour was to say when machines left within a day.
            if self.busy is None:
                split = np.maximum(expected[:, block], 1e-12) / means[:, None]
                total += np.log(split) @ seen
        return total

    @property
    def measured(self) -> int:
        """Hours of the previous version's crashes it rests on."""
        return len(self.hours) if self.baseline_per_day > 0 else 0


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


def with_reported(sightings: Sightings, new: Sequence[int], old: Sequence[int]) -> Sightings:
    """The sightings and the machines that reported their version themselves (the fleet
    agent, apt's own answer), hour by hour: the same kind of evidence, and a sample of
    every machine with the package rather than of the ones that crashed."""
    count = len(sightings.percentages)
    return Sightings(
        percentages=sightings.percentages,
        new=[a + b for a, b in zip(sightings.new, [*new, *[0] * count][:count], strict=True)],
        old=[a + b for a, b in zip(sightings.old, [*old, *[0] * count][:count], strict=True)],
    )


def fit(sightings: Sightings, belief: Uptake, deficit: Deficit | None = None) -> Uptake:
    """The uptake of one update: its own sightings, and the previous version's crashes
    falling away, against what is believed beforehand."""
    measured = deficit.measured if deficit is not None else 0
    if not sightings.total and not measured:
        return belief
    likelihood = _log_likelihood(sightings.percentages, sightings.new, sightings.old)
    if deficit is not None and measured:
        likelihood = likelihood + deficit.log_likelihood(sightings.percentages)
    return _posterior(likelihood, belief, sightings.total, measured)
