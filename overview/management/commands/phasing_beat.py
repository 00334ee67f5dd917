"""Run Celery beat, at most one in the whole deployment.

Beat on several machines would send every periodic task once per machine. Run this on two
machines for failover: on PostgreSQL the first one to take a session advisory lock runs
beat; the other waits, and takes over when the first one's database session ends (the
machine died, the process stopped). The lock is held by an open connection, checked
every few seconds: losing it stops this beat, so two never run at once for long. The
controller's tick is safe run twice anyway; the lock keeps the schedule honest.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import connections

# Any fixed 64-bit number: the key of Phasing's beat lock in pg_locks.
BEAT_LOCK = 0x5048415345424541  # "PHASEBEA"
POLL_SECONDS = 5.0


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

        # A connection of its own, opened once and kept: the lock lives as long as it does.
        connection = connections.create_connection("default")
        connection.inc_thread_sharing()  # the watcher thread below checks it
        if connection.vendor == "postgresql":
            connection.ensure_connection()
            while not self._try_lock(connection):
                if no_wait:
                    raise SystemExit("another beat holds the lock; not starting")
                self.stderr.write("another beat runs; waiting to take over")
                time.sleep(POLL_SECONDS * 6)
            threading.Thread(target=self._watch, args=(connection,), daemon=True).start()
        self.stderr.write(f"beat starting (pid {os.getpid()})")
        Path(app.conf.beat_schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        app.Beat(loglevel=loglevel, schedule=app.conf.beat_schedule_filename).run()

    @staticmethod
    def _try_lock(connection) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [BEAT_LOCK])
            return bool(cursor.fetchone()[0])

    def _watch(self, connection) -> None:
        """Stop beat when the lock's connection is gone: another may have taken over."""
        while True:
            time.sleep(POLL_SECONDS)
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
            except Exception:
                self.stderr.write("lost the beat lock's database connection; stopping")
                os._exit(3)
