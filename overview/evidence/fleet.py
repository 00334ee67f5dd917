"""The fleet agent's reports: per machine and update, whether apt holds it back for
phasing and which version the machine runs.

A batch names packages by release, source and the candidate's source version, as apt
knows them; one that names no update the archive has is skipped (logged, and said in the
answer), never an error for the rest. A machine's report replaces its last one for the same
update, so a batch sent twice a day, or again the next day, counts the machine once.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

from overview.evidence.limits import over_limit
from overview.models import FleetReport
from packages.models import Publication

log = logging.getLogger(__name__)

MACHINE_HASH = r"^[0-9a-f]{64}$"
MAX_PACKAGES = 2000
_MACHINE_RE = re.compile(MACHINE_HASH)


@dataclass(frozen=True)
class PackageFact:
    """apt's answer for one binary package with a phased candidate, or installed at one."""

    package: str  # the binary package
    source: str
    source_version: str  # the candidate's source version: the update's version
    candidate: str  # the candidate's (binary) version
    installed: str  # '' when not installed
    held_back: bool  # DepCache.phasing_applied(): apt keeps the candidate back


@dataclass
class BatchSummary:
    kept: int = 0
    skipped: list[str] = field(default_factory=list)

    def skip(self, machine: str, fact: PackageFact, why: str) -> None:
        text = f"{fact.package} {fact.source_version}: {why}"
        self.skipped.append(text)
        log.warning("fleet report of %s: skipped %s", machine[:12], text)


def fleet_rate_limited(machine: str, *, now: datetime) -> bool:
    return over_limit("fleet", machine, limit=settings.PHASING_INTAKE_REPORTS_PER_HOUR, now=now)


def fleet_batch_receive(
    machine: str, release: str, facts: Sequence[PackageFact], *, now: datetime
) -> BatchSummary:
    """Keep what one machine's apt says of each update it names; skip the rest."""
    if not _MACHINE_RE.match(machine):
        raise ValueError("machine is not a SHA-256 in lower-case hexadecimal")
    summary = BatchSummary()
    wanted = {(f.source, f.source_version) for f in facts}
    publications = {
        (p.source_package.name, p.version): p
        for p in Publication.objects.filter(
            release__codename=release,
            source_package__name__in={s for s, _ in wanted},
            version__in={v for _, v in wanted},
        ).select_related("source_package")
    }
    rows: dict[int, FleetReport] = {}
    for fact in facts:
        publication = publications.get((fact.source, fact.source_version))
        if publication is None:
            summary.skip(
                machine, fact, f"no update {fact.source} {fact.source_version} in {release}"
            )
            continue
        on_new = bool(fact.installed) and fact.installed == fact.candidate
        row = rows.get(publication.pk)
        if row is None:
            rows[publication.pk] = FleetReport(
                machine=machine,
                publication=publication,
                installed_version=fact.installed,
                held_back=fact.held_back,
                on_new_version=on_new,
                reported_at=now,
                day=now.date(),
            )
        else:  # another binary of the same source: the machine holds back or runs any
            row.held_back = row.held_back or fact.held_back
            row.on_new_version = row.on_new_version or on_new
    FleetReport.objects.bulk_create(
        list(rows.values()),
        update_conflicts=True,
        unique_fields=["publication", "machine"],
        update_fields=["installed_version", "held_back", "on_new_version", "reported_at", "day"],
    )
    summary.kept = len(rows)
    return summary


def fleet_reports_purge(*, before: datetime) -> int:
    deleted, _ = FleetReport.objects.filter(reported_at__lt=before).delete()
    return deleted
