"""Freezing a release: an emergency stop for all its updates, with who, when and why."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from packages.models import EventKind, Release
from packages.services.phasing import publications_note
from packages.services.rollouts import reason_required


def _release_set_frozen(
    *, release: Release, frozen: bool, actor: User, reason: str, now: datetime | None
) -> Release:
    reason = reason_required(reason)
    now = now or timezone.now()
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        locked.frozen = frozen
        locked.frozen_reason = reason if frozen else ""
        locked.frozen_at = now if frozen else None
        locked.frozen_by = actor
        locked.save(update_fields=("frozen", "frozen_reason", "frozen_at", "frozen_by"))
        publications_note(
            locked.publications.all(),
            kind=EventKind.FROZEN if frozen else EventKind.UNFROZEN,
            reason=reason,
            actor=actor,
            now=now,
        )
    return locked


def release_freeze(
    *, release: Release, actor: User, reason: str, now: datetime | None = None
) -> Release:
    """Emergency stop: no update of the release advances until it is unfrozen."""
    return _release_set_frozen(release=release, frozen=True, actor=actor, reason=reason, now=now)


def release_unfreeze(
    *, release: Release, actor: User, reason: str, now: datetime | None = None
) -> Release:
    return _release_set_frozen(release=release, frozen=False, actor=actor, reason=reason, now=now)


def release_update(
    *,
    release: Release,
    version: str,
    supported: bool,
    actor: User,
    reason: str,
    now: datetime | None = None,
) -> Release:
    """Change what a release is (its version, whether it is supported), with a reason, and
    leave the change in the history of every update of the release it touches."""
    reason = reason_required(reason)
    now = now or timezone.now()
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        changes = []
        if locked.version != version:
            changes.append(f"version {locked.version} → {version}")
        if locked.supported != supported:
            changes.append(f"{'supported' if supported else 'no longer supported'}")
        if not changes:
            return locked
        locked.version, locked.supported = version, supported
        locked.full_clean(exclude=("codename",), validate_unique=False)
        locked.save(update_fields=("version", "supported"))
        publications_note(
            locked.publications.all(),
            kind=EventKind.RELEASE,
            reason=f"{locked.codename}: {'; '.join(changes)}. Reason: {reason}",
            actor=actor,
            now=now,
        )
    return locked
