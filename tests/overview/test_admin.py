"""Admin views of the overview app: crash reports only for triagers, the rest read-only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from packages.roles import TRIAGERS
from tests.factories import (
    CrashReportFactory,
    ErrorBucketFactory,
    OverrideFactory,
    ProblemFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

SECRET = "SECRET-in-the-stack"


@pytest.fixture
def crash():
    return CrashReportFactory(stack_trace=f"#0 {SECRET}", environment={"x": SECRET})


@pytest.fixture
def staff_triager(client):
    """A triager who also has admin access: reads crash reports there, changes nothing."""
    user = UserFactory(username="stafftriager", is_staff=True)
    user.groups.add(Group.objects.get(name=TRIAGERS))
    client.force_login(user)
    return client


def test_archive_admins_do_not_see_crash_reports_in_the_admin(archive_admin, crash):
    index = archive_admin.get(reverse("admin:index")).content.decode()
    assert "Crash reports" not in index
    assert "Problems" in index

    for url in (
        reverse("admin:overview_crashreport_changelist"),
        reverse("admin:overview_crashreport_change", args=[crash.pk]),
    ):
        response = archive_admin.get(url)
        assert response.status_code == 403
        assert SECRET not in response.content.decode()


def test_superusers_read_crash_reports_in_the_admin(admin_client_superuser, crash):
    response = admin_client_superuser.get(
        reverse("admin:overview_crashreport_change", args=[crash.pk])
    )

    assert response.status_code == 200
    assert SECRET in response.content.decode()


def test_a_staff_triager_reads_but_does_not_change_crash_reports(staff_triager, crash):
    url = reverse("admin:overview_crashreport_change", args=[crash.pk])
    page = staff_triager.get(url)

    assert page.status_code == 200
    assert SECRET in page.content.decode()
    assert 'name="stack_trace"' not in page.content.decode()
    staff_triager.post(url, {"stack_trace": "rewritten"})
    crash.refresh_from_db()
    assert SECRET in crash.stack_trace
    delete = reverse("admin:overview_crashreport_delete", args=[crash.pk])
    assert staff_triager.post(delete, {"post": "yes"}).status_code == 403


def test_problems_buckets_and_overrides_are_read_only(admin_client_superuser):
    problem = ProblemFactory()
    override = OverrideFactory(bucket=problem.bucket)

    for model, obj in (
        ("problem", problem),
        ("errorbucket", problem.bucket),
        ("override", override),
    ):
        assert admin_client_superuser.get(reverse(f"admin:overview_{model}_add")).status_code == 403
        page = admin_client_superuser.get(reverse(f"admin:overview_{model}_change", args=[obj.pk]))
        assert page.status_code == 200
        assert "Save and continue" not in page.content.decode()


def test_a_staff_triager_revokes_overrides_from_the_admin_with_a_reason(staff_triager):
    override = OverrideFactory(bucket=ErrorBucketFactory())
    url = reverse("admin:overview_override_changelist")

    first = staff_triager.post(
        url, {"action": "revoke", "index": 0, "_selected_action": [override.pk]}
    )
    assert 'name="reason"' in first.content.decode()
    staff_triager.post(
        url, {"action": "revoke", "apply": "1", "_selected_action": [override.pk], "reason": "no"}
    )

    override.refresh_from_db()
    assert not override.is_live
    assert override.revoke_reason == "no"


def test_archive_admins_cannot_revoke_overrides(archive_admin):
    override = OverrideFactory(bucket=ErrorBucketFactory())

    archive_admin.post(
        reverse("admin:overview_override_changelist"),
        {"action": "revoke", "apply": "1", "_selected_action": [override.pk], "reason": "no"},
    )

    override.refresh_from_db()
    assert override.is_live
