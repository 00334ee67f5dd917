"""Celery's beat, stopped cleanly however early it is stopped."""

from __future__ import annotations

from celery.apps import beat
from celery.platforms import signals
from celery.signals import beat_init


class Beat(beat.Beat):
    def install_sync_handler(self, service) -> None:
        """On Ctrl-C or SIGTERM, save the schedule and exit; before it is open, once it is.

        Celery's own handler saves the schedule by opening it if need be: a stop landing
        while beat was still opening it (its first second) opened it a second time inside
        the first, on a half-imported dbm, and beat died with a traceback. A stop that
        comes that early is kept until beat has started (beat_init), then carried out.
        """
        stopping: list[int] = []
        started = False

        def stop(signum=None, frame=None) -> None:
            if not started:
                stopping.append(signum)
                return
            service.sync()
            raise SystemExit

        def start(sender=None, **kwargs) -> None:
            nonlocal started
            if sender is service:
                started = True
                if stopping:
                    stop()

        beat_init.connect(start, weak=False)
        signals.update(SIGTERM=stop, SIGINT=stop)
