"""What a deployment needs to work: the database, the broker, and fresh crash data.

Each check answers (ok, words); /healthz lists them all, so the body says which is
missing. Reads only: safe to run often, from any web process.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection

from packages.models import SourceSync

BROKER_TIMEOUT = 2  # seconds
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def database_check() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        # The body is public: it says what is down; the error (hosts, users) goes to the log.
        log.exception("health check: the database is unreachable")
        return Check("database", False, "unreachable")
    return Check("database", True, "ok")


def broker_queue_length(queue: str | None = None) -> int:
    """Messages waiting in the Celery queue; raises when the broker cannot be reached."""
    from phasing_site.celery import app

    queue = queue or app.conf.task_default_queue
    with app.connection_for_read() as conn:
        conn.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT)
        with conn.channel() as channel:
            try:
                declared = channel.queue_declare(queue=queue, passive=True)  # type: ignore[attr-defined]
                return int(declared.message_count)
            except conn.channel_errors:  # no worker has declared it yet: nothing waits
                return 0


def broker_check() -> Check:
    try:
        waiting = broker_queue_length()
    except Exception:
        log.exception("health check: the broker is unreachable")
        return Check("broker", False, "unreachable")
    return Check("broker", True, f"ok, {waiting} task(s) waiting")


def crash_data_ages(now: datetime) -> dict[str, float | None]:
    """Seconds since each crash source last synced successfully (None: never)."""
    return {
        sync.name: (now - sync.last_success_at).total_seconds() if sync.last_success_at else None
        for sync in SourceSync.objects.filter(kind="crashes").order_by("name")
    }


def crash_data_check(now: datetime) -> Check:
    """Fresh as the controller means it: synced within PHASING_CRASH_DATA_MAX_AGE."""
    limit = settings.PHASING_CRASH_DATA_MAX_AGE.total_seconds()
    try:
        ages = crash_data_ages(now)
    except Exception:
        log.exception("health check: the crash sources' syncs could not be read")
        return Check("crash data", False, "unknown")
    if not ages:
        return Check("crash data", False, "missing: no crash source has synced yet")
    known = [age for age in ages.values() if age is not None]
    if not known or min(known) > limit:
        newest = f"{min(known) / 60:.0f} min old" if known else "never synced"
        return Check("crash data", False, f"stale: {newest}, the limit is {limit / 60:.0f} min")
    return Check("crash data", True, f"ok, {min(known) / 60:.0f} min old")


def health_checks(now: datetime) -> list[Check]:
    return [database_check(), broker_check(), crash_data_check(now)]
