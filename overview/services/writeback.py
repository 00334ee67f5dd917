"""Write percentages back to the publication source, and record how that went."""

from __future__ import annotations

import logging

from django.db import transaction

from overview.sources import publication_source
from overview.sources.base import PublicationSource, SourceError
from packages.models import PhasingEvent, Publication, WriteBack

log = logging.getLogger(__name__)


def percentages_write_back(
    *, event_ids: list[int], source: PublicationSource | None = None
) -> dict[str, int]:
    """Apply the newest pending percentage of each publication; older pending ones are moot.

    Idempotent: only events still pending are claimed, and a source given the same
    percentage twice ends where it would after once.
    """
    source = source or publication_source()
    counts = {WriteBack.APPLIED: 0, WriteBack.DRY_RUN: 0, WriteBack.FAILED: 0}
    events = list(
        PhasingEvent.objects.filter(pk__in=event_ids, write_back=WriteBack.PENDING)
        .select_related("publication__release", "publication__source_package")
        .order_by("publication_id", "-created_at", "-pk")
    )
    newest: dict[int, PhasingEvent] = {}
    for event in events:
        newest.setdefault(event.publication_id, event)
    for publication_id, event in newest.items():
        publication = event.publication
        try:
            result = source.set_percentage(
                release=publication.release.codename,
                pocket=publication.pocket,
                source_package=publication.source_package.name,
                version=publication.version,
                percentage=publication.phased_update_percentage,
            )
            status, detail = result.status, result.detail
        except SourceError as exc:
            status, detail = WriteBack.FAILED, str(exc)
        if status not in counts:
            status, detail = WriteBack.FAILED, f"source answered {status!r}"
        counts[status] += 1
        with transaction.atomic():
            PhasingEvent.objects.filter(
                publication_id=publication_id, pk__in=event_ids, write_back=WriteBack.PENDING
            ).update(write_back=status, write_back_detail=detail[:500])
            if status == WriteBack.APPLIED:
                Publication.objects.filter(pk=publication_id).update(
                    source_percentage=publication.phased_update_percentage
                )
        if status == WriteBack.FAILED:
            log.warning("write-back of %s failed: %s", publication, detail)
    return {str(k): v for k, v in counts.items()}
