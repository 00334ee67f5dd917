"""What archive admins do to a rollout: halt (pull), pause, resume, set, release.

Each is one change through the event writer (packages.services.phasing), with the admin
as actor and a reason that is required.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from packages import policy
from packages.models import EventKind, PhasingEvent, PhasingState, Publication
from packages.selectors import policies_by_scope
from packages.services.phasing import Change, publication_transition


def reason_required(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required")
    return reason


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
) -> PhasingEvent:
    """Resume a paused update where it was, or a halted one from the policy's first step."""
    reason = reason_required(reason)

    def change(locked: Publication) -> Change:
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
) -> PhasingEvent:
    """A person sets the percentage; on a halted update that is a decision to go on."""
    reason = reason_required(reason)

    def change(locked: Publication) -> Change:
        state = None
        if locked.state == PhasingState.HALTED or (
            locked.state == PhasingState.COMPLETE and percentage < 100
        ):
            state = PhasingState.PHASING
        return Change(EventKind.SET, percentage=percentage, state=state, reason=reason)

    return publication_transition(publication=publication, change=change, actor=actor, now=now)


def publication_release(
    *, publication: Publication, actor: User, reason: str, now: datetime | None = None
) -> PhasingEvent:
    """Straight to 100% for everyone, for an urgent fix."""
    return publication_transition(
        publication=publication,
        change=Change(
            EventKind.RELEASED,
            percentage=100,
            state=PhasingState.COMPLETE,
            reason=reason_required(reason),
        ),
        actor=actor,
        now=now,
    )
