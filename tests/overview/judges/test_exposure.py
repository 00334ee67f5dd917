"""The share of machines on a new version: from the percentage history and a measured uptake."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from overview.judges import exposure, installs, release_uptake

T0 = datetime(2026, 1, 5, tzinfo=UTC)
RAMP = [min(100, 10 + 10 * (h // 6)) for h in range(60)]


def test_with_the_margin_the_regression_test_s_share_allows_for_twice_as_fast_as_measured():
    # A thousand sightings make the measured range narrow; real update timers need not
    # follow the model, so where it decides together the regression test still takes an
    # uptake twice as fast.
    measured = exposure.Uptake(16.0, 14.0, 18.0, sightings=1000)
    high, low, middle = exposure.bracketed_shares(
        RAMP, measured, ignorers=0.0, margin=exposure.SHAPE_MARGIN
    )
    alone, _, _ = exposure.bracketed_shares(RAMP, measured, ignorers=0.0)
    assert np.allclose(alone, installs.installed_shares(RAMP, 14.0))
    assert np.allclose(high, installs.installed_shares(RAMP, 8.0))
    assert np.allclose(low, installs.installed_shares(RAMP, 18.0))
    assert np.allclose(middle, installs.installed_shares(RAMP, 16.0))
    # A range already wider than that stands.
    unsure = exposure.prior(16.0)
    wide, _, _ = exposure.bracketed_shares(RAMP, unsure, ignorers=0.0, margin=exposure.SHAPE_MARGIN)
    assert np.allclose(wide, installs.installed_shares(RAMP, unsure.fast))


def test_machines_that_ignore_phasing_count_on_the_new_version_for_the_regression_test():
    measured = exposure.Uptake(16.0, 8.0, 18.0, sightings=1000)
    high, _, _ = exposure.bracketed_shares([0] * 10, measured, ignorers=0.05)
    # At 0 % only draw 0 may take it, and every machine that ignores phasing.
    plain = installs.installed_shares([0] * 10, 8.0)
    assert np.allclose(high, 0.05 + 0.95 * plain)


def test_sightings_in_other_packages_reports_measure_the_uptake():
    truth = 14.0
    rng = np.random.default_rng(3)
    shares = installs.installed_shares(RAMP, truth)
    seen = rng.poisson(6, size=len(RAMP))
    new = rng.binomial(seen, shares)
    found = exposure.fit(
        exposure.Sightings(RAMP, new.tolist(), (seen - new).tolist()), exposure.prior(4.0)
    )
    assert found.fast <= truth <= found.slow
    assert found.measured and found.sightings == seen.sum()
    assert found.slow / found.fast < 3


def test_without_sightings_the_belief_stands_and_its_range_is_wide():
    belief = exposure.prior(8.0)
    found = exposure.fit(exposure.Sightings(RAMP, [0] * 60, [0] * 60), belief)
    assert found == belief and not found.measured
    assert found.fast < 2 and found.slow > 40


def measured_updates(rng, uptakes, per_hour=5):
    updates = []
    for uptake in uptakes:
        shares = installs.installed_shares(RAMP, uptake)
        seen = rng.poisson(per_hour, size=len(RAMP))
        new = rng.binomial(seen, shares)
        updates.append((exposure.Sightings(RAMP, new.tolist(), (seen - new).tolist()), None))
    return updates


def test_a_release_pools_what_its_updates_measured_and_widens_it_for_one_update():
    rng = np.random.default_rng(4)
    release = release_uptake.pooled(measured_updates(rng, [10.0] * 4), exposure.prior(30.0))
    assert 7 < release.hours < 14
    # Four updates cannot say how far one more may differ: the range stays wide.
    assert release.fast < 5 and release.slow > 20


def test_updates_of_a_release_that_agree_narrow_the_range_and_updates_that_differ_do_not():
    """Machines of one release run the same update timers: where the release's updates
    measured the same uptake, one more update is believed close to it; where they
    measured uptakes from an hour to two days, it may be anywhere among them."""
    rng = np.random.default_rng(5)
    alike = release_uptake.pooled(measured_updates(rng, [10.0] * 10), exposure.prior(30.0))
    spread = release_uptake.pooled(
        measured_updates(rng, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 3.0, 24.0, 6.0]),
        exposure.prior(30.0),
    )
    assert alike.fast <= 10.0 <= alike.slow
    assert alike.slow / alike.fast < 8 < spread.slow / spread.fast
    assert spread.fast < 1.5 and spread.slow > 40


def test_the_previous_versions_crashes_falling_away_measure_the_uptake():
    truth = 30.0
    rng = np.random.default_rng(5)
    hours = [min(100, 10 + 10 * (h // 6)) for h in range(72)]
    shares = installs.installed_shares(hours, truth)
    per_day = 1500
    history = rng.poisson(per_day, size=15).tolist()
    old = rng.poisson(per_day / 24 * (1 - shares)).tolist()
    deficit = exposure.Deficit.from_history(history, old)
    nothing_seen = exposure.Sightings(hours, [0] * 72, [0] * 72)
    found = exposure.fit(nothing_seen, exposure.prior(4.0), deficit)
    assert found.fast <= truth <= found.slow
    assert found.measured and found.deficit_hours == 72 and not found.sightings


@pytest.mark.parametrize(
    ("seen", "fell"), [(True, False), (False, True), (True, True), (False, False)]
)
def test_an_update_s_uptake_from_its_release_part_is_the_one_fitting_it_again_gives(seen, fell):
    """The judge fits each update from the part it read for its release's belief (its
    sightings' and deficit's likelihood), not by reading them a second time: the same
    uptake to the last bit, with sightings, a deficit, both or neither."""
    rng = np.random.default_rng(11)
    hours = [min(100, 10 + 10 * (h // 6)) for h in range(48)]
    shares = installs.installed_shares(hours, 12.0)
    count = rng.poisson(5, size=48) if seen else np.zeros(48, dtype=int)
    new = rng.binomial(count, shares)
    sightings = exposure.Sightings(hours, new.tolist(), (count - new).tolist())
    history = rng.poisson(900, size=15).tolist()
    old = rng.poisson(900 / 24 * (1 - shares)).tolist()
    deficit = exposure.Deficit.from_history(history, old) if fell else None
    belief = exposure.prior(6.0)
    part = release_uptake.part_of(sightings, deficit)
    assert release_uptake.fitted(part, belief) == exposure.fit(sightings, belief, deficit)
    assert (part is None) == (not seen and not fell)


def test_how_the_crashes_fall_within_a_day_tells_a_fast_uptake_from_a_slow_one():
    """The day's total alone cannot tell one hour from eight; the hours after each step can."""
    rng = np.random.default_rng(8)
    hours = [min(100, 10 + 10 * (h // 6)) for h in range(24)]
    per_day = 3000
    history = rng.poisson(per_day, size=15).tolist()
    found = {}
    for truth in (1.0, 8.0):
        old = rng.poisson(per_day / 24 * (1 - installs.installed_shares(hours, truth))).tolist()
        deficit = exposure.Deficit.from_history(history, old)
        found[truth] = exposure.fit(
            exposure.Sightings(hours, [0] * 24, [0] * 24), exposure.prior(4.0), deficit
        )
    assert found[1.0].slow < 8.0 < found[8.0].slow
    assert found[8.0].fast > 1.0


def test_a_busy_hour_is_not_read_as_machines_coming_back():
    """Other packages' crashes say how busy each hour is; without them, a busy afternoon
    on the previous version would look like machines that never left."""
    rng = np.random.default_rng(0)
    hours = [min(100, 10 + 10 * (h // 6)) for h in range(48)]
    busy = [2.0 if 12 <= h % 24 < 18 else 2 / 3 for h in range(48)]
    per_day = 3000
    history = rng.poisson(per_day, size=15).tolist()
    truth = 4.0
    staying = 1 - installs.installed_shares(hours, truth)
    old = rng.poisson(per_day / 24 * staying * np.array(busy)).tolist()
    nothing_seen = exposure.Sightings(hours, [0] * 48, [0] * 48)

    told = exposure.fit(
        nothing_seen, exposure.prior(4.0), exposure.Deficit.from_history(history, old, busy)
    )
    untold = exposure.fit(
        nothing_seen, exposure.prior(4.0), exposure.Deficit.from_history(history, old)
    )

    assert told.fast <= truth <= told.slow
    assert not untold.fast <= truth <= untold.slow


def test_a_noisy_history_makes_the_fall_count_for_less():
    steady = exposure.Deficit.from_history([1000, 1010, 990, 1005, 995, 1000, 1002, 998], [700])
    noisy = exposure.Deficit.from_history([600, 1400, 900, 1300, 700, 1100, 800, 1200], [700])
    assert steady is not None and noisy is not None
    assert noisy.spread > 5 * steady.spread
    # A quiet package's days cannot show how much they differ: held to a quarter.
    quiet = exposure.Deficit.from_history([3, 5, 2, 4, 3, 6, 4, 3, 2, 5, 4, 3, 4, 2, 3], [1])
    assert quiet is not None and quiet.spread == exposure.MAX_DAY_TO_DAY
    # Less than a week of history says too little about how much days differ.
    assert exposure.Deficit.from_history([1000] * 5, [700]) is None


def release_days(rng, per_day, days=15, weekend=0.5, first_weekday=0):
    """How busy each of the days before the update was for every package of the release
    (weekends quieter), and a package's crashes on them at `per_day` on an average day."""
    busy = np.array([weekend if (first_weekday + d) % 7 >= 5 else 1.0 for d in range(days)])
    busy = busy / busy.mean()
    return busy, rng.poisson(per_day * busy).tolist()


def test_the_release_s_other_packages_make_weekends_and_shocks_cancel():
    """Against the other packages' same days and hours, a history with quiet weekends and
    a release-wide 3x shock after the update still measure who moved: against its own days
    alone the shock reads as machines that never left."""
    rng = np.random.default_rng(11)
    busy_days, history = release_days(rng, 2000)
    others_history = rng.poisson(3000 * busy_days).tolist()
    hours = [min(100, 10 + 10 * (h // 6)) for h in range(48)]
    shock = np.where((np.arange(48) >= 24) & (np.arange(48) < 36), 3.0, 1.0)
    truth = 4.0
    staying = 1 - installs.installed_shares(hours, truth)
    old = rng.poisson(2000 / 24 * staying * shock).tolist()
    others = rng.poisson(3000 / 24 * shock).tolist()
    nothing_seen = exposure.Sightings(hours, [0] * 48, [0] * 48)

    relative = exposure.Deficit.relative_to(history, others_history, old, others)
    alone = exposure.Deficit.from_history(history, old)

    assert relative is not None and relative.relative and alone is not None
    # The weekends cancel: what is left of how much days differ is the package's own.
    assert relative.spread < alone.spread / 3
    within = exposure.fit(nothing_seen, exposure.prior(4.0), relative)
    without = exposure.fit(nothing_seen, exposure.prior(4.0), alone)
    assert within.fast <= truth <= within.slow
    assert not without.fast <= truth <= without.slow


def test_too_few_reports_of_other_packages_say_nothing():
    history = [1000] * 15
    assert exposure.Deficit.relative_to(history, [20] * 15, [40] * 24, [1] * 24) is None
    assert exposure.Deficit.relative_to(history, [100] * 14 + [0], [40] * 24, [4] * 24) is None
    found = exposure.Deficit.relative_to(history, [100] * 15, [40] * 24, [4] * 24)
    assert found is not None and found.expected == [pytest.approx(40.0)] * 24
