"""How long crash reports are kept, and the purge that forgets older ones.

Reports (restricted, large: stack traces, environments) are kept
PHASING_CRASH_REPORT_RETENTION_DAYS (90 by default); the counters the judges and the pages
read (daily counters, bucket statistics and their systems, hourly counts, sightings) are
kept for ever, since the ingest adds to them rather than recounting them from reports.
On PostgreSQL the purge drops whole day partitions; on SQLite it deletes the rows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from overview.evidence import partitions
from overview.models import CrashReport

log = logging.getLogger(__name__)


def retention() -> timedelta:
    return timedelta(days=settings.PHASING_CRASH_REPORT_RETENTION_DAYS)


def oldest_kept_day(now: datetime) -> date:
    """The first UTC day whose reports are kept: the retention counted in whole days."""
    return (now.astimezone(UTC) - retention()).date()


def too_old(reported_at: datetime, *, now: datetime) -> bool:
    """A report the purge would already have dropped: the ingest refuses it, since it
    would be counted again after its first copy was purged."""
    return reported_at.astimezone(UTC).date() < oldest_kept_day(now)


@dataclass
class Maintenance:
    created: list[date] = field(default_factory=list)
    dropped: list[date] = field(default_factory=list)
    deleted: int = 0


def crash_partitions_maintain(*, now: datetime | None = None) -> Maintenance:
    """Create the partitions of the coming days and purge the reports past retention."""
    now = now or timezone.now()
    done = Maintenance()
    cutoff = oldest_kept_day(now)
    with transaction.atomic():
        if partitions.is_partitioned():
            done.created = partitions.ensure_ahead(
                today=now.astimezone(UTC).date(),
                days_ahead=settings.PHASING_CRASH_PARTITIONS_AHEAD,
            )
            done.dropped = partitions.drop_before(cutoff)
        else:
            start = datetime.combine(cutoff, time(), tzinfo=UTC)
            done.deleted, _ = CrashReport.objects.filter(reported_at__lt=start).delete()
    if done.created or done.dropped or done.deleted:
        log.info(
            "crash partitions: created %d, dropped %d (before %s), deleted %d reports",
            len(done.created),
            len(done.dropped),
            cutoff,
            done.deleted,
        )
    return done
