"""Each real source drives the same sync and the same controller as the simulator does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from overview.controller import tick as controller
from overview.evidence.sources.base import CrashAnswer
from overview.evidence.sources.errortracker import ErrorTrackerSource
from overview.judges.crash_source import crash_source
from overview.models import Problem
from packages.holds import HoldReason
from packages.models import PhasingState, Publication, SourceSync, WriteBack
from packages.services.sync import publications_sync
from packages.services.writeback import percentages_write_back
from packages.sources import publication_source
from packages.sources.apt.archive import AptArchiveSource
from packages.sources.base import PublicationRecord
from packages.sources.launchpad.source import LaunchpadSource
from tests.apt_archives import write_archive
from tests.factories import PublicationFactory
from tests.fake_http import FakeHTTPServer, Reply

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)


class Quiet:
    """A crash source that sees no problem anywhere."""

    name = "quiet"

    def problems(self, queries, *, now):
        return {q: CrashAnswer() for q in queries}

    def reports(self, *, since, now):
        return iter(())


def test_the_configured_names_select_the_real_sources(settings, tmp_path):
    settings.PHASING_LAUNCHPAD_TOKEN = ""
    assert isinstance(publication_source("launchpad"), LaunchpadSource)
    assert not publication_source("launchpad").can_write  # no credentials: read-only
    settings.PHASING_APT_ARCHIVE = str(tmp_path)
    assert isinstance(publication_source("apt"), AptArchiveSource)
    assert isinstance(crash_source("errortracker"), ErrorTrackerSource)
    with pytest.raises(ValueError, match="ftp"):
        publication_source("ftp")


def test_an_apt_archive_syncs_phases_and_takes_the_new_percentage_back(tmp_path):
    record = PublicationRecord(
        release="noble",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        date_published=T0,
        phased_update_percentage=10,
        previous_version="2.10-3",
    )
    write_archive(
        tmp_path, [{"codename": "noble", "version": "24.04", "updates": [record]}], now=T0
    )
    archive = AptArchiveSource(location=str(tmp_path))

    summary = publications_sync(archive, now=T0 + timedelta(minutes=1))
    publication = Publication.objects.get()
    assert (summary.new, publication.phased_update_percentage, publication.source_name) == (
        1,
        10,
        "apt-archive",
    )
    assert SourceSync.objects.get(name="apt-archive:publications").last_success_at is not None

    controller.tick(now=T0 + timedelta(hours=7), crash_source=Quiet())
    event = publication.events.get(kind="advanced")
    percentages_write_back(event_ids=[event.pk], source=archive)

    event.refresh_from_db()
    assert event.write_back == WriteBack.APPLIED
    [reread] = archive.publications(release="noble", since=None, now=T0 + timedelta(hours=8))
    assert reread.phased_update_percentage == 20


def test_a_read_only_source_reports_the_write_back_as_a_dry_run(tmp_path):
    publication = PublicationFactory(last_increase_at=T0)
    controller.tick(now=T0 + timedelta(hours=6), crash_source=Quiet())
    event = publication.events.get()
    percentages_write_back(
        event_ids=[event.pk], source=LaunchpadSource(api_root="http://127.0.0.1:9/")
    )
    event.refresh_from_db()
    assert event.write_back == WriteBack.DRY_RUN
    assert "credentials" in event.write_back_detail


@pytest.fixture
def tracker():
    with FakeHTTPServer() as server:
        yield server


def tastypie(objects):
    return {
        "meta": {
            "limit": 360,
            "next": None,
            "offset": 0,
            "previous": None,
            "total_count": len(objects),
        },
        "objects": objects,
    }


def test_the_error_tracker_halts_an_update_on_a_new_bucket_and_holds_on_an_outage(tracker):
    broken = PublicationFactory(
        source_package__name="broken", version="1.0-1ubuntu0.1", last_increase_at=T0
    )
    flaky = PublicationFactory(
        source_package__name="flaky", version="3.0-1ubuntu0.1", last_increase_at=T0
    )
    link = tracker.url("/problem/abc123")
    tracker.get(
        "/api/1.0/package-version-new-buckets/",
        Reply(json=tastypie([{"function": "/usr/bin/broken:11:main", "web_link": link}])),
        query={"package": "broken"},
    )
    tracker.get(
        "/api/1.0/package-version-new-buckets/", Reply(status=500), query={"package": "flaky"}
    )
    tracker.get(
        "/api/1.0/package-rate-of-crashes/",
        Reply(
            json=tastypie(
                [
                    {
                        "increase": False,
                        "difference": None,
                        "web_link": None,
                        "previous_period_in_days": None,
                        "previous_average": None,
                    }
                ]
            )
        ),
    )
    source = ErrorTrackerSource(
        api_root=tracker.url("/api/1.0/"),
        timeout=0.5,
        sleep=lambda s: None,
        release_names={"noble": "Ubuntu 24.04"},
    )
    controller.tick(now=T0 + timedelta(hours=6), crash_source=source)

    broken.refresh_from_db()
    flaky.refresh_from_db()
    assert (broken.state, broken.phased_update_percentage) == (PhasingState.HALTED, 0)
    problem = Problem.objects.get(publication=broken)
    assert problem.bucket.web_link == link
    assert (flaky.state, flaky.phased_update_percentage) == (PhasingState.PHASING, 10)
    assert flaky.hold_reason == HoldReason.CRASH_DATA_UNAVAILABLE
