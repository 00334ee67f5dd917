"""Which service is failing, and since when: kept beside the sources' own status
(SourceSync), so every page's footer reads both in its one query.

A service is anything a person should know has stopped working although the pages load:
sending email, writing percentages back to the archive, the periodic sync (skipped
because another holds its lock), the beat that schedules the controller.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings
from django.db.models import F, Value
from django.db.models.functions import Coalesce

from packages.models import SourceSync

SERVICE = "service"
BEAT = "beat"
# The broker not taking a task (packages.services.queueing); a tick that runs clears it.
BROKER_SERVICE = "broker"
# Retries after a failure (an email, a write-back): PHASING_RETRY_BACKOFF (30 s), then
# twice as long each time (1 min, 2 min, ...) and at most 15 min apart, counted from the
# failure rather than waiting for a fixed reconcile.
BACKOFF_MAX_SECONDS = 900


def retry_delay(failures: int) -> timedelta:
    """How long after the `failures`-th failure in a row the next try comes."""
    first = max(int(settings.PHASING_RETRY_BACKOFF.total_seconds()), 1)
    return timedelta(
        seconds=get_exponential_backoff_interval(
            first, max(failures - 1, 0), BACKOFF_MAX_SECONDS, full_jitter=False
        )
    )


def service_failed(name: str, *, now: datetime, error: str) -> None:
    """Record a failure; `failing_since` keeps the first one since the last success."""
    updated = SourceSync.objects.filter(name=name).update(
        last_attempt_at=now,
        last_error=error[:2000],
        failing_since=Coalesce(F("failing_since"), Value(now)),
    )
    if not updated:
        SourceSync.objects.get_or_create(
            name=name,
            defaults={
                "kind": SERVICE,
                "last_attempt_at": now,
                "last_error": error[:2000],
                "failing_since": now,
            },
        )


def service_recovered(name: str, *, now: datetime) -> None:
    """Clear a failure (one statement that changes nothing while all is well)."""
    SourceSync.objects.filter(name=name, failing_since__isnull=False).update(
        failing_since=None, last_error="", last_success_at=now, last_attempt_at=now
    )


def beat_seen(beat: str, *, now: datetime, forget_after: timedelta = timedelta(days=1)) -> None:
    """A controller tick scheduled by this beat (hostname and process) ran now; a beat first
    seen now counts from now (`last_success_at`), and beats gone for a day are forgotten."""
    SourceSync.objects.update_or_create(
        name=f"beat:{beat}"[:40],
        defaults={"last_attempt_at": now},
        create_defaults={"kind": BEAT, "last_attempt_at": now, "last_success_at": now},
    )
    SourceSync.objects.filter(kind=BEAT, last_attempt_at__lt=now - forget_after).delete()
