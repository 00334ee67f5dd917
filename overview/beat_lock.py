"""At most one Celery beat in the deployment, kept through database blips.

The beat that holds a PostgreSQL session advisory lock runs beat (in a child process);
the others wait. The lock lives as long as its connection: when that connection is lost
(the database restarted, the network blinked) beat is stopped at once, since another
machine may take the lock now, and this supervisor waits for the database and takes the
lock again (or waits behind the beat that took it). It never exits on a blip, so under
`make run` honcho does not stop the web server and the worker with it.

Everything that touches the outside (connecting, starting beat, sleeping) is injected, so
the tests drive a blip without stopping a shared database.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

# Any fixed 64-bit number: the key of Phasing's beat lock in pg_locks.
BEAT_LOCK = 0x5048415345424541  # "PHASEBEA"
POLL_SECONDS = 5.0
# Reconnecting after a blip: 1 s, 2 s, 4 s ... at most 30 s apart.
RECONNECT_MAX_SECONDS = 30.0


class Beat(Protocol):
    def poll(self) -> int | None: ...

    def terminate(self) -> None: ...

    def wait(self, timeout: float | None = None) -> Any: ...


@dataclass
class BeatSupervisor:
    connect: Callable[[], Any]  # a new database connection (raises when it cannot)
    start_beat: Callable[[], Beat]
    sleep: Callable[[float], None]
    say: Callable[[str], None] = log.warning
    no_wait: bool = False

    def run(self, *, rounds: int | None = None) -> int:
        """Hold the lock and run beat, for ever (or `rounds` times, for the tests); the exit
        status of beat when it stops by itself."""
        held = 0
        while rounds is None or held < rounds:
            connection = self._locked_connection()
            held += 1
            beat = self.start_beat()
            self.say(f"beat starting (pid {os.getpid()}), holding the beat lock")
            try:
                status = self._watch(connection, beat)
            except BaseException:
                # Stopped (SIGTERM, Ctrl-C): beat goes with its supervisor, never alone.
                beat.terminate()
                beat.wait(timeout=30)
                raise
            if status is not None:
                return status
            self.say("lost the beat lock's database connection; beat stopped, taking it again")
            beat.terminate()
            beat.wait(timeout=30)
            _close(connection)
        return 0

    def _locked_connection(self) -> Any:
        delay = 1.0
        while True:
            try:
                connection = self.connect()
                if _try_lock(connection):
                    return connection
                _close(connection)
                if self.no_wait:
                    raise SystemExit("another beat holds the lock; not starting")
                self.say("another beat runs; waiting to take over")
                self.sleep(POLL_SECONDS * 6)
                delay = 1.0
            except SystemExit:
                raise
            except Exception as error:  # the database is away: wait for it
                self.say(
                    f"cannot reach the database for the beat lock ({type(error).__name__}); retrying in {delay:g} s"
                )
                self.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_SECONDS)

    def _watch(self, connection: Any, beat: Beat) -> int | None:
        """None when the lock's connection is lost; beat's status if beat stopped."""
        while True:
            self.sleep(POLL_SECONDS)
            status = beat.poll()
            if status is not None:
                return status
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT 1")
            except Exception:
                return None


def _try_lock(connection: Any) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [BEAT_LOCK])
        return bool(cursor.fetchone()[0])


def _close(connection: Any) -> None:
    try:
        connection.close()
    except Exception:  # already gone
        log.debug("closing the beat lock's connection failed", exc_info=True)
