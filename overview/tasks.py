"""Celery tasks of the controller side: thin, idempotent wrappers around services.

Task names are kept as they were first published, so messages already queued still run.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.core.cache import cache

from overview import controller
from overview.services.crash_sync import crashes_sync
from overview.services.notifications import notifications_send_pending
from overview.services.runs import periodic_run_recorded
from overview.sources import crash_source
from packages.log_context import log_context
from packages.services.sync import publications_sync_since_last
from packages.services.writeback import percentages_reconcile
from packages.sources import publication_source

log = logging.getLogger(__name__)

# One sync at a time is enough; a second would only fetch the same data again.
_SYNC_LOCK = "phasing:sync-lock"


@shared_task(name="overview.tasks.sync_sources", time_limit=1800, soft_time_limit=1700)
def sync_sources() -> dict:
    if not cache.add(_SYNC_LOCK, "1", timeout=1800):
        log.info("a sync is already running; skipped")
        return {"skipped": True}
    result: dict = {}
    try:
        # Each source on its own: crash data keeps coming when the archive does not answer.
        publications, crashes = publication_source(), crash_source()
        for name, source, sync in (
            (
                "publications",
                publications.name,
                lambda: publications_sync_since_last(publications).as_dict(),
            ),
            ("crashes", crashes.name, lambda: crashes_sync(crashes)),
        ):
            try:
                with log_context(source=source), periodic_run_recorded(f"sync:{name}"):
                    result[name] = sync()
            except Exception:
                log.exception("%s sync failed", name)
                result[name] = "failed"
        return result
    finally:
        cache.delete(_SYNC_LOCK)


@shared_task(
    name="overview.tasks.tick",
    bind=True,
    time_limit=600,
    soft_time_limit=540,
    acks_late=True,
    reject_on_worker_lost=True,
)
def tick(self) -> int:
    """A rerun is harmless: a tick at the same moment changes nothing twice, and a tick
    whose worker died was rolled back whole; so the message is acknowledged only after
    the tick, and given back to the queue when its worker is lost."""
    with log_context(tick=self.request.id or "eager"), periodic_run_recorded("tick"):
        return len(controller.tick())


@shared_task(name="overview.tasks.reconcile", time_limit=600, soft_time_limit=540)
def reconcile() -> dict:
    """Finish what a commit left behind: write-backs and emails that did not go out."""
    return {"write_back": percentages_reconcile(), "emails": notifications_send_pending()}
