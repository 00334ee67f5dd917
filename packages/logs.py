"""Logging filters named by settings.LOGGING."""

from __future__ import annotations

import logging


class ForbiddenInOneLine(logging.Filter):
    """A 403 is a person reaching for what they may not see: worth one line, not the
    traceback of the PermissionDenied that produced it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
