"""One bad record never stops the controller: a tick with a poisoned publication still
decides all the others, and the poisoned one holds with the error as its reason."""

from __future__ import annotations

import pytest
from django.core import mail

from overview.evidence.sources.base import CrashAnswer, ProblemRecord
from overview.models import Notification
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState, SourcePackage
from tests.factories import PersonFactory, PublicationFactory, SourcePackageFactory
from tests.overview.controller.fakes import HOURS, T0, new_bucket, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def healthy(count: int = 3):
    return [PublicationFactory(last_increase_at=T0) for _ in range(count)]


def assert_all_advanced(publications) -> None:
    for publication in publications:
        publication.refresh_from_db()
        assert publication.phased_update_percentage == 20, publication


def test_a_halt_whose_email_cannot_be_rendered_still_halts_and_the_others_advance(
    crashes, emails_sent_at_commit, django_capture_on_commit_callbacks
):
    # A row from before names were checked: no page can link it, so no email can.
    poisoned = PublicationFactory(
        last_increase_at=T0,
        source_package=SourcePackage.objects.create(name=""),
        signer=PersonFactory(email="signer@example.org"),
    )
    others = healthy()
    crashes.answers[""] = CrashAnswer(problems=(new_bucket(),))

    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + 6 * HOURS)

    poisoned.refresh_from_db()
    assert (poisoned.state, poisoned.phased_update_percentage) == (PhasingState.HALTED, 0)
    assert_all_advanced(others)
    notifications = Notification.objects.filter(publication=poisoned)
    assert notifications.count() == 2  # signer and uploader
    for notification in notifications:
        assert notification.sent_at is None
        assert "NoReverseMatch" in notification.error
        assert notification.next_attempt_at is not None  # retried later, alone
    assert mail.outbox == []


def test_a_problem_the_database_refuses_holds_its_update_alone(crashes, monkeypatch):
    from django.db import DataError

    from overview.controller import problems

    poisoned = PublicationFactory(
        last_increase_at=T0, source_package=SourcePackageFactory(name="bad")
    )
    others = healthy()
    crashes.answers["bad"] = CrashAnswer(problems=(new_bucket("sig:refused"),))
    real = problems.problems_record

    def database_refuses_one(answered, *, now):  # the fault: one row the database refuses
        if poisoned.pk in answered:
            raise DataError("value out of range for type integer")
        return real(answered, now=now)

    monkeypatch.setattr(problems, "problems_record", database_refuses_one)
    decisions = tick(crashes, T0 + 6 * HOURS)

    assert_all_advanced(others)
    poisoned.refresh_from_db()
    assert poisoned.phased_update_percentage == 10
    assert poisoned.hold_reason == HoldReason.CONTROLLER_ERROR
    assert poisoned.hold_detail == "DataError: value out of range for type integer"
    assert sorted(d.action for d in decisions) == ["advance", "advance", "advance", "hold"]


def test_a_count_no_column_can_hold_holds_its_update_and_never_advances_it(crashes):
    publication = PublicationFactory(
        last_increase_at=T0, source_package=SourcePackageFactory(name="neg")
    )
    crashes.answers["neg"] = CrashAnswer(
        problems=(
            ProblemRecord(kind="new_bucket", signature="sig", report_count=-1, system_count=5),
        )
    )
    tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10
    assert "report_count is out of range (-1)" in publication.hold_detail


def test_a_problem_the_source_cannot_describe_holds_its_update_and_says_why(crashes):
    poisoned = PublicationFactory(
        last_increase_at=T0, source_package=SourcePackageFactory(name="nul")
    )
    others = healthy()
    crashes.answers["nul"] = CrashAnswer(
        problems=(ProblemRecord(kind="new_bucket", signature="sig\x00", system_count=5),)
    )

    tick(crashes, T0 + 6 * HOURS)

    assert_all_advanced(others)
    poisoned.refresh_from_db()
    assert poisoned.phased_update_percentage == 10
    assert poisoned.hold_reason == HoldReason.CRASH_DATA_UNAVAILABLE
    assert poisoned.hold_detail.startswith(
        "crash data unavailable: the source answered a problem it cannot describe: "
        "signature contains a NUL byte"
    )


def test_a_change_the_state_refuses_holds_that_update_and_the_others_are_changed(
    crashes, monkeypatch
):
    from overview.controller import tick as controller
    from packages.services.changes import Change

    poisoned, *others = healthy(4)
    real = controller.outcome_of

    def refused_change(publication, *args, **kwargs):
        decision, change, blocking = real(publication, *args, **kwargs)
        if publication.pk == poisoned.pk:  # a kind of change no state allows
            change = Change(EventKind.RESUMED, reason="impossible")
        return decision, change, blocking

    monkeypatch.setattr(controller, "outcome_of", refused_change)
    decisions = tick(crashes, T0 + 6 * HOURS)

    assert_all_advanced(others)
    poisoned.refresh_from_db()
    assert poisoned.phased_update_percentage == 10
    assert poisoned.hold_reason == HoldReason.CONTROLLER_ERROR
    assert "cannot resume" in poisoned.hold_detail
    assert [d.action for d in decisions if d.publication_id == poisoned.pk] == ["hold"]
    assert not poisoned.events.exists()


def test_a_link_from_the_source_that_is_not_http_is_dropped_not_the_problem(crashes):
    publication = PublicationFactory(
        last_increase_at=T0, source_package=SourcePackageFactory(name="js")
    )
    crashes.answers["js"] = CrashAnswer(
        problems=(
            ProblemRecord(
                kind="new_bucket",
                signature="sig:js",
                function="f",
                web_link="javascript:alert(1)",
                system_count=5,
            ),
        )
    )
    tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
    problem = publication.problems.get()
    assert problem.web_link == "" and problem.bucket.web_link == ""


def test_crash_data_unavailable_is_said_once(crashes):
    from packages.sources.base import SourceError

    publication = PublicationFactory(last_increase_at=T0)
    crashes.failure = SourceError("crash data unavailable: tracker timeout")
    [decision] = tick(crashes, T0 + 6 * HOURS)
    publication.refresh_from_db()
    assert publication.hold_detail.startswith("crash data unavailable: tracker timeout (since")
    assert decision.detail.count("crash data unavailable") == 1
    crashes.failure = None
    crashes.answers[publication.source_package.name] = CrashAnswer(
        error="crash data unavailable: crash data unavailable: feed down"
    )
    [decision] = tick(crashes, T0 + 7 * HOURS)
    assert decision.detail.count("crash data unavailable") == 1
