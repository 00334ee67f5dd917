"""Ubuntu's auto-resume as a per-policy choice, off by default: a halted update whose
checks come back clean goes on one step above its last percentage (phased-updater's
``max_pup + PUP_INCREMENT``); a new bucket still there, or a person's pull, keeps it
halted."""

from __future__ import annotations

import pytest

from overview.evidence.sources.base import CrashAnswer
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState
from tests.factories import PolicyFactory, PublicationFactory
from tests.overview.controller.fakes import HOURS, T0, new_bucket, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def halted(**fields):
    values = {
        "state": PhasingState.HALTED,
        "phased_update_percentage": 0,
        "percentage_before_halt": 30,
        "hold_reason": HoldReason.PROBLEMS,
        "hold_detail": "increased crash rate",
        "last_increase_at": T0 - 24 * HOURS,
    }
    values.update(fields)
    return PublicationFactory(**values)


def test_a_halted_update_with_clean_checks_resumes_one_step_above_its_last_percentage(crashes):
    PolicyFactory(auto_resume=True)
    publication = halted()

    [decision] = tick(crashes, T0 + 6 * HOURS)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.PHASING, 40)
    assert publication.hold_reason == HoldReason.NONE
    event = publication.events.get(kind=EventKind.RESUMED)
    assert "auto-resume at 40% (halted at 30%)" in event.reason
    assert decision.action == "advance"


def test_without_the_option_a_halt_waits_for_a_person(crashes):
    PolicyFactory()
    publication = halted()

    tick(crashes, T0 + 6 * HOURS)

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (PhasingState.HALTED, 0)


def test_a_new_bucket_still_there_keeps_it_halted(crashes):
    PolicyFactory(auto_resume=True)
    publication = halted()
    crashes.answers[publication.source_package.name] = CrashAnswer(problems=(new_bucket(),))

    tick(crashes, T0 + 6 * HOURS)

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED


def test_a_person_s_pull_is_never_resumed_by_itself(crashes):
    PolicyFactory(auto_resume=True)
    publication = halted(hold_reason=HoldReason.PULLED, hold_detail="pulled: broke boot")

    tick(crashes, T0 + 6 * HOURS)

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED


def test_crash_data_unavailable_resumes_nothing(crashes):
    PolicyFactory(auto_resume=True)
    publication = halted()
    crashes.answers[publication.source_package.name] = CrashAnswer(error="tracker down")

    tick(crashes, T0 + 6 * HOURS)

    publication.refresh_from_db()
    assert publication.state == PhasingState.HALTED
