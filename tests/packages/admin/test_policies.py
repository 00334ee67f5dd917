"""Archive admins change policies, always with a reason that the policy's history keeps."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from packages.models import Policy
from tests.factories import (
    PolicyFactory,
    PublicationFactory,
    SourcePackageFactory,
)
from tests.packages.admin.admin_actions import apply_action

pytestmark = pytest.mark.django_db


def test_changing_the_policy_of_the_selected_packages(archive_admin, archive_admin_user):
    one = PublicationFactory(source_package=SourcePackageFactory(name="one"))
    two = PublicationFactory(source_package=SourcePackageFactory(name="two"))

    apply_action(
        archive_admin,
        "change_policy",
        [one, two],
        scope="package",
        start_percentage=1,
        step=10,
        interval="03:00:00",
        ceiling=100,
        schedule="1, 2, 5, 10, 20, 50, 100",
        min_previous_reports=0,
        judge="sequential",
        insufficient_max_hold="48:00:00",
        reason="slow lane for risky packages",
    )

    policies = Policy.objects.filter(source_package__name__in=["one", "two"])
    assert policies.count() == 2
    assert {tuple(p.schedule) for p in policies} == {(1, 2, 5, 10, 20, 50, 100)}
    assert {p.interval for p in policies} == {timedelta(hours=3)}
    entries = LogEntry.objects.filter(user=archive_admin_user)
    assert entries.count() == 2
    assert all("slow lane for risky packages" in e.get_change_message() for e in entries)


def test_changing_the_policy_of_the_selected_release(archive_admin, publication):
    PolicyFactory(release=publication.release, step=10)

    apply_action(
        archive_admin,
        "change_policy",
        [publication],
        scope="release",
        start_percentage=10,
        step=5,
        interval="06:00:00",
        ceiling=100,
        min_previous_reports=0,
        judge="sequential",
        insufficient_max_hold="48:00:00",
        reason="smaller steps this week",
    )

    policy = Policy.objects.get(release=publication.release)
    assert policy.step == 5
    entry = LogEntry.objects.get(object_id=str(policy.pk))
    assert "step 10 → 5" in entry.get_change_message()


def test_a_policy_schedule_must_rise(archive_admin, publication):
    response = apply_action(
        archive_admin,
        "change_policy",
        [publication],
        scope="package",
        start_percentage=10,
        step=5,
        interval="06:00:00",
        ceiling=100,
        schedule="50, 10",
        min_previous_reports=0,
        judge="sequential",
        insufficient_max_hold="48:00:00",
        reason="x",
    )

    assert response.context["form"].errors["schedule"]
    assert not Policy.objects.exists()


def test_a_policy_saved_in_its_form_needs_a_reason_and_logs_it_once(
    archive_admin, archive_admin_user
):
    package = SourcePackageFactory(name="tool")
    form = {
        "source_package": package.pk,
        "start_percentage": 5,
        "step": 5,
        "interval": "06:00:00",
        "ceiling": 100,
        "schedule": "[]",
        "min_previous_reports": 0,
        "judge": "sequential",
        "insufficient_max_hold": "2 00:00:00",
    }

    refused = archive_admin.post(reverse("admin:packages_policy_add"), form)
    assert refused.status_code == 200
    assert not Policy.objects.exists()

    archive_admin.post(reverse("admin:packages_policy_add"), {**form, "reason": "gentle start"})

    policy = Policy.objects.get()
    assert policy.start_percentage == 5
    assert policy.watch_at_full == timedelta(days=3)  # not in the form posted: the default
    entry = LogEntry.objects.get(user=archive_admin_user)
    assert "gentle start" in entry.get_change_message()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("interval", "999999999 00:00:00", "Ensure this value is less than or equal to 30 days"),
        ("step", "200", "Ensure this value is less than or equal to 100"),
        ("watch_at_full", "31 00:00:00", "Ensure this value is less than or equal to 30 days"),
        (
            "min_previous_reports",
            "1000000000",
            "Ensure this value is less than or equal to 1000000",
        ),
    ],
)
def test_the_policy_forms_refuse_values_out_of_bounds_with_a_clear_message(
    archive_admin, publication, field, value, message
):
    form = {
        "source_package": publication.source_package.pk,
        "start_percentage": 5,
        "step": 5,
        "interval": "06:00:00",
        "ceiling": 100,
        "schedule": "[]",
        "min_previous_reports": 0,
        "reason": "typo",
    }
    response = archive_admin.post(reverse("admin:packages_policy_add"), {**form, field: value})
    assert response.status_code == 200
    assert message in " ".join(response.context["adminform"].form.errors[field])

    defaults = {
        "scope": "package",
        "start_percentage": 10,
        "step": 10,
        "interval": "06:00:00",
        "ceiling": 100,
        "min_previous_reports": 0,
        "reason": "typo",
    }
    action = apply_action(
        archive_admin, "change_policy", [publication], **{**defaults, field: value}
    )
    assert message in " ".join(action.context["form"].errors[field])
    assert not Policy.objects.exists()
