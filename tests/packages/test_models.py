"""Database rules of the domain: what the schema refuses."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from packages.models import Pocket, Policy, Publication
from tests.factories import NOW, PublicationFactory, ReleaseFactory, SourcePackageFactory

pytestmark = pytest.mark.django_db


def test_a_duplicate_publication_is_refused():
    existing = PublicationFactory()
    with pytest.raises(IntegrityError), transaction.atomic():
        Publication.objects.create(
            source_package=existing.source_package,
            release=existing.release,
            pocket=existing.pocket,
            version=existing.version,
            date_published=NOW,
        )


def test_the_same_version_may_be_published_in_another_pocket():
    existing = PublicationFactory()
    Publication.objects.create(
        source_package=existing.source_package,
        release=existing.release,
        pocket=Pocket.SECURITY,
        version=existing.version,
        date_published=NOW,
    )
    assert Publication.objects.filter(version=existing.version).count() == 2


def test_a_percentage_of_101_is_refused():
    with pytest.raises(IntegrityError), transaction.atomic():
        PublicationFactory(phased_update_percentage=101)


def test_only_one_global_policy_may_exist():
    Policy.objects.create()
    with pytest.raises(IntegrityError), transaction.atomic():
        Policy.objects.create()


def test_only_one_policy_per_release_and_per_package():
    release, package = ReleaseFactory(), SourcePackageFactory()
    Policy.objects.create(release=release)
    Policy.objects.create(source_package=package)
    with pytest.raises(IntegrityError), transaction.atomic():
        Policy.objects.create(release=release, step=5)
    with pytest.raises(IntegrityError), transaction.atomic():
        Policy.objects.create(source_package=package, step=5)


def test_a_policy_names_a_release_or_a_package_not_both():
    with pytest.raises(IntegrityError), transaction.atomic():
        Policy.objects.create(release=ReleaseFactory(), source_package=SourcePackageFactory())
