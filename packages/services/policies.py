"""Setting how fast updates phase: the policy of a package, a release, or all updates."""

from __future__ import annotations

from datetime import datetime

from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from packages.models import (
    EventKind,
    Policy,
    Publication,
    Release,
    ScheduledAction,
    ScheduledChange,
    SourcePackage,
)
from packages.services.phasing import publications_note
from packages.services.rollouts import reason_required
from packages.services.sign_off import sign_off_enforce

POLICY_FIELDS = (
    "start_percentage",
    "step",
    "interval",
    "ceiling",
    "schedule",
    "quiet_weekend",
    "min_time_at_percentage",
    "min_previous_reports",
    "judge",
    "insufficient_gate",
    "insufficient_max_hold",
    "unknown_version",
    "phase_with_dependencies",
    "auto_resume",
    "watch_at_full",
)


def policy_set(
    *,
    scope_release: Release | None = None,
    scope_package: SourcePackage | None = None,
    actor: User,
    reason: str,
    now: datetime | None = None,
    signed_off_by: User | None = None,
    **fields: object,
) -> Policy:
    """Create or change the policy of a package, a release, or (neither) all updates.

    The audit record is an admin LogEntry on the policy (its history page in the admin),
    naming the actor, the reason and the old and new value of each field that changed (for
    a new policy, each field that differs from the global policy or the defaults it
    replaces); the controller reads the new policy at its next tick. Each update in phasing
    under it gets a note with the same words, unless nothing changed.
    """
    reason = reason_required(reason)
    now = now or timezone.now()
    if scope_release is not None and scope_package is not None:
        raise ValidationError("a policy is for a release or a package, not both")
    unknown = sorted(set(fields) - set(POLICY_FIELDS))
    if unknown:
        raise ValidationError(f"not a policy setting: {', '.join(unknown)}")
    with transaction.atomic():
        policy = (
            Policy.objects.select_for_update()
            .filter(release=scope_release, source_package=scope_package)
            .first()
        )
        # A policy that releases everything under it takes a second admin's sign-off.
        sign_off_enforce(
            ScheduledChange(
                action=ScheduledAction.POLICY,
                release=scope_release,
                source_package=scope_package,
                policy=dict(fields),
            ),
            actor=actor,
            signed_off_by=signed_off_by,
            current_policy=policy,
        )
        created = policy is None
        if policy is None:
            policy = Policy(release=scope_release, source_package=scope_package)
        applied = _applied_before(policy) if created else policy
        before = {name: getattr(applied, name) for name in fields}
        for name, value in fields.items():
            setattr(policy, name, value)
        try:
            policy.rules()
        except ValueError as error:
            raise ValidationError(str(error)) from error
        policy.full_clean(validate_unique=False, validate_constraints=False)
        policy.save()
        changes = [
            f"{name} {before[name]!s} → {getattr(policy, name)!s}"
            for name in fields
            if before[name] != getattr(policy, name)
        ]
        verb = "Created" if created else "Changed"
        message = (
            f"{verb} {policy.scope_label}: {'; '.join(changes) or 'nothing'}. Reason: {reason}"
        )
        LogEntry.objects.log_actions(
            user_id=actor.pk,
            queryset=[policy],
            action_flag=ADDITION if created else CHANGE,
            change_message=message,
            single_object=True,
        )
        touched = Publication.objects.all()
        if scope_package is not None:
            touched = touched.filter(source_package=scope_package)
        elif scope_release is not None:
            touched = touched.filter(release=scope_release)
        if changes:
            publications_note(touched, kind=EventKind.POLICY, reason=message, actor=actor, now=now)
    return policy


def _applied_before(new: Policy) -> Policy:
    """What a new policy replaces, as far as one policy can say: the global policy for a
    release's or a package's, else the defaults."""
    if new.release_id is None and new.source_package_id is None:
        return Policy()
    return Policy.objects.filter(release=None, source_package=None).first() or Policy()
