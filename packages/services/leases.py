"""Locks that die with their holder: a short lease, renewed while the holder works.

A worker killed in the middle of a sync never releases its lock; with a lease the lock
is free again `duration` after its last renewal, not after a fixed half hour. Claimed
with one conditional UPDATE (the row is free, expired, or already ours), so two workers
never both hold it, on PostgreSQL and SQLite alike, and the time is injected.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from packages.models import Lease


@dataclass
class Held:
    """A lease this process holds: renew it while working, release it when done."""

    name: str
    holder: str
    duration: timedelta
    renewed_at: datetime
    lost: bool = field(default=False)

    def renew(self, *, now: datetime | None = None) -> bool:
        """Extend the lease (at most once per tenth of it); False once another took it."""
        now = now or timezone.now()
        if self.lost:
            return False
        if now - self.renewed_at < self.duration / 10:
            return True
        kept = Lease.objects.filter(name=self.name, holder=self.holder).update(
            expires_at=now + self.duration
        )
        self.lost = kept != 1
        self.renewed_at = now
        return not self.lost

    def release(self) -> None:
        Lease.objects.filter(name=self.name, holder=self.holder).update(
            holder="", acquired_at=None, expires_at=None
        )


def lease_acquire(
    name: str, *, duration: timedelta, holder: str = "", now: datetime | None = None
) -> Held | Lease:
    """The lease, held until now + duration; or, when another holds it, that Lease row
    (who holds it, since when, until when) for the caller to report."""
    now = now or timezone.now()
    holder = holder or uuid.uuid4().hex
    Lease.objects.get_or_create(name=name)
    claimed = (
        Lease.objects.filter(name=name)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__lte=now))
        .update(holder=holder, acquired_at=now, expires_at=now + duration)
    )
    if claimed == 1:
        return Held(name, holder, duration, now)
    return Lease.objects.get(name=name)
