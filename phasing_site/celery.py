from __future__ import annotations

import os
import socket

from celery import Celery
from celery.signals import beat_init, before_task_publish
from kombu.utils.objects import cached_property

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "phasing_site.settings")


class _Phasing(Celery):
    @cached_property
    def Beat(self):  # noqa: N802 (Celery's name)
        """Beat that stops cleanly even while starting (phasing_site.beat)."""
        return self.subclass_with_self("phasing_site.beat:Beat")


app = _Phasing("phasing")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Every task a beat sends names that beat (host and process), so the tick can tell when two
# beats run at once: each would schedule every task twice.
BEAT_HEADER = "phasing_beat"
# phasing_beat names the beat it runs after itself, so a beat it restarts keeps its name.
BEAT_NAME_VARIABLE = "PHASING_BEAT_NAME"
_beat: str | None = None


@beat_init.connect
def _remember_this_beat(sender: object = None, **kwargs: object) -> None:
    global _beat
    _beat = os.environ.get(BEAT_NAME_VARIABLE) or f"{socket.gethostname()}:{os.getpid()}"


@before_task_publish.connect
def _name_the_beat(headers: dict | None = None, **kwargs: object) -> None:
    if _beat is not None and headers is not None:
        headers[BEAT_HEADER] = _beat
