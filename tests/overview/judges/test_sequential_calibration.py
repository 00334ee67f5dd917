"""The sequential test's false-halt rate, measured tightly enough to check its bound.

The bound is Ville's inequality for the mixture likelihood ratio (overview.judges.sequential):
an update whose rate did not rise reaches evidence 1/α in at most α of ramps, however
often it is looked at. Here 20,000 healthy ramps are simulated in a world with a 4:1
daily cycle, a release-wide 3× shock for 12 hours and gamma-mixed hourly counts (what
the conditional test must cancel), looked at every hour as the controller does; the
upper end of the 95 % (Clopper-Pearson) interval of the rate found must be at most
1.5 % at α = 1 %. The evidence is computed for all ramps at once with NumPy, from the
test's own alternatives; that it equals the test's own `assess` is checked on a sample.
"""

from __future__ import annotations

import math

import numpy as np

from overview.judges.sequential import MIXTURE_STEPS, Hour, SequentialTest

HOURS = 96
RAMPS = 20_000
PER_DAY = 400.0


def shares(hours: int = HOURS) -> np.ndarray:
    """10 % to 100 % in steps of 10 every 6 hours, machines installing over ~8 hours."""
    eligible = np.minimum(1.0, 0.1 + 0.1 * (np.arange(hours) // 6))
    lagged = np.zeros(hours)
    for h in range(1, hours):
        lagged[h] = lagged[h - 1] + (eligible[h] - lagged[h - 1]) * (1 - math.exp(-1 / 8))
    return np.clip(lagged, 1e-6, 1 - 1e-6)


def busy(hours: int = HOURS) -> np.ndarray:
    """A 4:1 daily cycle (peak 15:00 UTC) with a 3× shock from hour 30 to 42."""
    hour = np.arange(hours)
    cycle = 1 + 0.6 * np.cos(2 * np.pi * (hour % 24 - 15) / 24)
    return cycle * np.where((hour >= 30) & (hour < 42), 3.0, 1.0)


def simulate(rng: np.random.Generator, ramps: int, *, ratio: float = 1.0):
    """Crash events of each version, hour by hour: (new, old), each ramps × hours."""
    s = shares()
    mean = PER_DAY / 24 * busy()
    # Gamma-mixed (negative binomial, shape 4): one multiplier per ramp and hour, shared
    # by both versions, as a busy hour is busy for every machine.
    mixed = mean * rng.gamma(4.0, 1 / 4.0, size=(ramps, HOURS))
    new = rng.poisson(mixed * s * ratio)
    old = rng.poisson(mixed * (1 - s))
    return new, old


def evidence(test: SequentialTest, new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """The mixture likelihood ratio against "no rise" after each hour: ramps × hours."""
    s = shares()
    log_thetas = np.array(MIXTURE_STEPS) * test.step
    n = (new + old).astype(float)
    cumulative_new = np.cumsum(new, axis=1)
    total = np.zeros(new.shape)
    for log_theta in log_thetas:
        penalty = np.cumsum(n * np.log1p(math.expm1(log_theta) * s), axis=1)
        total += np.exp(np.minimum(700.0, cumulative_new * log_theta - penalty))
    return total / len(log_thetas)


def clopper_pearson_upper(found: int, runs: int, confidence: float = 0.95) -> float:
    """The upper end of the exact two-sided interval for a binomial rate."""
    if found >= runs:
        return 1.0
    tail = (1 - confidence) / 2

    def cdf(p: float) -> float:
        return sum(
            math.exp(
                math.lgamma(runs + 1)
                - math.lgamma(k + 1)
                - math.lgamma(runs - k + 1)
                + k * math.log(p)
                + (runs - k) * math.log1p(-p)
            )
            for k in range(found + 1)
        )

    low, high = found / runs, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(middle) > tail else (low, middle)
    return high


def test_the_fast_evidence_is_the_tests_own():
    test = SequentialTest()
    rng = np.random.default_rng(3)
    new, old = simulate(rng, 5, ratio=1.5)
    fast = evidence(test, new, old)
    s = shares()
    for r in range(5):
        for h in (5, 40, HOURS - 1):
            hours = [
                Hour(int(new[r, k]), int(old[r, k]), float(s[k]), float(s[k])) for k in range(h + 1)
            ]
            found = test.assess(hours, share_now=float(s[h]), bounds=False).evidence
            assert math.isclose(fast[r, h], found, rel_tol=1e-6), (r, h)


def test_at_alpha_1_percent_the_false_halt_rate_s_95_percent_interval_ends_below_1_5_percent():
    test = SequentialTest(alpha=0.01)
    rng = np.random.default_rng(2026)
    new, old = simulate(rng, RAMPS)
    halted = int((evidence(test, new, old) >= 1 / test.alpha).any(axis=1).sum())
    upper = clopper_pearson_upper(halted, RAMPS)
    assert upper <= 0.015, (halted, upper)


def test_the_same_world_halts_a_doubling_in_almost_every_ramp():
    """The calibration is not bought by a test that never halts."""
    test = SequentialTest(alpha=0.01)
    rng = np.random.default_rng(7)
    new, old = simulate(rng, 500, ratio=2.0)
    halted = (evidence(test, new, old) >= 1 / test.alpha).any(axis=1)
    assert halted.mean() > 0.95


def test_the_interval_is_exact():
    assert math.isclose(clopper_pearson_upper(0, 100), 1 - 0.025 ** (1 / 100), rel_tol=1e-6)
    # 1 % of 20,000: the normal approximation gives 0.0114, the exact end a little more.
    assert 0.0114 < clopper_pearson_upper(200, 20_000) < 0.0116
