"""Reports posted to the intake as whoopsie posts them are the evidence of the "intake"
crash source: one sync brings them into the buckets and counters the judges read."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import bson
import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from overview.controller import tick as controller
from overview.evidence.crash_sync import crashes_sync
from overview.evidence.sources.base import CrashQuery
from overview.judges.crash_source import crash_source
from overview.models import CrashReport, Problem, ProblemKind, ProblemType
from overview.monitoring.health import crash_data_check
from packages.models import PhasingState, SourceSync
from tests.factories import PublicationFactory, SourcePackageFactory

pytestmark = pytest.mark.django_db

BUCKET = "/usr/bin/tool:11:crash_here:main"


@pytest.fixture(autouse=True)
def fresh_limits(settings):
    settings.PHASING_CRASH_SOURCE = "intake"
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def update(db):
    return PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        version="1.2-1ubuntu0.1",
        previous_version="1.2-1",
    )


def crash(machine: int, *, version: str = "1.2-1ubuntu0.1", release: str = "Ubuntu 24.04") -> bytes:
    return bson.encode(
        {
            "ProblemType": "Crash",
            "ExecutablePath": "/usr/bin/tool",
            "Package": f"tool {version}",
            "SourcePackage": "tool",
            "DistroRelease": release,
            "Architecture": "amd64",
            "Date": f"Thu Dec  3 11:{machine:02d}:00 2026",
            "ProcStatus": f"Name:\ttool\nPid:\t{machine}",
            "Signal": "11",
            "StacktraceTop": "crash_here () from /usr/lib/libtool.so\nmain ()",
        }
    )


def system(machine: int) -> str:
    """whoopsie's id: the SHA-512 of the machine's DMI UUID."""
    return hashlib.sha512(f"{machine:08d}-0000-0000-0000-000000000000".encode()).hexdigest()


def post(client, machine: int, **kwargs):
    return client.generic(
        "POST",
        f"/{system(machine)}",
        data=crash(machine, **kwargs),
        content_type="application/octet-stream",
    )


def test_reports_posted_as_whoopsie_posts_them_halt_the_update_within_one_sync(
    anonymous, member, triager, update
):
    for machine in range(1, 5):
        assert post(anonymous, machine).status_code == 200
    source = crash_source()
    summary = crashes_sync(source)
    assert summary["inserted"] == 4
    report = CrashReport.objects.select_related("bucket").get(system_id=system(1)[:64])
    assert report.bucket.signature == BUCKET
    assert report.stack_trace == ""

    controller.tick(crash_source=source)

    update.refresh_from_db()
    problem = Problem.objects.get(publication=update, kind=ProblemKind.NEW_BUCKET)
    assert (problem.kind, problem.bucket.signature, problem.system_count) == (
        ProblemKind.NEW_BUCKET,
        BUCKET,
        4,
    )
    assert update.state == PhasingState.HALTED
    # On the pages as any source's problem; the reports themselves for triagers only.
    assert "crash_here" in anonymous.get(problem.bucket.get_absolute_url()).content.decode()
    assert "crash_here" in anonymous.get("/").content.decode()
    reports_page = reverse("triage:reports", args=[problem.bucket.pk])
    report_page = reverse("triage:report", args=[report.pk])
    assert member.get(reports_page).status_code == 403
    assert member.get(report_page).status_code == 403
    assert triager.get(reports_page).status_code == 200
    assert "/usr/bin/tool" in triager.get(report_page).content.decode()
    assert crash_data_check(timezone.now()).ok


def test_a_sync_again_brings_nothing_twice(anonymous, update):
    for machine in range(1, 3):
        post(anonymous, machine)
    source = crash_source()
    assert crashes_sync(source)["inserted"] == 2
    assert crashes_sync(source)["inserted"] == 0
    assert CrashReport.objects.count() == 2


def test_a_report_of_a_release_the_archive_does_not_have_is_logged_and_skipped(
    anonymous, update, caplog
):
    post(anonymous, 1, release="Ubuntu 12.04")
    post(anonymous, 2)
    summary = crashes_sync(crash_source())
    assert (summary["inserted"], summary["skipped"]) == (1, 1)
    assert "unknown release" in caplog.text


def test_without_a_recent_sync_the_intake_answers_crash_data_unavailable(update):
    source = crash_source()
    query = CrashQuery("noble", "tool", "1.2-1ubuntu0.1", "1.2-1", 10)
    now = timezone.now()
    assert "never been synced" in source.problems([query], now=now)[query].error

    crashes_sync(source, now=now)
    assert SourceSync.objects.get(name="intake:crashes").last_success_at == now
    assert source.problems([query], now=now)[query].error == ""
    later = now + timedelta(hours=2)
    assert "last synced" in source.problems([query], now=later)[query].error


def test_a_package_problem_is_an_install_failure_bucket(anonymous, update):
    failure = bson.encode(
        {
            "ProblemType": "Package",
            "Package": "tool 1.2-1ubuntu0.1",
            "SourcePackage": "tool",
            "DistroRelease": "Ubuntu 24.04",
            "Architecture": "amd64",
            "Date": "Thu Dec  3 11:00:00 2026",
            "DuplicateSignature": "package:tool:1.2-1ubuntu0.1:subprocess installed "
            "post-installation script returned error exit status 1",
            "ErrorMessage": "subprocess installed post-installation script returned error",
        }
    )
    response = anonymous.generic(
        "POST", f"/{system(1)}", data=failure, content_type="application/octet-stream"
    )
    assert response.status_code == 200
    crashes_sync(crash_source())
    report = CrashReport.objects.select_related("bucket").get()
    assert report.bucket.problem_type == ProblemType.INSTALL_FAILURE
    assert "ErrorMessage" not in report.environment
