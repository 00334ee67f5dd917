"""Freezing and unfreezing releases from the admin, with who and why."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry

from tests.factories import (
    ReleaseFactory,
)
from tests.packages.admin.admin_actions import apply_action

pytestmark = pytest.mark.django_db


def test_freezing_the_releases_of_a_selection_records_who_and_why(
    archive_admin, archive_admin_user, publication
):
    apply_action(archive_admin, "freeze_release", [publication], reason="archive maintenance")

    release = publication.release
    release.refresh_from_db()
    assert release.frozen
    assert release.frozen_by == archive_admin_user
    assert release.frozen_reason == "archive maintenance"
    entry = LogEntry.objects.get(object_id=str(release.pk))
    assert "archive maintenance" in entry.get_change_message()

    apply_action(archive_admin, "unfreeze_release", [publication], reason="done")
    release.refresh_from_db()
    assert not release.frozen


def test_freezing_from_the_release_list(archive_admin):
    release = ReleaseFactory(codename="jammy", version="22.04")

    apply_action(
        archive_admin,
        "freeze",
        [release],
        "admin:packages_release_changelist",
        reason="mirror outage",
    )

    release.refresh_from_db()
    assert release.frozen
    assert release.frozen_reason == "mirror outage"
    apply_action(
        archive_admin, "unfreeze", [release], "admin:packages_release_changelist", reason="back"
    )
    release.refresh_from_db()
    assert not release.frozen


def test_editing_a_release_needs_a_reason_and_leaves_an_event_on_its_updates(
    archive_admin, archive_admin_user, publication
):
    from django.urls import reverse

    from packages.models import EventKind

    release = publication.release
    url = reverse("admin:packages_release_change", args=[release.pk])
    change = {"version": release.version, "supported": ""}  # unticking "supported"

    refused = archive_admin.post(url, change)
    assert refused.status_code == 200
    assert "This field is required" in refused.content.decode()
    release.refresh_from_db()
    assert release.supported

    archive_admin.post(url, {**change, "reason": "end of standard support"})

    release.refresh_from_db()
    assert not release.supported
    event = publication.events.get(kind=EventKind.RELEASE)
    assert event.actor == archive_admin_user
    assert event.reason == "noble: no longer supported. Reason: end of standard support"
    entry = LogEntry.objects.get(object_id=str(release.pk))
    assert "end of standard support" in entry.get_change_message()
