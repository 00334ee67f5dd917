"""Crash reports from a crash source into the database, in bulk, with the counters the
judges read (daily counts, reports and distinct systems per bucket and version)."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from itertools import islice

from django.conf import settings
from django.db import connection, connections
from django.utils import timezone

from overview.evidence import partitions
from overview.evidence.ingest_checks import CheckedBatch, checked_batch
from overview.evidence.ingest_store import KnownIds, batch_store
from overview.evidence.sources.base import CrashReportRecord
from packages.models import Release
from packages.services import bulk

log = logging.getLogger(__name__)

BATCH = 5000


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
    # Days whose partition this ingest has made sure of: partitions.ensure asks the
    # catalogue, so once a day, not once a window.
    ensured: set[date] = set()
    iterator = iter(records)

    def check_next(pool: ThreadPoolExecutor, size: int) -> Future[CheckedBatch] | None:
        batch = list(islice(iterator, size))
        if not batch:
            return None
        # In the caller's context, so that what the check logs is tagged as its tick is.
        context = contextvars.copy_context()
        return pool.submit(context.run, checked_batch, batch, releases, now=now, names=names)

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
            # Once a window, before any batch's transaction: partitions.ensure says why.
            days = {r.reported_at.astimezone(UTC).date() for r in checked.kept}
            if not days <= ensured:
                partitions.ensure(days)
                ensured |= days
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
        self.known = KnownIds()
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
            return [_store_part([records], self.releases, texts, self.known)]
        self.others = self.others or [
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="crash-store")
            for _ in range(self.count - 1)
        ]
        here, *there = _by_lane(records, self.count)
        context = contextvars.copy_context()
        elsewhere = [
            lane.submit(context.copy().run, _store_part, batches, self.releases, texts, self.known)
            for lane, batches in zip(self.others, there, strict=True)
            if batches
        ]
        return [
            _store_part(here, self.releases, texts, self.known),
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
    known: KnownIds,
) -> IngestSummary:
    """One connection's batches, one after the other, counted on their own (the caller
    adds the connections' summaries up)."""
    part = IngestSummary()
    for batch in batches:
        skipped_before = part.skipped
        inserted = batch_store(batch, releases, texts, skip=part.skip, known=known)
        part.inserted += inserted
        part.duplicates += len(batch) - inserted - (part.skipped - skipped_before)
    return part


__all__ = ["BATCH", "IngestSummary", "crash_reports_ingest"]
