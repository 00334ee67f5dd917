"""Scheduled changes: each action runs once at its time, through the service of the
immediate action (its event says who scheduled it and when it ran); cancelled ones never
run; failures are kept with their error; sign-off takes a second archive admin."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from packages.holds import HoldReason
from packages.models import (
    EventKind,
    PhasingEvent,
    PhasingState,
    Policy,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
)
from packages.roles import ARCHIVE_ADMINS
from packages.services.scheduled import (
    AWAITING_SIGN_OFF,
    scheduled_change_cancel,
    scheduled_change_create,
    scheduled_change_sign_off,
    scheduled_changes_run_due,
)
from packages.tasks import run_scheduled_changes
from tests.conftest import group_named
from tests.factories import NOW, PublicationFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]

LATER = NOW + timedelta(hours=2)


def _archive_admin(user):
    user.groups.add(group_named(ARCHIVE_ADMINS))
    return user


@pytest.fixture
def alice(db):
    return _archive_admin(UserFactory(username="alice", first_name="Alice", last_name="Ames"))


@pytest.fixture
def bob(db):
    return _archive_admin(UserFactory(username="bob", first_name="Bob", last_name="Berg"))


def _schedule(alice, **kwargs):
    return scheduled_change_create(actor=alice, reason="weekend", run_at=LATER, now=NOW, **kwargs)


@pytest.mark.parametrize(
    ("action", "percentage", "kind", "state", "new_percentage"),
    [
        (ScheduledAction.PAUSE, None, EventKind.PAUSED, PhasingState.PAUSED, 10),
        (ScheduledAction.SET, 50, EventKind.SET, PhasingState.PHASING, 50),
        (ScheduledAction.RELEASE, None, EventKind.RELEASED, PhasingState.COMPLETE, 100),
    ],
)
def test_a_scheduled_change_of_an_update_runs_once_at_its_time_through_the_service(
    alice, action, percentage, kind, state, new_percentage
):
    publication = PublicationFactory()
    change = _schedule(alice, action=action, publication=publication, percentage=percentage)

    assert scheduled_changes_run_due(now=LATER - timedelta(minutes=1)) == []
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING  # not yet due: nothing happened

    assert [c.pk for c in scheduled_changes_run_due(now=LATER)] == [change.pk]
    assert scheduled_changes_run_due(now=LATER + timedelta(hours=1)) == []  # once only

    publication.refresh_from_db()
    assert (publication.state, publication.phased_update_percentage) == (state, new_percentage)
    event = PhasingEvent.objects.get(publication=publication, kind=kind)
    assert event.actor == alice
    assert event.created_at == LATER
    assert event.reason == (
        "weekend (scheduled by Alice Ames at 2026-12-03 12:00 UTC for 2026-12-03 14:00 UTC, "
        "ran at 2026-12-03 14:00 UTC)"
    )
    change.refresh_from_db()
    assert change.state == ScheduledState.DONE
    assert change.ran_at == LATER


def test_a_scheduled_resume_restarts_a_paused_update(alice):
    publication = PublicationFactory(state=PhasingState.PAUSED, hold_reason=HoldReason.PAUSED)
    _schedule(alice, action=ScheduledAction.RESUME, publication=publication)

    scheduled_changes_run_due(now=LATER)

    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    assert PhasingEvent.objects.get(kind=EventKind.RESUMED).actor == alice


def test_a_scheduled_freeze_and_unfreeze_of_a_release(alice):
    publication = PublicationFactory()
    release = publication.release
    _schedule(alice, action=ScheduledAction.FREEZE, release=release)
    scheduled_change_create(
        action=ScheduledAction.UNFREEZE,
        release=release,
        actor=alice,
        reason="incident over",
        run_at=LATER + timedelta(hours=1),
        now=NOW,
    )

    scheduled_changes_run_due(now=LATER)
    release.refresh_from_db()
    assert release.frozen
    assert release.frozen_by == alice
    assert release.frozen_reason.startswith("weekend (scheduled by Alice Ames")

    scheduled_changes_run_due(now=LATER + timedelta(hours=1))
    release.refresh_from_db()
    assert not release.frozen
    kinds = list(
        PhasingEvent.objects.filter(publication=publication)
        .order_by("created_at")
        .values_list("kind", flat=True)
    )
    assert kinds == [EventKind.FROZEN, EventKind.UNFROZEN]


def test_a_scheduled_policy_change_sets_the_policy_with_its_durations(alice):
    publication = PublicationFactory()
    package = publication.source_package
    _schedule(
        alice,
        action=ScheduledAction.POLICY,
        source_package=package,
        policy={"step": 5, "interval": timedelta(hours=12), "schedule": [1, 5, 50, 100]},
    )
    assert not Policy.objects.exists()

    scheduled_changes_run_due(now=LATER)

    policy = Policy.objects.get(source_package=package)
    assert (policy.step, policy.interval, policy.schedule) == (
        5,
        timedelta(hours=12),
        [1, 5, 50, 100],
    )
    assert "scheduled by Alice Ames" in LogEntry.objects.get().change_message
    assert PhasingEvent.objects.get(publication=publication).kind == EventKind.POLICY


def test_a_cancelled_change_never_runs_and_keeps_who_and_why(alice, bob):
    publication = PublicationFactory()
    change = _schedule(alice, action=ScheduledAction.PAUSE, publication=publication)

    scheduled_change_cancel(change=change, actor=bob, reason="bug fixed", now=NOW)

    assert scheduled_changes_run_due(now=LATER) == []
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING
    change.refresh_from_db()
    assert (change.state, change.cancelled_by, change.cancel_reason) == (
        ScheduledState.CANCELLED,
        bob,
        "bug fixed",
    )
    with pytest.raises(ValidationError, match="cancelled, not pending"):
        scheduled_change_cancel(change=change, actor=bob, reason="again")


def test_a_change_the_update_no_longer_allows_is_recorded_as_failed_with_the_error(alice):
    publication = PublicationFactory()
    change = _schedule(alice, action=ScheduledAction.PAUSE, publication=publication)
    other = _schedule(alice, action=ScheduledAction.SET, publication=publication, percentage=30)
    # Meanwhile the update completed.
    publication.state, publication.phased_update_percentage = PhasingState.COMPLETE, 100
    publication.save()

    ran = scheduled_changes_run_due(now=LATER)

    assert len(ran) == 2
    change.refresh_from_db()
    assert change.state == ScheduledState.FAILED
    assert "cannot pause" in change.outcome and "it is complete" in change.outcome
    assert change.ran_at == LATER
    other.refresh_from_db()  # one failure leaves the others to run
    assert other.state == ScheduledState.DONE
    assert not PhasingEvent.objects.filter(kind=EventKind.PAUSED).exists()


def test_a_time_in_the_past_and_a_missing_reason_are_refused(alice):
    publication = PublicationFactory()
    with pytest.raises(ValidationError, match="has passed"):
        scheduled_change_create(
            action=ScheduledAction.PAUSE,
            publication=publication,
            actor=alice,
            reason="x",
            run_at=NOW - timedelta(hours=1),
            now=NOW,
        )
    with pytest.raises(ValidationError, match="reason"):
        scheduled_change_create(
            action=ScheduledAction.PAUSE, publication=publication, actor=alice, reason=" "
        )


def test_the_task_runs_what_is_due_now(alice):
    publication = PublicationFactory()
    scheduled_change_create(
        action=ScheduledAction.PAUSE, publication=publication, actor=alice, reason="now"
    )

    assert run_scheduled_changes.apply().get() == 1

    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED


# --- Sign-off -------------------------------------------------------------------------


@pytest.fixture
def sign_off_required(settings):
    settings.PHASING_SIGN_OFF_REQUIRED = True


def test_without_the_setting_nothing_waits_for_a_sign_off(alice):
    publication = PublicationFactory()
    _schedule(alice, action=ScheduledAction.RELEASE, publication=publication)

    scheduled_changes_run_due(now=LATER)

    publication.refresh_from_db()
    assert publication.phased_update_percentage == 100


@pytest.mark.usefixtures("sign_off_required")
def test_expediting_to_100_waits_for_a_second_admin_who_applies_it(alice, bob):
    publication = PublicationFactory()
    change = scheduled_change_create(
        action=ScheduledAction.SET,
        publication=publication,
        percentage=100,
        actor=alice,
        reason="urgent fix",
        now=NOW,
    )
    assert change.outcome == AWAITING_SIGN_OFF

    assert scheduled_changes_run_due(now=NOW + timedelta(hours=1)) == []
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 10

    with pytest.raises(ValidationError, match="not the one who asked"):
        scheduled_change_sign_off(change=change, actor=alice)
    scheduled_change_sign_off(change=change, actor=bob, now=NOW + timedelta(hours=1))

    publication.refresh_from_db()
    assert (publication.phased_update_percentage, publication.state) == (
        100,
        PhasingState.COMPLETE,
    )
    event = PhasingEvent.objects.get(publication=publication, kind=EventKind.SET)
    assert event.actor == alice
    assert event.reason == (
        "urgent fix (requested by Alice Ames at 2026-12-03 12:00 UTC, "
        "signed off by Bob Berg at 2026-12-03 13:00 UTC, ran at 2026-12-03 13:00 UTC)"
    )
    change.refresh_from_db()
    assert (change.state, change.signed_off_by) == (ScheduledState.DONE, bob)


@pytest.mark.usefixtures("sign_off_required")
def test_resuming_an_update_the_controller_halted_needs_a_sign_off_but_a_pull_does_not(alice, bob):
    halted = PublicationFactory(state=PhasingState.HALTED, hold_reason=HoldReason.PROBLEMS)
    pulled = PublicationFactory(state=PhasingState.HALTED, hold_reason=HoldReason.PULLED)
    waiting = _schedule(alice, action=ScheduledAction.RESUME, publication=halted)
    _schedule(alice, action=ScheduledAction.RESUME, publication=pulled)

    scheduled_changes_run_due(now=LATER)

    pulled.refresh_from_db()
    halted.refresh_from_db()
    assert pulled.state == PhasingState.PHASING
    assert halted.state == PhasingState.HALTED
    waiting.refresh_from_db()
    assert (waiting.state, waiting.outcome) == (ScheduledState.PENDING, AWAITING_SIGN_OFF)

    # Signed off before its time: it runs at its time, not at the sign-off.
    later = _schedule(alice, action=ScheduledAction.RELEASE, publication=PublicationFactory())
    scheduled_change_sign_off(change=later, actor=bob, now=NOW)
    assert ScheduledChange.objects.get(pk=later.pk).state == ScheduledState.PENDING

    scheduled_change_sign_off(change=waiting, actor=bob, now=LATER)
    halted.refresh_from_db()
    assert halted.state == PhasingState.PHASING
    assert "signed off by Bob Berg" in PhasingEvent.objects.get(publication=halted).reason


def test_the_actions_refuse_targets_that_do_not_fit(alice):
    publication = PublicationFactory()
    with pytest.raises(ValidationError, match="acts on one update"):
        _schedule(alice, action=ScheduledAction.PAUSE, release=publication.release)
    with pytest.raises(ValidationError, match="acts on one release"):
        _schedule(alice, action=ScheduledAction.FREEZE, publication=publication)
    with pytest.raises(ValidationError, match="not a policy setting"):
        _schedule(alice, action=ScheduledAction.POLICY, policy={"colour": "red"})
    assert not ScheduledChange.objects.exists()


def test_beat_runs_what_no_worker_ran_every_five_minutes_not_a_no_op_every_minute(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["scheduled-changes"]
    assert entry["task"] == run_scheduled_changes.name
    assert entry["schedule"] == 300.0


def test_a_scheduled_change_asks_a_worker_to_run_it_at_its_time_after_commit(
    alice, monkeypatch, django_capture_on_commit_callbacks
):
    asked: list[dict] = []
    monkeypatch.setattr(run_scheduled_changes, "apply_async", lambda **kw: asked.append(kw))
    run_at = NOW + timedelta(hours=3)

    with django_capture_on_commit_callbacks(execute=True):
        scheduled_change_create(
            action=ScheduledAction.PAUSE,
            publication=PublicationFactory(),
            actor=alice,
            reason="weekend",
            run_at=run_at,
        )
        assert asked == []  # not before the change is stored

    assert asked == [{"eta": run_at}]


def test_the_command_lists_pending_changes_and_runs_those_due(alice):
    publication = PublicationFactory(source_package__name="hello")
    _schedule(alice, action=ScheduledAction.PAUSE, publication=publication)
    out = io.StringIO()

    call_command("phasing_scheduled", "list", stdout=out)
    assert "Pause hello" in out.getvalue() and "by alice: weekend" in out.getvalue()

    call_command("phasing_scheduled", "run", "--now", "2026-12-03T13:00:00+00:00", stdout=out)
    publication.refresh_from_db()
    assert publication.state == PhasingState.PHASING  # not yet due
    call_command("phasing_scheduled", "run", "--now", "2026-12-03T14:00:00+00:00", stdout=out)
    publication.refresh_from_db()
    assert publication.state == PhasingState.PAUSED
    assert ": done: Paused" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("phasing_scheduled", "run", "--now", "tomorrow")
