"""The anchored test's likelihood when only each day's expected sum is known
(Anchor.day_sums_only): as its docstring says, each day's total is negative binomial around
c · B_d · (1 + (θ − 1) s̄_d) and, given each hour's crashes, the new version's are binomial
with q_h = θ s_h / (1 − s_h + θ s_h). Checked against those distributions written out
term by term, up to a constant that no θ, level or uptake changes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from overview.judges import anchored
from overview.judges.sequential import SHARE_FLOOR, SequentialTest


def _negative_binomial(k: float, size: float, mean: float) -> float:
    return (
        math.lgamma(k + size)
        - math.lgamma(size)
        - math.lgamma(k + 1)
        + size * math.log(size / (size + mean))
        + k * math.log(mean / (size + mean))
    )


def _written_out(test, new, old, shares, side, anchor, hours):
    """log L for every (θ, level, uptake), distribution by distribution."""
    thetas = np.exp(np.arange(anchored._ANCHORED_STEPS + 1) * test.step)
    levels = np.maximum(1 + anchored._LEVEL_Z * anchor.level_error, 0.05)
    days = range(0, hours, 24)
    out = np.zeros((len(thetas), len(levels), len(shares)))
    for k, row in enumerate(np.clip(shares[:, :hours], SHARE_FLOOR, 1 - SHARE_FLOOR)):
        for i, theta in enumerate(thetas):
            q = theta * row / (1 - row + theta * row)
            labels = sum(
                n * math.log(p) + o * math.log(1 - p) for n, o, p in zip(new, old, q, strict=True)
            )
            for j, level in enumerate(levels):
                total = labels + side[k]
                for number, start in enumerate(days):
                    hours_of_day = range(start, min(start + 24, hours))
                    crashes = sum(new[h] + old[h] for h in hours_of_day)
                    share = (
                        sum(row[h] * (new[h] + old[h]) for h in hours_of_day) / crashes
                        if crashes
                        else float(np.mean([row[h] for h in hours_of_day]))
                    )
                    expected = sum(anchor.expected[h] for h in hours_of_day)
                    mean = max(level * expected * (1 + (theta - 1) * share), 1e-9)
                    size = 1 / (max(anchor.spread, 1e-3) ** 2 + anchor.noise[number])
                    total += _negative_binomial(crashes, size, mean)
                out[i, j, k] = total
    return out


@pytest.mark.parametrize(
    "quiet_day", [False, True], ids=["every day expected", "a day expected none"]
)
def test_day_sums_likelihood_is_the_negative_binomials_of_the_days_and_binomials_of_the_hours(
    quiet_day,
):
    rng = np.random.default_rng(7)
    hours = 60  # two whole days and part of a third
    new = rng.poisson(1.5, hours).tolist()
    old = rng.poisson(2.0, hours).tolist()
    expected = rng.uniform(0.5, 4.0, hours)
    if quiet_day:
        expected[24:48] = 0.0
    shares = np.sort(rng.uniform(0.0, 1.0, (3, hours)), axis=1)
    side = rng.normal(0.0, 1.0, 3)
    anchor = anchored.Anchor(
        expected=expected.tolist(),
        spread=0.3,
        level_error=0.15,
        noise=[0.01, 0.02, 0.05],
        day_sums_only=True,
    )
    test = SequentialTest()
    found = anchored._anchored_log_likelihoods(test, new, old, shares, side, anchor, hours)
    reference = _written_out(test, new, old, shares, side, anchor, hours)
    difference = found - reference
    assert np.ptp(difference) < 1e-8 * (1 + np.abs(reference).max())


def test_the_mixtures_sum_in_log_space_without_overflow_and_an_impossible_slice_stays_so():
    values = np.array([[[1000.0, -np.inf], [1001.0, -np.inf]], [[-5.0, -np.inf], [3.0, -np.inf]]])

    summed = anchored._log_sum_exp(values, axis=1)

    assert summed.shape == (2, 2)
    assert summed[:, 0] == pytest.approx([1001 + math.log1p(math.exp(-1)), np.logaddexp(-5, 3)])
    assert np.all(summed[:, 1] == -np.inf)
