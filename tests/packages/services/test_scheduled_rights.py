"""A scheduled change does not outlive its author's right to change phasing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError

from packages.models import EventKind, PhasingEvent, ScheduledAction, ScheduledState
from packages.roles import ARCHIVE_ADMINS
from packages.services.scheduled import (
    AWAITING_SIGN_OFF,
    scheduled_change_create,
    scheduled_change_sign_off,
    scheduled_changes_run_due,
)
from tests.conftest import group_named
from tests.factories import NOW, PublicationFactory, UserFactory

pytestmark = pytest.mark.django_db

LATER = NOW + timedelta(hours=2)


def _admin(username: str):
    user = UserFactory(username=username, is_staff=True)
    user.groups.add(group_named(ARCHIVE_ADMINS))
    return user


def _pause_later(author, publication):
    return scheduled_change_create(
        action=ScheduledAction.PAUSE,
        publication=publication,
        run_at=LATER,
        actor=author,
        reason="weekend",
        now=NOW,
    )


@pytest.mark.parametrize("leaves", ["the group", "the company"])
def test_a_change_by_an_author_who_lost_the_right_is_cancelled_with_an_event_saying_why(leaves):
    author = _admin("alice")
    publication = PublicationFactory(phased_update_percentage=30)
    change = _pause_later(author, publication)
    if leaves == "the group":
        author.groups.clear()
        why = "no longer an archive admin"
    else:
        author.is_active = False
        author.save()
        why = "account deactivated"

    scheduled_changes_run_due(now=LATER)

    change.refresh_from_db()
    publication.refresh_from_db()
    assert change.state == ScheduledState.CANCELLED
    assert change.cancel_reason.endswith(f"cancelled: its author's {why}")
    assert publication.state == "phasing" and publication.phased_update_percentage == 30
    [event] = PhasingEvent.objects.filter(publication=publication)
    assert event.kind == EventKind.SCHEDULED_CANCELLED and why in event.reason
    # It never runs later either.
    assert scheduled_changes_run_due(now=LATER + timedelta(hours=1)) == []


def test_a_sign_off_by_someone_who_lost_the_right_no_longer_counts(settings):
    settings.PHASING_SIGN_OFF_REQUIRED = True
    alice, bob = _admin("alice"), _admin("bob")
    publication = PublicationFactory()
    change = scheduled_change_create(
        action=ScheduledAction.RELEASE,
        publication=publication,
        run_at=LATER,
        actor=alice,
        reason="CVE",
        now=NOW,
    )
    scheduled_change_sign_off(change=change, actor=bob, now=NOW)
    bob.groups.clear()

    scheduled_changes_run_due(now=LATER)

    change.refresh_from_db()
    publication.refresh_from_db()
    assert (change.state, change.outcome, change.signed_off_by) == (
        ScheduledState.PENDING,
        AWAITING_SIGN_OFF,
        None,
    )
    assert publication.phased_update_percentage == 10
    bob = type(bob).objects.get(pk=bob.pk)  # as the next request loads him
    with pytest.raises(ValidationError, match="only an archive admin signs off"):
        scheduled_change_sign_off(change=change, actor=bob, now=LATER)
