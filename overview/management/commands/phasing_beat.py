"""Run Celery beat, at most one in the whole deployment.

Beat on several machines would send every periodic task once per machine. Run this on two
machines for failover: on PostgreSQL the first one to take a session advisory lock runs
beat; the other waits, and takes over when the first one's database session ends (the
machine died, the process stopped). The lock is held by an open connection, checked
every few seconds: losing it stops beat at once, so two never run at once for long, and
this command waits for the database and takes the lock again (overview.beat_lock) rather
than exiting. The controller's tick is safe run twice anyway; the lock keeps the schedule
honest.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import connections

from overview.beat_lock import BEAT_LOCK, BeatSupervisor
from phasing_site.celery import BEAT_NAME_VARIABLE

__all__ = ["BEAT_LOCK", "Command"]


class Command(BaseCommand):
    help = "Run Celery beat, once per deployment (waits while another holds the lock)."

    def add_arguments(self, parser):
        parser.add_argument("--loglevel", default="info")
        parser.add_argument(
            "--no-wait",
            action="store_true",
            help="exit with an error instead of waiting while another beat runs",
        )

    def handle(self, *args, loglevel: str, no_wait: bool, **options):
        from phasing_site.celery import app

        schedule = app.conf.beat_schedule_filename
        Path(schedule).parent.mkdir(parents=True, exist_ok=True)
        if connections["default"].vendor != "postgresql":
            # The embedded default runs one beat by construction: nothing to lock.
            self.stderr.write(f"beat starting (pid {os.getpid()})")
            app.Beat(loglevel=loglevel, schedule=schedule).run()
            return

        def connect():
            connection = connections.create_connection("default")
            connection.ensure_connection()
            return connection

        def start_beat():
            return subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "--app",
                    "phasing_site",
                    "beat",
                    "--loglevel",
                    loglevel,
                    "--schedule",
                    schedule,
                ],
                # Beat restarted after a blip is the same beat on the overview, not a
                # second one: it is named after this process, which lives on.
                env={**os.environ, BEAT_NAME_VARIABLE: f"{socket.gethostname()}:{os.getpid()}"},
            )

        def stop(signum, frame):
            raise SystemExit(0)

        # honcho and systemd stop with SIGTERM: beat's child is stopped with this process.
        signal.signal(signal.SIGTERM, stop)
        status = BeatSupervisor(
            connect=connect,
            start_beat=start_beat,
            sleep=time.sleep,
            say=self.stderr.write,
            no_wait=no_wait,
        ).run()
        raise SystemExit(status)
