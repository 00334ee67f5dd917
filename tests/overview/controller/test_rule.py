"""The tick and the pages' "what happens next" ask one rule (overview.controller.rule): fed
the same update, the page promises exactly what the next tick does."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import time_machine

from overview.evidence.sources.base import CrashAnswer
from packages.services import publication_pause, publication_resume
from packages.services.releases import release_freeze
from tests.factories import PolicyFactory, PublicationFactory, SourcePackageFactory, UserFactory
from tests.overview.controller.fakes import T0, new_bucket, tick

pytestmark = pytest.mark.django_db

SATURDAY = T0 + timedelta(days=4, hours=13)  # T0 is a Tuesday


def _arrange(case, crashes):
    start = SATURDAY - timedelta(hours=7) if case == "quiet weekend" else T0
    publication = PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        last_increase_at=start,
        phased_update_percentage=90 if case == "quiet weekend" else 10,
    )
    person = UserFactory(username="someone")
    if case == "quiet weekend":
        PolicyFactory(quiet_weekend=True)  # for all updates
    if case == "a new crash bucket":
        # The pages know the problems a tick recorded: it halted, and a person resumed it.
        crashes.answers["tool"] = CrashAnswer(problems=(new_bucket(),))
        tick(crashes, start + timedelta(hours=1))
        publication_resume(publication=publication, actor=person, reason="looks fine to me")
    if case == "paused by a person":
        publication_pause(publication=publication, actor=person, reason="a look first")
    if case == "a frozen release":
        release_freeze(release=publication.release, actor=person, reason="point release")
    if case == "crash data missing":
        crashes.failure = RuntimeError("tracker down")
        tick(crashes, start + timedelta(hours=1))
    at = {"not due yet": T0 + timedelta(hours=2), "quiet weekend": SATURDAY}.get(
        case, T0 + timedelta(hours=7)
    )
    return publication, at


def _promised(anonymous, at) -> tuple[str, bool]:
    with time_machine.travel(at, tick=False):
        step = anonymous.get("/api/v1/publications/").json()["results"][0]["next_step"]
    return step["kind"], step["at"] is not None and datetime.fromisoformat(step["at"]) <= at


@pytest.mark.parametrize(
    "case",
    [
        "due",
        "not due yet",
        "a new crash bucket",
        "paused by a person",
        "a frozen release",
        "crash data missing",
        "quiet weekend",
    ],
)
def test_the_page_promises_what_the_next_tick_does(case, anonymous, crashes):
    publication, at = _arrange(case, crashes)
    kind, due_now = _promised(anonymous, at)

    (outcome,) = tick(crashes, at, dry_run=True)

    if outcome.action in ("advance", "complete"):
        assert kind == "advance"
    elif outcome.action == "halt":
        assert kind == "halt"
    elif outcome.hold_reason == "waiting":
        assert (kind, due_now) == ("advance", False)
    else:
        assert kind == outcome.hold_reason
    assert case != "due" or outcome.action == "advance"
    assert case != "quiet weekend" or outcome.hold_reason == "quiet_weekend"
