"""An anytime-valid test of whether an update crashes more than the version it replaces.

Plain Python with NumPy, no Django. The judge `sequential` of the controller reads it.

The question: do machines on the new version crash more often, per machine-hour, than
machines still on the previous version? Let θ be the ratio of the two crash rates. Given
that a crash happens in hour h, it comes from a machine on the new version with
probability q_h(θ) = θ s_h / (θ s_h + 1 − s_h), where s_h is the share of machines that
run the new version in that hour. Conditioning on the crashes removes the unknown and
changing baseline rate (daily cycles, weekends): only the labels "new or old" carry
information, and under θ = 1 they are Bernoulli(s_h) (Lindon and Malek, "Anytime-Valid
Inference for Multinomial Count Data", NeurIPS 2022, section 4; the classical conditional
binomial test of two Poisson rates, Przyborowski and Wilenski 1940).

The log likelihood ratio of θ against 1 after the hours seen so far is

    ℓ(θ) = N_new · log θ − Σ_h n_h · log(1 + (θ − 1) s_h)

with n_h the crashes of hour h (both versions) and N_new those on the new version. A
mixture of exp(ℓ(θ_k)) over rate ratios θ_k > 1 with weights summing to 1 is a
nonnegative supermartingale while the new version crashes no more than the old
(Robbins 1970; Johari, Pekelis and Walsh, "Always Valid Inference", 2022), so by Ville's
inequality it ever reaches 1/α with probability at most α: however often the controller
looks, a healthy update is called regressed with probability at most α over its whole
ramp. Inverting the same construction around every θ0 of a grid gives an always-valid
confidence sequence for θ: its lower end above 1 is a regression, its upper end below the
tolerance (1.2 by default) is evidence the update is healthy, and in between the evidence
is insufficient, with an estimate of how many more crashes it would take to tell a
doubling (a Brownian approximation of the log likelihood ratio with drift).

Two things the guarantee assumes, which the callers provide: crashes are counted once
per machine and bucket per hour (a machine in a crash loop is one event, not a hundred),
and s_h does not depend on the labels being tested (it comes from the percentage history
and the version mix seen in other packages' reports, overview.judges.exposure).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

# The grid of rate ratios is uniform in log θ with step log(tolerance)/4, so that 1 and
# the tolerance are grid points; it spans tolerance^-20 .. tolerance^20.
STEPS_PER_TOLERANCE = 4
GRID_HALF_WIDTH = 80
# The mixture's alternatives, in grid steps above (or below) the null: roughly log-uniform
# from 1.05× to 10× for a tolerance of 1.2, denser near small effects. Simulation showed
# power varies by a few points at most across reasonable choices.
MIXTURE_STEPS = (1, 2, 3, 4, 6, 8, 11, 15, 20, 27, 36, 50)
# A share is never exactly 0 or 1 (a crash on a version nobody runs is a data error, not
# infinite evidence).
SHARE_FLOOR = 1e-6


class Finding(StrEnum):
    REGRESSED = "regressed"
    HEALTHY = "healthy"
    INSUFFICIENT = "insufficient"


@dataclass(frozen=True)
class Hour:
    """Crash events of one hour and the share of machines on the new version.

    `share_low` and `share_high` bracket the share: the regression test uses the high
    one (more machines on the new version means more of its crashes are expected), the
    health test the low one, so an uncertain exposure makes either verdict harder, never
    easier.
    """

    new: int
    old: int
    share_low: float
    share_high: float


@dataclass(frozen=True)
class SequentialResult:
    verdict: Finding
    ratio: float | None  # the most likely rate ratio, None without crashes on both sides
    lower: float  # always-valid lower bound (0 when nothing excludes a ratio near 0)
    upper: float  # always-valid upper bound (inf when nothing excludes large ratios)
    new: int  # crash events on the new version
    old: int  # crash events on the previous version, in the same hours
    evidence: float  # the mixture likelihood ratio against "no rise"; halts at 1/alpha
    needed: int  # about how many more crash events to tell a doubling (0 when decided)


@dataclass(frozen=True)
class SequentialTest:
    """The sequential test's settings: false-halt rate, tolerance and its confidence."""

    alpha: float = 0.01
    tolerance: float = 1.2
    alpha_healthy: float = 0.05

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1 or not 0 < self.alpha_healthy < 1:
            raise ValueError("alpha and alpha_healthy are probabilities")
        if self.tolerance <= 1:
            raise ValueError("the tolerance is a rate ratio above 1")

    @property
    def step(self) -> float:
        return math.log(self.tolerance) / STEPS_PER_TOLERANCE

    def assess(
        self, hours: Sequence[Hour], *, share_now: float, bounds: bool = True
    ) -> SequentialResult:
        """The verdict after these hours (in any order), and the evidence behind it.

        Without `bounds`, the confidence bounds are left at 0 and infinity: the verdict
        does not depend on them (a simulation of many ramps wants only the verdicts).
        """
        counted = [h for h in hours if h.new + h.old > 0]
        new = sum(h.new for h in counted)
        old = sum(h.old for h in counted)
        if not counted:
            needed = _reports_needed(self, share_now)
            return SequentialResult(
                Finding.INSUFFICIENT, None, 0.0, math.inf, 0, 0, 1.0, math.ceil(needed)
            )
        grid = _log_likelihoods(self, counted, None if bounds else _VERDICT_POINTS)
        weight = 1.0 / len(MIXTURE_STEPS)
        zero = GRID_HALF_WIDTH  # index of θ = 1
        evidence = _mixture(grid.high, zero, +1, weight)
        tolerance_index = zero + STEPS_PER_TOLERANCE
        ratio = None
        if new and old and bounds:
            ratio = math.exp((int(np.argmax(grid.middle)) - zero) * self.step)
        lower = self._lower(grid.high, weight) if bounds else 0.0
        upper = self._upper(grid.low, weight) if bounds else math.inf
        if evidence >= 1 / self.alpha:
            verdict = Finding.REGRESSED
        elif _mixture(grid.low, tolerance_index, -1, weight) >= 1 / self.alpha_healthy:
            verdict = Finding.HEALTHY
        else:
            verdict = Finding.INSUFFICIENT
        needed = 0
        if verdict == Finding.INSUFFICIENT:
            information = sum(
                (h.new + h.old) * _clamp(h.share_high) * (1 - _clamp(h.share_high)) for h in counted
            )
            s = min(max(share_now, 0.01), 0.99)
            needed = max(0, math.ceil(_reports_needed(self, s) - information / (s * (1 - s))))
        return SequentialResult(verdict, ratio, lower, upper, new, old, evidence, needed)

    def _lower(self, grid: np.ndarray, weight: float) -> float:
        """The largest θ0 the data reject in favour of larger ratios (0 when none)."""
        rejected = np.flatnonzero(_mixtures(grid, +1, weight) >= 1 / self.alpha)
        if not len(rejected):
            return 0.0
        return math.exp((int(rejected.max()) - GRID_HALF_WIDTH) * self.step)

    def _upper(self, grid: np.ndarray, weight: float) -> float:
        """The smallest θ0 the data reject in favour of smaller ratios (inf when none)."""
        rejected = np.flatnonzero(_mixtures(grid, -1, weight) >= 1 / self.alpha_healthy)
        if not len(rejected):
            return math.inf
        return math.exp((int(rejected.min()) - GRID_HALF_WIDTH) * self.step)


def mean_evidence(*evidence: float) -> float:
    """Several tests' evidence against "no rise" as one: their mean. Each is an e-process
    (at most 1 in expectation at any stopping time while the rate did not rise), and so is
    their mean (Vovk and Wang 2021, "E-values: calibration, combination and
    applications"), so a halt when it reaches 1/α keeps the bound of each. A test alone
    then needs twice its evidence: the price of letting either halt where the other
    cannot see a rise (docs/judges.md has what it cost and bought in the backtest)."""
    return sum(evidence) / len(evidence)


def _clamp(share: float) -> float:
    return min(max(share, SHARE_FLOOR), 1 - SHARE_FLOOR)


@dataclass(frozen=True)
class _Grids:
    high: np.ndarray  # ℓ on the grid with the high shares: for the regression test
    low: np.ndarray  # with the low shares: for the health test
    middle: np.ndarray  # with their mean: for the point estimate


_STEPS = np.arange(-GRID_HALF_WIDTH, GRID_HALF_WIDTH + 1)
_SIZE = len(_STEPS)
# For every null of the grid, the indices of its alternatives above and below (clipped to
# the grid; _VALID says which are really on it).
_ABOVE = np.array([[i + m for m in MIXTURE_STEPS] for i in range(_SIZE)])
_BELOW = np.array([[i - m for m in MIXTURE_STEPS] for i in range(_SIZE)])
_ABOVE_VALID = _ABOVE < _SIZE
_BELOW_VALID = _BELOW >= 0
_ABOVE = np.minimum(_ABOVE, _SIZE - 1)
_BELOW = np.maximum(_BELOW, 0)


# The grid points the verdicts read: θ = 1 and its alternatives above, the tolerance and
# its alternatives below.
_VERDICT_POINTS = np.unique(
    np.clip(
        np.concatenate(
            (
                [GRID_HALF_WIDTH],
                GRID_HALF_WIDTH + np.array(MIXTURE_STEPS),
                [GRID_HALF_WIDTH + STEPS_PER_TOLERANCE],
                GRID_HALF_WIDTH + STEPS_PER_TOLERANCE - np.array(MIXTURE_STEPS),
            )
        ),
        0,
        _SIZE - 1,
    )
)


def _log_likelihoods(
    test: SequentialTest, hours: Sequence[Hour], only: np.ndarray | None = None
) -> _Grids:
    """ℓ on the grid; with `only`, on those points alone (the others are -inf)."""
    points = _STEPS if only is None else _STEPS[only]
    log_theta = points * test.step
    n = np.array([h.new + h.old for h in hours], dtype=float)
    new = float(sum(h.new for h in hours))
    shares = np.clip(
        np.array([(h.share_high, h.share_low) for h in hours], dtype=float).T,
        SHARE_FLOOR,
        1 - SHARE_FLOOR,
    )
    # Σ_h n_h log(1 + (θ − 1) s_h) for every θ of the grid and both sets of shares at once.
    penalty = np.log1p(np.expm1(log_theta)[:, None, None] * shares[None, :, :]) @ n
    grids = new * log_theta[:, None] - penalty
    if only is not None:
        full = np.full((_SIZE, 2), -np.inf)
        full[only] = grids
        grids = full
    # The point estimate needs no guarantee: the middle of the two is near enough.
    return _Grids(high=grids[:, 0], low=grids[:, 1], middle=grids.mean(axis=1))


def _mixtures(grid: np.ndarray, direction: int, weight: float) -> np.ndarray:
    """Σ_m w · exp(ℓ(θ0 · r_m) − ℓ(θ0)) over the alternatives on one side, for every null
    θ0 of the grid at once. Alternatives falling off the grid are left out: a smaller
    mixture, still valid."""
    index, valid = (_ABOVE, _ABOVE_VALID) if direction > 0 else (_BELOW, _BELOW_VALID)
    ratios = np.exp(np.minimum(700.0, grid[index] - grid[:, None]))
    return np.asarray(weight * np.where(valid, ratios, 0.0).sum(axis=1))


def _mixture(grid: np.ndarray, null: int, direction: int, weight: float) -> float:
    """_mixtures at one null."""
    index, valid = (_ABOVE, _ABOVE_VALID) if direction > 0 else (_BELOW, _BELOW_VALID)
    alternatives = grid[index[null][valid[null]]]
    return float(weight * np.exp(np.minimum(700.0, alternatives - grid[null])).sum())


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _reports_needed(test: SequentialTest, share: float) -> float:
    # An "about" figure: the share to two decimals is close enough, and it is then cached.
    return _reports_needed_at(test.alpha, round(min(max(share, 0.01), 0.99), 2))


@functools.lru_cache(maxsize=1024)
def _reports_needed_at(alpha: float, s: float, power: float = 0.8) -> float:
    """About how many crash events at share s the test needs to catch a doubling with
    the given probability (the log likelihood ratio as Brownian motion with drift, with a
    barrier at log(1/α) + log(number of alternatives); simulation finds it 10 to 20 %
    pessimistic)."""

    def q(theta: float) -> float:
        return theta * s / (theta * s + 1 - s)

    q1, q0 = q(2.0), q(1.0)
    a, b = math.log(q1 / q0), math.log((1 - q1) / (1 - q0))
    drift = q1 * a + (1 - q1) * b
    variance = q1 * (1 - q1) * (a - b) ** 2
    barrier = math.log(1 / alpha) + math.log(len(MIXTURE_STEPS))
    reflection = math.exp(min(700.0, 2 * drift * barrier / variance))

    def crossing(n: float) -> float:
        spread = math.sqrt(variance * n)
        return _phi((drift * n - barrier) / spread) + reflection * _phi(
            (-drift * n - barrier) / spread
        )

    low, high = 1.0, 1e8
    for _ in range(60):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if crossing(middle) < power else (low, middle)
    return high
