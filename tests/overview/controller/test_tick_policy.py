"""The controller follows each update's policy: frozen releases, minimum data and time, the quiet
weekend, explicit schedules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from overview.evidence.sources.base import CrashAnswer
from packages.holds import HoldReason
from packages.models import PhasingState, Policy
from packages.services import (
    release_freeze,
    release_unfreeze,
)
from tests.factories import (
    PublicationFactory,
    UserFactory,
)
from tests.overview.controller.fakes import HOURS, T0, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_a_frozen_release_holds_and_unfreezing_goes_on_from_where_it_was(crashes):
    publication = PublicationFactory(phased_update_percentage=40, last_increase_at=T0)
    admin = UserFactory()
    release_freeze(release=publication.release, actor=admin, reason="archive incident")
    [decision] = tick(crashes, T0 + 12 * HOURS)
    assert decision.hold_reason == HoldReason.RELEASE_FROZEN
    release_unfreeze(release=publication.release, actor=admin, reason="over")
    tick(crashes, T0 + 13 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 50


def test_a_policy_can_ask_for_reports_of_the_previous_version_first(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    Policy.objects.create(source_package=publication.source_package, min_previous_reports=50)
    crashes.answers[publication.source_package.name] = CrashAnswer(previous_reports=12)
    [decision] = tick(crashes, T0 + 6 * HOURS)
    assert decision.hold_reason == HoldReason.NOT_ENOUGH_DATA
    assert "12 reports" in decision.detail


def test_a_policy_can_ask_for_a_minimum_time_at_each_step(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    Policy.objects.create(interval=timedelta(hours=1), min_time_at_percentage=timedelta(hours=3))
    [decision] = tick(crashes, T0 + 2 * HOURS)
    assert decision.hold_reason == HoldReason.NOT_ENOUGH_DATA
    tick(crashes, T0 + 3 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 20


def test_the_quiet_weekend_keeps_an_update_from_reaching_100_until_monday_noon(crashes):
    friday = datetime(2026, 12, 4, 1, 0, tzinfo=UTC)
    publication = PublicationFactory(
        phased_update_percentage=90, last_increase_at=friday - 7 * HOURS
    )
    Policy.objects.create(quiet_weekend=True)
    [decision] = tick(crashes, friday)
    assert decision.hold_reason == HoldReason.QUIET_WEEKEND
    tick(crashes, datetime(2026, 12, 7, 12, 0, tzinfo=UTC))
    publication.refresh_from_db()
    # 100% on Monday noon, still judged there (Rules.watch_at_full).
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 100)


def test_an_explicit_schedule_is_followed_one_step_a_day(crashes):
    publication = PublicationFactory(phased_update_percentage=1, last_increase_at=T0)
    Policy.objects.create(
        release=publication.release, schedule=[1, 2, 5, 10, 20, 50, 100], interval=timedelta(days=1)
    )
    seen = []
    for day in range(1, 7):
        tick(crashes, T0 + timedelta(days=day))
        publication.refresh_from_db()
        seen.append(publication.phased_update_percentage)
    assert seen == [2, 5, 10, 20, 50, 100]


def test_a_source_that_cannot_count_previous_reports_is_not_held_for_them(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    Policy.objects.create(min_previous_reports=50)
    crashes.answers[publication.source_package.name] = CrashAnswer(previous_reports=None)
    [decision] = tick(crashes, T0 + 6 * HOURS)
    assert decision.action == "advance"
