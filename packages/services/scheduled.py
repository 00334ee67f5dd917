"""Scheduled changes and sign-off: an archive admin's action at a later time, or only once a
second archive admin agrees; run through the same services as the immediate actions.

`scheduled_change_create` records one; `scheduled_changes_run_due` (a periodic task) runs
those due, each once even with several workers: the row is locked (skipping rows another
worker holds) and claimed by a conditional update from pending, in the same transaction as
the service's change. The history of the update says who scheduled or asked, who signed
off and when it ran; the change itself keeps its outcome (done, or failed with the error).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from packages.models import (
    EventKind,
    Publication,
    Release,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
    SourcePackage,
)
from packages.models.scheduled import PUBLICATION_ACTIONS, RELEASE_ACTIONS
from packages.permissions import can_change_phasing
from packages.public_names import public_name
from packages.services import policies, releases, rollouts
from packages.services.announcements import SIGN_OFF_REQUESTED, announce
from packages.services.phasing import publications_note
from packages.services.queueing import RUN_SCHEDULED_CHANGES, task_enqueue_at
from packages.services.sign_off import sign_off_required

log = logging.getLogger(__name__)

# A time this far in the past is a mistake, not "now".
PAST_TOLERANCE = timedelta(minutes=1)
AWAITING_SIGN_OFF = "waiting for a second archive admin's sign-off"
_DURATIONS = ("interval", "min_time_at_percentage", "insufficient_max_hold", "watch_at_full")


def _when(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _policy_to_json(fields: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(fields) - set(policies.POLICY_FIELDS))
    if unknown:
        raise ValidationError(f"not a policy setting: {', '.join(unknown)}")
    return {
        name: (value.total_seconds() if isinstance(value, timedelta) else value)
        for name, value in fields.items()
    }


def _policy_from_json(stored: dict[str, Any]) -> dict[str, Any]:
    return {
        name: (
            timedelta(seconds=value)
            if name in _DURATIONS and isinstance(value, int | float)
            else value
        )
        for name, value in stored.items()
    }


def scheduled_change_create(
    *,
    action: str,
    actor: User,
    reason: str,
    run_at: datetime | None = None,
    publication: Publication | None = None,
    release: Release | None = None,
    source_package: SourcePackage | None = None,
    percentage: int | None = None,
    policy: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> ScheduledChange:
    """Record a change to make at `run_at` (None: now, once signed off)."""
    reason = rollouts.reason_required(reason)
    now = now or timezone.now()
    run_at = run_at or now
    if run_at < now - PAST_TOLERANCE:
        raise ValidationError(f"{_when(run_at)} has passed")
    if action not in ScheduledAction.values:
        raise ValidationError(f"not an action that can be scheduled: {action!r}")
    if action in PUBLICATION_ACTIONS and (publication is None or release or source_package):
        raise ValidationError(f"{action} acts on one update")
    if action in RELEASE_ACTIONS and (release is None or publication or source_package):
        raise ValidationError(f"{action} acts on one release")
    if action == ScheduledAction.POLICY and publication is not None:
        raise ValidationError("a policy is for a release, a package or all updates")
    if release is not None and source_package is not None:
        raise ValidationError("a policy is for a release or a package, not both")
    if action == ScheduledAction.SET and (percentage is None or not 0 <= percentage <= 100):
        raise ValidationError("a percentage is 0..100")
    stored_policy = _policy_to_json(policy or {}) if action == ScheduledAction.POLICY else {}
    change = ScheduledChange(
        action=action,
        publication=publication,
        release=release,
        source_package=source_package,
        percentage=percentage if action == ScheduledAction.SET else None,
        policy=stored_policy,
        run_at=run_at,
        reason=reason,
        created_by=actor,
        created_at=now,
    )
    # Asked again when it runs: the update may have changed by then.
    change.outcome = AWAITING_SIGN_OFF if sign_off_required(change) else ""
    change.save(force_insert=True)
    if change.outcome == AWAITING_SIGN_OFF:
        announce(SIGN_OFF_REQUESTED, [(change.pk, change.action)])
    _queue_run_at(run_at)
    return change


def _queue_run_at(run_at: datetime) -> None:
    """Ask a worker to run the due changes at `run_at`, after commit. Robust: a broker that
    is down loses nothing, the periodic run (PHASING_SCHEDULED_CHANGES_INTERVAL) runs what
    no task took; a task that finds the change not signed off yet leaves it waiting."""

    def enqueue() -> None:
        task_enqueue_at(RUN_SCHEDULED_CHANGES, run_at)

    transaction.on_commit(enqueue, robust=True)


def _locked_pending(change: ScheduledChange) -> ScheduledChange:
    locked = ScheduledChange.objects.select_for_update().get(pk=change.pk)
    if locked.state != ScheduledState.PENDING:
        raise ValidationError(f"it is {locked.get_state_display().lower()}, not pending")
    return locked


def scheduled_change_cancel(
    *, change: ScheduledChange, actor: User, reason: str, now: datetime | None = None
) -> ScheduledChange:
    reason = rollouts.reason_required(reason)
    with transaction.atomic():
        locked = _locked_pending(change)
        locked.state = ScheduledState.CANCELLED
        locked.cancelled_by, locked.cancelled_at = actor, now or timezone.now()
        locked.cancel_reason = reason
        locked.save(update_fields=("state", "cancelled_by", "cancelled_at", "cancel_reason"))
    return locked


def scheduled_change_sign_off(
    *, change: ScheduledChange, actor: User, now: datetime | None = None, reason: str = ""
) -> ScheduledChange:
    """A second archive admin agrees (saying why, from the update page); a change already
    due runs at once."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked_pending(change)
        if locked.created_by_id == actor.pk:
            raise ValidationError("a second archive admin signs off, not the one who asked")
        if lost_rights(actor):
            raise ValidationError(f"only an archive admin signs off ({lost_rights(actor)})")
        if locked.signed_off_by_id is not None:
            raise ValidationError("it is already signed off")
        locked.signed_off_by, locked.signed_off_at = actor, now
        locked.sign_off_reason = reason.strip()
        locked.outcome = ""
        locked.save(update_fields=("signed_off_by", "signed_off_at", "sign_off_reason", "outcome"))
        if locked.run_at <= now:
            _run_locked(locked, now=now)
    return locked


def scheduled_changes_run_due(*, now: datetime | None = None) -> list[ScheduledChange]:
    """Run every pending change whose time has come, each in its own transaction, so one
    failure leaves the others; returns those that ran (done or failed)."""
    now = now or timezone.now()
    ran: list[ScheduledChange] = []
    waiting: set[int] = set()
    while True:
        with transaction.atomic():
            change = (
                ScheduledChange.objects.select_for_update(skip_locked=True)
                .filter(state=ScheduledState.PENDING, run_at__lte=now)
                .exclude(pk__in=waiting)
                .order_by("run_at", "id")
                .first()
            )
            if change is None:
                return ran
            if _run_locked(change, now=now):
                ran.append(change)
            else:
                waiting.add(change.pk)


def _provenance(change: ScheduledChange, *, now: datetime) -> str:
    """'scheduled by alice at T for T1, signed off by bob at T2, ran at T3'."""
    assert change.created_by is not None
    if change.run_at > change.created_at:
        parts = [
            f"scheduled by {public_name(change.created_by)} at {_when(change.created_at)} "
            f"for {_when(change.run_at)}"
        ]
    else:
        parts = [f"requested by {public_name(change.created_by)} at {_when(change.created_at)}"]
    if change.signed_off_by is not None and change.signed_off_at is not None:
        parts.append(
            f"signed off by {public_name(change.signed_off_by)} at {_when(change.signed_off_at)}"
            + (f": {change.sign_off_reason}" if change.sign_off_reason else "")
        )
    parts.append(f"ran at {_when(now)}")
    return ", ".join(parts)


def _perform(change: ScheduledChange, *, now: datetime) -> str:
    """Make the change through the service of the immediate action; say what it did."""
    actor = change.created_by
    signed_off_by = change.signed_off_by
    reason = f"{change.reason} ({_provenance(change, now=now)})"
    publication = change.publication
    if change.action in PUBLICATION_ACTIONS:
        assert publication is not None
        if change.action == ScheduledAction.PAUSE:
            event = rollouts.publication_pause(
                publication=publication, actor=actor, reason=reason, now=now
            )
        elif change.action == ScheduledAction.RESUME:
            event = rollouts.publication_resume(
                publication=publication,
                actor=actor,
                reason=reason,
                now=now,
                signed_off_by=signed_off_by,
            )
        elif change.action == ScheduledAction.SET:
            assert change.percentage is not None
            event = rollouts.publication_set_percentage(
                publication=publication,
                percentage=change.percentage,
                actor=actor,
                reason=reason,
                now=now,
                signed_off_by=signed_off_by,
            )
        else:
            event = rollouts.publication_release(
                publication=publication,
                actor=actor,
                reason=reason,
                now=now,
                signed_off_by=signed_off_by,
            )
        return f"{event.get_kind_display()}: {event.percentage_change}, {event.state_change}"
    if change.action in RELEASE_ACTIONS:
        assert change.release is not None
        service = (
            releases.release_freeze
            if change.action == ScheduledAction.FREEZE
            else releases.release_unfreeze
        )
        service(release=change.release, actor=actor, reason=reason, now=now)
        verb = "frozen" if change.action == ScheduledAction.FREEZE else "unfrozen"
        return f"release {change.release.codename} {verb}"
    policies.policy_set(
        scope_release=change.release,
        scope_package=change.source_package,
        actor=actor,
        reason=reason,
        now=now,
        signed_off_by=signed_off_by,
        **_policy_from_json(change.policy),
    )
    return f"{change.target_label} set"


def lost_rights(user: User | None) -> str:
    """Why this person's decision no longer counts, or "" while they may change phasing."""
    if user is None:
        return ""
    if not user.is_active:
        return "account deactivated"
    if not can_change_phasing(user):
        return "no longer an archive admin"
    return ""


def _touched(change: ScheduledChange) -> QuerySet[Publication]:
    """The updates a change was about: its own, its release's, or its policy's scope."""
    if change.publication_id is not None:
        return Publication.objects.filter(pk=change.publication_id)
    if change.source_package_id is not None:
        return Publication.objects.filter(source_package_id=change.source_package_id)
    if change.release_id is not None:
        return Publication.objects.filter(release_id=change.release_id)
    return Publication.objects.all()


def _cancel_for_lost_rights(change: ScheduledChange, why: str, *, now: datetime) -> None:
    """Its author may no longer change phasing: it never runs, and the updates it was
    about say so in their history."""
    reason = f"{change.what} {change.target_label} cancelled: its author's {why}"
    with transaction.atomic():
        ScheduledChange.objects.filter(pk=change.pk, state=ScheduledState.PENDING).update(
            state=ScheduledState.CANCELLED, cancelled_at=now, cancel_reason=reason
        )
        publications_note(
            _touched(change), kind=EventKind.SCHEDULED_CANCELLED, reason=reason, actor=None, now=now
        )
    change.state, change.cancelled_at, change.cancel_reason = (
        ScheduledState.CANCELLED,
        now,
        reason,
    )
    log.warning("scheduled change %s: %s", change.pk, reason)


def _run_locked(change: ScheduledChange, *, now: datetime) -> bool:
    """Run one locked pending change: False when it still waits for a sign-off. A change
    whose author lost the right to change phasing is cancelled; a sign-off by someone who
    lost it no longer counts, and the change waits for another admin's."""
    why = lost_rights(change.created_by)
    if why:
        _cancel_for_lost_rights(change, why, now=now)
        return True
    if change.signed_off_by_id is not None and lost_rights(change.signed_off_by):
        ScheduledChange.objects.filter(pk=change.pk).update(signed_off_by=None, signed_off_at=None)
        change.signed_off_by, change.signed_off_at = None, None
    publication = (
        Publication.objects.select_related("release", "source_package").get(
            pk=change.publication_id
        )
        if change.publication_id is not None
        else None
    )
    change.publication = publication
    needs = sign_off_required(change)
    if needs and change.signed_off_by_id is None:
        # Written only when it changes: a write raises the pages' data version.
        if change.outcome != AWAITING_SIGN_OFF:
            ScheduledChange.objects.filter(pk=change.pk).update(outcome=AWAITING_SIGN_OFF)
            change.outcome = AWAITING_SIGN_OFF
        return False
    try:
        with transaction.atomic():
            outcome, state = _perform(change, now=now), ScheduledState.DONE
    except ValidationError as error:
        outcome, state = "; ".join(error.messages), ScheduledState.FAILED
    except Exception as error:  # recorded and logged; the other due changes still run
        log.exception("scheduled change %s failed", change.pk)
        outcome, state = f"internal error: {error}", ScheduledState.FAILED
    claimed = ScheduledChange.objects.filter(pk=change.pk, state=ScheduledState.PENDING).update(
        state=state, ran_at=now, outcome=outcome[:2000]
    )
    if claimed != 1:  # another run got it first: undo ours with the whole transaction
        raise RuntimeError(f"scheduled change {change.pk} was run by someone else")
    change.state, change.ran_at, change.outcome = state, now, outcome[:2000]
    return True
