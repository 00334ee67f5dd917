"""Overriding problems and revoking overrides, through the service and the overrides file."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError

from overview.models import Override, ProblemKind
from overview.triage.overrides import override_revoke
from tests.factories import NOW, ErrorBucketFactory, UserFactory
from tests.overview.triage.overrides_fakes import create_override

pytestmark = pytest.mark.django_db


def test_an_override_records_who_when_and_why():
    override = create_override()

    override.refresh_from_db()
    assert override.is_live
    assert override.created_by.username == "tessa"
    assert override.created_by_name == "a triager"  # shown publicly: never a login name
    assert override.created_at == NOW
    assert override.reason == "crash predates the update"


def test_overriding_the_same_problem_twice_keeps_the_first_override():
    bucket = ErrorBucketFactory()
    first = create_override(bucket=bucket)
    second = create_override(bucket=bucket, reason="said again", now=NOW + timedelta(hours=1))

    assert second.pk == first.pk
    assert second.reason == "crash predates the update"
    assert Override.objects.count() == 1


def test_an_override_needs_a_reason():
    with pytest.raises(ValidationError):
        create_override(reason="   ")
    assert not Override.objects.exists()


def test_a_bucket_override_needs_its_bucket():
    with pytest.raises(ValidationError):
        create_override(bucket=None)


def test_an_increased_rate_override_names_no_bucket():
    override = create_override(
        kind=ProblemKind.INCREASED_RATE, bucket=ErrorBucketFactory(), version=""
    )

    assert override.bucket is None
    assert override.version == ""
    assert str(override) == "tool all versions: increased-rate"


def test_a_star_version_means_every_version():
    assert create_override(version="*").version == ""


def test_revoking_keeps_the_row_and_says_who_and_why():
    override = create_override()
    revoker = UserFactory(username="rita")

    override_revoke(override=override, actor=revoker, reason="it was the update after all", now=NOW)

    override.refresh_from_db()
    assert not override.is_live
    assert override.revoked_by == revoker
    assert override.revoke_reason == "it was the update after all"


def test_revoking_twice_changes_nothing_the_second_time():
    override = create_override()
    override_revoke(override=override, actor=UserFactory(username="a"), reason="first", now=NOW)
    override_revoke(
        override=override, actor=UserFactory(username="b"), reason="second", now=NOW + timedelta(1)
    )

    override.refresh_from_db()
    assert override.revoke_reason == "first"
    assert override.revoked_at == NOW


def test_revoking_needs_a_reason():
    override = create_override()
    with pytest.raises(ValidationError):
        override_revoke(override=override, actor=UserFactory(), reason="")
    override.refresh_from_db()
    assert override.is_live


def test_after_a_revoke_the_problem_can_be_overridden_again():
    bucket = ErrorBucketFactory()
    first = create_override(bucket=bucket)
    override_revoke(override=first, actor=UserFactory(), reason="wrong", now=NOW)

    second = create_override(bucket=bucket, reason="right this time")

    assert second.pk != first.pk
    assert Override.objects.filter(revoked_at__isnull=True).get() == second
