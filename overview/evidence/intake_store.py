"""The intake's writes: a report kept once per system and crash, and the limit of reports
a system may send an hour."""

from __future__ import annotations

import uuid
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction

from overview.evidence.intake import IntakeReport
from overview.evidence.limits import over_limit
from overview.models import ReceivedCrash


class Replayed(Exception):
    """The system already sent this crash (daisy answers 409)."""


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
