"""Celery tasks of the archive side: thin, idempotent wrappers around its services.

Task names are kept as they were first published, so messages already queued still run.
"""

from __future__ import annotations

from celery import Task, shared_task

from packages.models import WriteBack
from packages.services.faults import retry_delay
from packages.services.queueing import WRITE_BACK_PERCENTAGES
from packages.services.scheduled import scheduled_changes_run_due
from packages.services.writeback import percentages_write_back

# Beyond this many retries, the periodic reconcile goes on trying.
WRITE_BACK_RETRIES = 8


@shared_task(
    name=WRITE_BACK_PERCENTAGES,
    bind=True,
    time_limit=600,
    soft_time_limit=540,
    acks_late=True,
    max_retries=WRITE_BACK_RETRIES,
)
def write_back_percentages(self: Task, event_ids: list[int]) -> dict:
    """A rerun is harmless: the source is given each publication's current percentage.

    A failure (the archive down) is retried with a backoff that starts from it.
    """
    counts = percentages_write_back(event_ids=event_ids, retry_failed=self.request.retries > 0)
    if counts.get(WriteBack.FAILED) and self.request.retries < WRITE_BACK_RETRIES:
        raise self.retry(countdown=retry_delay(self.request.retries + 1).total_seconds())
    return counts


@shared_task(name="packages.tasks.run_scheduled_changes", time_limit=600, soft_time_limit=540)
def run_scheduled_changes() -> int:
    """A rerun is harmless: a change runs only from pending, under its row lock, so two
    workers (or beat overlapping itself) run each due change once."""
    return len(scheduled_changes_run_due())
