"""What the fleet agents' reports say of each update: machines that report it, held back by
apt, and on the new version (measured uptake), now and hour by hour for the judge."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.db.models.functions import TruncHour

from overview.models import FleetReport
from packages.models import Publication


@dataclass(frozen=True)
class FleetCounts:
    machines: int  # machines with the package that reported it lately
    held_back: int  # apt keeps the new version back on them (phasing)
    on_new_version: int

    @property
    def uptake(self) -> float:
        return self.on_new_version / self.machines if self.machines else 0.0


def window_start(now: datetime) -> datetime:
    """Reports older than this no longer describe a machine (the agent runs daily)."""
    return now - timedelta(hours=settings.PHASING_FLEET_REPORT_HOURS)


def fleet_counts(publication_ids: Iterable[int], *, now: datetime) -> dict[int, FleetCounts]:
    """One query: the counts of each publication that has recent reports."""
    rows = (
        FleetReport.objects.filter(
            publication_id__in=list(publication_ids), reported_at__gte=window_start(now)
        )
        .values("publication_id")
        .annotate(
            machines=Count("id"),
            held=Count("id", filter=Q(held_back=True)),
            new=Count("id", filter=Q(on_new_version=True)),
        )
        .order_by()
    )
    return {
        row["publication_id"]: FleetCounts(row["machines"], row["held"], row["new"]) for row in rows
    }


def fleet_sightings(
    publications: Sequence[Publication],
    *,
    starts: dict[int, datetime],
    hours: dict[int, int],
) -> dict[int, tuple[list[int], list[int]]]:
    """Machines on the new version and on another, by the hour they reported, from each
    publication's start (one query): the sightings the fleet adds to the exposure."""
    if not publications:
        return {}
    rows = (
        FleetReport.objects.filter(
            publication_id__any=[p.pk for p in publications],
            reported_at__gte=min(starts.values()),
        )
        .annotate(hour=TruncHour("reported_at"))
        .values("publication_id", "hour", "on_new_version")
        .annotate(n=Count("id"))
        .order_by()
    )
    found: dict[int, dict[tuple[datetime, bool], int]] = defaultdict(dict)
    for row in rows:
        found[row["publication_id"]][(row["hour"], row["on_new_version"])] = row["n"]
    result = {}
    for pk, counts in found.items():
        if pk not in starts:
            continue
        new, old = [0] * hours[pk], [0] * hours[pk]
        for (hour, on_new), n in counts.items():
            index = int((hour - starts[pk]) / timedelta(hours=1))
            if 0 <= index < hours[pk]:
                (new if on_new else old)[index] += n
        result[pk] = (new, old)
    return result
