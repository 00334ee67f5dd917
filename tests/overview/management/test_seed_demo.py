"""seed_demo replays the real controller over the simulated archive into a demo that looks
like a healthy archive, and a rerun adds nothing."""

from __future__ import annotations

from collections import Counter

import pytest
from django.core.management import call_command

from overview.controller.notifications import notifications_sent_here
from overview.models import CrashReport, Notification, Override, Problem
from packages.holds import HoldReason
from packages.models import (
    ACTIVE_STATES,
    PhasingEvent,
    PhasingState,
    Publication,
    Release,
    ScheduledChange,
    ScheduledState,
)
from packages.services.scheduled import AWAITING_SIGN_OFF

SEED = ("--packages", "150", "--days", "4", "--step-hours", "2", "--baseline-days", "3")


@pytest.mark.django_db
def test_seed_demo_makes_a_healthy_looking_archive_and_a_rerun_makes_no_duplicates(
    capsys, archive_admin_user, triager_user, django_capture_on_commit_callbacks
):
    # The replay sends each email at its commit, which a test's transaction holds back.
    with notifications_sent_here(), django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo", *SEED)

    assert Publication.objects.filter(state=PhasingState.COMPLETE).exists()
    assert PhasingEvent.objects.filter(kind="advanced").exists()
    # Real regressions halt; false alarms are overridden by the triager and resumed.
    assert Problem.objects.filter(kind="new_bucket").exists()
    assert Override.objects.filter(created_by=triager_user).exists()
    assert PhasingEvent.objects.filter(kind="resumed", actor=archive_admin_user).exists()
    # Most updates rise; a few halts, spread over the days, never a pile at one instant.
    active = Publication.objects.filter(state__in=ACTIVE_STATES)
    halted = active.filter(state=PhasingState.HALTED)
    assert 0 < halted.count() <= active.count() // 5
    halts = Counter(PhasingEvent.objects.filter(kind="halted").values_list("created_at", flat=True))
    assert len(halts) >= 3 and max(halts.values()) <= 3
    # The halts sent their emails, at the moment of the halt.
    emails = Notification.objects.filter(event__kind="halted")
    assert emails.exists()
    assert all(e.sent_at == e.created_at for e in emails)
    # One update held for data, by a package policy with its reason.
    held = active.filter(hold_reason=HoldReason.NOT_ENOUGH_DATA).first()
    assert held is not None and "policy wants 5000" in held.hold_detail
    # One release frozen for its point release.
    noble = Release.objects.get(codename="noble")
    assert noble.frozen and "point release" in noble.frozen_reason
    # One release to 100% waiting for a second archive admin's sign-off.
    waiting = ScheduledChange.objects.get(state=ScheduledState.PENDING)
    assert waiting.outcome == AWAITING_SIGN_OFF and waiting.created_by == archive_admin_user

    counts = (
        Publication.objects.count(),
        PhasingEvent.objects.count(),
        CrashReport.objects.count(),
    )
    call_command("seed_demo", *SEED)
    assert (
        Publication.objects.count(),
        PhasingEvent.objects.count(),
        CrashReport.objects.count(),
    ) == counts
    assert "up to date" in capsys.readouterr().out
