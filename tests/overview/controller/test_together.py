"""Dependent updates phase together: the controller never lets one run ahead of what it needs.

gnome-shell's new version Depends on mutter's new version; systemd's Breaks the old
netplan.io. apt draws each source separately, so the controller holds them together.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from overview.evidence.sources.base import CrashAnswer
from packages.holds import HoldReason, hold_words
from packages.models import EventKind, PhasingState, Publication
from tests.factories import PolicyFactory, PublicationFactory, ReleaseFactory, SourcePackageFactory
from tests.overview.controller.fakes import HOURS, T0, ScriptedCrashes, new_bucket, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.fixture
def crashes():
    return ScriptedCrashes()


def mutter(release, *, percentage=10, last_increase_at=T0, name="mutter", **extra):
    return PublicationFactory(
        release=release,
        source_package=SourcePackageFactory(name=name),
        version="46.2-1ubuntu0.24.04.1",
        previous_version="46.0-1ubuntu9",
        binaries=["mutter", "libmutter-14-0", "gir1.2-mutter-14"],
        phased_update_percentage=percentage,
        last_increase_at=last_increase_at,
        **extra,
    )


def gnome_shell(
    release,
    *,
    percentage=10,
    last_increase_at=T0 - 6 * HOURS,
    name="gnome-shell",
    needs="libmutter-14-0",
    version="46.2-1ubuntu0.24.04.1",
):
    return PublicationFactory(
        release=release,
        source_package=SourcePackageFactory(name=name),
        version="46.0-0ubuntu6~24.04.4",
        previous_version="46.0-0ubuntu6~24.04.3",
        binaries=[name],
        relations=[["depends", name, needs, ">=", version]],
        phased_update_percentage=percentage,
        last_increase_at=last_increase_at,
    )


def test_an_update_never_runs_ahead_of_the_one_it_needs(crashes):
    release = ReleaseFactory()
    needed = mutter(release, last_increase_at=T0)  # its next step is not due yet
    dependent = gnome_shell(release, last_increase_at=T0 - 6 * HOURS)  # due

    decisions = tick(crashes, T0 + HOURS)

    dependent.refresh_from_db()
    assert dependent.phased_update_percentage == 10
    assert dependent.hold_reason == HoldReason.DEPENDENCY
    assert hold_words(dependent.hold_reason, dependent.hold_detail) == (
        "held with mutter 46.2-1ubuntu0.24.04.1: at 10% "
        "(gnome-shell Depends on libmutter-14-0 (>= 46.2-1ubuntu0.24.04.1))"
    )
    assert "held with mutter" in str(next(d for d in decisions if d.publication_id == dependent.pk))
    needed.refresh_from_db()
    assert needed.phased_update_percentage == 10


def test_they_advance_together_in_one_tick_and_never_further_than_the_other(crashes):
    release = ReleaseFactory()
    needed = mutter(release, percentage=15, last_increase_at=T0 - 6 * HOURS)
    dependent = gnome_shell(release, percentage=10, last_increase_at=T0 - 6 * HOURS)

    tick(crashes, T0 + HOURS)

    needed.refresh_from_db()
    dependent.refresh_from_db()
    assert (needed.phased_update_percentage, dependent.phased_update_percentage) == (25, 20)
    # At most the other's, even when its own step would take it further.
    jammy = ReleaseFactory(codename="jammy", version="22.04")
    dependent_ahead = gnome_shell(jammy, percentage=10, last_increase_at=T0 - 5 * HOURS)
    mutter(jammy, percentage=15, last_increase_at=T0 + HOURS)
    tick(crashes, T0 + 2 * HOURS)
    dependent_ahead.refresh_from_db()
    assert dependent_ahead.phased_update_percentage == 15
    assert "held with mutter" in dependent_ahead.events.get(kind=EventKind.ADVANCED).reason


def test_a_halt_of_the_needed_update_holds_the_dependent_with_that_reason(crashes):
    release = ReleaseFactory()
    needed = mutter(release, percentage=30, last_increase_at=T0 - 6 * HOURS)
    dependent = gnome_shell(release, percentage=20)
    crashes.answers["mutter"] = CrashAnswer(problems=(new_bucket("/usr/bin/gnome-shell:11:meta"),))

    tick(crashes, T0 + HOURS)

    needed.refresh_from_db()
    dependent.refresh_from_db()
    assert (needed.state, needed.phased_update_percentage) == (PhasingState.HALTED, 0)
    assert (dependent.state, dependent.phased_update_percentage) == (PhasingState.PHASING, 20)
    assert hold_words(dependent.hold_reason, dependent.hold_detail).startswith(
        "held with mutter 46.2-1ubuntu0.24.04.1: halted"
    )
    # It stays held at the next ticks, however long: only the other's resumption frees it.
    tick(crashes, T0 + 13 * HOURS)
    dependent.refresh_from_db()
    assert dependent.phased_update_percentage == 20


def test_a_pause_of_the_needed_update_holds_the_dependent(crashes):
    release = ReleaseFactory()
    mutter(release, percentage=50, state=PhasingState.PAUSED)
    dependent = gnome_shell(release, percentage=20)

    tick(crashes, T0 + HOURS)

    dependent.refresh_from_db()
    assert dependent.phased_update_percentage == 20
    assert dependent.hold_detail.startswith("mutter 46.2-1ubuntu0.24.04.1: paused")


def test_the_dependent_never_completes_before_what_it_needs(crashes):
    release = ReleaseFactory()
    needed = mutter(release, percentage=90, last_increase_at=T0)
    dependent = gnome_shell(release, percentage=90)

    tick(crashes, T0 + HOURS)
    dependent.refresh_from_db()
    assert (dependent.state, dependent.phased_update_percentage) == (PhasingState.PHASING, 90)

    tick(crashes, T0 + 7 * HOURS)  # both due: they reach 100% together
    needed.refresh_from_db()
    dependent.refresh_from_db()
    assert needed.phased_update_percentage == dependent.phased_update_percentage == 100
    tick(crashes, T0 + 7 * HOURS + timedelta(days=3))  # and complete together
    needed.refresh_from_db()
    dependent.refresh_from_db()
    assert needed.state == dependent.state == PhasingState.COMPLETE


def test_a_breaks_of_the_old_version_holds_the_one_that_breaks_it(crashes):
    release = ReleaseFactory()
    PublicationFactory(
        release=release,
        source_package=SourcePackageFactory(name="netplan.io"),
        version="1.1.2-2~ubuntu24.04.1",
        previous_version="1.0-2ubuntu1.2",
        binaries=["netplan.io", "libnetplan1"],
        phased_update_percentage=90,
        last_increase_at=T0,
    )
    systemd = PublicationFactory(
        release=release,
        source_package=SourcePackageFactory(name="systemd"),
        version="255.4-1ubuntu8.6",
        previous_version="255.4-1ubuntu8.5",
        binaries=["systemd"],
        relations=[["breaks", "systemd", "netplan.io", "<<", "1.1~"]],
        phased_update_percentage=90,
        last_increase_at=T0 - 6 * HOURS,
    )

    tick(crashes, T0 + HOURS)

    systemd.refresh_from_db()
    assert (systemd.state, systemd.phased_update_percentage) == (PhasingState.PHASING, 90)
    assert "systemd Breaks netplan.io (<< 1.1~)" in systemd.hold_detail


def test_a_chain_is_held_link_by_link(crashes):
    release = ReleaseFactory()
    mutter(release, percentage=10, last_increase_at=T0)
    shell = gnome_shell(release, percentage=10)
    extension = gnome_shell(
        release,
        percentage=10,
        name="gnome-shell-extension-ubuntu-dock",
        needs="gnome-shell",
        version="46.0-0ubuntu6~24.04.4",
    )

    tick(crashes, T0 + HOURS)

    shell.refresh_from_db()
    extension.refresh_from_db()
    assert shell.phased_update_percentage == extension.phased_update_percentage == 10
    assert extension.hold_detail.startswith("gnome-shell 46.0-0ubuntu6~24.04.4: at 10%")


def test_a_policy_can_let_a_package_phase_alone(crashes):
    release = ReleaseFactory()
    mutter(release, last_increase_at=T0)
    dependent = gnome_shell(release)
    PolicyFactory(source_package=dependent.source_package, phase_with_dependencies=False)

    tick(crashes, T0 + HOURS)

    dependent.refresh_from_db()
    assert dependent.phased_update_percentage == 20


def test_a_second_tick_changes_nothing_more(crashes):
    release = ReleaseFactory()
    mutter(release, percentage=15, last_increase_at=T0 - 6 * HOURS)
    dependent = gnome_shell(release, percentage=10)

    tick(crashes, T0 + HOURS)
    tick(crashes, T0 + HOURS)

    dependent.refresh_from_db()
    assert dependent.phased_update_percentage == 20
    assert dependent.events.filter(kind=EventKind.ADVANCED).count() == 1


@pytest.mark.parametrize("pairs", [2, 12])
def test_groups_cost_no_query_of_their_own(crashes, pairs):
    def count(groups):
        Publication.objects.all().delete()
        release = ReleaseFactory()
        for n in range(groups):
            mutter(release, last_increase_at=T0, name=f"mutter-{n}")
            gnome_shell(release, name=f"gnome-shell-{n}")
        with CaptureQueriesContext(connection) as queries:
            tick(crashes, T0 + HOURS)
        assert Publication.objects.filter(hold_reason=HoldReason.DEPENDENCY).count() == groups
        return len(queries)

    baseline = count(1)
    assert count(pairs) == baseline
