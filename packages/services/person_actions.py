"""An archive admin's action on one update, from any page: now, later, or once signed off.

The admin's actions and the update page both come here, so they make the same change:
the immediate service of packages.services.rollouts, or a scheduled change
(packages.services.scheduled) when a time is given or a second archive admin must sign
off first.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from packages.domain import policy
from packages.models import PhasingEvent, Publication, ScheduledAction, ScheduledChange
from packages.services import rollouts
from packages.services.scheduled import scheduled_change_create
from packages.services.sign_off import sign_off_required

HALT = "halt"
# The actions of one update, by the name the pages post.
ACTIONS = (
    ScheduledAction.PAUSE.value,
    ScheduledAction.RESUME.value,
    HALT,
    ScheduledAction.SET.value,
    ScheduledAction.RELEASE.value,
)


def target_percentage(action: str, percentage: int | None) -> int | None:
    """The percentage the action takes the update to, when it raises it."""
    if action == ScheduledAction.RELEASE:
        return policy.FULL
    if action == ScheduledAction.SET:
        return percentage
    return None


def publication_act(
    *,
    action: str,
    publication: Publication,
    actor: User,
    reason: str,
    run_at: datetime | None = None,
    percentage: int | None = None,
) -> PhasingEvent | ScheduledChange:
    """Pause, resume, halt, set or release now, or record it as a scheduled change when a
    time is given or it waits for a second archive admin's sign-off. A halt is never put
    off: pulling an update is urgent."""
    reason = rollouts.reason_required(reason)
    if action == HALT:
        if run_at is not None:
            raise ValidationError("a halt runs now; it cannot be scheduled")
        return rollouts.publication_halt(publication=publication, actor=actor, reason=reason)
    if action not in ACTIONS:
        raise ValidationError(f"not an action on an update: {action!r}")
    if action == ScheduledAction.SET and (percentage is None or not 0 <= percentage <= 100):
        raise ValidationError("a percentage is 0..100")
    if run_at is None and not sign_off_required(
        ScheduledChange(action=action, publication=publication, percentage=percentage)
    ):
        if action == ScheduledAction.PAUSE:
            return rollouts.publication_pause(publication=publication, actor=actor, reason=reason)
        if action == ScheduledAction.RESUME:
            return rollouts.publication_resume(publication=publication, actor=actor, reason=reason)
        if action == ScheduledAction.SET:
            assert percentage is not None
            return rollouts.publication_set_percentage(
                publication=publication, percentage=percentage, actor=actor, reason=reason
            )
        return rollouts.publication_release(publication=publication, actor=actor, reason=reason)
    return scheduled_change_create(
        action=action,
        publication=publication,
        percentage=percentage if action == ScheduledAction.SET else None,
        run_at=run_at,
        actor=actor,
        reason=reason,
    )
