"""The sequential test keeps its error rates however often it looks, and finds what it should.

Ramps are simulated as the controller sees them: the share of machines on the new version
rises hour by hour, crashes of the hour are Poisson and each comes from the new version
with probability θ s / (θ s + 1 − s). Tolerances allow for the sampling error of the
simulation (three standard deviations).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from overview.judges import exposure, installs
from overview.judges.anchored import Anchor, anchored
from overview.judges.sequential import Finding as Verdict
from overview.judges.sequential import Hour, SequentialTest

RAMP_HOURS = 54


def shares(hours: int = RAMP_HOURS) -> np.ndarray:
    """A ramp from 10 % to 100 % in 54 hours, with machines installing over ~8 hours."""
    eligible = np.minimum(1.0, 0.1 + 0.1 * (np.arange(hours) // 6))
    lagged = np.zeros(hours)
    for h in range(1, hours):
        lagged[h] = lagged[h - 1] + (eligible[h] - lagged[h - 1]) * (1 - math.exp(-1 / 8))
    return lagged


def ramp(rng, *, ratio: float, per_day: float, hours: int = RAMP_HOURS, test=None, bounds=True):
    """The verdicts after each hour of one simulated ramp, looked at every hour."""
    test = test or SequentialTest()
    share = shares(hours)
    seen: list[Hour] = []
    verdicts = []
    for h in range(hours):
        old = rng.poisson(per_day / 24 * (1 - share[h]))
        new = rng.poisson(per_day / 24 * share[h] * ratio)
        seen.append(Hour(int(new), int(old), float(share[h]), float(share[h])))
        verdicts.append(test.assess(seen, share_now=float(share[h]), bounds=bounds))
    return verdicts


def bound(rate: float, runs: int) -> float:
    return rate + 3 * math.sqrt(rate * (1 - rate) / runs)


def test_an_equal_rate_is_never_called_regressed_in_1000_ramps_beyond_alpha():
    rng = np.random.default_rng(12)
    runs = 1000
    flagged = sum(
        any(v.verdict == Verdict.REGRESSED for v in ramp(rng, ratio=1.0, per_day=200, bounds=False))
        for _ in range(runs)
    )
    assert flagged / runs <= bound(0.01, runs)


def test_a_rate_at_the_tolerance_is_rarely_called_healthy():
    rng = np.random.default_rng(13)
    runs = 100
    test = SequentialTest(alpha_healthy=0.05)
    healthy = sum(
        any(v.verdict == Verdict.HEALTHY for v in ramp(rng, ratio=1.2, per_day=3000, test=test))
        for _ in range(runs)
    )
    assert healthy / runs <= bound(0.05, runs)


def test_a_doubling_at_high_volume_is_flagged_early_in_the_ramp():
    rng = np.random.default_rng(14)
    hours_to_halt = []
    for _ in range(20):
        verdicts = ramp(rng, ratio=2.0, per_day=1000)
        flagged = [h for h, v in enumerate(verdicts) if v.verdict == Verdict.REGRESSED]
        assert flagged, "a doubling at 1,000 crashes a day went unnoticed"
        hours_to_halt.append(flagged[0])
    # Before the ramp is half way (30 hours is the 50 % step).
    assert np.median(hours_to_halt) < 30


def test_an_equal_rate_at_high_volume_becomes_healthy():
    rng = np.random.default_rng(15)
    verdicts = ramp(rng, ratio=1.0, per_day=5000, hours=120)
    assert verdicts[-1].verdict == Verdict.HEALTHY
    assert 0.9 < verdicts[-1].ratio < 1.1
    assert verdicts[-1].lower < 1 < verdicts[-1].upper


def test_a_package_that_rarely_crashes_has_insufficient_evidence_and_says_how_much_is_missing():
    rng = np.random.default_rng(16)
    verdicts = ramp(rng, ratio=1.0, per_day=10)
    last = verdicts[-1]
    assert last.verdict == Verdict.INSUFFICIENT
    # A doubling at 80 % of machines takes about 330 crash events to tell; 22 are in.
    assert 200 < last.needed < 400


def test_without_any_crash_the_evidence_is_insufficient():
    found = SequentialTest().assess([], share_now=0.3)
    assert (found.verdict, found.ratio, found.new, found.old) == (
        Verdict.INSUFFICIENT,
        None,
        0,
        0,
    )
    assert found.needed > 0


def test_an_unsure_share_makes_a_regression_harder_to_call_not_easier():
    # 30 crashes on the new version and 70 on the old when 30 % run it: no rise at all, and
    # a rise of 1.6× if only 20 % did. The judge must not halt on the low guess.
    sure = [Hour(30, 70, 0.2, 0.2)] * 3
    unsure = [Hour(30, 70, 0.2, 0.3)] * 3
    assert SequentialTest().assess(sure, share_now=0.2).verdict == Verdict.REGRESSED
    assert SequentialTest().assess(unsure, share_now=0.25).verdict != Verdict.REGRESSED


@pytest.mark.parametrize("kwargs", [{"alpha": 0}, {"alpha_healthy": 1}, {"tolerance": 1.0}])
def test_impossible_settings_are_refused(kwargs):
    with pytest.raises(ValueError, match="."):
        SequentialTest(**kwargs)


# The anchored test: the previous version's history as the yardstick. Ramps here follow
# the controller's percentages; machines install after an exponential lag the test never
# sees (from one to 48 hours, drawn per ramp), while it believes in 8 hours.
RAMP = [min(100, 10 + 10 * (h // 6)) for h in range(RAMP_HOURS)]


def anchored_ramp(rng, *, ratio: float, per_day: float, days_differ: float = 0.0, every: int = 3):
    """The first hour the anchored test halts one simulated ramp (None: never)."""
    uptake = float(np.exp(rng.uniform(0, math.log(48))))
    share = installs.installed_shares(RAMP, uptake)

    def day_factors(n: int) -> np.ndarray:
        if not days_differ:
            return np.ones(n)
        return rng.gamma(1 / days_differ**2, days_differ**2, n)

    history = rng.poisson(per_day * day_factors(15))
    day = np.repeat(day_factors(3), 24)[:RAMP_HOURS]
    old = rng.poisson(per_day / 24 * (1 - share) * day)
    new = rng.poisson(per_day / 24 * share * ratio * day)
    deficit = exposure.Deficit.from_history(history.tolist(), old.tolist())
    shares = exposure.shares_by_uptake(RAMP)
    belief = exposure.log_belief(exposure.prior(8.0))
    test = SequentialTest()
    for h in range(every, RAMP_HOURS + 1, every):
        found = anchored(
            test,
            new=new[:h].tolist(),
            old=old[:h].tolist(),
            shares=shares[:, :h],
            log_belief=belief,
            side=np.zeros(len(belief)),
            anchor=Anchor(deficit.expected[:h], deficit.spread, deficit.level_error),
        )
        if found.evidence >= 1 / test.alpha:
            return h, found
    return None, found


@pytest.mark.parametrize(
    ("per_day", "days_differ"),
    [(30, 0.0), (300, 0.0), (1000, 0.3)],
    ids=["quiet", "busy", "noisy-days"],
)
def test_the_anchored_test_halts_an_equal_rate_in_at_most_alpha_of_ramps_whatever_the_uptake(
    per_day, days_differ
):
    rng = np.random.default_rng(21)
    runs = 200
    halted = sum(
        anchored_ramp(rng, ratio=1.0, per_day=per_day, days_differ=days_differ)[0] is not None
        for _ in range(runs)
    )
    assert halted / runs <= bound(0.01, runs)


def test_the_anchored_test_catches_a_doubling_at_a_thousand_crashes_a_day_early():
    rng = np.random.default_rng(22)
    hours = [anchored_ramp(rng, ratio=2.0, per_day=1000)[0] for _ in range(40)]
    assert sum(h is not None for h in hours) >= 38
    assert np.median([h for h in hours if h is not None]) <= 18  # by the 30 % step


def test_the_anchored_test_says_how_large_the_rise_is():
    rng = np.random.default_rng(23)
    # Read once at the end of the ramp: the bounds of all it saw.
    hour, found = anchored_ramp(rng, ratio=3.0, per_day=2000, every=RAMP_HOURS)
    assert hour == RAMP_HOURS
    assert 1.5 < found.lower <= 3.0 and 2.0 < found.ratio < 4.5


def test_without_a_crash_the_anchored_test_has_no_evidence():
    found = anchored(
        SequentialTest(),
        new=[0] * 6,
        old=[0] * 6,
        shares=exposure.shares_by_uptake([10] * 6),
        log_belief=exposure.log_belief(exposure.prior(8.0)),
        side=np.zeros(len(exposure.UPTAKE_GRID)),
        anchor=Anchor([1.0] * 6, 0.1, 0.05),
    )
    assert (found.evidence, found.ratio) == (1.0, None)
