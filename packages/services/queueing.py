"""Queue a Celery task by its name, so a service never imports the tasks that call it.

Tasks wrap services, so a service that queued a task by importing it would close an
import circle (service -> tasks -> service). The registry hands back the task object
itself, so `delay` keeps its meaning (eager in the embedded default, patched in tests).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import Any

from celery import current_app
from django.db import DatabaseError
from django.utils import timezone

from packages.services.faults import BROKER_SERVICE, service_failed

WRITE_BACK_PERCENTAGES = "overview.tasks.write_back_percentages"
SEND_NOTIFICATION = "overview.tasks.send_notification"
RUN_SCHEDULED_CHANGES = "packages.tasks.run_scheduled_changes"


def task_enqueue(name: str, *args: Any) -> None:
    with _broker_watched(name):
        current_app.tasks[name].delay(*args)


def task_enqueue_at(name: str, eta: datetime, *args: Any) -> None:
    task = current_app.tasks[name]
    with _broker_watched(name):
        if args:
            task.apply_async(args=args, eta=eta)
        else:
            task.apply_async(eta=eta)


@contextmanager
def _broker_watched(name: str) -> Iterator[None]:
    """A broker that does not take a task is a fault the overview shows (the work waits
    for a periodic sweep meanwhile) until a tick runs again; the caller still decides
    what a failure means for it."""
    try:
        yield
    except Exception as exc:
        if not current_app.conf.task_always_eager:
            with suppress(DatabaseError):  # the database may be what is down
                service_failed(
                    BROKER_SERVICE,
                    now=timezone.now(),
                    error=f"could not queue {name.rsplit('.', 1)[-1]} ({type(exc).__name__})",
                )
        raise
