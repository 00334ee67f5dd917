"""The intake's writes: a report kept once per system and crash, and the limit of reports
a system may send an hour (Django's cache: Redis in production)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction

from overview.evidence.intake import IntakeReport
from overview.models import ReceivedCrash


class Replayed(Exception):
    """The system already sent this crash (daisy answers 409)."""


def over_limit(kind: str, key: str, *, limit: int, now: datetime) -> bool:
    """Count one request of `key` in the current hour; True when it is over `limit`.

    A fixed window per clock hour: two small cache operations, no database. A cache that
    does not answer lets the request through (the body limit still bounds the cost).
    """
    window = f"phasing:{kind}:{key}:{now:%Y%m%d%H}"
    try:
        if cache.add(window, 1, timeout=3600):
            return limit < 1
        return cache.incr(window) > limit
    except Exception:  # a cache outage must not refuse reports
        return False


def crash_receive(system_id: str, report: IntakeReport, *, now: datetime) -> uuid.UUID:
    """Keep a report as sent (its allow-listed fields); its OOPS id."""
    oops_id = uuid.uuid1()
    try:
        with transaction.atomic():
            ReceivedCrash.objects.create(
                oops_id=oops_id,
                system_id=system_id,
                received_at=now,
                replay_key=report.replay_key,
                fields=report.as_fields(),
            )
    except IntegrityError as error:
        raise Replayed from error
    return oops_id


def intake_rate_limited(system_id: str, *, now: datetime) -> bool:
    return over_limit(
        "intake", system_id.lower(), limit=settings.PHASING_INTAKE_REPORTS_PER_HOUR, now=now
    )


def intake_purge(*, now: datetime) -> dict[str, int]:
    """Forget what machines sent longer ago than PHASING_INTAKE_RETENTION_DAYS: received
    crash reports (their counts and buckets stay in the evidence) and fleet reports."""
    from overview.evidence.fleet import fleet_reports_purge  # fleet builds on this module

    before = now - timedelta(days=settings.PHASING_INTAKE_RETENTION_DAYS)
    crashes, _ = ReceivedCrash.objects.filter(received_at__lt=before).delete()
    return {"received_crashes": crashes, "fleet_reports": fleet_reports_purge(before=before)}
