"""Dependencies that stay visible: raising an update past one it needs warns on the update
page and in the admin and, with sign-off on, waits for a second archive admin; the group
stays on the page until every member is done."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from packages.models import PhasingState, ScheduledChange
from tests.factories import NOW, PublicationFactory, ReleaseFactory, SourcePackageFactory
from tests.packages.admin.admin_actions import apply_action

pytestmark = pytest.mark.django_db


@pytest.fixture
def openssh_needs_openssl():
    noble = ReleaseFactory()
    openssl = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="openssl"),
        version="3.0.13-0ubuntu3.2",
        previous_version="3.0.13-0ubuntu3.1",
        binaries=["libssl3t64"],
        phased_update_percentage=10,
    )
    openssh = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="openssh"),
        version="1:9.6p1-3ubuntu13.5",
        previous_version="1:9.6p1-3ubuntu13.4",
        binaries=["openssh-server"],
        relations=[["depends", "openssh-server", "libssl3t64", ">=", "3.0.13-0ubuntu3.2"]],
        phased_update_percentage=10,
    )
    return openssl, openssh


def page_of(client, publication) -> str:
    return client.get(reverse("overview:update", args=[publication.pk])).content.decode()


def test_the_update_page_warns_of_an_update_it_needs_behind_it(anonymous, openssh_needs_openssl):
    openssl, openssh = openssh_needs_openssl
    text = page_of(anonymous, openssh)
    assert "openssl 3.0.13-0ubuntu3.2 is at 10%: raising or releasing openssh past it" in text
    assert reverse("overview:update", args=[openssl.pk]) in text  # the member, linked
    # The needed one names what needs it, without a warning of its own.
    text = page_of(anonymous, openssl)
    assert "needed by openssh 1:9.6p1-3ubuntu13.5" in text
    assert "raising or releasing" not in text


def test_setting_past_an_update_it_needs_warns_after_the_action(
    archive_admin, openssh_needs_openssl
):
    _, openssh = openssh_needs_openssl
    response = archive_admin.post(
        reverse("overview:update-act", args=[openssh.pk, "set"]),
        {"set-percentage": "50", "set-reason": "ahead"},
        follow=True,
    )
    openssh.refresh_from_db()
    assert openssh.phased_update_percentage == 50
    warnings = [str(m) for m in response.context["messages"] if m.level_tag == "warning"]
    assert warnings and "needs openssl 3.0.13-0ubuntu3.2, which is at 10%" in warnings[0]


def test_setting_below_what_it_needs_does_not_warn(archive_admin, openssh_needs_openssl):
    _, openssh = openssh_needs_openssl
    response = archive_admin.post(
        reverse("overview:update-act", args=[openssh.pk, "set"]),
        {"set-percentage": "5", "set-reason": "slower"},
        follow=True,
    )
    assert not [m for m in response.context["messages"] if m.level_tag == "warning"]


def test_with_sign_off_on_a_raise_past_what_it_needs_waits_for_a_second_admin(
    archive_admin, openssh_needs_openssl, settings
):
    settings.PHASING_SIGN_OFF_REQUIRED = True
    openssl, openssh = openssh_needs_openssl
    archive_admin.post(
        reverse("overview:update-act", args=[openssh.pk, "set"]),
        {"set-percentage": "50", "set-reason": "ahead"},
    )
    openssh.refresh_from_db()
    assert openssh.phased_update_percentage == 10
    change = ScheduledChange.objects.get(publication=openssh)
    assert change.outcome  # waiting for the sign-off
    # The one it needs asks for none.
    archive_admin.post(
        reverse("overview:update-act", args=[openssl.pk, "set"]),
        {"set-percentage": "50", "set-reason": "ahead"},
    )
    openssl.refresh_from_db()
    assert openssl.phased_update_percentage == 50


def test_the_group_stays_on_the_page_after_the_dependent_is_released(
    archive_admin, anonymous, openssh_needs_openssl
):
    openssl, openssh = openssh_needs_openssl
    archive_admin.post(
        reverse("overview:update-act", args=[openssh.pk, "release"]), {"release-reason": "now"}
    )
    openssh.refresh_from_db()
    assert openssh.state == PhasingState.COMPLETE
    text = page_of(anonymous, openssl)
    assert "needed by openssh 1:9.6p1-3ubuntu13.5 (at 100%)" in text
    assert "needs openssl 3.0.13-0ubuntu3.2 (at 10%)" in page_of(anonymous, openssh)


def test_the_group_leaves_the_page_once_every_member_is_done(anonymous, openssh_needs_openssl):
    openssl, openssh = openssh_needs_openssl
    for publication in (openssl, openssh):
        publication.state, publication.phased_update_percentage = PhasingState.COMPLETE, 100
        publication.completed_at = NOW - timedelta(hours=1)
        publication.save()
    assert "needed by" not in page_of(anonymous, openssl)


def test_the_admin_warns_when_its_action_raises_past_what_it_needs(
    archive_admin, openssh_needs_openssl
):
    _, openssh = openssh_needs_openssl
    response = apply_action(
        archive_admin, "set_percentage", [openssh], percentage=60, reason="ahead"
    )
    text = response.content.decode()
    assert "needs openssl 3.0.13-0ubuntu3.2, which is at 10%" in text


def test_the_admin_change_page_offers_the_actions_and_the_warning(
    archive_admin, openssh_needs_openssl
):
    _, openssh = openssh_needs_openssl
    response = archive_admin.get(reverse("admin:packages_publication_change", args=[openssh.pk]))
    text = response.content.decode()
    update_url = reverse("overview:update", args=[openssh.pk])
    for action in ("pause", "resume", "halt", "set", "release"):
        assert f"{update_url}?action={action}#action-{action}" in text
    assert "needs openssl 3.0.13-0ubuntu3.2, which is at 10%" in text
    # The link opens that action's form.
    page = archive_admin.get(update_url, {"action": "halt"}).content.decode()
    assert 'id="action-halt" open' in page
