"""Bring publications from the configured publication source into the database.

A sync only adds and updates what the source showed it; it never deletes what it did not
see, so a partial answer (a source that failed half-way) loses nothing.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from packages.domain import changelog, inputs
from packages.domain.dependencies import relation_rows
from packages.models import (
    ACTIVE_STATES,
    ArchiveStatus,
    Person,
    PhasingState,
    Pocket,
    Publication,
    Release,
    SourcePackage,
    SourceSync,
)
from packages.services.bulk import ids_for_names
from packages.services.changes import Change
from packages.services.phasing import (
    publications_apply,
    publications_publish,
    publications_supersede,
)
from packages.services.source_status import source_sync_record
from packages.services.sync_refresh import REFRESHED_FIELDS, per_binary, refresh, watch_of
from packages.sources.base import (
    PersonRecord,
    PublicationRecord,
    PublicationSource,
    SourceError,
)

log = logging.getLogger(__name__)

_POCKETS = {choice.value for choice in Pocket}
_STATUSES = {choice.value for choice in ArchiveStatus}


@dataclass
class SyncSummary:
    new: int = 0
    changed: int = 0
    superseded: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, int]:
        return {
            "new": self.new,
            "changed": self.changed,
            "superseded": self.superseded,
            "unchanged": self.unchanged,
            "errors": len(self.errors),
        }


# A source may skip a record it cannot read yet (an archive half-written); asking again
# from a day before the last success brings it back once it can. A source that knows
# better says how much overlap it needs (``incremental_margin``).
INCREMENTAL_MARGIN = timedelta(days=1)


def publications_sync_since_last(
    source: PublicationSource,
    *,
    now: datetime | None = None,
    progress: Callable[[int], None] | None = None,
) -> SyncSummary:
    """The periodic sync: what changed since the last successful one (all, the first time)."""
    status = SourceSync.objects.filter(name=f"{source.name}:publications").first()
    margin = getattr(source, "incremental_margin", INCREMENTAL_MARGIN)
    since = status.last_success_at - margin if status and status.last_success_at else None
    return publications_sync(source, now=now, since=since, progress=progress)


def _person_problem(person: PersonRecord | None) -> str:
    if person is None:
        return ""
    return inputs.first_problem(
        {
            "account name": inputs.text_problem(person.account_name, max_length=100),
            "name": inputs.text_problem(person.name, max_length=200),
            "email": inputs.text_problem(person.email, max_length=254),
        }
    )


def _record_problem(record: PublicationRecord, *, now: datetime) -> str:
    """Why a record cannot be kept ('' when it can): every field as its column stores it."""
    if not isinstance(record, PublicationRecord):
        return "not a publication record"
    if record.pocket not in _POCKETS:
        return f"unknown pocket {record.pocket!r}"
    if record.status not in _STATUSES:
        return f"unknown status {record.status!r}"
    if not isinstance(record.percentage, int) or not 0 <= record.percentage <= 100:
        return f"percentage {record.percentage!r} out of range"
    binaries = record.binaries if isinstance(record.binaries, tuple | list) else [None]
    return inputs.first_problem(
        {
            "source package": inputs.source_name_problem(record.source_package),
            "version": inputs.version_problem(record.version),
            "previous version": inputs.version_problem(record.previous_version, blank=True),
            "component": inputs.text_problem(record.component, max_length=40),
            "binary": next((p for b in binaries if (p := inputs.source_name_problem(b))), ""),
            "date_published": inputs.moment_problem(record.date_published, now=now),
            "date_superseded": ""
            if record.date_superseded is None
            else inputs.moment_problem(record.date_superseded, now=now),
            "signer": _person_problem(record.signer),
            "uploader": _person_problem(record.uploader),
            "sponsor": _person_problem(record.sponsor),
            "changelog": inputs.text_problem(record.changelog, max_length=1_000_000),
        }
    )


def _record_name(record: object) -> str:
    """How a log line names a record: release, package and version, as far as they go."""
    parts = [getattr(record, name, "?") for name in ("release", "source_package", "version")]
    return " ".join(f"{part!r:.80}" for part in parts)


def _people(records: list[PublicationRecord]) -> dict[str, Person]:
    wanted: dict[str, PersonRecord] = {}
    for publication in records:
        for who in (publication.signer, publication.uploader, publication.sponsor):
            if who is not None and who.account_name:
                wanted.setdefault(who.account_name, who)
    Person.objects.bulk_create(
        [
            Person(account_name=p.account_name, name=p.name or p.account_name, email=p.email)
            for p in wanted.values()
        ],
        ignore_conflicts=True,
        batch_size=1000,
    )
    people = {p.account_name: p for p in Person.objects.filter(account_name__any=wanted)}
    stale = []
    for account, record in wanted.items():
        person = people[account]
        if record.email and (
            person.email != record.email or (record.name and person.name != record.name)
        ):
            person.email, person.name = record.email, record.name or person.name
            stale.append(person)
    if stale:
        Person.objects.bulk_update(stale, ("email", "name"))
    return people


def _initial_state(record: PublicationRecord) -> tuple[str, int]:
    if record.status != ArchiveStatus.PUBLISHED:
        return PhasingState.SUPERSEDED, record.percentage
    if record.pocket != Pocket.UPDATES:
        # Only Updates phase: Security and the rest reach everyone at once.
        return PhasingState.COMPLETE, 100
    if record.percentage >= 100:
        return PhasingState.COMPLETE, 100
    return PhasingState.PHASING, record.percentage


def publications_sync(
    source: PublicationSource,
    *,
    now: datetime | None = None,
    since: datetime | None = None,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
) -> SyncSummary:
    now = now or timezone.now()
    summary = SyncSummary()
    try:
        release_records = source.releases()
    except SourceError as exc:
        summary.errors.append(str(exc))
        if not dry_run:
            source_sync_record(
                source.name, "publications", now=now, summary=summary.as_dict(), error=str(exc)
            )
        return summary
    for release_record in release_records:
        why = inputs.first_problem(
            {
                "codename": inputs.codename_problem(getattr(release_record, "codename", None)),
                "version": inputs.text_problem(
                    getattr(release_record, "version", None), max_length=20
                ),
            }
        )
        if why:
            summary.errors.append(f"skipped release {release_record!r:.120}: {why}")
            log.warning("skipped release record %r from %s: %s", release_record, source.name, why)
            continue
        release, _ = (
            Release.objects.update_or_create(
                codename=release_record.codename,
                defaults={"version": release_record.version, "supported": release_record.supported},
            )
            if not dry_run
            else (Release(codename=release_record.codename, version=release_record.version), False)
        )
        if not release_record.supported:
            continue
        try:
            records = list(
                source.publications(
                    release=release.codename, since=since, now=now, watch=watch_of(release.codename)
                )
            )
        except SourceError as exc:
            summary.errors.append(f"{release.codename}: {exc}")
            log.warning("sync of %s from %s failed: %s", release.codename, source.name, exc)
            continue
        kept = []
        for record in records:
            why = _record_problem(record, now=now)
            if why:
                name = _record_name(record)
                summary.errors.append(f"{release.codename}: skipped {name}: {why}")
                log.warning("skipped publication record %s from %s: %s", name, source.name, why)
            else:
                kept.append(record)
        if dry_run:
            known = set(
                Publication.objects.filter(release__codename=release.codename).values_list(
                    "pocket", "source_package__name", "version"
                )
            )
            summary.new += sum(
                1 for r in kept if (r.pocket, r.source_package, r.version) not in known
            )
            summary.unchanged += sum(
                1 for r in kept if (r.pocket, r.source_package, r.version) in known
            )
        else:
            _sync_release(source, release, kept, now=now, summary=summary)
        if progress:
            progress(len(records))
    if not dry_run:
        source_sync_record(
            source.name, "publications", now=now, summary=summary.as_dict(), warnings=summary.errors
        )
    return summary


def _sync_release(
    source: PublicationSource,
    release: Release,
    records: list[PublicationRecord],
    *,
    now: datetime,
    summary: SyncSummary,
) -> None:
    tracks = getattr(source, "tracks_percentage", True)
    with transaction.atomic():
        packages = ids_for_names(SourcePackage, "name", {r.source_package for r in records})
        people = _people(records)
        existing = {
            (p.pocket, p.source_package_id, p.version): p
            # Locked in primary-key order, as the controller locks them, so the two never deadlock.
            for p in Publication.objects.select_for_update()
            .order_by("pk")
            .filter(release=release, source_package_id__any=packages.values())
        }
        created, changed = [], []
        for record in records:
            key = (record.pocket, packages[record.source_package], record.version)
            publication = existing.get(key)
            if publication is None:
                state, percentage = _initial_state(record)
                publication = Publication(
                    source_package_id=packages[record.source_package],
                    release=release,
                    pocket=record.pocket,
                    version=record.version,
                    previous_version=record.previous_version,
                    component=record.component,
                    binaries=list(record.binaries),
                    relations=relation_rows(record.relations or ()),
                    signer=people.get(record.signer.account_name) if record.signer else None,
                    uploader=people.get(record.uploader.account_name) if record.uploader else None,
                    sponsor=people.get(record.sponsor.account_name) if record.sponsor else None,
                    date_published=record.date_published,
                    date_superseded=record.date_superseded,
                    status=record.status,
                    phased_update_percentage=percentage,
                    state=state,
                    state_changed_at=now,
                    # A publication first seen part-way waits a whole interval before a step.
                    last_increase_at=record.date_published
                    if percentage <= 10
                    else max(record.date_published, now),
                    completed_at=now if state == PhasingState.COMPLETE else None,
                    source_name=source.name,
                    source_percentage=record.percentage,
                    source_percentages=per_binary(record),
                    in_security=record.in_security,
                    closed_bugs=list(changelog.closed_bugs(record.changelog)),
                    synced_at=now,
                )
                existing[key] = publication
                created.append(publication)
                continue
            if refresh(publication, record, tracks=tracks):
                publication.synced_at = now
                summary.changed += 1
                changed.append(publication)
            else:
                summary.unchanged += 1
        publications_publish(created, now=now, by=f"sync:{source.name}")
        summary.new += len(created)
        Publication.objects.bulk_update(changed, REFRESHED_FIELDS, batch_size=500)
        # A version also in -security is never phased: released to everyone, and the
        # percentage at the source removed by the write-back.
        seen = {(r.pocket, packages[r.source_package], r.version) for r in records}
        publications_apply(
            [
                (p, Change.security_released())
                for key, p in existing.items()
                if key in seen and p.in_security and p.state in ACTIVE_STATES
            ],
            now=now,
            actor_name=f"sync:{source.name}",
        )
        summary.superseded += _supersede(existing.values(), records, packages, now=now)


def _supersede(
    publications: Iterable[Publication],
    records: Sequence[PublicationRecord],
    packages: Mapping[str, int],
    *,
    now: datetime,
) -> int:
    """The newest publication of a source in a pocket supersedes the older ones."""
    superseded_by_source = {
        (r.pocket, packages[r.source_package], r.version)
        for r in records
        if r.status != ArchiveStatus.PUBLISHED
    }
    newest: dict[tuple[str, int], Publication] = {}
    by_source: dict[tuple[str, int], list[Publication]] = defaultdict(list)
    for publication in publications:
        group = (publication.pocket, publication.source_package_id)
        by_source[group].append(publication)
        if publication.status == ArchiveStatus.PUBLISHED and (
            group not in newest or publication.date_published > newest[group].date_published
        ):
            newest[group] = publication
    replaced: list[tuple[Publication, Publication | None]] = []
    for group, members in by_source.items():
        winner = newest.get(group)
        for publication in members:
            if publication.state == PhasingState.SUPERSEDED:
                continue
            key = (publication.pocket, publication.source_package_id, publication.version)
            newer = winner is not None and publication.date_published < winner.date_published
            if not newer and key not in superseded_by_source:
                continue
            replaced.append((publication, winner if newer else None))
    publications_supersede(replaced, now=now, by="sync")
    return len(replaced)
