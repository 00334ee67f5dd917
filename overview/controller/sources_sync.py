"""The periodic sync of every source, one at a time, under a lease that dies with its
holder: a worker killed mid-sync delays the next one by the lease, not half an hour."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from overview.evidence.crash_sync import crashes_sync
from overview.judges.crash_source import crash_source
from overview.monitoring.runs import periodic_run_recorded
from packages.log_context import log_context
from packages.services.faults import service_failed, service_recovered
from packages.services.leases import Held, lease_acquire
from packages.services.sync import publications_sync_since_last
from packages.sources import publication_source

log = logging.getLogger(__name__)

SYNC = "sync"


def sources_sync(*, now: datetime | None = None) -> dict[str, object]:
    """Sync publications, then crashes, unless another sync holds the lease.

    A skipped sync is recorded as a fault of the "sync" service (who holds it, since when),
    so the pages show it rather than an old "synced" line; the next sync that runs clears it.
    """
    now = now or timezone.now()
    held = lease_acquire(SYNC, duration=settings.PHASING_SYNC_LEASE, now=now)
    if not isinstance(held, Held):
        since = f"{held.acquired_at:%Y-%m-%d %H:%M} UTC" if held.acquired_at else "a moment ago"
        service_failed(
            SYNC, now=now, error=f"sync skipped: another sync has held its lock since {since}"
        )
        log.warning("a sync is already running (since %s); skipped", since)
        return {"skipped": True}

    # Renewed at every batch of work; a sync that stops working loses it within the lease.
    def renew(_done: int) -> None:
        held.renew()

    publications, crashes = publication_source(), crash_source()
    syncs: tuple[tuple[str, str, Callable[[], object]], ...] = (
        (
            "publications",
            publications.name,
            lambda: publications_sync_since_last(publications, progress=renew).as_dict(),
        ),
        ("crashes", crashes.name, lambda: crashes_sync(crashes, progress=renew)),
    )
    result: dict[str, object] = {}
    try:
        # Each source on its own: crash data keeps coming when the archive does not answer.
        for name, source, sync in syncs:
            try:
                with log_context(source=source), periodic_run_recorded(f"sync:{name}"):
                    result[name] = sync()
            except Exception:
                log.exception("%s sync failed", name)
                result[name] = "failed"
    finally:
        held.release()
    service_recovered(SYNC, now=timezone.now())
    return result
