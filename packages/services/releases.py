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
