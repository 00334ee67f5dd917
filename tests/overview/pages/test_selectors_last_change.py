"""An update's "Last change" is its own: a release's freeze or a policy change notes it in
the update's history but leaves its last change where it was."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from overview.pages import selectors
from packages.models import EventKind
from packages.services import policy_set, release_freeze
from tests.factories import NOW, PhasingEventFactory, PublicationFactory

pytestmark = pytest.mark.django_db


def test_a_freeze_and_a_policy_change_leave_each_updates_last_change(superuser, anonymous):
    publication = PublicationFactory(date_published=NOW - timedelta(days=2))
    advanced = PhasingEventFactory(
        publication=publication, kind=EventKind.ADVANCED, created_at=NOW - timedelta(hours=3)
    )
    with time_machine.travel(NOW + timedelta(hours=1), tick=False):
        release_freeze(release=publication.release, actor=superuser, reason="point release")
        policy_set(scope_release=publication.release, actor=superuser, reason="slow", step=5)

    [row] = selectors.active_publications()
    assert publication.events.filter(kind__in=(EventKind.FROZEN, EventKind.POLICY)).count() == 2
    assert row.last_change == advanced.created_at
    [item] = anonymous.get("/api/v1/publications/").json()["results"]
    assert item["last_change"] == "2026-12-03T09:00:00Z"


def test_the_admins_last_change_is_the_updates_own_too(superuser, admin_client_superuser):
    publication = PublicationFactory(date_published=NOW - timedelta(days=2))
    PhasingEventFactory(
        publication=publication, kind=EventKind.ADVANCED, created_at=NOW - timedelta(hours=3)
    )
    release_freeze(release=publication.release, actor=superuser, reason="point release")

    response = admin_client_superuser.get("/admin/packages/publication/?state__exact=phasing")

    [row] = response.context["cl"].result_list
    assert row.last_change_at == NOW - timedelta(hours=3)
