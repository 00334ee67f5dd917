"""policy_set: one policy per scope, changed in place, with its reason logged."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry

from packages.models import Policy
from tests.factories import (
    ReleaseFactory,
    SourcePackageFactory,
)

pytestmark = pytest.mark.django_db


def test_policy_set_refuses_a_policy_for_both_a_release_and_a_package(superuser):
    from django.core.exceptions import ValidationError

    from packages.services import policy_set

    with pytest.raises(ValidationError):
        policy_set(
            scope_release=ReleaseFactory(),
            scope_package=SourcePackageFactory(),
            actor=superuser,
            reason="both",
            step=5,
        )
    with pytest.raises(ValidationError):
        policy_set(actor=superuser, reason="typo", stepp=5)
    with pytest.raises(ValidationError):
        policy_set(actor=superuser, reason="", step=5)
    assert not Policy.objects.exists()


def test_policy_set_without_a_scope_changes_the_global_policy_in_place(superuser):
    from packages.services import policy_set

    first = policy_set(actor=superuser, reason="start", step=10)
    second = policy_set(actor=superuser, reason="slower", step=5)

    assert first.pk == second.pk
    assert Policy.objects.get().step == 5
    assert Policy.objects.get().scope_label == "all updates"
    assert LogEntry.objects.count() == 2


@pytest.mark.parametrize(
    "fields",
    [
        {"interval": timedelta(days=999_999_999)},
        {"step": 500},
        {"min_previous_reports": 10**12},
    ],
)
def test_a_policy_out_of_bounds_is_refused_with_a_clear_message_and_nothing_breaks(
    superuser, anonymous, fields
):
    from django.core.exceptions import ValidationError

    from packages.services import policy_set

    with pytest.raises(ValidationError):
        policy_set(actor=superuser, reason="typo", **fields)
    assert not Policy.objects.exists()
    assert anonymous.get("/").status_code == 200
    assert anonymous.get("/api/v1/publications/").status_code == 200


def test_the_database_refuses_a_policy_out_of_bounds_whoever_writes_it():
    from django.db import IntegrityError

    with pytest.raises(IntegrityError):
        Policy.objects.create(interval=timedelta(days=999_999_999))


def test_a_policy_change_names_only_the_fields_that_changed(superuser, publication):
    from packages.models import EventKind
    from packages.services import policy_set

    policy_set(actor=superuser, reason="start", step=10, ceiling=100)
    policy_set(actor=superuser, reason="slower", step=5, ceiling=100, quiet_weekend=False)

    note = publication.events.filter(kind=EventKind.POLICY).latest("id")
    assert note.reason == "Changed all updates: step 10 → 5. Reason: slower"
    assert LogEntry.objects.latest("id").change_message == note.reason


def test_a_new_policy_names_only_what_differs_from_the_policy_it_replaces(superuser):
    from packages.services import policy_set

    policy_set(actor=superuser, reason="global", step=5)
    policy_set(
        scope_release=ReleaseFactory(codename="noble"),
        actor=superuser,
        reason="noble as all",
        step=5,
        ceiling=50,
        quiet_weekend=False,
    )

    assert LogEntry.objects.latest("id").change_message == (
        "Created release noble: ceiling 100 → 50. Reason: noble as all"
    )


def test_a_policy_change_that_changes_nothing_leaves_no_note_on_the_updates(superuser, publication):
    from packages.models import EventKind
    from packages.services import policy_set

    policy_set(actor=superuser, reason="start", step=5)
    policy_set(actor=superuser, reason="again", step=5)

    assert publication.events.filter(kind=EventKind.POLICY).count() == 1
