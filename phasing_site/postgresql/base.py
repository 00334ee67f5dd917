"""Django's PostgreSQL backend with a deadline the client keeps on every round trip.

`statement_timeout` is the server's: a database that stops answering after the connection
was made (a frozen server, a pooler waiting for a server, a network that drops packets)
never enforces it, and the client waits until gunicorn kills the request with a bare 500
or a task reaches its time limit. Here each query, commit, rollback and health check is
given `client_timeout` seconds (`DATABASE_CLIENT_TIMEOUT`; web requests narrow it to
`DATABASE_REQUEST_TIMEOUT`, `phasing_site.deadline`); past it the connection's socket is
shut, the wait ends with an OperationalError, and a page answers 503.

It also reads timestamps with psycopg's own compiled loader where that gives what Django's
gives: Django's loader is a Python subclass of psycopg's Python one, so every timestamp read
is parsed in Python (2.4 s for 290,000 here, against 0.25 s compiled: the tick at 20,000
updates reads about that many).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC
from typing import Any

import psycopg
from django.conf import settings
from django.db.backends.postgresql import base
from psycopg.postgres import types as pg_types

from phasing_site.deadline import watchdog

# psycopg's default loader for timestamptz text: compiled when psycopg[binary] is installed.
# It gives the session's time zone, `datetime.UTC` itself for a session in UTC.
_TIMESTAMPTZ = pg_types["timestamptz"].oid
_COMPILED_LOADER = psycopg.adapters.get_loader(_TIMESTAMPTZ, psycopg.pq.Format.TEXT)


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Seconds each round trip may take, 0 for no limit.
        self.client_timeout: float = getattr(settings, "DATABASE_CLIENT_TIMEOUT", 0)
        # Kept for good: `execute_wrapper()` only ever removes the wrappers it added.
        self.execute_wrappers.append(self._execute_within_deadline)

    @contextmanager
    def within_deadline(self) -> Iterator[None]:
        connection = self.connection
        if not self.client_timeout or connection is None or connection.closed:
            yield
            return
        with watchdog.armed(connection.fileno(), self.client_timeout):
            yield

    def _execute_within_deadline(
        self, execute: Callable[..., Any], sql: Any, params: Any, many: bool, context: Any
    ) -> Any:
        with self.within_deadline():
            return execute(sql, params, many, context)

    def create_cursor(self, name: str | None = None) -> Any:
        cursor = super().create_cursor(name)
        # Django's loader gives every timestamp Django's zone; psycopg's gives the session's.
        # Where both are UTC they give equal values, with the same tzinfo.
        if (
            self.timezone is UTC
            and self.connection.info.parameter_status("TimeZone") == "UTC"
            and _COMPILED_LOADER is not None
        ):
            cursor.adapters.register_loader(_TIMESTAMPTZ, _COMPILED_LOADER)
        return cursor

    def init_connection_state(self) -> None:
        with self.within_deadline():
            super().init_connection_state()

    def is_usable(self) -> bool:
        with self.within_deadline():
            return super().is_usable()

    def _commit(self) -> None:
        with self.within_deadline():
            super()._commit()  # type: ignore[misc]

    def _rollback(self) -> None:
        with self.within_deadline():
            super()._rollback()  # type: ignore[misc]
