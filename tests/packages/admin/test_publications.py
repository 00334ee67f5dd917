"""The archive admins' console: publications list, phasing actions, releases, policies."""

from __future__ import annotations

import pytest
from django.urls import reverse

from packages.models import EventKind, PhasingEvent, PhasingState
from tests.factories import (
    PublicationFactory,
    SourcePackageFactory,
)
from tests.packages.admin.admin_actions import CHANGELIST, apply_action

pytestmark = pytest.mark.django_db


def _choose(client, action: str, publications, url_name: str = CHANGELIST):
    """The first POST, from the changelist: it shows the reason page."""
    return client.post(
        reverse(url_name),
        {"action": action, "index": 0, "_selected_action": [p.pk for p in publications]},
    )


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_pausing_asks_for_a_reason_first_and_changes_nothing_yet(archive_admin, publication):
    response = _choose(archive_admin, "pause", [publication])

    assert response.status_code == 200
    assert 'name="reason"' in response.content.decode()
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert not PhasingEvent.objects.exists()


def test_an_archive_admin_pauses_an_update_with_a_reason(
    archive_admin, archive_admin_user, publication
):
    response = apply_action(archive_admin, "pause", [publication], reason="waiting for bug 123")

    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED
    assert publication.phased_update_percentage == 10
    event = PhasingEvent.objects.get()
    assert event.kind == EventKind.PAUSED
    assert event.actor == archive_admin_user
    assert event.reason == "waiting for bug 123"
    assert any("Paused" in m for m in _messages(response))


def test_an_action_without_a_reason_shows_the_page_again(archive_admin, publication):
    response = apply_action(archive_admin, "pause", [publication], reason="  ")

    assert response.context["form"].errors["reason"]
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING


def test_a_change_the_state_does_not_allow_is_reported_not_crashed_on(archive_admin, publication):
    ok = PublicationFactory(source_package=SourcePackageFactory(name="fine"))
    publication_paused = PublicationFactory(
        source_package=SourcePackageFactory(name="held"), state=PhasingState.PAUSED
    )

    response = apply_action(
        archive_admin, "pause", [ok, publication_paused], reason="hold everything"
    )

    assert response.status_code == 200
    messages = _messages(response)
    assert any("Paused: fine" in m for m in messages)
    assert any("held" in m and "cannot" in m for m in messages)
    ok.refresh_from_db()
    assert ok.state == PhasingState.PAUSED


def test_resuming_a_halted_update_starts_again_from_the_first_step(archive_admin):
    halted = PublicationFactory(state=PhasingState.HALTED, phased_update_percentage=0)

    apply_action(archive_admin, "resume", [halted], reason="fixed in the error tracker")

    halted.refresh_from_db()
    assert halted.state == PhasingState.PHASING
    assert halted.phased_update_percentage == 10


def test_halting_pulls_the_update_to_zero(archive_admin, publication):
    apply_action(archive_admin, "halt", [publication], reason="regression, bug 42")

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
    assert publication.phased_update_percentage == 0
    assert PhasingEvent.objects.get().reason == "regression, bug 42"


def test_setting_the_percentage(archive_admin, publication):
    apply_action(archive_admin, "set_percentage", [publication], percentage=50, reason="confident")

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 50
    assert PhasingEvent.objects.get().kind == EventKind.SET


@pytest.mark.parametrize("value", [-1, 101, "many"])
def test_a_percentage_outside_0_to_100_is_refused(archive_admin, publication, value):
    response = apply_action(
        archive_admin, "set_percentage", [publication], percentage=value, reason="x"
    )

    assert response.context["form"].errors["percentage"]
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10


def test_releasing_to_everyone_goes_straight_to_100(archive_admin, publication):
    apply_action(archive_admin, "release_to_everyone", [publication], reason="urgent security fix")

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 100
    assert publication.state == PhasingState.COMPLETE
