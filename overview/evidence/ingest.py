"""Crash reports from a crash source into the database, in bulk, with the counters the
judges read (daily counts, reports and distinct systems per bucket and version)."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from itertools import islice

from django.conf import settings
from django.db import DatabaseError, connection, connections, transaction
from django.utils import timezone

from overview.evidence import partitions
from overview.evidence.ingest_portable import ingest_batch_portable
from overview.evidence.ingest_sql import ingest_batch_sql
from overview.evidence.retention import too_old
from overview.evidence.sources.base import CrashReportRecord, bucket_type, install_failure_buckets
from overview.models import (
    CrashReport,
    ErrorBucket,
)
from packages.domain import inputs
from packages.models import Release, SourcePackage
from packages.services import bulk
from packages.services.bulk import ids_for_names

log = logging.getLogger(__name__)

BATCH = 5000
# How often a batch that lost a race with another ingest (a deadlock) is stored again
# before its records are stored one by one.
RACES_RETRIED = 2


@dataclass
class IngestSummary:
    received: int = 0
    inserted: int = 0
    duplicates: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)

    def add(self, stored: IngestSummary) -> None:
        """What one connection's part of a window stored (received counts the window)."""
        self.inserted += stored.inserted
        self.duplicates += stored.duplicates
        self.skipped += stored.skipped
        self.errors.extend(stored.errors[: max(0, 20 - len(self.errors))])

    def skip(self, name: str, why: str) -> None:
        """Count and log a record left out, naming it; the first few are kept for the pages."""
        self.skipped += 1
        if len(self.errors) < 20:
            self.errors.append(f"skipped crash report {name}: {why}")
        log.warning("skipped crash report %s: %s", name, why)


# (why not, JSON texts): why a record is refused, else "" and its environment and
# package versions as JSON, as it is stored.
_Checked = tuple[str, tuple[str, str] | None]


def _valid(
    record: CrashReportRecord,
    releases: dict[str, int],
    *,
    now: datetime,
    names: dict[object, str] | None = None,
) -> _Checked:
    """Why a record cannot be kept ("" when it can), each field as its column stores it,
    and its environment and package versions as JSON (written once, for the check and
    the store).

    The function name and the system id are cut to their columns, as before (a longer
    hash still names the same system); anything else that does not fit is refused.
    `names`: the answers for package names and versions already checked in this ingest
    (a feed repeats a few thousand of them in every report, and parsing a Debian version
    cost more than the rest of a record's checks).
    """
    names = {} if names is None else names
    if not isinstance(record, CrashReportRecord):
        return "not a crash report record", None
    if record.release not in releases:
        return f"unknown release {record.release!r:.60}", None

    def remembered(check: Callable[[object], str], value: object) -> str:
        if type(value) is not str:
            return check(value)
        key = (check, value)
        if key not in names:
            names[key] = check(value)
        return names[key]

    text = inputs.text_problem
    for field_name, problem in (
        ("external_id", lambda: text(record.external_id, max_length=100, required=True)),
        ("signature", lambda: text(record.signature, max_length=1000, required=True)),
        ("source_package", lambda: remembered(inputs.source_name_problem, record.source_package)),
        ("version", lambda: remembered(inputs.version_problem, record.version)),
        ("system_id", lambda: text(record.system_id, required=True)),
        ("architecture", lambda: text(record.architecture, max_length=20)),
        ("reported_at", lambda: inputs.moment_problem(record.reported_at, now=now)),
        ("stack_trace", lambda: text(record.stack_trace)),
        ("function", lambda: text(record.function)),
        ("web_link", lambda: text(record.web_link, max_length=1000)),
    ):
        if why := problem():
            return f"{field_name} {why}", None
    environment_problem, environment = inputs.json_text(record.environment)
    if environment_problem:
        return f"environment {environment_problem}", None
    versions_problem, package_versions = inputs.json_text(record.package_versions)
    if versions_problem:
        return f"package_versions {versions_problem}", None
    if why := text(record.problem_type, max_length=40):
        return f"problem_type {why}", None
    return "", (environment, package_versions)


def _safe_link(record: CrashReportRecord) -> CrashReportRecord:
    """A link that is not http(s) is dropped, not followed: the report itself is kept."""
    if record.web_link and not inputs.is_safe_link(record.web_link):
        log.warning(
            "crash report %r: dropped a link that is not http(s): %r",
            record.external_id,
            record.web_link[:100],
        )
        return replace(record, web_link="")
    return record


@dataclass
class _CheckedBatch:
    """A batch as its check left it: the records to store (with their JSON texts, by id
    of the record) and the ones refused, with why."""

    size: int
    kept: list[CrashReportRecord]
    texts: dict[int, tuple[str, str] | None]
    refused: list[tuple[str, str]]


def _checked(
    batch: list, releases: dict[str, int], *, now: datetime, names: dict[object, str]
) -> _CheckedBatch:
    """Pure Python, no database: safe to run beside the store of the previous batch."""
    checked = _CheckedBatch(size=len(batch), kept=[], texts={}, refused=[])
    for record in batch:
        why, json_texts = _valid(record, releases, now=now, names=names)
        if not why and too_old(record.reported_at, now=now):
            why = "older than the crash reports kept (PHASING_CRASH_REPORT_RETENTION_DAYS)"
        if why:
            checked.refused.append((f"{getattr(record, 'external_id', '?')!r:.120}", why))
            continue
        record = _safe_link(record)
        checked.kept.append(record)
        checked.texts[id(record)] = json_texts
    return checked


def crash_reports_ingest(
    records: Iterable[CrashReportRecord],
    *,
    progress: Callable[[int], None] | None = None,
    now: datetime | None = None,
) -> IngestSummary:
    """Store reports (skipping known ones) and bring buckets and daily counters up to date.

    Safe to re-run over the same records: external ids are unique, counters are
    recounted from the stored reports rather than incremented.

    Each window of records is checked in a second thread while the one before it is
    stored: the store mostly waits for the database, so the checks cost no time of their
    own. The records themselves are read here, in the caller's thread (a source may read
    them from the database, on this thread's connection). On PostgreSQL, outside a
    transaction, a window's releases are stored on several connections at once (_Lanes).
    """
    summary = IngestSummary()
    now = now or timezone.now()
    releases = dict(Release.objects.values_list("codename", "id"))
    names: dict[object, str] = {}
    iterator = iter(records)

    def check_next(pool: ThreadPoolExecutor, size: int) -> Future[_CheckedBatch] | None:
        batch = list(islice(iterator, size))
        if not batch:
            return None
        # In the caller's context, so that what the check logs is tagged as its tick is.
        context = contextvars.copy_context()
        return pool.submit(context.run, _checked, batch, releases, now=now, names=names)

    with (
        ThreadPoolExecutor(max_workers=1, thread_name_prefix="crash-check") as pool,
        _Lanes(releases) as lanes,
    ):
        # A batch for each connection at a time, so that each has releases to store.
        window = BATCH * lanes.count
        checking = check_next(pool, window)
        while checking is not None:
            checked = checking.result()
            checking = check_next(pool, window)
            summary.received += checked.size
            for name, why in checked.refused:
                summary.skip(name, why)
            for stored in lanes.store(checked.kept, checked.texts):
                summary.add(stored)
            if progress:
                progress(checked.size)
    return summary


class _Lanes:
    """Where the reports are stored: on the caller's connection and, on PostgreSQL outside
    a transaction, on PHASING_INGEST_CONNECTIONS - 1 more at once.

    An ingest's time is mostly the database's statements, on one connection and one
    core. Releases share no counter, and two ingests already take turns per release only
    (ingest_sql), so a window of records (a batch for each connection) is stored as
    batches of one release each, side by side, each in its own transaction. A window is
    stored whole before the next one is (its progress). Inside a transaction (a test's,
    say) the other connections could not see its rows: the caller's connection stores
    everything, as on SQLite.
    """

    def __init__(self, releases: dict[str, int]) -> None:
        self.releases = releases
        self.count = settings.PHASING_INGEST_CONNECTIONS
        if self.count < 2 or not bulk.uses_postgresql() or connection.in_atomic_block:
            self.count = 1
        # Made when a window first has more than a batch (a small ingest uses one
        # connection); one thread each, which keeps its connection from window to window.
        self.others: list[ThreadPoolExecutor] = []

    def __enter__(self) -> _Lanes:
        return self

    def __exit__(self, *exc: object) -> None:
        for lane in self.others:
            lane.submit(connections.close_all)
            lane.shutdown(wait=True)

    def store(
        self, records: list[CrashReportRecord], texts: dict[int, tuple[str, str] | None]
    ) -> list[IngestSummary]:
        if self.count == 1 or len(records) <= BATCH:
            return [_store_part([records], self.releases, texts)]
        self.others = self.others or [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="crash-store")
            for _ in range(self.count - 1)
        ]
        here, *there = _by_lane(records, self.count)
        context = contextvars.copy_context()
        elsewhere = [
            lane.submit(context.copy().run, _store_part, batches, self.releases, texts)
            for lane, batches in zip(self.others, there, strict=True)
            if batches
        ]
        return [
            _store_part(here, self.releases, texts),
            *(stored.result() for stored in elsewhere),
        ]


def _by_lane(records: list[CrashReportRecord], count: int) -> list[list[list[CrashReportRecord]]]:
    """The records as batches of one release each (at most BATCH), shared among `count`
    connections as evenly as they allow: the largest batch first, each to the connection
    with the fewest records so far. Two batches of one release on two connections wait
    for each other (ingest_sql's lock per release): never wrong, only slower."""
    releases: dict[str, list[CrashReportRecord]] = {}
    for record in records:
        releases.setdefault(record.release, []).append(record)
    batches = [
        reports[start : start + BATCH]
        for reports in releases.values()
        for start in range(0, len(reports), BATCH)
    ]
    lanes: list[list[list[CrashReportRecord]]] = [[] for _ in range(count)]
    for batch in sorted(batches, key=len, reverse=True):
        min(lanes, key=lambda lane: sum(map(len, lane))).append(batch)
    return lanes


def _store_part(
    batches: list[list[CrashReportRecord]],
    releases: dict[str, int],
    texts: dict[int, tuple[str, str] | None],
) -> IngestSummary:
    """One connection's batches, one after the other, counted on their own (the caller
    adds the connections' summaries up)."""
    part = IngestSummary()
    for batch in batches:
        skipped_before = part.skipped
        inserted = _ingest_batch_or_each(batch, releases, part, texts)
        part.inserted += inserted
        part.duplicates += len(batch) - inserted - (part.skipped - skipped_before)
    return part


# A driver that cannot even encode a value (UnicodeError) or a value it refuses
# (ValueError) fails like a database that refuses the row: that record alone.
_UNSTORABLE = (DatabaseError, UnicodeError, ValueError)


def _ingest_batch_or_each(
    records: Sequence[CrashReportRecord],
    releases: dict[str, int],
    summary: IngestSummary,
    texts: dict[int, tuple[str, str] | None],
) -> int:
    """The batch in one go; if the database refuses it, each record alone, so a record
    that no check foresaw is skipped by itself and the reports beside it are kept. A
    record that still loses its races with other ingests is not skipped: the ingest
    fails, and the sync, recorded as failed, asks for it again."""
    try:
        return _ingest_racing(records, releases, texts)
    except _UNSTORABLE as error:
        log.warning(
            "a crash batch failed (%s); storing its %d reports one by one", error, len(records)
        )
    inserted = 0
    for record in records:
        try:
            inserted += _ingest_racing([record], releases, texts)
        except _UNSTORABLE as error:
            if _lost_a_race(error):
                raise
            summary.skip(f"{record.external_id!r:.120}", f"the database refused it: {error}")
    return inserted


def _ingest_racing(
    records: Sequence[CrashReportRecord],
    releases: dict[str, int],
    texts: dict[int, tuple[str, str] | None],
) -> int:
    """_ingest_batch, stored again (RACES_RETRIED times) while it loses a race with
    another ingest: nothing about its records made it fail."""
    for _ in range(RACES_RETRIED):
        try:
            return _ingest_batch(records, releases, texts)
        except DatabaseError as error:
            if not _lost_a_race(error):
                raise
            log.info("a crash batch lost a race with another ingest (%s); again", error)
    return _ingest_batch(records, releases, texts)


def _lost_a_race(error: Exception) -> bool:
    """Whether PostgreSQL gave up the batch's transaction for another's (a deadlock or a
    serialisation failure): nothing about its records, so the batch may be stored again."""
    return getattr(error.__cause__, "sqlstate", None) in ("40P01", "40001")


def _ingest_batch(
    records: Sequence[CrashReportRecord],
    releases: dict[str, int],
    texts: dict[int, tuple[str, str] | None],
) -> int:
    """`texts`: each record's environment and package versions as JSON, by id of the
    record (from its check)."""
    if not records:
        return 0
    # Outside the batch's transaction: partitions.ensure says why.
    partitions.ensure({r.reported_at.astimezone(UTC).date() for r in records})
    if bulk.uses_postgresql():
        fresh = list({r.external_id: r for r in records}.values())
        with transaction.atomic():
            packages = ids_for_names(SourcePackage, "name", {r.source_package for r in fresh})
            buckets = _buckets_for(fresh, packages)
            return ingest_batch_sql(
                fresh,
                releases=releases,
                packages=packages,
                buckets=buckets,
                failing=install_failure_buckets(fresh, buckets),
                json_texts=texts,
            )
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
        ingest_batch_portable(fresh, releases=releases, packages=packages, buckets=buckets)
    return len(fresh)


def _buckets_for(records: Sequence[CrashReportRecord], packages: dict[str, int]) -> dict[str, int]:
    firsts: dict[str, CrashReportRecord] = {}
    for record in records:
        firsts.setdefault(record.signature, record)
    known = dict(ErrorBucket.objects.filter(signature__any=firsts).values_list("signature", "id"))
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
                problem_type=bucket_type(record.problem_type, record.signature),
                first_seen=record.reported_at,
                last_seen=record.reported_at,
            )
            # In one order, so that two ingests creating the same buckets never wait
            # for each other both ways.
            for signature, record in sorted(firsts.items())
        ],
        ignore_conflicts=True,
        batch_size=1000,
    )
    known.update(ErrorBucket.objects.filter(signature__any=firsts).values_list("signature", "id"))
    return known


__all__ = ["IngestSummary", "crash_reports_ingest"]
