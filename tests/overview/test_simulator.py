"""The simulated archive: deterministic, realistic enough, and safe to seed twice."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from overview.models import CrashReport, Override, Problem
from overview.sources.simulator import SimulatedCrashFeed
from packages.models import PhasingEvent, PhasingState, Publication
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


def test_versions_look_like_stable_release_updates():
    versions = [
        v for *_, v, _, _ in [(*s[:2], s[2], s[3], s[4]) for s in snapshot(Simulator(packages=40))]
    ]
    assert versions
    assert all(re.fullmatch(r"\d+\.\d+\.\d+-\d+ubuntu\d+\.\d+", v) for v in versions)


def test_crash_reports_of_an_hour_do_not_depend_on_the_window_asked_for():
    simulator = Simulator(packages=60)
    short = {r.external_id for r in SimulatedCrashFeed(simulator).reports(since=NOW - timedelta(hours=3), now=NOW)}
    long = {
        r.external_id
        for r in SimulatedCrashFeed(Simulator(packages=60)).reports(since=NOW - timedelta(hours=9), now=NOW)
    }
    assert short and short <= long


def test_some_updates_carry_each_kind_of_regression():
    simulator = Simulator(packages=300)
    kinds = {u.regression.kind for u in simulator.uploads(until=NOW) if u.regression}
    assert kinds == {"new_bucket", "increased_rate", "false_alarm"}


SEED = ("--packages", "150", "--days", "4", "--step-hours", "2", "--baseline-days", "3")


@pytest.mark.django_db
def test_seed_demo_replays_the_controller_and_a_rerun_makes_no_duplicates(
    capsys, archive_admin_user, triager_user
):
    call_command("seed_demo", *SEED)
    assert Publication.objects.filter(state=PhasingState.PHASING).exists()
    assert Publication.objects.filter(state=PhasingState.COMPLETE).exists()
    assert PhasingEvent.objects.filter(kind="advanced").exists()
    # Real regressions halt; false alarms are overridden by the triager and resumed.
    assert Publication.objects.filter(state=PhasingState.HALTED).exists()
    assert Problem.objects.filter(kind="new_bucket").exists()
    assert Override.objects.filter(created_by=triager_user).exists()
    assert PhasingEvent.objects.filter(kind="resumed", actor=archive_admin_user).exists()

    counts = (Publication.objects.count(), PhasingEvent.objects.count(), CrashReport.objects.count())
    call_command("seed_demo", *SEED)
    assert (Publication.objects.count(), PhasingEvent.objects.count(), CrashReport.objects.count()) == counts
    assert "up to date" in capsys.readouterr().out
