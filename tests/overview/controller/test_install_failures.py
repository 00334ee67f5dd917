"""Package install failures (apport's ProblemType: Package) count as problems, like crashes.

From the reports in, through the controller, to the pages and the halt email; the
setting that switches them off and their own minimum of systems; the error tracker's
buckets of that kind; and the simulator that makes some.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail

from overview.controller.notifications import notification_send
from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import (
    INSTALL_FAILURE,
    CrashQuery,
    CrashReportRecord,
    bucket_type,
)
from overview.evidence.sources.errortracker import ErrorTrackerSource
from overview.evidence.sources.simulator import SimulatedCrashFeed
from overview.judges import ubuntu as crashes
from overview.judges.local import LocalCrashSource
from overview.models import ErrorBucket, Notification, Problem, ProblemType
from packages.models import PhasingState
from packages.sources.simulator import Simulator
from tests.factories import PersonFactory, PublicationFactory, SourcePackageFactory
from tests.fake_http import FakeHTTPServer, Reply
from tests.overview.controller.fakes import HOURS, T0, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

SIGNATURE = (
    "package:tool:1.1-1:installed post-installation script subprocess returned error exit status 1"
)


def failures(publication, *, systems: int, problem_type: str = "Package"):
    """What apport sends when dpkg fails to configure the new version, one per system."""
    return [
        CrashReportRecord(
            external_id=f"install-{n}",
            signature=SIGNATURE,
            release=publication.release.codename,
            source_package=publication.source_package.name,
            version=publication.version,
            architecture="amd64",
            reported_at=T0 + 2 * HOURS,
            system_id=f"system-{n}",
            stack_trace="Setting up tool (1.1-1) ...\ndpkg: error processing package tool",
            function="installed post-installation script subprocess returned error exit status 1",
            problem_type=problem_type,
        )
        for n in range(systems)
    ]


@pytest.fixture
def publication():
    return PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        version="1.1-1",
        previous_version="1.0-1",
        date_published=T0 - 2 * HOURS,
        last_increase_at=T0 - 2 * HOURS,
        signer=PersonFactory(email="signer@example.org"),
        uploader=None,
    )


def test_install_failure_reports_land_in_a_bucket_of_their_own_kind(publication):
    summary = crash_reports_ingest(failures(publication, systems=2), now=T0 + 3 * HOURS)

    assert summary.inserted == 2
    bucket = ErrorBucket.objects.get(signature=SIGNATURE)
    assert bucket.problem_type == ProblemType.INSTALL_FAILURE and bucket.is_install_failure


def test_a_new_install_failure_bucket_halts_the_update_and_says_so(publication, anonymous):
    crash_reports_ingest(failures(publication, systems=3), now=T0 + 3 * HOURS)

    tick(LocalCrashSource(), T0 + 6 * HOURS)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)
    problem = Problem.objects.get(publication=publication)
    assert problem.bucket.is_install_failure
    assert str(problem).startswith("install failure: installed post-installation script")
    assert problem.kind_label == "New in this version: install failure"
    halt = publication.events.get(kind="halted")
    assert "problems: new install failure installed post-installation script" in halt.reason

    overview = anonymous.get("/").content.decode()
    assert "install failure: installed post-installation script" in overview
    problem_page = anonymous.get(f"/problems/{problem.bucket_id}/").content.decode()
    assert "An install failure from the error tracker" in problem_page
    assert "New in this version: install failure" in problem_page

    notification_send(notification_id=Notification.objects.get().pk, now=T0 + 6 * HOURS)
    [email] = mail.outbox
    assert "install failure (the package failed to install or upgrade)" in email.body


def test_install_failures_switched_off_never_halt(publication, settings):
    settings.PHASING_INSTALL_FAILURES = False
    crash_reports_ingest(failures(publication, systems=30), now=T0 + 3 * HOURS)

    tick(LocalCrashSource(), T0 + 6 * HOURS)

    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert not Problem.objects.filter(publication=publication).exists()


def test_install_failures_have_their_own_minimum_of_systems(publication, settings):
    settings.PHASING_NEW_BUCKET_MIN_SYSTEMS = 3
    settings.PHASING_INSTALL_FAILURE_MIN_SYSTEMS = 5
    crash_reports_ingest(failures(publication, systems=4), now=T0 + 3 * HOURS)

    tick(LocalCrashSource(), T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING

    crash_reports_ingest(failures(publication, systems=5), now=T0 + 7 * HOURS)
    tick(LocalCrashSource(), T0 + 8 * HOURS)
    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED


def test_the_rule_never_asks_a_retrace_of_an_install_failure():
    failure = crashes.BucketCounts(
        "package:x:1:boom", 9, 9, retrace_failed=True, install_failure=True
    )
    assert crashes.new_buckets([failure], set()) == [failure]
    off = crashes.Thresholds(install_failure_min_systems=None)
    assert crashes.new_buckets([failure], set(), off) == []


def test_apport_problem_types_map_to_bucket_kinds():
    assert bucket_type("Package") == INSTALL_FAILURE
    assert bucket_type("Crash") == bucket_type("KernelOops") == "crash"
    # A bucket known only by its id: the tracker's package:<binary>:<version>:<error>.
    assert bucket_type("", "package:tool:1:1.1-1:dpkg failed") == INSTALL_FAILURE
    assert bucket_type("", "/usr/bin/tool:11:main") == "crash"


def _tastypie(objects):
    meta = {"limit": 360, "next": None, "offset": 0, "previous": None}
    return {"meta": {**meta, "total_count": len(objects)}, "objects": objects}


@pytest.mark.parametrize("enabled", [True, False])
def test_the_error_trackers_install_failure_buckets_are_known_by_their_id(enabled):
    with FakeHTTPServer() as tracker:
        bucket_id = "package:tool:1:1.1-1:new pre-installation script subprocess returned error exit status 1"
        tracker.get(
            "/api/1.0/package-version-new-buckets/",
            Reply(
                json=_tastypie(
                    [
                        {"function": bucket_id, "web_link": tracker.url("/problem/abc")},
                        {
                            "function": "/usr/bin/tool:11:main",
                            "web_link": tracker.url("/problem/def"),
                        },
                    ]
                )
            ),
        )
        tracker.get(
            "/api/1.0/package-rate-of-crashes/",
            Reply(json=_tastypie([{"increase": False, "difference": None, "web_link": None}])),
        )
        source = ErrorTrackerSource(
            api_root=tracker.url("/api/1.0/"),
            timeout=0.5,
            sleep=lambda s: None,
            release_names={"noble": "Ubuntu 24.04"},
            install_failures=enabled,
        )
        query = CrashQuery("noble", "tool", "1:1.1-1", "1:1.0-1", 10)
        [answer] = source.problems([query], now=T0).values()

    kinds = {(p.signature, p.bucket_type, p.function) for p in answer.problems}
    crash = ("/usr/bin/tool:11:main", "crash", "/usr/bin/tool:11:main")
    failure = (
        bucket_id,
        INSTALL_FAILURE,
        "new pre-installation script subprocess returned error exit status 1",
    )
    assert kinds == ({crash, failure} if enabled else {crash})


def test_the_simulator_makes_some_updates_fail_to_install_with_apports_reports():
    world = Simulator(packages=300)
    now = world.anchor + timedelta(days=60)
    failing = [
        u
        for u in world.uploads(until=now)
        if u.regression and u.regression.kind == "install_failure"
    ]
    assert failing
    upload = failing[0]
    feed = SimulatedCrashFeed(world)
    signature, error = feed.regression_bucket(upload)
    assert signature == f"package:{signature.split(':')[1]}:{upload.version}:{error}"
    assert signature.split(":")[1] in upload.binaries
    reports = [
        r
        for r in feed._upload_reports(
            upload, None, upload.published, upload.published + timedelta(days=2)
        )
        if r.signature == signature
    ]
    assert reports and {r.problem_type for r in reports} == {"Package"}
    assert "dpkg: error processing package" in reports[0].stack_trace
