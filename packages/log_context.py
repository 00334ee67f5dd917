"""What every log record says it is about: the publication, the tick and the source.

Code that works on one of them wraps the work in `log_context(...)`; the filter copies
the current values onto each record, so the JSON logs of production (settings.LOGGING)
carry them as fields whichever module logged. Context variables, so threads and Celery
tasks each keep their own. Plain Python: no Django.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

FIELDS = ("publication", "tick", "source")

_current: dict[str, ContextVar[str | None]] = {
    name: ContextVar(f"log_{name}", default=None) for name in FIELDS
}


@contextmanager
def log_context(
    *, publication: object = None, tick: object = None, source: object = None
) -> Iterator[None]:
    """Name the publication, tick or source of the records logged inside the block."""
    given = {"publication": publication, "tick": tick, "source": source}
    tokens = [
        (_current[name], _current[name].set(str(value)))
        for name, value in given.items()
        if value is not None
    ]
    try:
        yield
    finally:
        for variable, token in reversed(tokens):
            variable.reset(token)


class LogContextFilter(logging.Filter):
    """Adds publication, tick and source to every record (None where nothing is set);
    values passed with `extra=` win."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name in FIELDS:
            if getattr(record, name, None) is None:
                setattr(record, name, _current[name].get())
        return True
