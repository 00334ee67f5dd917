"""Deadlines the client keeps on a database connection (`phasing_site.postgresql`), and the
shorter one a web request gets, so a database that stops answering gives a 503 within
seconds instead of a request gunicorn kills."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)


class Watchdog:
    """One thread per process watches every armed round trip; one that outlives its
    deadline has its socket shut, which ends the wait in the thread that made it."""

    TICK = 0.2

    def __init__(self) -> None:
        self._armed: dict[int, tuple[int, float]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None
        self._pid = 0

    @contextlib.contextmanager
    def armed(self, fd: int, seconds: float) -> Iterator[None]:
        key = next(self._ids)
        with self._lock:
            self._start()
            self._armed[key] = (fd, time.monotonic() + seconds)
        try:
            yield
        finally:
            # Under the lock: once disarmed, the socket (and its number, which the
            # process may give to another file) is never touched.
            with self._lock:
                self._armed.pop(key, None)

    def _start(self) -> None:
        # A forked worker (gunicorn, Celery prefork) has no thread of its parent's.
        if self._thread is None or self._pid != os.getpid():
            self._pid = os.getpid()
            self._thread = threading.Thread(target=self._watch, name="db-deadline", daemon=True)
            self._thread.start()

    def _watch(self) -> None:
        while True:
            time.sleep(self.TICK)
            now = time.monotonic()
            with self._lock:
                for key, (fd, deadline) in list(self._armed.items()):
                    if now >= deadline:
                        del self._armed[key]
                        _shut(fd)


def _shut(fd: int) -> None:
    logger.error("The database did not answer in time: its connection is closed")
    with contextlib.suppress(OSError):
        with socket.socket(fileno=os.dup(fd)) as sock:
            sock.shutdown(socket.SHUT_RDWR)


watchdog = Watchdog()


class RequestDatabaseDeadlineMiddleware:
    """A page may wait DATABASE_REQUEST_TIMEOUT seconds for each answer of the database,
    well inside gunicorn's timeout; tasks and commands keep the longer
    DATABASE_CLIENT_TIMEOUT."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        wrapper = connection
        if not hasattr(wrapper, "client_timeout"):
            return self.get_response(request)  # SQLite: nothing hangs across a network
        previous = wrapper.client_timeout
        wrapper.client_timeout = settings.DATABASE_REQUEST_TIMEOUT
        try:
            return self.get_response(request)
        finally:
            wrapper.client_timeout = previous
