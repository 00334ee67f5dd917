"""One batch of checked crash reports into the database, in its own transaction (its
days' partitions made by the caller, before it): the buckets and packages it needs, then
its reports and counters (ingest_sql on PostgreSQL, ingest_portable elsewhere). A batch
the database refuses is stored one record at a time, so only the record it refuses is
skipped; a batch that loses a race with another ingest is stored again."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.db import DatabaseError, transaction

from overview.evidence.ingest_portable import ingest_batch_portable
from overview.evidence.ingest_sql import ingest_batch_sql
from overview.evidence.sources.base import CrashReportRecord, bucket_type, install_failure_buckets
from overview.models import CrashReport, ErrorBucket
from packages.models import SourcePackage
from packages.services import bulk
from packages.services.bulk import ids_for_names

log = logging.getLogger(__name__)

# How often a batch that lost a race with another ingest (a deadlock) is stored again
# before its records are stored one by one.
RACES_RETRIED = 2

# A driver that cannot even encode a value (UnicodeError) or a value it refuses
# (ValueError) fails like a database that refuses the row: that record alone.
_UNSTORABLE = (DatabaseError, UnicodeError, ValueError)


@dataclass
class KnownIds:
    """The ids of packages and buckets by name that one ingest's committed batches
    stored or found: a later batch asks the database only for names new to the ingest
    (most batches: none). Filled after a batch commits, so an id never outlives a batch
    that rolled back; nothing deletes packages or buckets while reports arrive. Shared
    by the ingest's lanes (one dict update at a time)."""

    packages: dict[str, int] = field(default_factory=dict)
    buckets: dict[str, int] = field(default_factory=dict)


def batch_store(
    records: Sequence[CrashReportRecord],
    releases: dict[str, int],
    texts: dict[int, tuple[str, str] | None],
    *,
    skip: Callable[[str, str], None],
    known: KnownIds | None = None,
) -> int:
    """The batch in one go; if the database refuses it, each record alone, so a record
    that no check foresaw is skipped by itself (`skip`: name, why) and the reports beside
    it are kept. A
    record that still loses its races with other ingests is not skipped: the ingest
    fails, and the sync, recorded as failed, asks for it again."""
    known = known or KnownIds()
    try:
        return _store_racing(records, releases, texts, known)
    except _UNSTORABLE as error:
        log.warning(
            "a crash batch failed (%s); storing its %d reports one by one", error, len(records)
        )
    inserted = 0
    for record in records:
        try:
            inserted += _store_racing([record], releases, texts, known)
        except _UNSTORABLE as error:
            if _lost_a_race(error):
                raise
            skip(f"{record.external_id!r:.120}", f"the database refused it: {error}")
    return inserted


def _store_racing(
    records: Sequence[CrashReportRecord],
    releases: dict[str, int],
    texts: dict[int, tuple[str, str] | None],
    known: KnownIds,
) -> int:
    """_store_batch, stored again (RACES_RETRIED times) while it loses a race with
    another ingest: nothing about its records made it fail."""
    for _ in range(RACES_RETRIED):
        try:
            return _store_batch(records, releases, texts, known)
        except DatabaseError as error:
            if not _lost_a_race(error):
                raise
            log.info("a crash batch lost a race with another ingest (%s); again", error)
    return _store_batch(records, releases, texts, known)


def _lost_a_race(error: Exception) -> bool:
    """Whether PostgreSQL gave up the batch's transaction for another's (a deadlock or a
    serialisation failure): nothing about its records, so the batch may be stored again."""
    return getattr(error.__cause__, "sqlstate", None) in ("40P01", "40001")


def _store_batch(
    records: Sequence[CrashReportRecord],
    releases: dict[str, int],
    texts: dict[int, tuple[str, str] | None],
    known: KnownIds,
) -> int:
    """`texts`: each record's environment and package versions as JSON, by id of the
    record (from its check)."""
    if not records:
        return 0
    if bulk.uses_postgresql():
        fresh = list({r.external_id: r for r in records}.values())
        with transaction.atomic():
            packages = _packages_for(fresh, known)
            buckets = _buckets_for(fresh, packages, known)
            stored = ingest_batch_sql(
                fresh,
                releases=releases,
                packages=packages,
                buckets=buckets,
                failing=install_failure_buckets(fresh, buckets),
                json_texts=texts,
            )
        known.packages.update(packages)
        known.buckets.update(buckets)
        return stored
    with transaction.atomic():
        seen = set(
            CrashReport.objects.filter(
                external_id__in=[r.external_id for r in records]
            ).values_list("external_id", flat=True)
        )
        fresh = list({r.external_id: r for r in records if r.external_id not in seen}.values())
        if not fresh:
            return 0
        packages = _packages_for(fresh, known)
        buckets = _buckets_for(fresh, packages, known)
        ingest_batch_portable(fresh, releases=releases, packages=packages, buckets=buckets)
    known.packages.update(packages)
    known.buckets.update(buckets)
    return len(fresh)


def _packages_for(records: Sequence[CrashReportRecord], known: KnownIds) -> dict[str, int]:
    names = {r.source_package for r in records}
    ids = {name: known.packages[name] for name in names if name in known.packages}
    if len(ids) < len(names):
        ids.update(ids_for_names(SourcePackage, "name", names - ids.keys()))
    return ids


def _buckets_for(
    records: Sequence[CrashReportRecord], packages: dict[str, int], ingest: KnownIds
) -> dict[str, int]:
    firsts: dict[str, CrashReportRecord] = {}
    for record in records:
        firsts.setdefault(record.signature, record)
    known = {s: ingest.buckets[s] for s in firsts if s in ingest.buckets}
    if len(known) < len(firsts):
        known.update(
            ErrorBucket.objects.filter(
                signature__any=[s for s in firsts if s not in known]
            ).values_list("signature", "id")
        )
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


__all__ = ["RACES_RETRIED", "KnownIds", "batch_store"]
