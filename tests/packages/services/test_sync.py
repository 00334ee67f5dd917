"""Syncing publications and crash reports from a source into the database."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.domain.dependencies import Relation
from packages.models import ArchiveStatus, EventKind, PhasingState, Pocket, Publication, SourceSync
from packages.services.sync import publications_sync, publications_sync_since_last
from packages.sources.simulator import Simulator
from tests.packages.services.sync_fakes import T0, ListSource, record

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_a_new_update_starts_phasing_with_a_published_event():
    summary = publications_sync(ListSource([record()]), now=T0)
    publication = Publication.objects.get()
    assert (summary.new, publication.state, publication.phased_update_percentage) == (
        1,
        PhasingState.PHASING,
        10,
    )
    assert publication.events.get().kind == EventKind.PUBLISHED
    assert SourceSync.objects.get(name="listed:publications").last_success_at == T0


def test_syncing_again_creates_no_duplicates():
    source = ListSource(
        [record(), record("2.0-1ubuntu0.2", date_published=T0 + timedelta(hours=1))]
    )
    publications_sync(source, now=T0)
    summary = publications_sync(source, now=T0 + timedelta(hours=2))
    assert summary.new == 0
    assert Publication.objects.count() == 2


def test_a_newer_version_supersedes_the_older_one_with_a_final_event():
    publications_sync(ListSource([record()]), now=T0)
    newer = record("2.0-1ubuntu0.2", date_published=T0 + timedelta(days=1))
    summary = publications_sync(ListSource([record(), newer]), now=T0 + timedelta(days=1))
    old = Publication.objects.get(version="2.0-1ubuntu0.1")
    assert summary.superseded == 1
    assert (old.state, old.status, old.superseded_by.version) == (
        PhasingState.SUPERSEDED,
        ArchiveStatus.SUPERSEDED,
        "2.0-1ubuntu0.2",
    )
    assert old.events.order_by("-id").first().kind == EventKind.SUPERSEDED


def test_security_and_fully_phased_publications_are_not_phased():
    publications_sync(
        ListSource(
            [
                record(pocket=Pocket.SECURITY),
                record("2.0-1ubuntu0.9", source_package="bash", phased_update_percentage=None),
            ]
        ),
        now=T0,
    )
    assert set(Publication.objects.values_list("state", "phased_update_percentage")) == {
        (PhasingState.COMPLETE, 100)
    }


def test_malformed_records_are_skipped_and_reported_not_stored():
    source = ListSource(
        [
            record(),
            record("2.0-1ubuntu0.3", phased_update_percentage=140),
            record("", source_package="x"),
        ]
    )
    summary = publications_sync(source, now=T0)
    assert summary.new == 1
    assert len(summary.errors) == 2
    assert "percentage 140" in " ".join(summary.errors)


def test_a_release_that_fails_to_answer_loses_nothing_already_known():
    records = [record(), record(release="jammy", version="2.0-0ubuntu0.22.04.1")]
    publications_sync(ListSource(records), now=T0)
    summary = publications_sync(ListSource([], fail_release="jammy"), now=T0 + timedelta(hours=1))
    assert summary.errors == ["jammy: 503 from the archive"]
    assert Publication.objects.count() == 2
    assert Publication.objects.filter(state=PhasingState.PHASING).count() == 2


def test_a_source_percentage_that_changed_outside_phasing_is_recorded_not_adopted():
    publications_sync(ListSource([record()]), now=T0)
    publications_sync(ListSource([record(phased_update_percentage=0)]), now=T0 + timedelta(hours=1))
    publication = Publication.objects.get()
    assert (publication.phased_update_percentage, publication.source_percentage) == (10, 0)


def test_the_periodic_sync_asks_only_for_what_changed_since_the_last_one():
    asked = []

    class Recording(ListSource):
        def publications(self, *, release, since, now, watch=None):
            asked.append(since)
            return super().publications(release=release, since=since, now=now, watch=watch)

    source = Recording([record()])
    publications_sync_since_last(source, now=T0)
    publications_sync_since_last(source, now=T0 + timedelta(hours=1))
    assert asked[:2] == [None, None]  # the first sync reads everything, both releases
    assert asked[2:] == [T0 - timedelta(days=1)] * 2


def test_records_a_page_could_not_link_or_a_column_not_hold_are_skipped_and_named(caplog):
    from packages.sources.base import PersonRecord

    good = record("2.0-1ubuntu0.1", source_package="apport")
    bad = [
        record("1.0-1", source_package="evil/name"),
        record("1.0-1", source_package="Upper"),
        record("1.0-1", source_package="x" * 300),
        record("1.0\x00-1", source_package="nulled"),
        record("1.0-1", source_package="future", date_published=T0.replace(year=9999)),
        record("1.0-1", source_package="binaries", binaries=("ok", "bad/bin")),
        record("1.0-1", source_package="people", signer=PersonRecord("a" * 101)),
        record("1.0-1", source_package="previous", previous_version="<script>"),
    ]
    summary = publications_sync(ListSource([good, *bad]), now=T0)

    assert summary.new == 1
    assert list(Publication.objects.values_list("source_package__name", flat=True)) == ["apport"]
    assert len(summary.errors) == len(bad)
    assert "'evil/name'" in caplog.text
    assert "is not a Debian package name" in caplog.text
    assert "'nulled'" in caplog.text and "version contains a NUL byte" in caplog.text
    assert "date_published is an impossible date (9999-12-01)" in caplog.text
    status = SourceSync.objects.get(name="listed:publications")
    assert status.last_success_at == T0  # the sync succeeded; the bad records are warnings
    assert "evil/name" in status.last_error


def test_the_relations_a_source_reads_are_stored_and_kept_up_to_date():
    depends = Relation("depends", "hello", "libmutter-14-0", ">=", "46.2")
    breaks = Relation("breaks", "hello", "gdm3", "<<", "3.24.0")
    publications_sync(ListSource([record(relations=(depends,))]), now=T0)
    assert Publication.objects.get().relations == [depends.as_row()]

    publications_sync(
        ListSource([record(relations=(depends, breaks))]), now=T0 + timedelta(hours=1)
    )
    assert Publication.objects.get().relations == [breaks.as_row(), depends.as_row()]

    # A source that does not read relations (None) leaves what is stored.
    publications_sync(ListSource([record()]), now=T0 + timedelta(hours=2))
    assert Publication.objects.get().relations == [breaks.as_row(), depends.as_row()]


def test_the_bugs_an_upload_closes_are_read_from_its_changelog_and_kept():
    changelog = (
        "hello (2.0-1ubuntu0.1) noble; urgency=medium\n\n  * Fix it (LP: #2066054, #2061924)\n"
    )
    publications_sync(ListSource([record(changelog=changelog)]), now=T0)
    publication = Publication.objects.get()
    assert publication.closed_bugs == [2066054, 2061924]

    fixed = changelog + "  * And this (LP: #1)\n"
    publications_sync(ListSource([record(changelog=fixed)]), now=T0 + timedelta(hours=1))
    publication.refresh_from_db()
    assert publication.closed_bugs == [2066054, 2061924, 1]


def test_the_simulated_archive_closes_bugs_with_every_update():
    world = Simulator(packages=20, releases=1)
    publications_sync(world, now=world.anchor + timedelta(days=90))
    closed = list(Publication.objects.values_list("closed_bugs", flat=True))
    assert closed and all(1 <= len(bugs) <= 3 for bugs in closed)
