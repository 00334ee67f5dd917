"""The four-eyes rule: which changes take a second archive admin's sign-off, in one place.

With PHASING_SIGN_OFF_REQUIRED on, these wait for a second, different archive admin:
- releasing an update to everyone, or setting it to 100%;
- resuming an update the controller halted, or setting any percentage on it (which
  resumes it too: "set 99" is a release in all but name), unless a person pulled it;
- raising an update past the percentage of an update in phasing it needs;
- a policy under which an update below BIG_JUMP_FROM % would go to 100% in one step
  (start 100, step 100, a schedule [1, 100]): it releases everything it covers.

Every write path asks `sign_off_required` with the change it is about to make, described
as a ScheduledChange (saved or not): the admin's actions decide between running now and
waiting for a sign-off with it, a scheduled change asks again when it runs (on the update
as it is then), and the services that make these changes (rollouts, policies) call
`sign_off_enforce`, so a path that forgets to ask is refused rather than let through.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from packages.dependency_warnings import needs_behind
from packages.domain import policy as policy_rules
from packages.holds import HoldReason
from packages.models import PhasingState, Policy, Publication, ScheduledAction, ScheduledChange
from packages.permissions import can_change_phasing

# An update at less than this share that a policy takes to 100% in one step is released,
# not phased.
BIG_JUMP_FROM = 50
_JUMP_FIELDS = ("start_percentage", "step", "ceiling", "schedule")


class SignOffRequired(ValidationError):
    """A change that needs a second archive admin, made without one."""


def halted_by_controller(publication: Publication) -> bool:
    """Halted on problems (or anything but a person's pull): a person alone cannot undo it."""
    return publication.state == PhasingState.HALTED and publication.hold_reason != HoldReason.PULLED


def releases_at_once(rules: policy_rules.Rules) -> bool:
    """Whether this policy takes some update below BIG_JUMP_FROM % to 100% in one step."""
    return any(
        policy_rules.next_percentage(rules, current) == policy_rules.FULL
        for current in range(BIG_JUMP_FROM)
    )


def _policy_rules(change: ScheduledChange, current: Policy | None) -> policy_rules.Rules | None:
    base = current or Policy()
    proposed = change.policy or {}
    values: dict[str, Any] = {
        name: proposed.get(name, getattr(base, name)) for name in _JUMP_FIELDS
    }
    try:
        return policy_rules.Rules(
            start=int(values["start_percentage"]),
            step=int(values["step"]),
            ceiling=int(values["ceiling"]),
            schedule=tuple(int(v) for v in values["schedule"] or ()),
        )
    except (TypeError, ValueError):
        return None  # not a policy at all: policy_set refuses it with the reason


def sign_off_required(change: ScheduledChange, *, current_policy: Policy | None = None) -> str:
    """Why this change waits for a second archive admin, or "" when it does not.

    Judged on the publication (and policy) as they are now: ask again when it runs. A
    policy change reads its scope's current policy unless given `current_policy`.
    """
    if not settings.PHASING_SIGN_OFF_REQUIRED:
        return ""
    publication = change.publication if change.publication_id or change.publication else None
    if change.action == ScheduledAction.RELEASE:
        return "releasing to everyone takes a second archive admin's sign-off"
    if change.action == ScheduledAction.SET:
        if change.percentage is not None and change.percentage >= policy_rules.FULL:
            return "setting 100% takes a second archive admin's sign-off"
        if publication is not None and halted_by_controller(publication):
            return (
                "setting a percentage resumes an update the controller halted, which takes "
                "a second archive admin's sign-off"
            )
        if (
            publication is not None
            and change.percentage is not None
            and change.percentage > publication.phased_update_percentage
            and needs_behind(publication, change.percentage)
        ):
            return "raising it past an update it needs takes a second archive admin's sign-off"
        return ""
    if change.action == ScheduledAction.RESUME:
        if publication is not None and halted_by_controller(publication):
            return (
                "resuming an update the controller halted takes a second archive admin's sign-off"
            )
        return ""
    if change.action == ScheduledAction.POLICY:
        if current_policy is None:
            current_policy = Policy.objects.filter(
                release=change.release, source_package=change.source_package
            ).first()
        rules = _policy_rules(change, current_policy)
        if rules is not None and releases_at_once(rules):
            return (
                f"this policy takes updates below {BIG_JUMP_FROM}% to 100% in one step, "
                "which takes a second archive admin's sign-off"
            )
    # Pausing, pulling, freezing and unfreezing never release anything.
    return ""


def sign_off_enforce(
    change: ScheduledChange,
    *,
    actor: User,
    signed_off_by: User | None,
    current_policy: Policy | None = None,
) -> None:
    """Refuse the change when it needs a sign-off and has none from a second, different
    archive admin who may still change phasing."""
    why = sign_off_required(change, current_policy=current_policy)
    if not why:
        return
    if signed_off_by is None:
        raise SignOffRequired(f"{why}; none was given")
    if signed_off_by.pk == actor.pk:
        raise SignOffRequired(f"{why}: the one who asked cannot also sign off")
    if not can_change_phasing(signed_off_by):
        raise SignOffRequired(f"{why}: the one who signed off may no longer change phasing")
