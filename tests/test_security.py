"""What every answer carries, and what the login and the admin refuse politely."""

from __future__ import annotations

import re

import pytest
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from overview.models import CrashReport
from tests.factories import CrashReportFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/machine/",
        "/feeds/halts/",
        "/api/v1/publications/",
        "/api/v1/docs",
        "/admin/login/",
        "/nowhere/",
    ],
)
def test_every_answer_forbids_scripts_other_than_the_sites_own_files(anonymous, path):
    policy = anonymous.get(path)["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["style-src"] == "'self'"  # no inline style, no style element


def test_no_page_carries_an_inline_style_the_policy_would_refuse(anonymous, publication):
    from tests.factories import PublicationFactory

    PublicationFactory(phased_update_percentage=37)
    for path in ("/", f"/source/{publication.source_package.name}/"):
        html = anonymous.get(path).content.decode()
        assert 'class="w37"' in html or path != "/"
        assert not re.search(r"\bstyle\s*=", html), path
        assert "<style" not in html, path


def test_a_username_longer_than_an_account_can_have_is_a_form_error_not_a_500(anonymous):
    anonymous.raise_request_exception = False
    for url in (reverse("login"), reverse("admin:login")):
        response = anonymous.post(url, {"username": "u" * 256, "password": "x"})
        assert response.status_code == 200, url
        assert "Ensure this value has at most 150 characters" in response.content.decode()


def test_an_admin_action_on_a_selection_that_is_not_ids_is_a_400(archive_admin, publication):
    response = archive_admin.post(
        reverse("admin:packages_publication_changelist"),
        {"action": "pause", "_selected_action": ["1 OR 1=1"]},
    )
    assert response.status_code == 400


def test_a_staff_member_without_groups_cannot_tell_which_crash_reports_exist(client):
    staff = UserFactory(username="staff-only", is_staff=True)
    client.force_login(staff)
    report = CrashReportFactory()
    content_type = ContentType.objects.get_for_model(CrashReport)
    existing = client.get(reverse("admin:view_on_site", args=[content_type.pk, report.pk]))
    missing = client.get(reverse("admin:view_on_site", args=[content_type.pk, report.pk + 1000]))
    assert existing.status_code == missing.status_code == 404

    def page(response) -> str:  # the same page, but for the form's one-time CSRF token
        return re.sub(r'value="[^"]{64}"', "", response.content.decode())

    assert page(existing) == page(missing)


def test_who_may_view_a_model_in_the_admin_still_gets_its_view_on_site(admin_client_superuser):
    report = CrashReportFactory()
    content_type = ContentType.objects.get_for_model(CrashReport)
    response = admin_client_superuser.get(
        reverse("admin:view_on_site", args=[content_type.pk, report.pk])
    )
    assert response.status_code == 302
    assert response["Location"].endswith(f"/reports/{report.pk}/")


@pytest.mark.django_db
def test_the_policy_built_once_is_the_one_django_csp_builds_and_follows_its_setting(
    client, settings
):
    from csp.utils import build_policy

    assert client.get("/machine/")["Content-Security-Policy"] == build_policy()

    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {"default-src": ["'none'"]}}

    assert client.get("/machine/")["Content-Security-Policy"] == "default-src 'none'"
