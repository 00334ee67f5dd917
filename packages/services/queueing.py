"""Queue a Celery task by its name, so a service never imports the tasks that call it.

Tasks wrap services, so a service that queued a task by importing it would close an
import circle (service -> tasks -> service). The registry hands back the task object
itself, so `delay` keeps its meaning (eager in the embedded default, patched in tests).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from celery import current_app

WRITE_BACK_PERCENTAGES = "overview.tasks.write_back_percentages"
SEND_NOTIFICATION = "overview.tasks.send_notification"
RUN_SCHEDULED_CHANGES = "packages.tasks.run_scheduled_changes"


def task_enqueue(name: str, *args: Any) -> None:
    current_app.tasks[name].delay(*args)


def task_enqueue_at(name: str, eta: datetime, *args: Any) -> None:
    task = current_app.tasks[name]
    if args:
        task.apply_async(args=args, eta=eta)
    else:
        task.apply_async(eta=eta)
