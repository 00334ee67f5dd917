"""Celery tasks of the archive side: thin, idempotent wrappers around its services.

Task names are kept as they were first published, so messages already queued still run.
"""

from __future__ import annotations

from celery import shared_task

from packages.services.writeback import percentages_write_back


@shared_task(
    name="overview.tasks.write_back_percentages",
    time_limit=600,
    soft_time_limit=540,
    acks_late=True,
    max_retries=5,
    default_retry_delay=60,
)
def write_back_percentages(event_ids: list[int]) -> dict:
    """A rerun is harmless: the source is given each publication's current percentage."""
    return percentages_write_back(event_ids=event_ids)
