"""Scheduled changes in the admin: made by the usual actions with a "Run at" time, listed,
cancelled and signed off by archive admins only, each with a reason."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from packages.holds import HoldReason
from packages.models import (
    EventKind,
    PhasingEvent,
    PhasingState,
    Policy,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
)
from packages.roles import ARCHIVE_ADMINS
from packages.services.scheduled import scheduled_changes_run_due
from tests.conftest import _client_for, group_named
from tests.factories import NOW, PublicationFactory, ScheduledChangeFactory, UserFactory
from tests.packages.admin.admin_actions import apply_action

pytestmark = pytest.mark.django_db

CHANGES = "admin:packages_scheduledchange_changelist"
AT = "2026-12-03 18:00"
LATER = NOW + timedelta(hours=6)


@pytest.fixture(autouse=True)
def at_noon():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def second_admin_user(db):
    user = UserFactory(username="secondadmin", is_staff=True)
    user.groups.add(group_named(ARCHIVE_ADMINS))
    return user


@pytest.fixture
def second_admin(second_admin_user):
    return _client_for(second_admin_user)


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_a_pause_with_a_time_is_scheduled_and_runs_then(
    archive_admin, archive_admin_user, publication
):
    response = apply_action(archive_admin, "pause", [publication], reason="weekend", run_at=AT)

    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    change = ScheduledChange.objects.get()
    assert (change.action, change.run_at, change.created_by) == (
        ScheduledAction.PAUSE,
        LATER,
        archive_admin_user,
    )
    assert any("scheduled for 2026-12-03 18:00 UTC" in m for m in _messages(response))

    scheduled_changes_run_due(now=LATER)
    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED


def test_set_percentage_freeze_and_policy_take_a_time_too(archive_admin, publication):
    apply_action(
        archive_admin, "set_percentage", [publication], percentage=40, reason="r", run_at=AT
    )
    apply_action(archive_admin, "freeze_release", [publication], reason="r", run_at=AT)
    apply_action(
        archive_admin,
        "change_policy",
        [publication],
        scope="package",
        start_percentage=10,
        step=20,
        interval="06:00:00",
        ceiling=100,
        min_previous_reports=0,
        judge="ubuntu",
        insufficient_max_hold="48:00:00",
        reason="faster",
        run_at=AT,
    )

    assert sorted(ScheduledChange.objects.values_list("action", flat=True)) == [
        "freeze",
        "policy",
        "set",
    ]
    assert not Policy.objects.exists()
    publication.release.refresh_from_db()
    assert not publication.release.frozen

    scheduled_changes_run_due(now=LATER)
    publication.refresh_from_db()
    publication.release.refresh_from_db()
    assert publication.phased_update_percentage == 40
    assert publication.release.frozen
    assert Policy.objects.get(source_package=publication.source_package).step == 20


def test_a_time_that_has_passed_is_refused(archive_admin, publication):
    response = apply_action(
        archive_admin, "pause", [publication], reason="x", run_at="2026-12-03 10:00"
    )

    assert response.context["form"].errors["run_at"] == ["That time has passed."]
    assert not ScheduledChange.objects.exists()


def test_the_list_shows_each_change_with_who_and_its_state(archive_admin, publication):
    ScheduledChangeFactory(publication=publication)

    html = archive_admin.get(reverse(CHANGES)).content.decode()

    assert "tool 1.2-1ubuntu0.1 in noble" in html
    assert "hold over the weekend" in html
    assert "scheduler" in html


def test_an_archive_admin_cancels_with_a_reason(archive_admin, archive_admin_user, publication):
    change = ScheduledChangeFactory(publication=publication)

    apply_action(archive_admin, "cancel", [change], CHANGES, reason="  ")
    assert ScheduledChange.objects.get().state == ScheduledState.PENDING  # no reason, no cancel
    apply_action(archive_admin, "cancel", [change], CHANGES, reason="bug fixed")

    change.refresh_from_db()
    assert (change.state, change.cancelled_by, change.cancel_reason) == (
        ScheduledState.CANCELLED,
        archive_admin_user,
        "bug fixed",
    )
    assert "bug fixed" in LogEntry.objects.get(object_id=str(change.pk)).get_change_message()
    assert scheduled_changes_run_due(now=LATER) == []


def test_triagers_and_anonymous_people_never_reach_scheduled_changes(
    triager, anonymous, publication
):
    change = ScheduledChangeFactory(publication=publication)
    for client in (triager, anonymous):
        assert client.get(reverse(CHANGES)).status_code == 302  # to the admin login
        apply_action(client, "cancel", [change], CHANGES, reason="no")
    change.refresh_from_db()
    assert change.state == ScheduledState.PENDING


def test_a_staff_member_without_the_archive_admin_role_is_refused(publication):
    staff = _client_for(UserFactory(username="staffonly", is_staff=True))
    change = ScheduledChangeFactory(publication=publication)

    assert staff.get(reverse(CHANGES)).status_code == 403
    staff.post(
        reverse(CHANGES),
        {"action": "cancel", "apply": "1", "_selected_action": [change.pk], "reason": "no"},
    )
    change.refresh_from_db()
    assert change.state == ScheduledState.PENDING


# --- Sign-off -------------------------------------------------------------------------


@pytest.fixture
def sign_off_required(settings):
    settings.PHASING_SIGN_OFF_REQUIRED = True


@pytest.mark.usefixtures("sign_off_required")
def test_releasing_waits_for_a_second_admin_who_signs_it_off(
    archive_admin, archive_admin_user, second_admin, second_admin_user, publication
):
    response = apply_action(archive_admin, "release_to_everyone", [publication], reason="CVE")

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert any("awaiting a second archive admin's sign-off" in m for m in _messages(response))
    change = ScheduledChange.objects.get()

    # The admin who asked cannot sign it off.
    response = apply_action(archive_admin, "sign_off", [change], CHANGES, reason="me")
    assert any("not the one who asked" in m for m in _messages(response))
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10

    apply_action(second_admin, "sign_off", [change], CHANGES, reason="agreed, CVE-2026-1")

    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (
        100,
        PhasingState.COMPLETE,
    )
    event = PhasingEvent.objects.get(kind=EventKind.RELEASED)
    assert event.actor == archive_admin_user
    assert "requested by an archive admin" in event.reason
    assert "signed off by an archive admin" in event.reason
    change.refresh_from_db()
    assert (change.state, change.signed_off_by) == (ScheduledState.DONE, second_admin_user)


@pytest.mark.usefixtures("sign_off_required")
def test_resuming_a_controller_halt_waits_but_a_pause_resumes_at_once(archive_admin):
    halted = PublicationFactory(state=PhasingState.HALTED, hold_reason=HoldReason.PROBLEMS)
    paused = PublicationFactory(state=PhasingState.PAUSED, hold_reason=HoldReason.PAUSED)

    apply_action(archive_admin, "resume", [halted, paused], reason="fixed")

    halted.refresh_from_db()
    paused.refresh_from_db()
    assert halted.state == PhasingState.HALTED
    assert paused.state == PhasingState.PHASING
    assert ScheduledChange.objects.get().publication == halted


def test_without_the_setting_releasing_happens_at_once(archive_admin, publication):
    apply_action(archive_admin, "release_to_everyone", [publication], reason="CVE")

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 100
    assert not ScheduledChange.objects.exists()


@pytest.mark.usefixtures("sign_off_required")
def test_a_sign_off_whose_run_is_refused_says_so(archive_admin, second_admin, publication):
    apply_action(archive_admin, "release_to_everyone", [publication], reason="CVE")
    publication.state = PhasingState.SUPERSEDED
    publication.save()

    response = apply_action(
        second_admin, "sign_off", [ScheduledChange.objects.get()], CHANGES, reason="ok"
    )

    assert any("it ran and failed: cannot release" in m for m in _messages(response))
    assert ScheduledChange.objects.get().state == ScheduledState.FAILED


@pytest.mark.parametrize("count", [2, 30])
def test_the_list_costs_a_fixed_number_of_queries(archive_admin, count, django_assert_num_queries):
    for _ in range(count):
        publication = PublicationFactory()
        ScheduledChangeFactory(publication=publication, signed_off_by=UserFactory())
        ScheduledChangeFactory(
            action=ScheduledAction.FREEZE, publication=None, release=publication.release
        )
    # 1 session, 2 user, 3 user permissions, 4 group permissions, 5 filtered count, 6 full
    # count, 7 the page with targets and people joined.
    with django_assert_num_queries(7):
        response = archive_admin.get(reverse(CHANGES))
    assert response.status_code == 200
