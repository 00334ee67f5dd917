"""The anchored test: whether an update crashes more than the version it replaces, with the
previous version's own history as the yardstick (no uptake estimate needed). Plain Python
with NumPy, no Django; the test's settings and grids are overview.judges.sequential's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from overview.judges.sequential import MIXTURE_STEPS, SHARE_FLOOR, SequentialTest

# --- The anchored test: the previous version's own history as the yardstick ---------------
#
# The test above needs the share of machines on the new version, and a share taken too
# high hides a rise: it must use the fast end of what the data allow, which costs a busy
# package most of its power when the uptake is not well measured. The previous version's
# history removes that need. Had nobody moved, its crashes would go on at the level of its
# fifteen days before (b_h an hour, scaled by how busy the hour is); if a share s_h has
# moved, the old version's crashes fall to b_h (1 − s_h) and the new version's are
# b_h θ s_h. Under θ = 1 the two add up to the old level whatever the uptake; a rise
# lifts the total, and the split says how much of it the new version carries.
#
# Days differ on their own (a factor g_d for each day, gamma with the coefficient of
# variation the history shows), so each day's total is negative binomial and, given it,
# its crashes fall into hours and versions multinomially: exactly the marginal of the
# day's hours so far, so the likelihood of every prefix of hours is a proper one. The
# uptake (μ, through s_h) is unknown: the evidence is a mixture over alternatives θ > 1
# and uptakes (weighted by what is believed of them) against the best the null can do over
# every uptake (Wasserman, Ramdas and Balakrishnan, "Universal inference", PNAS 2020: a
# mixture likelihood over the supremum of the null's is an e-process while the truth is
# in the null). The history's level is known up to its standard error: both sides average
# over it (a factor c, normal around 1), so the guarantee holds over the histories an
# update may have, as "at most α of healthy updates" asks. Other data on the uptake (other
# packages' reports) multiply both sides.

# The level's factor c, in its standard errors, and the weights of a normal on them.
_LEVEL_Z = np.linspace(-3.0, 3.0, 13)
_LEVEL_WEIGHTS = -0.5 * _LEVEL_Z**2 - np.logaddexp.reduce(-0.5 * _LEVEL_Z**2)


@dataclass(frozen=True)
class Anchor:
    """What the previous version's history says an hour should bring had nobody moved."""

    expected: Sequence[float]  # crash events, hour by hour
    spread: float  # how much a day differs from it on its own (coefficient of variation)
    level_error: float  # the history level's relative standard error
    # Each day block's relative variance beyond `spread`: the noise of the other
    # packages' count the block's level is scaled by (Deficit.relative_to), none without.
    noise: Sequence[float] = ()
    # Whether each hour's expected count is itself too noisy a measure to weigh the hours
    # of a day by (it comes from other packages' reports hour by hour): then only each
    # day's sum of them counts, and the day's own crashes say how its hours weigh.
    day_sums_only: bool = False


@dataclass(frozen=True)
class Anchored:
    evidence: float  # the mixture against "no rise"; halts at 1/alpha
    ratio: float | None  # the most likely rate ratio of the grid
    lower: float  # always-valid lower bound (computed only when the evidence is there)


def anchored(
    test: SequentialTest,
    *,
    new: Sequence[int],
    old: Sequence[int],
    shares: np.ndarray,
    log_belief: np.ndarray,
    side: np.ndarray,
    anchor: Anchor,
) -> Anchored:
    """The anchored test after these hours (in order from publication).

    `shares` holds the share on the new version hour by hour for each uptake considered
    (one row each), `log_belief` the mixture's belief in each uptake (normalised here),
    `side` what other data say of each (a log likelihood, 0 for none).
    """
    hours = min(len(new), len(old), len(anchor.expected), shares.shape[1])
    if not hours or not sum(new[:hours]) + sum(old[:hours]):
        return Anchored(1.0, None, 0.0)
    grid = _anchored_log_likelihoods(test, new, old, shares, side, anchor, hours)
    belief = log_belief - np.logaddexp.reduce(log_belief)
    # Per θ of the grid and uptake: averaged over the level. Then per θ: the mixture over
    # uptakes, and the null's best.
    by_uptake = _log_sum_exp(grid + _LEVEL_WEIGHTS[None, :, None], axis=1)
    mixed = _log_sum_exp(by_uptake + belief[None, :], axis=1)
    best = by_uptake.max(axis=1)
    top = len(best) - 1

    def evidence_at(index: int) -> float:
        """log of the mixture over the alternatives above θ of `index` against its best."""
        alternatives = mixed[[min(index + m, top) for m in MIXTURE_STEPS]]
        return float(np.logaddexp.reduce(alternatives) - math.log(len(alternatives)) - best[index])

    evidence = evidence_at(0)
    ratio = float(np.exp(int(np.argmax(best)) * test.step)) if sum(new[:hours]) else None
    lower = 0.0
    if evidence >= math.log(1 / test.alpha):
        lower = 1.0
        for index in range(1, top + 1):
            if evidence_at(index) < math.log(1 / test.alpha):
                break
            lower = float(np.exp(index * test.step))
    return Anchored(float(np.exp(min(evidence, 700.0))), ratio, lower)


def _log_sum_exp(values: np.ndarray, *, axis: int) -> np.ndarray:
    """log Σ exp(values) along `axis`, shifted by the largest so nothing overflows: one
    exponential an element, where np.logaddexp.reduce takes an exponential and a logarithm
    for each (a tenth of a tick that judges every update). A slice that is all −∞ stays −∞."""
    top = values.max(axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        summed = np.log(np.exp(values - top).sum(axis=axis, keepdims=True))
    return np.asarray(np.squeeze(summed + top, axis=axis))


# The anchored grid of θ: 1 to about 20× (tolerance^(k/4) for 1.2), alternatives beyond
# its top clipped to it.
_ANCHORED_STEPS = 66


def _anchored_log_likelihoods(
    test: SequentialTest,
    new: Sequence[int],
    old: Sequence[int],
    shares: np.ndarray,
    side: np.ndarray,
    anchor: Anchor,
    hours: int,
) -> np.ndarray:
    """log L(θ, c, μ) up to terms none of them changes: θ of the grid, levels c, uptakes μ."""
    log_theta = np.arange(_ANCHORED_STEPS + 1) * test.step
    s = np.clip(shares[:, :hours], SHARE_FLOOR, 1 - SHARE_FLOOR)
    n_new = np.asarray(new[:hours], dtype=float)
    n_old = np.asarray(old[:hours], dtype=float)
    b = np.asarray(anchor.expected[:hours], dtype=float)
    blocks = [slice(d, min(d + 24, hours)) for d in range(0, hours, 24)]
    if anchor.day_sums_only:
        return _day_sums_log_likelihoods(log_theta, s, n_new, n_old, b, blocks, anchor, side)
    # Per uptake and day: the old level's expected crashes on each version.
    staying = np.stack([(b[k] * (1 - s[:, k])).sum(axis=1) for k in blocks], axis=1)
    moved = np.stack([(b[k] * s[:, k]).sum(axis=1) for k in blocks], axis=1)
    totals = np.array([n_new[k].sum() + n_old[k].sum() for k in blocks])
    levels = np.maximum(1 + _LEVEL_Z * anchor.level_error, 0.05)
    noise = np.array(
        [anchor.noise[d] if d < len(anchor.noise) else 0.0 for d in range(len(blocks))]
    )
    size = 1 / (max(anchor.spread, 1e-3) ** 2 + noise)  # per day
    # means[θ, c, μ, day]
    means = levels[None, :, None, None] * (
        staying[None, None, :, :] + np.exp(log_theta)[:, None, None, None] * moved[None, None]
    )
    days = (size * np.log(size / (size + means)) - totals * np.log(size + means)).sum(
        axis=3
    ) + totals.sum() * np.log(levels)[None, :, None]
    # The split between versions and hours: the terms of the uptake only, and the other data.
    split = np.log(s) @ n_new + np.log1p(-s) @ n_old + side
    return np.asarray(days + (n_new.sum() * log_theta)[:, None, None] + split[None, None, :])


def _day_sums_log_likelihoods(
    log_theta: np.ndarray,
    s: np.ndarray,
    n_new: np.ndarray,
    n_old: np.ndarray,
    b: np.ndarray,
    blocks: list[slice],
    anchor: Anchor,
    side: np.ndarray,
) -> np.ndarray:
    """log L(θ, c, μ) when only each day's expected sum is known, not how it falls over
    the day's hours (Anchor.day_sums_only). Given each hour's crashes (both versions), the
    new version's are binomial with q_h = θ s_h / (1 − s_h + θ s_h), which needs no
    hourly expectation at all (the concurrent comparison); each day's total is negative
    binomial around c · B_d · (1 + (θ − 1) s̄_d), B_d the day's expected sum and s̄_d the
    share averaged over its hours as its own crashes weigh them. Weighing by a noisy
    hourly measure instead would let a rise hide in, or a healthy day show, whichever
    hours the noise favours."""
    theta = np.exp(log_theta)
    # The binomial of the labels, per θ and μ: Σ_h new_h log q_h + old_h log(1 − q_h)
    # = N_new log θ + Σ_h (new_h log s_h + old_h log(1 − s_h) − n_h log(1 + (θ − 1) s_h)),
    # over the hours with crashes only (the others add nothing; most hours of a quiet
    # update have none, and this is θ × μ × hours logarithms).
    crashed = (n_new + n_old) > 0
    s_crashed, new_crashed, old_crashed = s[:, crashed], n_new[crashed], n_old[crashed]
    split = (
        (n_new.sum() * log_theta)[:, None]
        + (np.log(s_crashed) @ new_crashed + np.log1p(-s_crashed) @ old_crashed)[None, :]
        - np.log1p(np.expm1(log_theta)[:, None, None] * s_crashed[None, :, :])
        @ (new_crashed + old_crashed)
    )  # [θ, μ]
    totals = np.array([n_new[k].sum() + n_old[k].sum() for k in blocks])
    expected = np.array([b[k].sum() for k in blocks])
    shares = np.stack(
        [
            (s[:, k] @ (n_new[k] + n_old[k])) / totals[d] if totals[d] > 0 else s[:, k].mean(axis=1)
            for d, k in enumerate(blocks)
        ],
        axis=1,
    )  # [μ, day]
    levels = np.maximum(1 + _LEVEL_Z * anchor.level_error, 0.05)
    noise = np.array(
        [anchor.noise[d] if d < len(anchor.noise) else 0.0 for d in range(len(blocks))]
    )
    size = 1 / (max(anchor.spread, 1e-3) ** 2 + noise)  # per day
    # Each day's negative binomial: size log size + T log m − (size + T) log(size + m), with
    # the mean m[θ, c, μ, day] = c · B_d · (1 + (θ − 1) s̄_d). Only the last term needs
    # the whole grid; log m is a sum of a level's, a day's and a [θ, μ, day] term, so it
    # is taken on that much smaller grid (this function is a quarter of a tick that judges
    # every update, and its logarithms most of it). A day expected to bring nothing keeps
    # the mean's floor, on the whole grid as before.
    rise = 1 + (theta[:, None, None] - 1) * shares[None, :, :]  # [θ, μ, day], at least 1
    floor = 1e-9
    if expected.min() * levels.min() > floor:
        log_means = (totals * np.log(expected)).sum() + (np.log(rise) @ totals)[:, None, :]
        log_means = log_means + totals.sum() * np.log(levels)[None, :, None]
        means = levels[None, :, None, None] * (expected * rise)[:, None, :, :]
    else:
        means = np.maximum(levels[None, :, None, None] * (expected * rise)[:, None, :, :], floor)
        log_means = np.log(means) @ totals
    days = (size * np.log(size)).sum() + log_means - np.log(size + means) @ (size + totals)
    return np.asarray(days + split[:, None, :] + side[None, None, :])
