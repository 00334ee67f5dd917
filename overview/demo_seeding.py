"""While seed_demo replays the demo's week, the site serves at once and says how far the
replay is; the live controller, sync and reconcile wait for it, since the replay writes
the past and they would write the present in between.

The progress lives in the cache, so the banner costs a page no query; the replay holds a
lease (packages.services.leases), which dies with it: a replay that was killed does not
hold the live controller back for longer than LEASE_DURATION.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.cache import cache

from packages.models import Lease
from packages.services.leases import Held, lease_acquire

log = logging.getLogger(__name__)

LEASE = "seed_demo:replay"
LEASE_DURATION = timedelta(minutes=2)
_PROGRESS = "phasing:demo-seeding"
# A replay that stops reporting (killed) stops showing after this.
_PROGRESS_TIMEOUT = 300


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    days: int

    @property
    def percent(self) -> int:
        return min(99, round(100 * self.done / self.total)) if self.total else 0


def replay_claim(*, now: datetime) -> Held | None:
    """The replay's lease, or None when another replay holds it."""
    held = lease_acquire(LEASE, duration=LEASE_DURATION, now=now)
    return held if isinstance(held, Held) else None


def replay_running(*, now: datetime) -> bool:
    """Whether a demo replay holds its lease now (one query)."""
    return Lease.objects.filter(name=LEASE, expires_at__gt=now).exclude(holder="").exists()


def progress_report(progress: Progress | None) -> None:
    """Record how far the replay is (None: done). A cache that is down costs the banner."""
    try:
        if progress is None:
            cache.delete(_PROGRESS)
        else:
            cache.set(_PROGRESS, (progress.done, progress.total, progress.days), _PROGRESS_TIMEOUT)
    except Exception:  # the replay goes on without its banner
        log.warning("could not record the demo's seeding progress", exc_info=True)


def progress() -> Progress | None:
    """How far the replay is, if one is running; never a query."""
    try:
        value = cache.get(_PROGRESS)
    except Exception:
        return None
    if not (isinstance(value, tuple) and len(value) == 3):
        return None
    return Progress(*value)
