"""What nobody may do in the admin: edit percentage or state, add or delete publications, touch the
audit trail, act without the phasing permission."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from packages.models import PhasingEvent, PhasingState, Publication
from tests.factories import (
    UserFactory,
)
from tests.packages.admin.admin_actions import CHANGELIST, apply_action

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client):
    """Staff who may look at publications but not change phasing."""
    user = UserFactory(username="viewer", is_staff=True)
    user.user_permissions.add(
        Permission.objects.get(codename="view_publication"),
        Permission.objects.get(codename="change_publication"),
    )
    client.force_login(user)
    return client


def test_staff_without_the_phasing_permission_are_not_offered_the_actions(viewer, publication):
    response = viewer.get(reverse(CHANGELIST))

    assert response.status_code == 200
    assert 'value="pause"' not in response.content.decode()


def test_staff_without_the_phasing_permission_cannot_post_an_action(viewer, publication):
    apply_action(viewer, "pause", [publication], reason="sneaky")

    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert not PhasingEvent.objects.exists()


def test_the_change_form_does_not_let_anyone_edit_percentage_or_state(
    admin_client_superuser, publication
):
    url = reverse("admin:packages_publication_change", args=[publication.pk])
    page = admin_client_superuser.get(url)
    assert page.status_code == 200
    assert 'name="phased_update_percentage"' not in page.content.decode()
    assert 'name="state"' not in page.content.decode()

    admin_client_superuser.post(url, {"phased_update_percentage": 100, "state": "complete"})

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert publication.state == PhasingState.PHASING


def test_publications_are_neither_added_nor_deleted_in_the_admin(
    admin_client_superuser, publication
):
    assert admin_client_superuser.get(reverse("admin:packages_publication_add")).status_code == 403
    delete = reverse("admin:packages_publication_delete", args=[publication.pk])
    assert admin_client_superuser.post(delete, {"post": "yes"}).status_code == 403
    assert Publication.objects.filter(pk=publication.pk).exists()


def test_phasing_events_are_read_only_even_for_superusers(admin_client_superuser, publication):
    apply_action(admin_client_superuser, "pause", [publication], reason="look")
    event = PhasingEvent.objects.get()
    change = reverse("admin:packages_phasingevent_change", args=[event.pk])

    assert admin_client_superuser.get(reverse("admin:packages_phasingevent_add")).status_code == 403
    page = admin_client_superuser.get(change)
    assert page.status_code == 200
    assert 'name="reason"' not in page.content.decode()
    admin_client_superuser.post(change, {"reason": "rewritten"})
    delete = reverse("admin:packages_phasingevent_delete", args=[event.pk])
    assert admin_client_superuser.post(delete, {"post": "yes"}).status_code == 403
    event.refresh_from_db()
    assert event.reason == "look"
