"""The watch at 100%: under the sequential judge an update reaches 100% still in phasing,
is judged there for the policy's `watch_at_full` (3 days unless set) and halts on a
regression found then; after it, it is complete. Ubuntu's rules complete it at 100% at
once, as phased-updater does."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine

from overview.evidence.sources.base import CrashAnswer
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState
from packages.services import publication_pause, publication_resume
from packages.services.releases import release_freeze
from tests.factories import PolicyFactory, PublicationFactory, ReleaseFactory, UserFactory
from tests.overview.controller.fakes import HOURS, T0, new_bucket, tick
from tests.overview.controller.test_together import gnome_shell, mutter

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

DAYS = timedelta(days=1)


def at(percentage: int, *, since: timedelta):
    return PublicationFactory(phased_update_percentage=percentage, last_increase_at=T0 - since)


def test_the_step_to_100_leaves_it_in_phasing_still_judged_for_a_week(crashes):
    PolicyFactory()
    publication = at(90, since=6 * HOURS)

    [decision] = tick(crashes, T0)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 100)
    assert decision.action == "advance"
    assert publication.events.get().kind == EventKind.ADVANCED
    assert publication.completed_at is None

    tick(crashes, T0 + HOURS)

    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert publication.hold_reason == HoldReason.WAITING
    assert publication.hold_detail == "at 100%, still judged until 2026-12-04 00:00 UTC"


def test_a_regression_found_while_it_is_watched_at_100_halts_it_to_0(crashes):
    PolicyFactory()
    publication = at(100, since=2 * DAYS)
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))

    [decision] = tick(crashes, T0)

    publication.refresh_from_db()
    assert decision.action == "halt"
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)
    assert publication.percentage_before_halt == 100


def test_once_the_watch_is_over_it_is_complete(crashes):
    PolicyFactory()
    publication = at(100, since=3 * DAYS)

    [decision] = tick(crashes, T0)

    publication.refresh_from_db()
    assert decision.action == "complete"
    assert publication.state == PhasingState.COMPLETE
    assert publication.completed_at == T0


def test_the_policy_sets_how_long_and_0_completes_it_at_100_at_once(crashes):
    PolicyFactory(watch_at_full=timedelta(0))
    publication = at(90, since=6 * HOURS)

    tick(crashes, T0)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.COMPLETE, 100)
    assert publication.events.get().kind == EventKind.COMPLETED


def test_under_ubuntu_s_rules_100_is_complete_at_once(crashes):
    PolicyFactory(judge="ubuntu")
    publication = at(90, since=6 * HOURS)

    tick(crashes, T0)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.COMPLETE, 100)


def test_the_pages_say_when_a_watched_update_completes(anonymous, crashes):
    PolicyFactory()
    at(100, since=HOURS)

    with time_machine.travel(T0, tick=False):
        step = anonymous.get("/api/v1/publications/").json()["results"][0]["next_step"]

    assert step["kind"] == "waiting"
    assert step["text"] == (
        "complete in about 71 h: still judged at 100% until 2026-12-03 23:00 UTC, "
        "halts on a regression"
    )
    assert step["at"] == "2026-12-03T23:00:00Z"


def test_the_overview_badges_a_watched_update_apart_from_one_that_waits(anonymous, crashes):
    PolicyFactory()
    at(90, since=6 * HOURS)
    tick(crashes, T0)

    with time_machine.travel(T0, tick=False):
        html = anonymous.get("/").content.decode()

    assert 'class="line badge-row-watched"' in html
    assert '<span class="badge-icon" aria-hidden="true">◉</span> watched at 100 %</span>' in html
    assert "badge-row-waiting" not in html

    tick(crashes, T0 + HOURS)  # now held there, still judged

    with time_machine.travel(T0 + HOURS, tick=False):
        html = anonymous.get("/").content.decode()

    assert 'class="line badge-row-watched"' in html
    assert (
        'badge-watched" title="waiting for the next step: at 100%, still judged until 2026-12-04'
        in html
    )


def test_an_update_held_at_100_for_another_reason_waits_rather_than_being_watched(anonymous):
    PublicationFactory(
        phased_update_percentage=100,
        hold_reason=HoldReason.JUDGE_FAILED,
        hold_detail="the sequential test failed: ValueError",
    )

    with time_machine.travel(T0, tick=False):
        html = anonymous.get("/").content.decode()

    assert 'class="line badge-row-waiting"' in html
    assert "badge-row-watched" not in html


def test_a_note_on_a_watched_update_leaves_it_watched(crashes):
    PolicyFactory()
    publication = at(100, since=2 * DAYS)

    release_freeze(release=publication.release, actor=UserFactory(), reason="point release")

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 100)


def test_a_pause_and_a_resume_at_100_leave_it_watched_until_its_watch_is_over(crashes):
    PolicyFactory()
    publication = at(100, since=2 * DAYS)
    person = UserFactory()

    publication_pause(publication=publication, actor=person, reason="a look first")
    publication_resume(publication=publication, actor=person, reason="fine")

    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    [decision] = tick(crashes, T0)
    assert decision.hold_reason == HoldReason.WAITING


def test_resumed_by_the_policy_after_a_halt_at_100_it_is_watched_again(crashes):
    PolicyFactory(auto_resume=True)
    publication = PublicationFactory(
        state=PhasingState.HALTED,
        phased_update_percentage=0,
        percentage_before_halt=100,
        hold_reason=HoldReason.PROBLEMS,
        last_increase_at=T0 - 3 * DAYS,
    )

    tick(crashes, T0)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 100)
    assert publication.last_increase_at == T0  # its watch starts again


def test_an_update_never_completes_while_one_it_needs_is_still_watched(crashes):
    release = ReleaseFactory()
    PolicyFactory()
    needed = mutter(release, percentage=100, last_increase_at=T0 - 2 * DAYS)
    dependent = gnome_shell(release, percentage=90)
    PolicyFactory(source_package=dependent.source_package, judge="ubuntu")

    tick(crashes, T0)

    needed.refresh_from_db()
    dependent.refresh_from_db()
    assert needed.state == dependent.state == PhasingState.PHASING
    assert dependent.phased_update_percentage == 90
    assert dependent.hold_detail.startswith("mutter 46.2-1ubuntu0.24.04.1: not complete yet")


def test_once_the_watch_is_over_the_pages_say_complete_before_the_tick_does(anonymous):
    PolicyFactory()
    at(100, since=3 * DAYS + HOURS)

    with time_machine.travel(T0, tick=False):
        step = anonymous.get("/api/v1/publications/").json()["results"][0]["next_step"]

    assert (step["kind"], step["text"]) == ("complete", "complete")
