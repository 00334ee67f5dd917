"""The four-eyes rule, one service on every write path: what one archive admin alone
cannot make take effect, however it is asked (an action, a scheduled change, a policy)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError

from packages.holds import HoldReason
from packages.models import (
    PhasingState,
    Policy,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
)
from packages.roles import ARCHIVE_ADMINS
from packages.services import (
    policy_set,
    publication_resume,
    publication_set_percentage,
)
from packages.services.scheduled import (
    AWAITING_SIGN_OFF,
    scheduled_change_create,
    scheduled_change_sign_off,
    scheduled_changes_run_due,
)
from packages.services.sign_off import SignOffRequired, sign_off_required
from tests.conftest import _client_for, group_named
from tests.factories import NOW, PublicationFactory, UserFactory
from tests.packages.admin.admin_actions import apply_action

pytestmark = pytest.mark.django_db

LATER = NOW + timedelta(hours=2)


@pytest.fixture(autouse=True)
def sign_off_on(settings):
    settings.PHASING_SIGN_OFF_REQUIRED = True


def _admin(username: str):
    user = UserFactory(username=username, is_staff=True)
    user.groups.add(group_named(ARCHIVE_ADMINS))
    return user


@pytest.fixture
def alice(db):
    return _admin("alice")


@pytest.fixture
def bob(db):
    return _admin("bob")


@pytest.fixture
def halted(db):
    return PublicationFactory(
        state=PhasingState.HALTED, hold_reason=HoldReason.PROBLEMS, phased_update_percentage=0
    )


def test_set_99_on_an_update_the_controller_halted_needs_a_second_admin(alice, bob, halted):
    with pytest.raises(SignOffRequired, match="controller halted"):
        publication_set_percentage(publication=halted, percentage=99, actor=alice, reason="go")
    with pytest.raises(SignOffRequired, match="cannot also sign off"):
        publication_set_percentage(
            publication=halted, percentage=99, actor=alice, reason="go", signed_off_by=alice
        )

    publication_set_percentage(
        publication=halted, percentage=99, actor=alice, reason="go", signed_off_by=bob
    )

    halted.refresh_from_db()
    assert (halted.state, halted.phased_update_percentage) == (PhasingState.PHASING, 99)


def test_the_set_percentage_action_on_a_controller_halt_waits_for_a_sign_off(alice, halted):
    apply_action(_client_for(alice), "set_percentage", [halted], percentage=99, reason="go")

    halted.refresh_from_db()
    assert halted.state == PhasingState.HALTED
    change = ScheduledChange.objects.get()
    assert (change.action, change.percentage, change.outcome) == ("set", 99, AWAITING_SIGN_OFF)


def test_a_scheduled_change_is_judged_again_when_it_runs(alice, bob):
    publication = PublicationFactory(phased_update_percentage=30)
    change = scheduled_change_create(
        action=ScheduledAction.SET,
        publication=publication,
        percentage=50,
        run_at=LATER,
        actor=alice,
        reason="faster",
        now=NOW,
    )
    assert change.outcome == ""  # nothing to sign off while the update phases
    # Then the controller halts it on problems, before the change's time.
    publication.state, publication.hold_reason = PhasingState.HALTED, HoldReason.PROBLEMS
    publication.phased_update_percentage = 0
    publication.save()

    assert scheduled_changes_run_due(now=LATER) == []

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)
    change.refresh_from_db()
    assert (change.state, change.outcome) == (ScheduledState.PENDING, AWAITING_SIGN_OFF)
    scheduled_change_sign_off(change=change, actor=bob, now=LATER)
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 50)


@pytest.mark.parametrize(
    ("fields", "needed"),
    [
        ({"start_percentage": 100, "step": 100}, True),
        ({"start_percentage": 10, "step": 100}, True),
        ({"start_percentage": 10, "step": 60}, True),
        ({"schedule": [1, 100]}, True),
        ({"start_percentage": 10, "step": 10}, False),
        ({"start_percentage": 100, "step": 100, "ceiling": 99}, False),
    ],
)
def test_a_policy_that_releases_everything_under_it_needs_a_sign_off(alice, bob, fields, needed):
    publication = PublicationFactory()
    proposed = ScheduledChange(
        action=ScheduledAction.POLICY, source_package=publication.source_package, policy=fields
    )
    assert bool(sign_off_required(proposed)) is needed

    if needed:
        with pytest.raises(SignOffRequired, match="100% in one step"):
            policy_set(scope_package=publication.source_package, actor=alice, reason="r", **fields)
        assert not Policy.objects.exists()
    policy_set(
        scope_package=publication.source_package,
        actor=alice,
        reason="r",
        signed_off_by=bob,
        **fields,
    )


def test_the_change_policy_action_schedules_a_release_all_policy_for_a_sign_off(alice):
    publication = PublicationFactory()

    apply_action(
        _client_for(alice),
        "change_policy",
        [publication],
        scope="release",
        start_percentage=100,
        step=100,
        interval="06:00:00",
        ceiling=100,
        min_previous_reports=0,
        judge="ubuntu",
        insufficient_max_hold="48:00:00",
        reason="ship it",
    )

    assert not Policy.objects.exists()
    change = ScheduledChange.objects.get()
    assert (change.action, change.outcome) == ("policy", AWAITING_SIGN_OFF)
    assert scheduled_changes_run_due(now=LATER) == []
    assert not Policy.objects.exists()


def test_the_policy_form_refuses_a_release_all_policy(alice):
    from django.urls import reverse

    publication = PublicationFactory()
    response = _client_for(alice).post(
        reverse("admin:packages_policy_add"),
        {
            "release": publication.release.pk,
            "start_percentage": 100,
            "step": 100,
            "interval": "06:00:00",
            "ceiling": 100,
            "min_previous_reports": 0,
            "judge": "ubuntu",
            "insufficient_max_hold": "48:00:00",
            "unknown_version": "hold",
            "reason": "ship it",
        },
    )

    assert response.status_code == 200
    assert "second archive admin" in response.content.decode()
    assert not Policy.objects.exists()


def test_a_signer_who_may_no_longer_change_phasing_does_not_count(alice, halted):
    former = UserFactory(username="former", is_staff=True)
    with pytest.raises(ValidationError, match="may no longer change phasing"):
        publication_resume(publication=halted, actor=alice, reason="go", signed_off_by=former)
