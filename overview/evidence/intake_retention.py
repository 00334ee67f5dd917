"""What machines sent is kept PHASING_INTAKE_RETENTION_DAYS, then forgotten (a daily task)."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from overview.evidence.fleet import fleet_reports_purge
from overview.models import ReceivedCrash


def intake_purge(*, now: datetime) -> dict[str, int]:
    """Forget received crash reports (their counts and buckets stay in the evidence) and
    fleet reports older than the retention."""
    before = now - timedelta(days=settings.PHASING_INTAKE_RETENTION_DAYS)
    crashes, _ = ReceivedCrash.objects.filter(received_at__lt=before).delete()
    return {"received_crashes": crashes, "fleet_reports": fleet_reports_purge(before=before)}
