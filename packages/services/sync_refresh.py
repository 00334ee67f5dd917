"""What a sync reads again, and how what it reads updates a publication it knows.

The sync asks a source for what changed since its last run, and for what it must read
again whatever changed (``Watch``): the updates still in phasing, paused or halted, whose
removal may add nothing a source lists as new, and the versions whose percentage was
written since they were last read, so that every write is read back.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import F, Q

from packages.domain import changelog
from packages.domain.dependencies import relation_rows
from packages.models import ACTIVE_STATES, ArchiveStatus, Pocket, Publication
from packages.sources.base import PublicationRecord, Watch


def watch_of(codename: str) -> Watch:
    """What the source must read again in this release, changed or not."""
    rows = (
        Publication.objects.filter(release__codename=codename, pocket=Pocket.UPDATES)
        .filter(
            Q(state__in=ACTIVE_STATES)
            | Q(written_at__isnull=False)
            & (Q(synced_at__isnull=True) | Q(synced_at__lt=F("written_at")))
        )
        .values_list(
            "source_package__name", "version", "date_published", "state", "written_at", "synced_at"
        )
    )
    active: dict[tuple[str, str], datetime] = {}
    written: set[tuple[str, str]] = set()
    for name, version, published, state, written_at, synced_at in rows:
        if state in ACTIVE_STATES:
            active[(name, version)] = published
        if written_at is not None and (synced_at is None or synced_at < written_at):
            written.add((name, version))
    return Watch(active=active, written=frozenset(written))


REFRESHED_FIELDS = (
    "source_percentage",
    "source_percentages",
    "in_security",
    "previous_version",
    "status",
    "synced_at",
    "relations",
    "closed_bugs",
)


def per_binary(record: PublicationRecord) -> list[list[object]]:
    return [[b.binary, b.architecture, b.percentage] for b in record.binary_percentages]


def refresh(publication: Publication, record: PublicationRecord, *, tracks: bool) -> bool:
    """Bring what the source says of a known publication in; True when anything changed,
    or when this reads back a percentage we wrote (``synced_at`` then records the read)."""
    dirty = False
    if record.status == ArchiveStatus.PUBLISHED:
        values = per_binary(record)
        if tracks and (
            publication.source_percentage != record.percentage
            or publication.source_percentages != values
        ):
            publication.source_percentage = record.percentage
            publication.source_percentages = values
            dirty = True
        if (
            tracks
            and publication.written_at is not None
            and (publication.synced_at is None or publication.synced_at < publication.written_at)
        ):
            dirty = True
        if publication.in_security != record.in_security:
            publication.in_security = record.in_security
            dirty = True
    elif record.status == ArchiveStatus.DELETED and publication.status != ArchiveStatus.DELETED:
        # Removed from the archive: _supersede records the event.
        publication.status = ArchiveStatus.DELETED
        dirty = True
    if record.relations is not None:
        rows = relation_rows(record.relations)
        if publication.relations != rows:
            publication.relations = rows
            dirty = True
    if record.previous_version and not publication.previous_version:
        publication.previous_version = record.previous_version
        dirty = True
    bugs = list(changelog.closed_bugs(record.changelog))
    if bugs and publication.closed_bugs != bugs:
        publication.closed_bugs = bugs
        dirty = True
    return dirty
