"""Celery tasks of the notices: thin wrappers around overview.notices.delivery."""

from __future__ import annotations

from collections.abc import Sequence

from celery import Task, shared_task

from overview.notices import delivery
from packages.services.announcements import Item


@shared_task(name=delivery.FAN_OUT, time_limit=120, soft_time_limit=100)
def fan_out(topic: str, items: Sequence[Sequence[int | str]]) -> int:
    pairs: list[Item] = [(int(pk), str(kind)) for pk, kind in items]
    return len(delivery.notices_fan_out(topic, pairs))


@shared_task(
    name=delivery.DELIVER,
    bind=True,
    time_limit=120,
    soft_time_limit=100,
    max_retries=None,
)
def deliver(self: Task, delivery_id: int) -> str:
    """A rerun is harmless: a delivery is claimed once, and a repeat carries the same
    webhook-id. The service decides how often and when to retry; the sweep takes over
    from a task that is lost."""
    outcome = delivery.delivery_attempt(delivery_id=delivery_id)
    if outcome.retry_in is not None:
        raise self.retry(countdown=outcome.retry_in.total_seconds())
    return outcome.status


@shared_task(name="overview.notices.send_due", time_limit=600, soft_time_limit=540)
def send_due() -> int:
    return delivery.deliveries_send_due()
