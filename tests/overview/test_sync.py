"""Syncing publications and crash reports from a source into the database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command

from overview.models import BucketVersionStat, CrashCounter, CrashReport
from overview.services.ingest import crash_reports_ingest
from overview.sources.base import CrashReportRecord
from packages.models import ArchiveStatus, EventKind, PhasingState, Pocket, Publication, SourceSync
from packages.services.sync import publications_sync, publications_sync_since_last
from packages.sources.base import PublicationRecord, ReleaseRecord, SourceError

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class ListSource:
    """A publication source serving a list the test controls."""

    name = "listed"
    can_write = False

    def __init__(self, records, *, fail_release: str | None = None) -> None:
        self.records = list(records)
        self.fail_release = fail_release

    def releases(self):
        return [ReleaseRecord("noble", "24.04"), ReleaseRecord("jammy", "22.04")]

    def publications(self, *, release, since, now):
        if release == self.fail_release:
            raise SourceError("503 from the archive")
        return iter([r for r in self.records if r.release == release])

    def set_percentage(self, **kwargs):
        raise AssertionError("a sync never writes")


def record(version="2.0-1ubuntu0.1", **fields) -> PublicationRecord:
    defaults = {
        "release": "noble",
        "source_package": "apport",
        "version": version,
        "date_published": T0,
        "phased_update_percentage": 10,
        "previous_version": "2.0-1ubuntu0",
    }
    return PublicationRecord(**{**defaults, **fields})


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


def crash(n: int, **fields) -> CrashReportRecord:
    defaults = {
        "external_id": f"r{n}",
        "signature": "/usr/bin/apport:11:crash",
        "release": "noble",
        "source_package": "apport",
        "version": "2.0-1ubuntu0.1",
        "architecture": "amd64",
        "reported_at": T0,
        "system_id": f"s{n % 3}",
        "stack_trace": "#0 crash ()",
    }
    return CrashReportRecord(**{**defaults, **fields})


def test_ingesting_the_same_reports_twice_stores_them_once_and_counts_them_once():
    publications_sync(ListSource([record()]), now=T0)
    reports = [crash(n) for n in range(7)]
    first = crash_reports_ingest(reports)
    second = crash_reports_ingest(reports)
    assert (first.inserted, second.inserted, second.duplicates) == (7, 0, 7)
    assert CrashReport.objects.count() == 7
    assert CrashCounter.objects.get().count == 7
    stat = BucketVersionStat.objects.get()
    assert (stat.reports, stat.systems) == (7, 3)


def test_reports_from_automated_testing_and_proposed_are_kept_but_not_counted():
    publications_sync(ListSource([record()]), now=T0)
    crash_reports_ingest([crash(1), crash(2, automated_testing=True), crash(3, from_proposed=True)])
    assert CrashReport.objects.count() == 3
    assert CrashCounter.objects.get().count == 1


def test_malformed_reports_are_logged_and_skipped(caplog):
    publications_sync(ListSource([record()]), now=T0)
    summary = crash_reports_ingest(
        [
            crash(1),
            crash(2, release="nowhere"),
            replace(crash(3), reported_at=T0.replace(tzinfo=None)),
        ]
    )
    assert (summary.inserted, summary.skipped) == (1, 2)
    assert "unknown release 'nowhere'" in caplog.text


def test_the_sync_command_prints_a_summary(capsys, settings):
    settings.PHASING_SIMULATOR_PACKAGES = 20
    from packages.sources import simulated_archive

    simulated_archive.cache_clear()
    try:
        call_command("phasing_sync", "--no-crashes")
    finally:
        simulated_archive.cache_clear()
    out = capsys.readouterr().out
    assert "simulator:" in out and "new" in out and "0 errors" in out
    assert Publication.objects.exists()


def test_the_periodic_sync_asks_only_for_what_changed_since_the_last_one():
    asked = []

    class Recording(ListSource):
        def publications(self, *, release, since, now):
            asked.append(since)
            return super().publications(release=release, since=since, now=now)

    source = Recording([record()])
    publications_sync_since_last(source, now=T0)
    publications_sync_since_last(source, now=T0 + timedelta(hours=1))
    assert asked[:2] == [None, None]  # the first sync reads everything, both releases
    assert asked[2:] == [T0 - timedelta(days=1)] * 2


def test_the_sources_check_command_says_what_answers(capsys, settings):
    settings.PHASING_SIMULATOR_PACKAGES = 10
    from packages.sources import simulated_archive

    simulated_archive.cache_clear()
    try:
        call_command("phasing_sources", "check")
    finally:
        simulated_archive.cache_clear()
    out = capsys.readouterr().out
    assert "publications: simulator answers" in out
    assert "crashes: simulator configured" in out
