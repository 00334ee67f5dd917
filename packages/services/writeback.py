"""Write percentages back to the publication source, and record how that went."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from packages.log_context import log_context
from packages.models import PhasingEvent, Publication, WriteBack
from packages.services.faults import service_failed, service_recovered
from packages.services.queueing import WRITE_BACK_PERCENTAGES, task_enqueue
from packages.services.source_status import source_write_denied, source_write_permission_record
from packages.sources import publication_source
from packages.sources.base import PublicationSource

log = logging.getLogger(__name__)


_deferred_write_back: ContextVar[list[int] | None] = ContextVar("deferred_write_back", default=None)


@contextmanager
def write_back_deferred() -> Iterator[list[int]]:
    """Collect the events to write back instead of queueing a task per commit.

    For bulk work (seeding a demo, replaying the past) that writes back once at the end.
    """
    collected: list[int] = []
    token = _deferred_write_back.set(collected)
    try:
        yield collected
    finally:
        _deferred_write_back.reset(token)


def queue_write_back(events: Iterable[PhasingEvent]) -> None:
    ids = [event.pk for event in events if event.write_back == WriteBack.PENDING]
    if not ids:
        return
    deferred = _deferred_write_back.get()
    if deferred is not None:
        deferred.extend(ids)
        return

    def enqueue() -> None:
        task_enqueue(WRITE_BACK_PERCENTAGES, ids)

    # Robust: a broker that is down must not cancel the other callbacks of the commit
    # (the halt emails); the periodic reconcile writes back whatever was left pending.
    transaction.on_commit(enqueue, robust=True)


# A change can land while the source is being written: write again, a few times at most.
_ROUNDS = 3


WRITE_BACK_SERVICE = "write-back"


def percentages_write_back(
    *,
    event_ids: list[int],
    source: PublicationSource | None = None,
    retry_failed: bool = False,
    now: datetime | None = None,
) -> dict[str, int]:
    """Give the source each publication's current percentage; mark its pending events.

    Idempotent: only events still pending are claimed, and a source given the same
    percentage twice ends where it would after once. The percentage written is read
    again afterwards, so two write-backs finishing out of order still leave the newest.
    """
    source = source or publication_source()
    counts = {WriteBack.APPLIED: 0, WriteBack.DRY_RUN: 0, WriteBack.FAILED: 0, WriteBack.DENIED: 0}
    if retry_failed:
        PhasingEvent.objects.filter(pk__in=event_ids, write_back=WriteBack.FAILED).update(
            write_back=WriteBack.PENDING
        )
    publication_ids = set(
        PhasingEvent.objects.filter(pk__in=event_ids, write_back=WriteBack.PENDING).values_list(
            "publication_id", flat=True
        )
    )
    publications = Publication.objects.filter(pk__in=publication_ids).select_related(
        "release", "source_package"
    )
    failure = ""
    for publication in publications:
        with log_context(publication=publication, source=source.name):
            status, detail, written = _write(source, publication)
            counts[WriteBack(status)] += 1
            written_at = now or timezone.now()
            with transaction.atomic():
                PhasingEvent.objects.filter(
                    publication_id=publication.pk, pk__in=event_ids, write_back=WriteBack.PENDING
                ).update(write_back=status, write_back_detail=detail[:500])
                if status == WriteBack.APPLIED:
                    # The next sync reads it back (packages.services.sync_refresh.watch_of).
                    Publication.objects.filter(pk=publication.pk).update(
                        source_percentage=written, written_percentage=written, written_at=written_at
                    )
                source_write_permission_record(
                    source.name, status=status, detail=detail, now=written_at
                )
            if status in (WriteBack.FAILED, WriteBack.DENIED):
                log.warning("write-back of %s %s: %s", publication, status, detail)
            if status == WriteBack.FAILED:
                failure = f"{publication}: {detail}"
    # A failure (the archive down) is a fault until a write goes through; a refusal for
    # want of permission is the lasting state recorded above, not a fault that retries.
    now = now or timezone.now()
    if counts[WriteBack.FAILED]:
        service_failed(WRITE_BACK_SERVICE, now=now, error=failure)
    elif counts[WriteBack.APPLIED]:
        service_recovered(WRITE_BACK_SERVICE, now=now)
    return {str(k): v for k, v in counts.items()}


def _write(source: PublicationSource, publication: Publication) -> tuple[str, str, int]:
    written: int | None = None
    current = publication.phased_update_percentage
    for _ in range(_ROUNDS):
        current = Publication.objects.values_list("phased_update_percentage", flat=True).get(
            pk=publication.pk
        )
        if current == written:
            break
        try:
            result = source.set_percentage(
                release=publication.release.codename,
                pocket=publication.pocket,
                source_package=publication.source_package.name,
                version=publication.version,
                percentage=current,
            )
        except Exception as exc:  # any failure is recorded and retried by the reconcile
            return WriteBack.FAILED, f"{type(exc).__name__}: {exc}", current
        if result.status not in (
            WriteBack.APPLIED,
            WriteBack.DRY_RUN,
            WriteBack.FAILED,
            WriteBack.DENIED,
        ):
            return WriteBack.FAILED, f"source answered {result.status!r}", current
        if result.status != WriteBack.APPLIED:
            return result.status, result.detail, current
        written = current
    return WriteBack.APPLIED, "", current


def percentages_reconcile(
    *, now: datetime | None = None, source: PublicationSource | None = None
) -> dict[str, int]:
    """Write back what was left pending (a broker down at commit) or failed (a source down).

    A halt that never reached the archive would leave the update live; this runs on a
    schedule until the source has taken every change. Writes refused for want of
    permission wait until the source takes one again (a new change written, or
    `phasing_sources check`): retrying them would only repeat the refusal.
    """
    source = source or publication_source()
    now = now or timezone.now()
    again = [WriteBack.FAILED]
    if not source_write_denied(source.name):
        again.append(WriteBack.DENIED)
    stuck = list(
        PhasingEvent.objects.filter(
            write_back__in=(WriteBack.PENDING, *again),
            created_at__lt=now - timedelta(minutes=2),
        ).values_list("pk", flat=True)[:5000]
    )
    if not stuck:
        return {}
    PhasingEvent.objects.filter(pk__in=stuck, write_back__in=again).update(
        write_back=WriteBack.PENDING
    )
    return percentages_write_back(event_ids=stuck, source=source, now=now)


def percentages_mark_applied(*, event_ids: list[int], detail: str) -> int:
    """For a source that takes every percentage as given (the simulator while seeding):
    record the pending write-backs as applied in two statements, without a round trip."""
    events = PhasingEvent.objects.filter(pk__in=event_ids, write_back=WriteBack.PENDING)
    Publication.objects.filter(pk__in=events.values("publication_id")).update(
        source_percentage=F("phased_update_percentage")
    )
    return events.update(write_back=WriteBack.APPLIED, write_back_detail=detail)
