"""Crash reports into the database, in bulk; problems of publications from crash answers."""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from operator import itemgetter

from django.db import connection, transaction
from django.db.models import Count, Max, Min, Q
from django.db.models.functions import TruncDate

from overview.models import (
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    ErrorBucket,
    Problem,
    ProblemKind,
)
from overview.sources.base import CrashReportRecord, ProblemRecord
from packages.models import Release, SourcePackage

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
    if connection.vendor == "postgresql":
        return _ingest_batch_copy(records, releases)
    with transaction.atomic():
        known = set(
            CrashReport.objects.filter(
                external_id__in=[r.external_id for r in records]
            ).values_list("external_id", flat=True)
        )
        fresh = list({r.external_id: r for r in records if r.external_id not in known}.values())
        if not fresh:
            return 0
        packages = _ids_for(SourcePackage, "name", {r.source_package for r in fresh})
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
        _touch_buckets(buckets.values())
    return len(fresh)


_REPORT_COLUMNS = (
    "bucket_id",
    "source_package_id",
    "version",
    "release_id",
    "architecture",
    "reported_at",
    "system_id",
    "stack_trace",
    "environment",
    "package_versions",
    "from_proposed",
    "automated_testing",
    "external_id",
)


def _ingest_batch_copy(records: Sequence[CrashReportRecord], releases: dict[str, int]) -> int:
    """The PostgreSQL path: COPY into a scratch table, then one INSERT ... ON CONFLICT.

    Building a model instance per report, and recounting through the ORM, cost more than
    the database work itself; here the rows go over in COPY's stream and the aggregates
    are recounted by the database for exactly the keys the inserted rows touched.
    """
    fresh = list({r.external_id: r for r in records}.values())
    report = _table(CrashReport)
    columns = ", ".join(_REPORT_COLUMNS)
    with transaction.atomic(), connection.cursor() as cursor:
        packages = _ids_for(SourcePackage, "name", {r.source_package for r in fresh})
        buckets = _buckets_for(fresh, packages)
        cursor.execute(
            "CREATE TEMPORARY TABLE IF NOT EXISTS incoming_crash_report AS "
            f"SELECT {columns} FROM {report} WITH NO DATA"
        )
        cursor.execute("TRUNCATE incoming_crash_report")
        with cursor.cursor.copy(f"COPY incoming_crash_report ({columns}) FROM STDIN") as copy:
            for r in fresh:
                copy.write_row(
                    (
                        buckets[r.signature],
                        packages[r.source_package],
                        r.version,
                        releases[r.release],
                        r.architecture[:20],
                        r.reported_at,
                        r.system_id[:64],
                        r.stack_trace,
                        json.dumps(r.environment),
                        json.dumps(r.package_versions),
                        r.from_proposed,
                        r.automated_testing,
                        r.external_id,
                    )
                )
        cursor.execute(
            f"INSERT INTO {report} ({columns}) SELECT {columns} FROM incoming_crash_report "
            "ON CONFLICT (external_id) DO NOTHING "
            "RETURNING release_id, source_package_id, version, bucket_id, reported_at, "
            "automated_testing OR from_proposed"
        )
        inserted = cursor.fetchall()
        if not inserted:
            return 0
        counted = [row for row in inserted if not row[5]]
        _recount_sql(
            cursor,
            days=Counter((r[0], r[1], r[2], r[4].date()) for r in counted),
            stats={(r[0], r[1], r[2], r[3]) for r in counted},
        )
        _touch_buckets_sql(cursor, inserted)
    return len(inserted)


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _unnest(rows: Iterable[tuple], types: Sequence[str]) -> tuple[str, list]:
    """Rows as unnest() over one typed array per column: a handful of parameters however
    many rows, where a VALUES list would make the driver parse thousands of placeholders."""
    columns = list(zip(*rows, strict=True)) or [() for _ in types]
    sql = "unnest(" + ", ".join(f"%s::{t}[]" for t in types) + ")"
    return sql, [list(column) for column in columns]


def _recount_sql(cursor, *, days: dict[tuple, int], stats: set[tuple]) -> None:
    """Add to the daily counters; recount the touched bucket statistics (distinct systems)."""
    report = _table(CrashReport)
    counted = "NOT r.automated_testing AND NOT r.from_proposed"
    # Daily counts grow by exactly the rows this INSERT stored (RETURNING names them, and
    # a report is stored once), so they are added rather than recounted.
    for chunk in _chunks(sorted(days.items()), 10000):
        rows, params = _unnest(
            [(*key, n) for key, n in chunk], ("bigint", "bigint", "text", "date", "integer")
        )
        counter = _table(CrashCounter)
        cursor.execute(
            f"INSERT INTO {counter} AS c (release_id, source_package_id, version, day, count) "
            f"SELECT * FROM {rows} "
            "ON CONFLICT (release_id, source_package_id, version, day) "
            "DO UPDATE SET count = c.count + EXCLUDED.count",
            params,
        )
    for chunk in _chunks(sorted(stats), 10000):
        rows, params = _unnest(chunk, ("bigint", "bigint", "text", "bigint"))
        cursor.execute(
            f"INSERT INTO {_table(BucketVersionStat)} "
            "(release_id, source_package_id, version, bucket_id, reports, systems) "
            "SELECT k.release_id, k.source_package_id, k.version, k.bucket_id, "
            "count(r.id), count(DISTINCT r.system_id) "
            f"FROM {rows} AS k(release_id, source_package_id, version, bucket_id) "
            f"JOIN {report} r ON r.source_package_id = k.source_package_id "
            "AND r.version = k.version AND r.bucket_id = k.bucket_id "
            f"AND r.release_id = k.release_id AND {counted} "
            "GROUP BY k.release_id, k.source_package_id, k.version, k.bucket_id "
            "ON CONFLICT (release_id, source_package_id, version, bucket_id) "
            "DO UPDATE SET reports = EXCLUDED.reports, systems = EXCLUDED.systems",
            params,
        )


def _touch_buckets_sql(cursor, inserted: Sequence[tuple]) -> None:
    """Widen each bucket's first and last seen to the reports just stored."""
    spans: dict[int, tuple[datetime, datetime]] = {}
    for row in inserted:
        bucket, at = row[3], row[4]
        first, last = spans.get(bucket, (at, at))
        spans[bucket] = (min(first, at), max(last, at))
    for chunk in _chunks(sorted((b, f, la) for b, (f, la) in spans.items()), 10000):
        rows, params = _unnest(chunk, ("bigint", "timestamptz", "timestamptz"))
        cursor.execute(
            f"UPDATE {_table(ErrorBucket)} b SET "
            "first_seen = LEAST(COALESCE(b.first_seen, v.first), v.first), "
            "last_seen = GREATEST(COALESCE(b.last_seen, v.last), v.last) "
            f"FROM {rows} AS v(id, first, last) WHERE b.id = v.id "
            "AND (b.first_seen IS NULL OR b.last_seen IS NULL "
            "OR v.first < b.first_seen OR v.last > b.last_seen)",
            params,
        )


def _chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _ids_for(model, field_name: str, values: set[str]) -> dict[str, int]:
    lookup = f"{field_name}__in"
    known = dict(model.objects.filter(**{lookup: values}).values_list(field_name, "id"))
    missing = values - known.keys()
    if missing:
        model.objects.bulk_create(
            [model(**{field_name: value}) for value in missing],
            ignore_conflicts=True,
            batch_size=1000,
        )
        known.update(model.objects.filter(**{lookup: missing}).values_list(field_name, "id"))
    return known


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


def _buckets_of_problems(
    records: Sequence[ProblemRecord], *, now: datetime
) -> Callable[[ProblemRecord], ErrorBucket | None]:
    """Find or make the bucket of each reported problem, by signature or by its page.

    A bucket known only by its error-tracker URL (an override imported from Ubuntu's
    overrides file, say) is the same bucket as the problem the tracker reports there.
    """

    def lookup() -> tuple[dict[str, ErrorBucket], dict[str, ErrorBucket]]:
        signatures = {r.signature for r in records}
        links = {r.web_link for r in records if r.web_link}
        found = list(
            ErrorBucket.objects.filter(
                Q(signature__in=signatures) | Q(signature__in=links) | Q(web_link__in=links)
            )
        )
        by_link = {b.web_link: b for b in found if b.web_link}
        by_link.update({b.signature: b for b in found if b.signature in links})
        return {b.signature: b for b in found}, by_link

    by_signature, by_link = lookup()

    def bucket_of(record: ProblemRecord) -> ErrorBucket | None:
        return by_signature.get(record.signature) or by_link.get(record.web_link)

    missing = {r.signature: r for r in records if bucket_of(r) is None}
    if missing:
        ErrorBucket.objects.bulk_create(
            [
                ErrorBucket(
                    signature=r.signature,
                    function=r.function[:500],
                    web_link=r.web_link,
                    first_seen=now,
                    last_seen=now,
                )
                for r in missing.values()
            ],
            ignore_conflicts=True,
        )
        by_signature, by_link = lookup()
    relinked = {}
    for record in records:
        bucket = bucket_of(record)
        if bucket is not None and record.web_link and bucket.web_link != record.web_link:
            bucket.web_link = record.web_link
            relinked[bucket.pk] = bucket
    if relinked:
        ErrorBucket.objects.bulk_update(list(relinked.values()), ("web_link",))
    return bucket_of


def problems_record(
    answers: dict[int, Sequence[ProblemRecord]], *, now: datetime
) -> dict[int, list[Problem]]:
    """Bring each publication's problems in line with its latest crash answer.

    `answers` maps publication id → problems reported now. New ones are created,
    known ones refreshed, ones no longer reported marked inactive (never deleted:
    a halt's reasons stay visible). Returns publication id → its active problems.
    Runs in the caller's transaction, in a fixed number of queries.
    """
    records = [p for problems in answers.values() for p in problems if p.signature]
    bucket_of = _buckets_of_problems(records, now=now)
    existing: dict[tuple[int, str, int | None], Problem] = {
        (p.publication_id, p.kind, p.bucket_id): p
        for p in Problem.objects.filter(publication_id__in=answers).select_related("bucket")
    }
    to_create, to_update = [], []
    seen: set[tuple[int, str, int | None]] = set()
    for publication_id, problems in answers.items():
        for record in problems:
            bucket = bucket_of(record) if record.kind == ProblemKind.NEW_BUCKET else None
            key = (publication_id, record.kind, bucket.id if bucket else None)
            if key in seen:
                continue
            seen.add(key)
            problem = existing.get(key)
            if problem is None:
                to_create.append(
                    Problem(
                        publication_id=publication_id,
                        kind=record.kind,
                        bucket=bucket,
                        web_link=record.web_link,
                        report_count=record.report_count,
                        system_count=record.system_count,
                        difference=record.difference,
                        detected_at=now,
                        last_seen_at=now,
                    )
                )
            else:
                fresh = (
                    record.report_count,
                    record.system_count,
                    record.difference,
                    record.web_link or problem.web_link,
                    True,
                )
                current = (
                    problem.report_count,
                    problem.system_count,
                    problem.difference,
                    problem.web_link,
                    problem.active,
                )
                if fresh != current:
                    (
                        problem.report_count,
                        problem.system_count,
                        problem.difference,
                        problem.web_link,
                        problem.active,
                    ) = fresh
                    problem.last_seen_at = now
                    to_update.append(problem)
    for key, problem in existing.items():
        # A new bucket stays a problem once seen; a rate can fall back below the baseline.
        if key not in seen and problem.active and problem.kind == ProblemKind.INCREASED_RATE:
            problem.active = False
            to_update.append(problem)
    if to_create:
        Problem.objects.bulk_create(to_create, ignore_conflicts=True)
    if to_update:
        Problem.objects.bulk_update(
            to_update,
            ("report_count", "system_count", "difference", "web_link", "last_seen_at", "active"),
            batch_size=500,
        )
    active: dict[int, list[Problem]] = {pid: [] for pid in answers}
    for problem in Problem.objects.filter(publication_id__in=answers, active=True).select_related(
        "bucket"
    ):
        active[problem.publication_id].append(problem)
    return active


__all__ = ["IngestSummary", "crash_reports_ingest", "problems_record"]
