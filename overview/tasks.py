"""Celery tasks of the controller side: thin, idempotent wrappers around services.

Task names are kept as they were first published, so messages already queued still run;
tasks added later name themselves explicitly too.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task
from django.conf import settings
from django.utils import timezone

from overview.controller import tick as controller
from overview.controller.notifications import notification_send, notifications_send_pending
from overview.controller.sources_sync import sources_sync
from overview.demo_seeding import replay_running
from overview.evidence.retention import crash_partitions_maintain
from overview.monitoring.runs import periodic_run_recorded
from packages.log_context import log_context
from packages.services.faults import BROKER_SERVICE, beat_seen, service_recovered
from packages.services.queueing import SEND_NOTIFICATION
from packages.services.writeback import percentages_reconcile
from phasing_site.celery import BEAT_HEADER

log = logging.getLogger(__name__)

# Beyond this many retries of one email, the reconcile takes over at its own backoff.
EMAIL_TASK_RETRIES = 8


def _demo_replaying() -> bool:
    """seed_demo writes the demo's past: the live sync, tick and reconcile wait for it."""
    if replay_running(now=timezone.now()):
        log.info("the demo's replay is running; this periodic task waits for it")
        return True
    return False


@shared_task(name="overview.tasks.sync_sources", time_limit=1800, soft_time_limit=1700)
def sync_sources() -> dict:
    if _demo_replaying():
        return {}
    return sources_sync()


@shared_task(
    name="overview.tasks.tick",
    bind=True,
    time_limit=600,
    soft_time_limit=540,
    acks_late=True,
    reject_on_worker_lost=True,
)
def tick(self: Task) -> int:
    """A rerun is harmless: a tick at the same moment changes nothing twice, and a tick
    whose worker died was rolled back whole; so the message is acknowledged only after
    the tick, and given back to the queue when its worker is lost."""
    beat = getattr(self.request, BEAT_HEADER, None) or (self.request.headers or {}).get(BEAT_HEADER)
    if beat:
        beat_seen(str(beat), now=timezone.now())
    # This tick came through the broker: it takes tasks again.
    service_recovered(BROKER_SERVICE, now=timezone.now())
    if _demo_replaying():
        return 0
    with log_context(tick=self.request.id or "eager"), periodic_run_recorded("tick"):
        if settings.PHASING_TICK_PER_RELEASE:
            # One task per release, for as many workers as there are: each locks only its
            # release's updates, so a large archive's tick is spread and never one long
            # transaction. Returns the releases sent, not the updates decided.
            releases = controller.releases_in_phasing()
            for release in releases:
                tick_release.delay(release)
            return len(releases)
        return len(controller.tick())


@shared_task(
    name="overview.tasks.tick_release",
    bind=True,
    time_limit=600,
    soft_time_limit=540,
    acks_late=True,
    reject_on_worker_lost=True,
)
def tick_release(self: Task, release_id: int) -> int:
    """The tick of one release's updates (PHASING_TICK_PER_RELEASE); a rerun is as
    harmless as the whole tick's, and ticks of different releases run at once."""
    if _demo_replaying():
        return 0
    with log_context(tick=f"{self.request.id or 'eager'} release {release_id}"):
        return len(controller.tick(releases=[release_id]))


@shared_task(
    name=SEND_NOTIFICATION,
    bind=True,
    time_limit=120,
    soft_time_limit=100,
    acks_late=True,
    max_retries=EMAIL_TASK_RETRIES,
)
def send_notification(self: Task, notification_id: int) -> str:
    """A rerun is harmless: a sent email is never claimed again, and a copy sent after a
    crash carries the same Message-ID."""
    outcome = notification_send(notification_id=notification_id)
    if outcome.retry_in is not None and self.request.retries < EMAIL_TASK_RETRIES:
        raise self.retry(countdown=outcome.retry_in.total_seconds())
    return outcome.status


@shared_task(name="overview.tasks.reconcile", time_limit=600, soft_time_limit=540)
def reconcile() -> dict:
    """Finish what a commit left behind: write-backs and emails that no task took."""
    if _demo_replaying():
        return {}
    return {"write_back": percentages_reconcile(), "emails": notifications_send_pending()}


@shared_task(name="overview.tasks.purge_intake", time_limit=600, soft_time_limit=540)
def purge_intake() -> dict:
    """Forget what machines sent longer ago than the retention (a rerun deletes nothing)."""
    from overview.evidence.intake_retention import intake_purge

    with periodic_run_recorded("purge-intake"):
        return intake_purge(now=timezone.now())


@shared_task(name="overview.tasks.crash_partitions", time_limit=600, soft_time_limit=540)
def crash_partitions() -> dict:
    """Create the coming days' crash report partitions; purge those past retention."""
    done = crash_partitions_maintain()
    return {"created": len(done.created), "dropped": len(done.dropped), "deleted": done.deleted}
