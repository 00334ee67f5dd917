"""Record each run of a periodic job (how long, whether it succeeded) for the metrics."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.utils import timezone

from overview.models import PeriodicRun


@contextmanager
def periodic_run_recorded(name: str) -> Iterator[None]:
    """Time the block; record success, or the error it raised (which still propagates)."""
    started_at, started = timezone.now(), time.perf_counter()
    error = ""
    try:
        yield
    except BaseException as exc:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        raise
    finally:
        fields: dict[str, object] = {
            "last_started_at": started_at,
            "last_duration_seconds": round(time.perf_counter() - started, 3),
            "last_error": error,
        }
        if not error:
            fields["last_success_at"] = timezone.now()
        PeriodicRun.objects.update_or_create(name=name, defaults=fields)
