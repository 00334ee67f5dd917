"""The anchored test's false-halt rate with the previous version's history read against the
release's other packages (exposure.Deficit.relative_to, anchored.Anchor.day_sums_only).

Healthy ramps in a world where every package is busier by day than by night (4:1), a
release-wide 3x shock comes for 12 hours, the fifteen days of history hold quiet weekends
while the ramp runs on weekdays, and each day differs from the level on its own (10 %):
the level shift, the cycle and the shock are what the other packages' reports must
cancel. The uptake is unknown to the test (its belief is a wide prior around the truth).
The evidence is looked at every 6 hours (a step of the default policy; the bound holds
however often it is looked at, and the tick looks every hour), for 72 hours, and for 126
(three days at 100 %, as the watch at 100 % looks at it); the upper end of the 95 %
(Clopper-Pearson) interval of the rate of healthy ramps that ever reach 1/α must be at
most 1.5 % at α = 1 %. A doubling must still halt in most ramps: the calibration is not bought by a
test that never halts.
"""

from __future__ import annotations

import math

import numpy as np
from django.conf import settings

from overview.judges import anchored, exposure, installs
from overview.judges.sequential import Hour, SequentialTest, mean_evidence
from tests.overview.judges.test_sequential_calibration import clopper_pearson_upper

HOURS = 72
# The default policy's watch at 100 % (Rules.watch_at_full): 100 % at hour 54, judged 3 days on.
WATCHED_HOURS = 54 + 72
LOOK_EVERY = 6  # hours: the bound holds however often it is looked at; 6 keeps it quick
PERCENTAGES = [min(100, 10 + 10 * (h // 6)) for h in range(WATCHED_HOURS)]
UPTAKE = 8.0
OWN_PER_DAY = 240.0  # the previous version's crashes on an average day before the update
OTHERS_PER_DAY = 2000.0  # the release's other packages'


def busy(hours: int = HOURS) -> np.ndarray:
    """How busy each hour is for every package: 4:1 by day, a 3x shock at hours 30-41,
    weekdays 1.25x the history's average day (which holds weekends at half)."""
    hour = np.arange(hours)
    cycle = 1 + 0.6 * np.cos(2 * np.pi * (hour % 24 - 15) / 24)
    return 1.25 * cycle * np.where((hour >= 30) & (hour < 42), 3.0, 1.0)


def history_days(days: int = 15) -> np.ndarray:
    week = np.array([1.0, 1, 1, 1, 1, 0.5, 0.5])
    level = np.array([week[d % 7] for d in range(days)])
    return level / level.mean()


def ramp(
    rng: np.random.Generator,
    ratio: float,
    per_day: float = OWN_PER_DAY,
    ignorers: float = 0.0,
    uptake: float = UPTAKE,
    hours: int = HOURS,
) -> tuple[list[int], list[int], exposure.Deficit]:
    """One update's crashes, hour by hour, and its history against the others'; a share
    `ignorers` of the machines takes the update at once, whatever the percentage."""
    days = history_days()
    own_days = rng.gamma(100.0, 1 / 100.0, size=len(days))  # 10 % a day, its own
    history = rng.poisson(per_day * days * own_days).tolist()
    others_history = rng.poisson(OTHERS_PER_DAY * days).tolist()
    share = installs.with_ignorers(installs.installed_shares(PERCENTAGES[:hours], uptake), ignorers)
    run_days = np.repeat(rng.gamma(100.0, 1 / 100.0, size=hours // 24 + 1), 24)[:hours]
    mean = per_day / 24 * busy(hours) * run_days
    new = rng.poisson(mean * share * ratio).tolist()
    old = rng.poisson(mean * (1 - share)).tolist()
    others = rng.poisson(OTHERS_PER_DAY / 24 * busy(hours)).tolist()
    deficit = exposure.Deficit.relative_to(history, others_history, old, others)
    assert deficit is not None
    return new, old, deficit


def halts(
    rng: np.random.Generator,
    ratio: float,
    alpha: float = 0.01,
    *,
    together: bool = False,
    per_day: float = OWN_PER_DAY,
    estimate: exposure.Uptake | None = None,
    ignorers: float = 0.0,
    uptake: float = UPTAKE,
    hours: int = HOURS,
) -> bool:
    """Whether the anchored test ever halts the ramp; `together`: the mean of its evidence
    and the concurrent test's, as the judge decides (joint.judged_together). `estimate`: the
    uptake both take, a wide prior around the truth unless given. `hours`: how long it is
    judged."""
    test = SequentialTest(alpha=alpha)
    new, old, deficit = ramp(rng, ratio, per_day, ignorers, uptake, hours)
    estimate = estimate or exposure.prior(uptake)
    belief = exposure.log_belief(estimate)
    for hour in range(LOOK_EVERY, hours + 1, LOOK_EVERY):
        known = exposure.Deficit(
            deficit.baseline_per_day,
            old[:hour],
            deficit.spread,
            deficit.level_error,
            busy=deficit.busy,
            busy_noise=deficit.busy_noise,
        )
        found = anchored.anchored(
            test,
            new=new[:hour],
            old=old[:hour],
            shares=exposure.anchored_shares(
                PERCENTAGES[:hour], ignorers=settings.PHASING_JUDGE_IGNORERS
            ),
            log_belief=belief,
            side=np.zeros(len(exposure.UPTAKE_GRID)),
            anchor=anchored.Anchor(
                expected=known.expected,
                spread=known.spread,
                level_error=known.level_error,
                noise=known.block_noise(math.ceil(hour / 24)),
                day_sums_only=True,
            ),
        )
        evidence = found.evidence
        if together:
            evidence = mean_evidence(evidence, concurrent(test, new[:hour], old[:hour], estimate))
        if evidence >= 1 / alpha:
            return True
    return False


def concurrent(
    test: SequentialTest, new: list[int], old: list[int], estimate: exposure.Uptake
) -> float:
    """The concurrent test's evidence, its shares from the same estimate, the regression
    test's at the fast end with the margin and phasing-ignorers allowed for, as where it
    decides together (pipeline._judge)."""
    high, low, _ = exposure.bracketed_shares(
        PERCENTAGES[: len(new)],
        estimate,
        ignorers=settings.PHASING_JUDGE_IGNORERS,
        margin=exposure.SHAPE_MARGIN,
    )
    hours = [
        Hour(n, o, float(low[h]), float(high[h]))
        for h, (n, o) in enumerate(zip(new, old, strict=True))
    ]
    return test.assess(hours, share_now=float(low[-1]), bounds=False).evidence


RAMPS = 400


def test_at_alpha_1_percent_the_false_halt_rate_s_95_percent_interval_ends_below_1_5_percent():
    rng = np.random.default_rng(2026)
    halted = sum(halts(rng, 1.0) for _ in range(RAMPS))
    upper = clopper_pearson_upper(halted, RAMPS)
    assert upper <= 0.015, (halted, upper)


def test_judged_three_days_at_100_percent_the_false_halt_rate_stays_below_1_5_percent():
    # 126 hours, 9 looks more than the 72-hour runs: an e-process's bound holds however
    # long it is looked at (Ville), which this checks, as the judge decides.
    rng = np.random.default_rng(2026)
    halted = sum(halts(rng, 1.0, together=True, hours=WATCHED_HOURS) for _ in range(RAMPS))
    upper = clopper_pearson_upper(halted, RAMPS)
    assert upper <= 0.015, (halted, upper)


def test_the_same_world_halts_a_doubling_in_almost_every_ramp():
    rng = np.random.default_rng(7)
    assert sum(halts(rng, 2.0) for _ in range(40)) >= 38


def test_deciding_with_the_concurrent_test_keeps_the_false_halt_rate_below_1_5_percent():
    rng = np.random.default_rng(2026)
    halted = sum(halts(rng, 1.0, together=True) for _ in range(RAMPS))
    upper = clopper_pearson_upper(halted, RAMPS)
    assert upper <= 0.015, (halted, upper)


def test_deciding_with_the_concurrent_test_still_halts_a_doubling_in_almost_every_ramp():
    rng = np.random.default_rng(7)
    assert sum(halts(rng, 2.0, together=True) for _ in range(40)) >= 38


# Measured from many sightings, so its range is narrow, but twice too slow: update timers
# that do not follow the model. The figures of the backtest's three false halts with the
# estimate doubled: busy packages, their share taken at 0.42-0.56 against a true 0.64.
TWICE_TOO_SLOW = exposure.Uptake(2 * UPTAKE, 2 * UPTAKE / 1.3, 2 * UPTAKE * 1.4, sightings=1000)


def test_an_uptake_measured_twice_too_slow_halts_no_healthy_busy_ramp():
    rng = np.random.default_rng(2026)
    ramps = [
        halts(rng, 1.0, together=True, per_day=2000.0, estimate=TWICE_TOO_SLOW) for _ in range(60)
    ]
    assert not any(ramps)


def test_an_uptake_measured_twice_too_slow_still_halts_a_doubling():
    rng = np.random.default_rng(7)
    ramps = [
        halts(rng, 2.0, together=True, per_day=2000.0, estimate=TWICE_TOO_SLOW) for _ in range(20)
    ]
    assert all(ramps)


def test_machines_that_ignore_phasing_do_not_make_the_anchored_test_halt():
    # 5 % of machines take the update at once: early in a fast ramp more machines run it
    # than any uptake of the phased ones can explain, and at 2,000 crashes a day the
    # anchored test alone read that as a rise in 3 of 40 ramps.
    rng = np.random.default_rng(2026)
    ramps = [halts(rng, 1.0, per_day=2000.0, ignorers=0.05, uptake=2.0) for _ in range(40)]
    assert not any(ramps)
