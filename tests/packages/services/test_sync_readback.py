"""What the sync keeps of the source: each binary's percentage, the read-back of our writes,
removals, versions also in -security, and permission to write."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.models import (
    ArchiveStatus,
    EventKind,
    PhasingState,
    Publication,
    SourceSync,
    WriteBack,
    WritePermission,
)
from packages.services import TransitionError, publication_set_percentage
from packages.services.sync import publications_sync, publications_sync_since_last
from packages.services.writeback import percentages_reconcile, percentages_write_back
from packages.sources.base import BinaryPercentage, WriteResult
from tests.factories import UserFactory
from tests.packages.services.sync_fakes import T0, ListSource, record

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

PER_BINARY = (
    BinaryPercentage("apport", "amd64", 30),
    BinaryPercentage("apport", "arm64", 30),
    BinaryPercentage("python3-apport", "amd64", 10),
)


class Archive(ListSource):
    """A source that takes writes as told: into its records, ignored, or refused."""

    name = "archive"
    can_write = True

    def __init__(self, records, *, answer="applied", take=True):
        super().__init__(records)
        self.answer, self.take, self.writes = answer, take, []

    def set_percentage(self, *, release, pocket, source_package, version, percentage):
        self.writes.append(percentage)
        if self.answer == "applied" and self.take:
            self.records = [
                r
                if (r.source_package, r.version) != (source_package, version)
                else record(version, phased_update_percentage=percentage)
                for r in self.records
            ]
        detail = "no permission to change phasing: HTTP 401" if self.answer == "denied" else ""
        return WriteResult(self.answer, detail)

    def check_write(self):
        return WriteResult("applied", "writable")


def set_to(publication, percentage, *, at):
    admin = UserFactory(username="admin")
    return publication_set_percentage(
        publication=publication, percentage=percentage, actor=admin, reason="test", now=at
    )


def test_each_binary_keeps_its_own_percentage_and_disagreement_is_shown():
    publications_sync(ListSource([record(binary_percentages=PER_BINARY)]), now=T0)

    publication = Publication.objects.get()
    assert publication.source_percentages == [
        ["apport", "amd64", 30],
        ["apport", "arm64", 30],
        ["python3-apport", "amd64", 10],
    ]
    assert publication.binaries_disagree
    assert "binaries at different percentages (10%, 30%): partial upgrades possible" in (
        publication.source_notes()
    )


def test_a_write_is_read_back_at_the_next_sync_and_a_mismatch_shows_both_values():
    source = Archive([record()], take=False)
    publications_sync(source, now=T0)
    publication = Publication.objects.get()
    event = set_to(publication, 40, at=T0 + timedelta(minutes=1))
    percentages_write_back(event_ids=[event.pk], source=source, now=T0 + timedelta(minutes=2))

    publications_sync(source, now=T0 + timedelta(minutes=5))

    assert source.watches["noble"].written == {("apport", "2.0-1ubuntu0.1")}
    publication.refresh_from_db()
    assert (publication.written_percentage, publication.source_percentage) == (40, 10)
    assert publication.readback_mismatch
    assert publication.source_notes() == ["archive holds 10%, not the 40% we wrote"]


def test_a_write_the_source_took_reads_back_clean_and_is_not_asked_again():
    source = Archive([record()])
    publications_sync(source, now=T0)
    publication = Publication.objects.get()
    event = set_to(publication, 40, at=T0 + timedelta(minutes=1))
    percentages_write_back(event_ids=[event.pk], source=source, now=T0 + timedelta(minutes=2))

    publications_sync(source, now=T0 + timedelta(minutes=5))
    publications_sync(source, now=T0 + timedelta(minutes=10))

    publication.refresh_from_db()
    assert not publication.readback_mismatch and publication.source_percentage == 40
    assert source.watches["noble"].written == frozenset()
    assert ("apport", "2.0-1ubuntu0.1") in source.watches["noble"].active


def test_a_publication_deleted_at_the_source_is_marked_deleted_with_an_event():
    publications_sync(ListSource([record()]), now=T0)

    publications_sync(ListSource([record(status="deleted")]), now=T0 + timedelta(hours=1))

    publication = Publication.objects.get()
    assert (publication.state, publication.status) == (
        PhasingState.SUPERSEDED,
        ArchiveStatus.DELETED,
    )
    assert publication.events.order_by("-id").first().reason == "deleted at the source"


def test_a_version_also_in_security_is_released_to_everyone_and_never_phased_again():
    """apt never phases a version reached through -security (apt-pkg/pkgcache.cc
    1067-1086); before 2.7.11 (2.4.12 on 22.04) it kept it back instead (LP #2051181)."""
    publications_sync(ListSource([record()]), now=T0)

    publications_sync(ListSource([record(in_security=True)]), now=T0 + timedelta(hours=1))

    publication = Publication.objects.get()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.COMPLETE, 100)
    released = publication.events.get(kind=EventKind.RELEASED)
    assert released.write_back == WriteBack.PENDING and "-security" in released.reason
    assert "also in -security yet at 10% at listed" in publication.source_notes()[0]
    with pytest.raises(TransitionError, match="also published in -security"):
        set_to(publication, 10, at=T0 + timedelta(hours=2))


def test_a_refused_write_is_a_lasting_no_permission_state_not_retried_until_it_changes():
    source = Archive([record()], answer="denied")
    publications_sync(source, now=T0)
    publication = Publication.objects.get()
    event = set_to(publication, 40, at=T0)

    percentages_write_back(event_ids=[event.pk], source=source)
    percentages_reconcile(now=T0 + timedelta(hours=1), source=source)

    event.refresh_from_db()
    status = SourceSync.objects.get(name="archive:publications")
    assert event.write_back == WriteBack.DENIED
    assert status.write_permission == WritePermission.DENIED
    assert status.write_detail.startswith("no permission to change phasing")
    assert source.writes == [40]  # the reconcile did not knock again

    source.answer = "applied"
    status.write_permission = WritePermission.GRANTED  # phasing_sources check saw it fixed
    status.save()
    percentages_reconcile(now=T0 + timedelta(hours=2), source=source)
    event.refresh_from_db()
    assert event.write_back == WriteBack.APPLIED and source.writes == [40, 40]


def test_a_source_says_how_much_overlap_its_incremental_sync_needs():
    asked = []

    class Quick(ListSource):
        incremental_margin = timedelta(hours=1)

        def publications(self, *, release, since, now, watch=None):
            asked.append(since)
            return super().publications(release=release, since=since, now=now, watch=watch)

    publications_sync_since_last(Quick([record()]), now=T0)
    publications_sync_since_last(Quick([record()]), now=T0 + timedelta(hours=5))

    assert asked[2:] == [T0 - timedelta(hours=1)] * 2
