"""The simulated archive: deterministic, realistic enough, and safe to seed twice."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from packages.sources.simulator import Simulator

NOW = datetime(2026, 12, 3, 7, 0, tzinfo=UTC)


def snapshot(simulator: Simulator):
    return [
        (p.release, p.source_package, p.version, p.date_published, p.status)
        for r in simulator.releases()
        for p in simulator.publications(release=r.codename, since=NOW - timedelta(days=20), now=NOW)
    ]


def test_the_same_seed_makes_the_same_archive_and_another_seed_another():
    assert snapshot(Simulator(seed=7, packages=40)) == snapshot(Simulator(seed=7, packages=40))
    assert snapshot(Simulator(seed=7, packages=40)) != snapshot(Simulator(seed=8, packages=40))


def test_an_archive_ten_times_todays_has_as_many_distinct_package_names():
    # Names drawn from word pairs run out at 6,400; the bench's 53,340 are numbered beyond.
    names = Simulator(seed=1, packages=53_340).packages

    assert len(names) == len(set(names)) == 53_340
    assert names[:5_334] == Simulator(seed=1, packages=5_334).packages  # today's, unchanged


def test_versions_look_like_stable_release_updates():
    versions = [
        v for *_, v, _, _ in [(*s[:2], s[2], s[3], s[4]) for s in snapshot(Simulator(packages=40))]
    ]
    assert versions
    assert all(re.fullmatch(r"\d+\.\d+\.\d+-\d+ubuntu\d+\.\d+", v) for v in versions)


def test_some_updates_carry_each_kind_of_regression():
    simulator = Simulator(packages=300)
    kinds = {u.regression.kind for u in simulator.uploads(until=NOW) if u.regression}
    assert kinds == {"new_bucket", "increased_rate", "false_alarm", "install_failure"}


def test_a_calm_past_is_the_same_world_without_regressions_before_it():
    calm_until = NOW - timedelta(days=7)
    plain = list(Simulator(packages=80).uploads(until=NOW))
    calm = list(Simulator(packages=80, calm_until=calm_until).uploads(until=NOW))

    def shape(uploads):
        return [(u.release, u.package, u.version, u.published, u.superseded) for u in uploads]

    assert shape(calm) == shape(plain)
    assert any(u.regression for u in plain if u.published < calm_until)
    assert not any(u.regression for u in calm if u.published < calm_until)
    assert [u.regression for u in calm if u.published >= calm_until] == [
        u.regression for u in plain if u.published >= calm_until
    ]


def test_an_update_that_fails_to_install_is_fixed_by_a_new_upload_within_days():
    failing = [
        u
        for u in Simulator(packages=300).uploads(until=NOW)
        if u.regression is not None and u.regression.kind == "install_failure"
    ]

    assert failing
    assert all(u.superseded - u.published <= timedelta(days=4) for u in failing)
