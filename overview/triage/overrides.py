"""A triager's "this problem was not introduced by the update", and taking it back.

The Override row is its own audit record: who and when created it, who, when and why
revoked it. Revoked rows stay, so the bucket page can show the history. At most one live
override exists per (package, version, bucket) and per (package, version) for the rate,
enforced by partial unique constraints; creating one that exists returns the existing row.
The controller reads live overrides at its next tick; nothing here touches publications.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from overview.models import VERSION_WIDE_KINDS, ErrorBucket, Override, ProblemKind
from packages.domain import inputs
from packages.models import SourcePackage
from packages.public_names import TRIAGER, public_name

ALL_VERSIONS = "*"


def _normalise_version(version: str | None) -> str:
    version = (version or "").strip()
    # The overrides file has no documented wildcard; we read "*" (or nothing) as every version.
    return "" if version == ALL_VERSIONS else version


def _live(*, source_package: SourcePackage, version: str, kind: str, bucket: ErrorBucket | None):
    live = Override.objects.filter(
        source_package=source_package, version=version, kind=kind, revoked_at__isnull=True
    )
    if kind == ProblemKind.NEW_BUCKET:
        live = live.filter(bucket=bucket)
    return live


def override_create(
    *,
    source_package: SourcePackage,
    version: str,
    kind: str,
    bucket: ErrorBucket | None,
    actor: User | None,
    reason: str,
    now: datetime | None = None,
    actor_name: str | None = None,
) -> Override:
    """Record a live override, or return the live one that already says the same."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required")
    if kind not in ProblemKind.values:
        raise ValidationError(f"unknown kind of problem: {kind!r}")
    if kind == ProblemKind.NEW_BUCKET and bucket is None:
        raise ValidationError("overriding a new bucket needs the bucket")
    if kind in VERSION_WIDE_KINDS:
        bucket = None
    version = _normalise_version(version)
    if problem := inputs.version_problem(version, blank=True):
        raise ValidationError(f"the version {problem}")
    now = now or timezone.now()
    name = actor_name or public_name(actor, TRIAGER)

    with transaction.atomic():
        existing = (
            _live(source_package=source_package, version=version, kind=kind, bucket=bucket)
            .select_for_update()
            .first()
        )
        if existing is not None:
            return existing
        try:
            # A savepoint, so losing a race to a concurrent create leaves the outer
            # transaction usable for reading the winner.
            with transaction.atomic():
                return Override.objects.create(
                    source_package=source_package,
                    version=version,
                    kind=kind,
                    bucket=bucket,
                    reason=reason,
                    created_by=actor,
                    created_by_name=name,
                    created_at=now,
                )
        except IntegrityError:
            return _live(
                source_package=source_package, version=version, kind=kind, bucket=bucket
            ).get()


def override_revoke(
    *,
    override: Override,
    actor: User,
    reason: str,
    now: datetime | None = None,
) -> Override:
    """Take an override back; revoking a revoked one changes nothing."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required")
    with transaction.atomic():
        locked = Override.objects.select_for_update().get(pk=override.pk)
        if locked.revoked_at is None:
            locked.revoked_at = now or timezone.now()
            locked.revoked_by = actor
            locked.revoke_reason = reason
            locked.save(update_fields=("revoked_at", "revoked_by", "revoke_reason"))
    for name in ("revoked_at", "revoked_by", "revoke_reason"):
        setattr(override, name, getattr(locked, name))
    return locked
