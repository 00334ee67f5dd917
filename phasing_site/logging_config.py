"""How the product logs: one JSON object per line in production, each with the publication,
the tick and the source it is about (packages.log_context); plain lines in a terminal."""

from __future__ import annotations

from typing import Any


def logging_config(*, log_format: str, level: str) -> dict[str, Any]:
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "context": {"()": "packages.log_context.LogContextFilter"},
            "forbidden_in_one_line": {"()": "packages.logs.ForbiddenInOneLine"},
        },
        "formatters": {
            "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
            "json": {
                "()": "pythonjsonlogger.json.JsonFormatter",
                "format": "%(asctime)s %(levelname)s %(name)s %(message)s %(publication)s %(tick)s %(source)s",
                "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
            },
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": log_format,
                "filters": ["context"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.db.backends": {"level": "WARNING"},
            "axes": {"level": "WARNING"},
            "django.request": {"filters": ["forbidden_in_one_line"]},
            # Through the root's handler only: Django's own console handler (in DEBUG) would
            # print each request's warning a second time.
            "django": {"handlers": [], "level": "INFO"},
        },
    }
