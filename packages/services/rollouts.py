"""What archive admins do to a rollout: halt (pull), pause, resume, set, release.

Each is one change through the event writer (packages.services.phasing), with the admin
as actor and a reason that is required.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from packages.domain import policy
from packages.domain.dependencies import needs_of
from packages.models import (
    EventKind,
    PhasingEvent,
    PhasingState,
    Publication,
    ScheduledAction,
    ScheduledChange,
)
from packages.selectors import phasing_members, policies_by_scope
from packages.services.changes import Change, TransitionError
from packages.services.phasing import publication_transition
from packages.services.sign_off import sign_off_enforce


def reason_required(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required")
    return reason


def refuse_completing_before_what_it_breaks(publication: Publication) -> None:
    """Refuse to take an update to 100% while it Breaks (or Conflicts with) the old version
    of an update still phasing in its release: on machines not yet in that one's phase,
    ``full-upgrade`` would remove it (LP #2098140). Its policy may switch this off."""
    if publication.state not in (PhasingState.PHASING, PhasingState.PAUSED, PhasingState.HALTED):
        return
    if not policy.resolve_for(policies_by_scope(), publication).phase_with_dependencies:
        return
    members = phasing_members(release_ids=[publication.release_id])
    broken = [
        need
        for need in needs_of(members).get(publication.pk, [])
        if need.breaks and need.needed.percentage < policy.FULL
    ]
    if broken:
        need = broken[0]
        raise TransitionError(
            f"cannot take {publication} to 100%: {need.why}, and {need.needed.label} is still "
            f"phasing at {need.needed.percentage}%; on machines not yet in its phase, "
            "full-upgrade would remove it (LP #2098140). Release it first, or switch off "
            "'phase with dependencies' in this package's policy."
        )


def publication_halt(
    *,
    publication: Publication,
    reason: str,
    actor: User,
    now: datetime | None = None,
) -> PhasingEvent:
    """A person pulls the update to 0%; only a person resumes it."""
    return publication_transition(
        publication=publication,
        change=Change.halted(reason=reason_required(reason), by_person=True),
        actor=actor,
        now=now,
    )


def publication_pause(
    *, publication: Publication, actor: User, reason: str, now: datetime | None = None
) -> PhasingEvent:
    return publication_transition(
        publication=publication,
        change=Change(EventKind.PAUSED, state=PhasingState.PAUSED, reason=reason_required(reason)),
        actor=actor,
        now=now,
    )


def publication_resume(
    *,
    publication: Publication,
    actor: User,
    reason: str,
    now: datetime | None = None,
    signed_off_by: User | None = None,
) -> PhasingEvent:
    """Resume a paused update where it was, or a halted one from the policy's first step.
    Resuming an update the controller halted takes a sign-off (packages.services.sign_off)."""
    reason = reason_required(reason)

    def change(locked: Publication) -> Change:
        sign_off_enforce(
            ScheduledChange(action=ScheduledAction.RESUME, publication=locked),
            actor=actor,
            signed_off_by=signed_off_by,
        )
        percentage = None
        if locked.state == PhasingState.HALTED:
            percentage = policy.resolve_for(policies_by_scope(), locked).first_percentage
        return Change(
            EventKind.RESUMED, percentage=percentage, state=PhasingState.PHASING, reason=reason
        )

    return publication_transition(publication=publication, change=change, actor=actor, now=now)


def publication_set_percentage(
    *,
    publication: Publication,
    percentage: int,
    actor: User,
    reason: str,
    now: datetime | None = None,
    signed_off_by: User | None = None,
) -> PhasingEvent:
    """A person sets the percentage; on a halted update that is a decision to go on (and
    on one the controller halted, like 100%, it takes a sign-off)."""
    reason = reason_required(reason)

    def change(locked: Publication) -> Change:
        sign_off_enforce(
            ScheduledChange(action=ScheduledAction.SET, publication=locked, percentage=percentage),
            actor=actor,
            signed_off_by=signed_off_by,
        )
        if percentage >= policy.FULL:
            refuse_completing_before_what_it_breaks(locked)
        state = None
        if locked.state == PhasingState.HALTED or (
            locked.state == PhasingState.COMPLETE and percentage < 100
        ):
            state = PhasingState.PHASING
        return Change(EventKind.SET, percentage=percentage, state=state, reason=reason)

    return publication_transition(publication=publication, change=change, actor=actor, now=now)


def publication_release(
    *,
    publication: Publication,
    actor: User,
    reason: str,
    now: datetime | None = None,
    signed_off_by: User | None = None,
) -> PhasingEvent:
    """Straight to 100% for everyone, for an urgent fix (with a sign-off when required)."""
    reason = reason_required(reason)

    def change(locked: Publication) -> Change:
        sign_off_enforce(
            ScheduledChange(action=ScheduledAction.RELEASE, publication=locked),
            actor=actor,
            signed_off_by=signed_off_by,
        )
        refuse_completing_before_what_it_breaks(locked)
        return Change(
            EventKind.RELEASED, percentage=100, state=PhasingState.COMPLETE, reason=reason
        )

    return publication_transition(publication=publication, change=change, actor=actor, now=now)
