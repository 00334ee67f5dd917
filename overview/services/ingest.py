"""Crash reports from a crash source into the database, in bulk, with the counters the
judges read (daily counts, reports and distinct systems per bucket and version)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from operator import itemgetter

from django.db import transaction
from django.db.models import Count, Max, Min
from django.db.models.functions import TruncDate

from overview.models import (
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    ErrorBucket,
)
from overview.services.ingest_copy import ingest_batch_copy
from overview.services.judging_counts import hour_of, judging_counts_recount
from overview.sources.base import CrashReportRecord
from packages.models import Release, SourcePackage
from packages.services import bulk
from packages.services.bulk import ids_for_names

log = logging.getLogger(__name__)

BATCH = 5000


@dataclass
class IngestSummary:
    received: int = 0
    inserted: int = 0
    duplicates: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)


def _valid(record: CrashReportRecord, releases: dict[str, int]) -> str:
    """Why a record cannot be kept, or '' when it can."""
    if not isinstance(record, CrashReportRecord):
        return "not a crash report record"
    if record.release not in releases:
        return f"unknown release {record.release!r}"
    for name in ("external_id", "signature", "source_package", "version", "system_id"):
        value = getattr(record, name)
        if not isinstance(value, str) or not value:
            return f"missing {name}"
    if not isinstance(record.reported_at, datetime) or record.reported_at.tzinfo is None:
        return "reported_at is not an aware datetime"
    for name in ("architecture", "stack_trace", "function", "web_link"):
        if not isinstance(getattr(record, name), str):
            return f"{name} is not text"
    if len(record.signature) > 1000 or len(record.version) > 200 or len(record.external_id) > 100:
        return "a field is longer than the archive allows"
    for name in ("environment", "package_versions"):
        value = getattr(record, name)
        if not isinstance(value, dict):
            return f"{name} is not a mapping"
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            return f"{name} is not plain JSON"
    if "\x00" in record.stack_trace or "\x00" in record.signature:
        return "NUL byte in the report"
    return ""


def crash_reports_ingest(
    records: Iterable[CrashReportRecord],
    *,
    progress: Callable[[int], None] | None = None,
) -> IngestSummary:
    """Store reports (skipping known ones) and bring buckets and daily counters up to date.

    Safe to re-run over the same records: external ids are unique, counters are
    recounted from the stored reports rather than incremented.
    """
    summary = IngestSummary()
    releases = dict(Release.objects.values_list("codename", "id"))
    iterator = iter(records)
    while batch := list(islice(iterator, BATCH)):
        summary.received += len(batch)
        kept = []
        for record in batch:
            why = _valid(record, releases)
            if why:
                summary.skipped += 1
                log.warning("skipped crash report %r: %s", getattr(record, "external_id", "?"), why)
                continue
            kept.append(record)
        inserted = _ingest_batch(kept, releases)
        summary.inserted += inserted
        summary.duplicates += len(kept) - inserted
        if progress:
            progress(len(batch))
    return summary


def _ingest_batch(records: Sequence[CrashReportRecord], releases: dict[str, int]) -> int:
    if not records:
        return 0
    if bulk.uses_postgresql():
        fresh = list({r.external_id: r for r in records}.values())
        with transaction.atomic():
            packages = ids_for_names(SourcePackage, "name", {r.source_package for r in fresh})
            buckets = _buckets_for(fresh, packages)
            return ingest_batch_copy(fresh, releases=releases, packages=packages, buckets=buckets)
    with transaction.atomic():
        known = set(
            CrashReport.objects.filter(
                external_id__in=[r.external_id for r in records]
            ).values_list("external_id", flat=True)
        )
        fresh = list({r.external_id: r for r in records if r.external_id not in known}.values())
        if not fresh:
            return 0
        packages = ids_for_names(SourcePackage, "name", {r.source_package for r in fresh})
        buckets = _buckets_for(fresh, packages)
        CrashReport.objects.bulk_create(
            [
                CrashReport(
                    bucket_id=buckets[r.signature],
                    source_package_id=packages[r.source_package],
                    version=r.version,
                    release_id=releases[r.release],
                    architecture=r.architecture[:20],
                    reported_at=r.reported_at,
                    system_id=r.system_id[:64],
                    stack_trace=r.stack_trace,
                    environment=r.environment,
                    package_versions=r.package_versions,
                    from_proposed=r.from_proposed,
                    automated_testing=r.automated_testing,
                    external_id=r.external_id,
                )
                for r in fresh
            ],
            batch_size=1000,
            ignore_conflicts=True,
        )
        _recount(fresh, releases, packages)
        judging_counts_recount(
            (releases[r.release], packages[r.source_package], r.version, hour_of(r.reported_at))
            for r in fresh
            if not r.automated_testing and not r.from_proposed
        )
        _touch_buckets(buckets.values())
    return len(fresh)


def _buckets_for(records: Sequence[CrashReportRecord], packages: dict[str, int]) -> dict[str, int]:
    firsts: dict[str, CrashReportRecord] = {}
    for record in records:
        firsts.setdefault(record.signature, record)
    known = dict(ErrorBucket.objects.filter(signature__in=firsts).values_list("signature", "id"))
    if len(known) == len(firsts):
        return known  # the usual case: crashes land in buckets already known
    for signature in known:
        del firsts[signature]
    ErrorBucket.objects.bulk_create(
        [
            ErrorBucket(
                signature=signature,
                function=record.function[:500],
                web_link=record.web_link,
                source_package_id=packages[record.source_package],
                retrace_failed=record.retrace_failed,
                first_seen=record.reported_at,
                last_seen=record.reported_at,
            )
            for signature, record in firsts.items()
        ],
        ignore_conflicts=True,
        batch_size=1000,
    )
    known.update(ErrorBucket.objects.filter(signature__in=firsts).values_list("signature", "id"))
    return known


def _recount(
    records: Sequence[CrashReportRecord], releases: dict[str, int], packages: dict[str, int]
) -> None:
    """Daily counters and per-bucket statistics, as the error tracker keeps them.

    Reports from automated testing and from -proposed never count. Everything is
    recounted from the stored reports of the touched versions, so a re-run, or two
    ingests at once, end in the same numbers.
    """
    counted = [r for r in records if not r.automated_testing and not r.from_proposed]
    keys = {(releases[r.release], packages[r.source_package], r.version) for r in counted}
    if not keys:
        return
    days = {r.reported_at.date() for r in counted}
    reports = CrashReport.objects.filter(
        release_id__in={k[0] for k in keys},
        source_package_id__in={k[1] for k in keys},
        version__in={k[2] for k in keys},
        automated_testing=False,
        from_proposed=False,
    )
    key_of = itemgetter("release_id", "source_package_id", "version")
    daily = (
        reports.filter(reported_at__date__gte=min(days), reported_at__date__lte=max(days))
        .annotate(day=TruncDate("reported_at"))
        .values("release_id", "source_package_id", "version", "day")
        .annotate(n=Count("id"))
    )
    CrashCounter.objects.bulk_create(
        [
            CrashCounter(
                release_id=row["release_id"],
                source_package_id=row["source_package_id"],
                version=row["version"],
                day=row["day"],
                count=row["n"],
            )
            for row in daily
            if key_of(row) in keys
        ],
        update_conflicts=True,
        unique_fields=("release", "source_package", "version", "day"),
        update_fields=("count",),
        batch_size=1000,
    )
    buckets = {
        (releases[r.release], packages[r.source_package], r.version, r.signature) for r in counted
    }
    stats = (
        reports.filter(bucket__signature__in={b[3] for b in buckets})
        .values("release_id", "source_package_id", "version", "bucket_id", "bucket__signature")
        .annotate(n=Count("id"), systems=Count("system_id", distinct=True))
    )
    BucketVersionStat.objects.bulk_create(
        [
            BucketVersionStat(
                release_id=row["release_id"],
                source_package_id=row["source_package_id"],
                version=row["version"],
                bucket_id=row["bucket_id"],
                reports=row["n"],
                systems=row["systems"],
            )
            for row in stats
            if (*key_of(row), row["bucket__signature"]) in buckets
        ],
        update_conflicts=True,
        unique_fields=("release", "source_package", "version", "bucket"),
        update_fields=("reports", "systems"),
        batch_size=1000,
    )


def _touch_buckets(bucket_ids: Iterable[int]) -> None:
    ids = list(bucket_ids)
    spans = (
        CrashReport.objects.filter(bucket_id__in=ids)
        .values("bucket_id")
        .annotate(first=Min("reported_at"), last=Max("reported_at"))
    )
    buckets = [
        ErrorBucket(id=s["bucket_id"], first_seen=s["first"], last_seen=s["last"]) for s in spans
    ]
    ErrorBucket.objects.bulk_update(buckets, ("first_seen", "last_seen"), batch_size=1000)


__all__ = ["IngestSummary", "crash_reports_ingest"]
