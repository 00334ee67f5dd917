"""Pages, feeds and the API name a person by display name or role, never by login name."""

from __future__ import annotations

import pytest

from packages.public_names import public_name
from packages.services import publication_pause
from tests.factories import NOW, PublicationFactory, ScheduledChangeFactory, UserFactory

pytestmark = pytest.mark.django_db

LOGIN = "jdoe-admin-7"


def test_a_person_is_named_by_display_name_or_else_by_role():
    assert public_name(UserFactory(username=LOGIN, first_name="Ana", last_name="Lima")) == (
        "Ana Lima"
    )
    assert public_name(UserFactory(username="other")) == "an archive admin"
    assert public_name(UserFactory(username="third"), "a triager") == "a triager"
    assert public_name(None) == ""


def test_a_pause_shows_no_login_name_on_the_history_the_feeds_or_the_api(anonymous):
    publication = PublicationFactory()
    admin = UserFactory(username=LOGIN)
    publication_pause(publication=publication, actor=admin, reason="asking upstream", now=NOW)
    ScheduledChangeFactory(publication=publication, created_by=admin)

    [event] = publication.events.all()
    assert event.actor_name == "an archive admin" and event.actor == admin
    for path in (
        f"/source/{publication.source_package.name}/",
        "/feeds/changes/",
        f"/api/v1/publications/{publication.pk}/events/",
        "/api/v1/scheduled-changes/",
    ):
        response = anonymous.get(path)
        assert response.status_code == 200, path
        assert LOGIN not in response.content.decode(), path
