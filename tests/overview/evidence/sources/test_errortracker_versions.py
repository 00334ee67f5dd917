"""What the error tracker says about versions it does not know, halted updates and releases.

From ubuntu/error-tracker@6f9febce: src/errors/api/resources.py (NotFound for a source
version Launchpad never published, 658-665; every parameter a raw string, 626-632),
src/errors/cassie.py (``if pup:`` on that string, 683-684; new buckets by source and
versions only, 706-736) and django-tastypie 0.15.1's canned error body
(tastypie/resources.py 291-315)."""

from __future__ import annotations

import pytest

from overview.evidence.sources.base import CrashAnswer, CrashQuery, ProblemRecord
from packages.holds import HoldReason
from packages.models import PhasingState, Policy, UnknownVersion
from tests.factories import PublicationFactory
from tests.fake_http import Reply
from tests.overview.controller.fakes import HOURS, T0, new_bucket, tick
from tests.overview.evidence.sources.test_errortracker import (
    NEW_BUCKETS,
    NOW,
    QUERY,
    RATE,
    make_source,
    no_increase,
    serve_quiet,
    tastypie_list,
)

CANNED = {"error_message": "Sorry, this request could not be processed. Please try again later."}


class Held:
    """A stand-in for the local crash source: what the reports held here say."""

    name = "local"

    def __init__(self, answer: CrashAnswer) -> None:
        self.answer = answer
        self.asked: list[CrashQuery] = []

    def problems(self, queries, *, now):
        self.asked += queries
        return {q: self.answer for q in queries}


def test_a_404_is_an_unknown_version_not_an_outage_and_its_canned_text_is_not_shown(
    http_server, sleeps
):
    """NotFound is a 404 whose production body is tastypie's canned text: it lasts (the
    tracker asks Launchpad's archive), so it is neither retried nor worded as an outage."""
    http_server.get(NEW_BUCKETS, Reply(status=404, json=CANNED))
    http_server.get(RATE, Reply(json=no_increase()))

    answer = make_source(http_server, sleeps).problems([QUERY], now=NOW)[QUERY]

    assert answer.error == ""
    assert answer.unknown_version.startswith("errors.ubuntu.com keeps no crash data for hello")
    assert "Sorry" not in answer.unknown_version
    assert sleeps.calls == []


def test_an_unknown_version_carries_what_the_reports_held_here_show(http_server, sleeps):
    http_server.get(NEW_BUCKETS, Reply(status=404, json=CANNED))
    held = Held(CrashAnswer(problems=(new_bucket(),), previous_reports=40))

    answer = make_source(http_server, sleeps, fallback=held).problems([QUERY], now=NOW)[QUERY]

    assert held.asked == [QUERY]
    assert answer.problems == (new_bucket(),) and answer.previous_reports == 40
    assert answer.unknown_version


@pytest.mark.parametrize(
    ("status", "body"), [(500, CANNED), (200, CANNED)], ids=["a 500", "an error in a 200"]
)
def test_the_trackers_canned_error_text_is_never_shown_as_a_reason(
    http_server, sleeps, status, body
):
    http_server.get(NEW_BUCKETS, Reply(status=status, json=body))

    answer = make_source(http_server, sleeps, max_retries=0).problems([QUERY], now=NOW)[QUERY]

    assert answer.error.startswith("crash data unavailable: ")
    assert "Sorry" not in answer.error and "try again later" not in answer.error


def test_at_0_percent_the_rate_is_never_asked(http_server, sleeps):
    """``if pup:`` is true for the string "0", and int("0") zeroes the baseline: any
    three crashes today would be an increase."""
    serve_quiet(http_server)
    at_zero = CrashQuery("noble", "hello", "2.10-3ubuntu0.1", "2.10-3", percentage=0)

    answer = make_source(http_server, sleeps).problems([at_zero], now=NOW)[at_zero]

    assert answer == CrashAnswer()
    assert http_server.made("GET", RATE) == []
    assert len(http_server.made("GET", NEW_BUCKETS)) == 1


def test_new_buckets_are_asked_once_for_every_release_and_the_rate_per_release(http_server, sleeps):
    serve_quiet(http_server)
    http_server.get(
        NEW_BUCKETS, Reply(json=tastypie_list([{"function": "sig", "web_link": "/problem/1"}]))
    )
    noble = CrashQuery("noble", "hello", "2.10-3ubuntu0.1", "2.10-3", percentage=30)
    plucky = CrashQuery("plucky", "hello", "2.10-3ubuntu0.1", "2.10-3", percentage=50)

    answers = make_source(http_server, sleeps).problems([noble, plucky], now=NOW)

    assert [p.signature for p in answers[noble].problems] == ["sig"]
    assert answers[plucky].problems == answers[noble].problems
    assert len(http_server.made("GET", NEW_BUCKETS)) == 1
    assert sorted(r.param("release") for r in http_server.made("GET", RATE)) == [
        "Ubuntu 24.04",
        "Ubuntu 25.04",
    ]


pytestmark_db = pytest.mark.django_db


class Recording:
    """A crash source that records the controller's queries and answers as told."""

    name = "recording"

    def __init__(self) -> None:
        self.answers: dict[str, CrashAnswer] = {}
        self.queries: list[CrashQuery] = []

    def problems(self, queries, *, now):
        self.queries += queries
        return {q: self.answers.get(q.source_package, CrashAnswer()) for q in queries}

    def reports(self, *, since, now):
        return iter(())


@pytestmark_db
def test_by_default_a_version_the_tracker_does_not_know_holds_with_that_reason():
    publication = PublicationFactory(last_increase_at=T0)
    crashes = Recording()
    crashes.answers[publication.source_package.name] = CrashAnswer(unknown_version="not known")

    [decision] = tick(crashes, T0 + 7 * HOURS)

    publication.refresh_from_db()
    assert decision.hold_reason == HoldReason.UNKNOWN_VERSION
    assert (publication.hold_reason, publication.hold_detail) == (
        HoldReason.UNKNOWN_VERSION,
        "not known",
    )
    assert publication.crash_data_unavailable_since is None
    assert publication.phased_update_percentage == 10


@pytestmark_db
def test_a_policy_can_judge_an_unknown_version_on_the_reports_held_here():
    publication = PublicationFactory(last_increase_at=T0)
    Policy.objects.create(
        source_package=publication.source_package, unknown_version=UnknownVersion.LOCAL
    )
    crashes = Recording()
    crashes.answers[publication.source_package.name] = CrashAnswer(unknown_version="not known")

    tick(crashes, T0 + 7 * HOURS)
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 20

    crashes.answers[publication.source_package.name] = CrashAnswer(
        unknown_version="not known", problems=(new_bucket(),)
    )
    tick(crashes, T0 + 8 * HOURS)
    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED


@pytestmark_db
def test_a_halted_update_is_asked_about_with_the_percentage_it_had_before_its_halt():
    publication = PublicationFactory(phased_update_percentage=40, last_increase_at=T0)
    crashes = Recording()
    crashes.answers[publication.source_package.name] = CrashAnswer(
        problems=(ProblemRecord(kind="increased_rate", difference=4.0),)
    )
    tick(crashes, T0 + HOURS)
    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)

    tick(crashes, T0 + 2 * HOURS)

    assert [q.percentage for q in crashes.queries] == [40, 40]
