"""Each source package's binaries: kept by the database however a publication is written."""

from __future__ import annotations

import pytest
from django.db import connection

from packages import binaries, data_version
from packages.binaries import TRIGGERS
from packages.data_version import trigger_names
from packages.models import Publication, SourcePackageBinary
from tests.factories import PublicationFactory, ReleaseFactory, SourcePackageFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def kept() -> set[tuple[str, str]]:
    return set(SourcePackageBinary.objects.values_list("source_package__name", "name"))


def published() -> set[tuple[str, str]]:
    """What the table must hold: every string of every publication's list of binaries."""
    return {
        (p.source_package.name, b)
        for p in Publication.objects.select_related("source_package")
        if isinstance(p.binaries, list)
        for b in p.binaries
        if isinstance(b, str)
    }


def test_a_new_publication_adds_its_binaries_to_its_package_s():
    PublicationFactory(source_package__name="openssl", binaries=["libssl3", "openssl"])
    PublicationFactory(source_package__name="openssl", binaries=["libssl3", "libssl-dev"])
    assert kept() == {("openssl", "libssl3"), ("openssl", "openssl"), ("openssl", "libssl-dev")}


def test_a_bulk_insert_adds_every_row_s_binaries():
    release = ReleaseFactory()
    packages = [SourcePackageFactory(name=f"p{n}") for n in range(3)]
    Publication.objects.bulk_create(
        PublicationFactory.build(
            source_package=package, release=release, signer=None, uploader=None, binaries=[f"b{n}"]
        )
        for n, package in enumerate(packages)
    )
    assert kept() == {("p0", "b0"), ("p1", "b1"), ("p2", "b2")}


def test_only_names_count_not_other_json_a_source_might_send():
    PublicationFactory(source_package__name="odd", binaries=["good", 3, None, {"x": 1}, ["y"]])
    PublicationFactory(source_package__name="odder", binaries={"not": "a list"})
    assert kept() == {("odd", "good")}


def test_changing_or_deleting_a_publication_leaves_exactly_the_binaries_still_published():
    first = PublicationFactory(source_package__name="tool", binaries=["tool", "tool-data"])
    second = PublicationFactory(source_package__name="tool", binaries=["tool"])
    other = PublicationFactory(source_package__name="other", binaries=["other"])

    first.binaries = ["tool", "tool-common"]
    first.save()
    assert kept() == published() == {("tool", "tool"), ("tool", "tool-common"), ("other", "other")}

    second.source_package = other.source_package
    second.save()
    assert kept() == published()

    first.delete()
    assert kept() == published() == {("other", "tool"), ("other", "other")}

    Publication.objects.update(binaries=["same"])
    assert kept() == published() == {("other", "same")}


def test_saving_a_publication_with_the_same_binaries_does_not_rebuild_its_package_s():
    publication = PublicationFactory(binaries=["tool"])
    with connection.cursor() as cursor:
        # A row the triggers would remove if they rebuilt the package's binaries.
        cursor.execute(
            f"INSERT INTO {SourcePackageBinary._meta.db_table} (source_package_id, name) "
            "VALUES (%s, 'kept')",
            [publication.source_package_id],
        )
    publication.phased_update_percentage = 20
    publication.save()
    assert {name for _, name in kept()} == {"tool", "kept"}


def test_the_triggers_are_there_after_all_migrations():
    # SQLite rebuilds a table it alters without its triggers; a later migration that
    # alters the publication table puts them back (data_version.triggers_reinstall_operation).
    assert set(TRIGGERS) <= trigger_names()


@pytest.mark.django_db(transaction=True)
def test_the_data_version_s_reinstall_after_a_publication_migration_puts_them_back_too():
    """A migration that alters the publication table (SQLite rebuilds it, leaving its
    triggers behind) needs one operation for every trigger on it, not one per kind."""
    with connection.schema_editor(atomic=False) as editor:
        binaries.triggers_remove(editor)
        assert not set(TRIGGERS) & trigger_names()
        data_version.triggers_reinstall_operation(("packages_publication",)).code(None, editor)
    assert set(TRIGGERS) <= trigger_names()
    PublicationFactory(source_package__name="kept", binaries=["kept-bin"])
    assert kept() == {("kept", "kept-bin")}
