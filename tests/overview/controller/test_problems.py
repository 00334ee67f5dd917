"""The controller halts on a problem no override covers, emails the people behind the update once,
and never resumes by itself."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail

from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashAnswer, CrashReportRecord, ProblemRecord
from overview.judges.local import LocalCrashSource
from overview.models import Notification, Problem, ProblemKind
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState
from packages.services import (
    publication_pause,
    publication_resume,
)
from tests.factories import (
    ErrorBucketFactory,
    OverrideFactory,
    PersonFactory,
    PublicationFactory,
    UserFactory,
)
from tests.overview.controller.fakes import HOURS, T0, new_bucket, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def report(publication, signature, hour, system, n=0) -> CrashReportRecord:
    return CrashReportRecord(
        external_id=f"{publication.version}-{signature}-{hour}-{system}-{n}",
        signature=signature,
        release=publication.release.codename,
        source_package=publication.source_package.name,
        version=publication.version,
        architecture="amd64",
        reported_at=T0 + hour * HOURS - timedelta(minutes=10),
        system_id=f"system-{system}",
        stack_trace="#0 crash_here ()",
        function="crash_here",
    )


def test_a_regressing_update_is_halted_at_the_step_where_its_new_bucket_appears(
    emails_sent_at_commit,
    django_capture_on_commit_callbacks,
):
    signer = PersonFactory(account_name="signer", email="signer@example.org")
    uploader = PersonFactory(account_name="uploader", email="uploader@example.org")
    publication = PublicationFactory(
        date_published=T0, last_increase_at=T0, signer=signer, uploader=uploader
    )
    source = LocalCrashSource()
    for hour in range(0, 40):
        if hour == 20:  # three machines crash in a place the previous version never did
            crash_reports_ingest(
                [report(publication, "/usr/bin/tool:11:new_crash", 20, s) for s in range(3)]
            )
        with django_capture_on_commit_callbacks(execute=True):
            tick(source, T0 + hour * HOURS)
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (0, PhasingState.HALTED)
    halt = publication.events.get(kind=EventKind.HALTED)
    assert halt.created_at == T0 + 20 * HOURS
    assert halt.old_percentage == 40
    assert "new bucket crash_here (3 systems" in halt.reason
    assert sorted(m.to[0] for m in mail.outbox) == ["signer@example.org", "uploader@example.org"]
    assert "crash_here" in mail.outbox[0].body
    assert "never resumes by itself" in mail.outbox[0].body


def test_two_systems_are_not_enough_for_a_new_bucket():
    publication = PublicationFactory(date_published=T0, last_increase_at=T0)
    crash_reports_ingest(
        [report(publication, "/usr/bin/tool:11:rare", 1, s, n) for s in range(2) for n in range(5)]
    )
    tick(LocalCrashSource(), T0 + 6 * HOURS)
    assert not Problem.objects.filter(publication=publication, kind=ProblemKind.NEW_BUCKET).exists()


def test_a_bucket_the_previous_version_had_is_not_new():
    publication = PublicationFactory(
        date_published=T0, last_increase_at=T0, previous_version="1.0-1ubuntu0"
    )
    signature = "/usr/bin/tool:11:old_crash"
    old = [
        CrashReportRecord(
            **{
                **report(publication, signature, 1, s).__dict__,
                "version": "1.0-1ubuntu0",
                "external_id": f"old-{s}",
            }
        )
        for s in range(3)
    ]
    crash_reports_ingest(old + [report(publication, signature, 1, s) for s in range(5)])
    tick(LocalCrashSource(), T0 + 6 * HOURS)
    assert not Problem.objects.filter(publication=publication, kind=ProblemKind.NEW_BUCKET).exists()


def test_signer_and_uploader_are_emailed_once_per_halt(
    emails_sent_at_commit, crashes, django_capture_on_commit_callbacks
):
    person = PersonFactory(email="same@example.org")
    sponsor = PersonFactory(email="sponsor@example.org")
    publication = PublicationFactory(signer=person, uploader=person, sponsor=sponsor)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + HOURS)
    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + 2 * HOURS)
    assert sorted(m.to[0] for m in mail.outbox) == ["same@example.org", "sponsor@example.org"]
    assert Notification.objects.get(person=person).roles == "signer, uploader"
    assert publication.events.filter(kind=EventKind.HALTED).count() == 1


def test_halted_update_never_resumes_by_itself(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + HOURS)
    crashes.answers.clear()  # the crashes stop, as they do when an update is pulled
    for hour in range(2, 30):
        tick(crashes, T0 + hour * HOURS)
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (0, PhasingState.HALTED)
    assert publication.hold_reason == HoldReason.PROBLEMS


def test_a_person_resumes_a_halted_update_and_phasing_goes_on(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + HOURS)
    problem = Problem.objects.get(publication=publication)
    OverrideFactory(
        source_package=publication.source_package,
        bucket=problem.bucket,
        version=publication.version,
    )
    publication_resume(
        publication=publication, actor=UserFactory(), reason="overridden", now=T0 + 2 * HOURS
    )
    tick(crashes, T0 + 8 * HOURS)
    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (20, PhasingState.PHASING)


def test_a_problem_halts_a_paused_update_too(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    publication_pause(publication=publication, actor=UserFactory(), reason="look", now=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    tick(crashes, T0 + HOURS)
    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED


def test_an_overridden_problem_does_not_halt_and_stays_visible(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    bucket = ErrorBucketFactory(signature="/usr/bin/tool:11:g_main:1")
    OverrideFactory(source_package=publication.source_package, bucket=bucket, version="")
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))
    [decision] = tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 20)
    assert decision.detail == "1 overridden problem"
    assert Problem.objects.get(publication=publication).bucket == bucket


def test_an_override_for_another_version_does_not_cover_this_one(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    OverrideFactory(
        source_package=publication.source_package,
        kind=ProblemKind.INCREASED_RATE,
        bucket=None,
        version="0.9",
    )
    crashes.answers[publication.source_package.name] = CrashAnswer(
        problems=(ProblemRecord(kind="increased_rate", report_count=12, difference=6.5),)
    )
    [decision] = tick(crashes, T0 + HOURS)
    assert decision.action == "halt"
    assert "increased crash rate" in decision.detail


def test_an_override_imported_by_its_tracker_url_covers_the_trackers_problem(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    link = "https://errors.ubuntu.com/problem/5f3e"
    imported = ErrorBucketFactory(signature=link, web_link=link)
    OverrideFactory(
        source_package=publication.source_package, bucket=imported, version=publication.version
    )
    crashes.answers[publication.source_package.name] = CrashAnswer(
        problems=(
            ProblemRecord(
                kind="new_bucket", signature="/usr/bin/x:11:f", web_link=link, system_count=9
            ),
        )
    )
    [decision] = tick(crashes, T0 + 6 * HOURS)
    assert decision.action == "advance"
    assert Problem.objects.get(publication=publication).bucket == imported


def test_a_problem_reported_again_is_refreshed_only_where_its_figures_moved():
    from overview.controller.problems import problems_record

    publication = PublicationFactory()
    rise = ProblemRecord(kind=ProblemKind.INCREASED_RATE, report_count=9, difference=2.5)
    bucket = ProblemRecord(kind=ProblemKind.NEW_BUCKET, signature="sig:a", report_count=3)
    problems_record({publication.pk: [rise, bucket]}, now=T0)

    grown = ProblemRecord(kind=ProblemKind.INCREASED_RATE, report_count=14, difference=3.0)
    active = problems_record({publication.pk: [grown, bucket]}, now=T0 + HOURS)

    assert sorted((p.kind, p.report_count) for p in active[publication.pk]) == [
        (ProblemKind.INCREASED_RATE, 14),
        (ProblemKind.NEW_BUCKET, 3),
    ]
    seen = dict(Problem.objects.values_list("kind", "last_seen_at"))
    assert seen == {ProblemKind.INCREASED_RATE: T0 + HOURS, ProblemKind.NEW_BUCKET: T0}


def test_a_rise_no_longer_reported_is_cleared_and_keeps_its_figures_a_new_bucket_stays():
    from overview.controller.problems import problems_record

    publication = PublicationFactory()
    rise = ProblemRecord(kind=ProblemKind.INCREASED_RATE, report_count=9, detail="9 against 3")
    bucket = ProblemRecord(kind=ProblemKind.NEW_BUCKET, signature="sig:a", report_count=3)
    problems_record({publication.pk: [rise, bucket]}, now=T0)

    active = problems_record({publication.pk: []}, now=T0 + HOURS)

    assert [p.kind for p in active[publication.pk]] == [ProblemKind.NEW_BUCKET]
    cleared = Problem.objects.get(kind=ProblemKind.INCREASED_RATE)
    assert (cleared.active, cleared.report_count, cleared.detail, cleared.last_seen_at) == (
        False,
        9,
        "9 against 3",
        T0,
    )
