"""Publications and percentages from Launchpad's web service (a PublicationSource).

It talks through packages.sources.launchpad.api (a thin REST client, not launchpadlib) and
writes through packages.sources.launchpad.write.

Shapes (lib/lp/soyuz/interfaces/publishing.py, archive.py, registry/interfaces/
distroseries.py in the launchpad tree): a source publication has ``source_package_name``,
``source_package_version``, ``component_name``, ``status``, ``pocket``, ``date_published``,
``date_superseded``, ``date_created``, ``package_signer_link``, ``package_creator_link``,
``creator_link`` and the read op ``getPublishedBinaries`` (the Published or Pending binary
publications built from it in the same series, archive and pocket); a binary publication
has ``binary_package_name``, ``distro_arch_series_link``, ``is_debug`` (devel),
``phased_update_percentage`` (None means 100) and the devel write op ``changeOverride``.

What changes where (lib/lp/soyuz/model/publishing.py): a phasing step (``changeOverride``,
ours or anybody's) adds a new *binary* publication; the source publication's
``date_created`` never moves, and a deletion only flips statuses. So an incremental sync
asks for the binary publications created since the last one, newest first
(``order_by_date``, which interfaces/archive.py 752-759 recommends "for applications that
need to catch up"), for the Deleted binary publications of the updates it watches, and
reads each source version they belong to again.

Each binary keeps its own percentage per architecture (``binary_percentages``); the
record's percentage is the lowest of them. Debug symbols (ddebs, ``is_debug``) are not
what apt installs and follow their deb by themselves, so they are left out.

The source only yields what Launchpad says; it never claims a publication is gone, so a
sync that stops half-way deletes nothing. Records with missing or malformed fields are
logged and skipped, never yielded in part.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from packages.domain.dependencies import Relation
from packages.sources.apt.relations import AptRelations
from packages.sources.base import (
    BinaryPercentage,
    PersonRecord,
    PublicationRecord,
    ReleaseRecord,
    SourceError,
    Watch,
    sponsor_of,
)
from packages.sources.http import MalformedResponse, StatusError
from packages.sources.launchpad.history import LaunchpadHistory
from packages.sources.launchpad.people import REDACTED, LaunchpadPeople
from packages.sources.launchpad.write import (
    POCKETS,
    LaunchpadWriter,
    parse_datetime,
    series_and_arch,
)

log = logging.getLogger(__name__)

# SeriesStatus titles of released, still maintained series: the ones with an Updates pocket
# worth phasing. "Active Development" and "Pre-release Freeze" are active but unreleased.
STABLE_SERIES_STATUSES = frozenset({"Current Stable Release", "Supported"})
# Where the version an update replaces lives, as phased-updater compares: not -proposed
# (never reached users) nor -backports, and not deleted publications.
# (pocket, status) of a publication phased-updater takes as the previous version.
# Launchpad's statuses (lib/lp/soyuz/enums.py 616-681) as ours (packages.models.ArchiveStatus).
REMOVED_STATUSES = {"Superseded": "superseded", "Deleted": "deleted", "Obsolete": "deleted"}
# A source publication stays Pending, without date_published, until the publisher runs;
# asking for sources created up to a day earlier brings one back that was skipped then.
PENDING_MARGIN = timedelta(days=1)
# A .changes file is a few kilobytes; a larger answer is cut, not kept whole.


def _source_key(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    name, version = entry.get("source_package_name"), entry.get("source_package_version")
    if isinstance(name, str) and name and isinstance(version, str) and version:
        return name, version
    return None


class LaunchpadSource(LaunchpadPeople, LaunchpadWriter, LaunchpadHistory):
    """Updates publications of one distribution, and their phased-update percentages."""

    name = "launchpad"
    # Binary publications are created with Launchpad's clock at commit time; a little
    # overlap with the last sync costs a few duplicates, never a missed change.
    incremental_margin = timedelta(hours=1)

    def __init__(
        self,
        *,
        packages_archive: AptRelations | None = None,
        read_changes: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # Where the binaries' Depends and Breaks are read (the Packages files apt reads).
        self.packages_archive = packages_archive
        # Read each phasing upload's .changes file for the bugs it closes.
        self.read_changes = read_changes
        self._changes_memo: dict[str, str] = {}
        # One sync asks every release with the same ``since``: the archive-wide listing of
        # changed binary publications is fetched once and shared.
        self._binaries_memo: dict[tuple[datetime, str | None], list[dict[str, Any]]] = {}

    # -- the PublicationSource interface ------------------------------------------------

    def releases(self) -> list[ReleaseRecord]:
        records = []
        for entry in self._collection(self._url(f"{self.distribution}/series")):
            name, version, status = entry.get("name"), entry.get("version"), entry.get("status")
            if not (isinstance(name, str) and name and isinstance(version, str) and version):
                log.warning("Launchpad: skipping a series without name or version: %.200r", entry)
                continue
            if not isinstance(status, str):
                log.warning("Launchpad: skipping series %s without a status", name)
                continue
            records.append(
                ReleaseRecord(
                    codename=name, version=version, supported=status in STABLE_SERIES_STATUSES
                )
            )
        return records

    def publications(
        self, *, release: str, since: datetime | None, now: datetime, watch: Watch | None = None
    ) -> Iterator[PublicationRecord]:
        records = self._publications(release=release, since=since, now=now, watch=watch)
        yield from self._with_relations(release, records)

    def _with_relations(
        self, release: str, records: Iterator[PublicationRecord]
    ) -> Iterator[PublicationRecord]:
        """Each record with its binaries' relations, when the archive is configured and
        lists that version (read once, at the first record); a record it does not list
        keeps what is stored."""
        relations: dict[tuple[str, str], tuple[Relation, ...]] | None = None
        for record in records:
            if relations is None:
                relations = self._relations(release)
            found = relations.get((record.source_package, record.version))
            yield record if found is None else replace(record, relations=found)

    def _relations(self, release: str) -> dict[tuple[str, str], tuple[Relation, ...]]:
        if self.packages_archive is None:
            return {}
        try:
            return self.packages_archive.relations(release)
        except SourceError as error:
            # Relations are an addition: the publications still sync without them.
            log.warning("Launchpad: cannot read the relations of %s: %s", release, error)
            return {}

    def _publications(
        self, *, release: str, since: datetime | None, now: datetime, watch: Watch | None = None
    ) -> Iterator[PublicationRecord]:
        series_link = self._series_link(release)
        people: dict[str, PersonRecord | None] = {}
        listing = {
            "ws.op": "getPublishedSources",
            "distro_series": series_link,
            "pocket": POCKETS["updates"],
        }
        # Updates the sync already knows in phasing: their closed bugs are read already.
        active = watch.active if watch is not None else {}
        if since is None:
            for entry in self._collection(self._archive_link(), {**listing, "status": "Published"}):
                record = self._publication(
                    entry, release=release, series_link=series_link, people=people, known=active
                )
                if record is not None:
                    yield record
            return
        watch = watch or Watch()
        known: dict[tuple[str, str], Mapping[str, Any] | None] = {}
        for entry in self._collection(
            self._archive_link(),
            {
                **listing,
                "created_since_date": _iso(since - PENDING_MARGIN),
                "order_by_date": "true",
            },
        ):
            key = _source_key(entry)
            if key is not None:
                known[key] = entry
        for key in self._changed_versions(release, since=since, watch=watch):
            known.setdefault(key, None)
        for key in sorted(watch.written):
            known.setdefault(key, None)
        for (name, version), listed in known.items():
            found = listed or self._source_publication(name, version, series_link)
            if found is None:
                continue
            record = self._publication(
                found, release=release, series_link=series_link, people=people, known=active
            )
            if record is not None:
                yield record

    # -- what changed --------------------------------------------------------------------

    def _binaries_created_since(
        self, since: datetime, status: str | None = None
    ) -> list[dict[str, Any]]:
        """Binary publications of the Updates pocket created since, newest first.

        getPublishedBinaries has no series parameter (only one architecture's), so the
        whole archive is asked once per sync and each release takes its own.
        """
        memo = self._binaries_memo
        key = (since, status)
        if key not in memo:
            params = {
                "ws.op": "getPublishedBinaries",
                "pocket": POCKETS["updates"],
                "created_since_date": _iso(since),
                "order_by_date": "true",
            }
            if status:
                params["status"] = status
            memo[key] = list(self._collection(self._archive_link(), params))
        return memo[key]

    def _changed_versions(
        self, release: str, *, since: datetime, watch: Watch
    ) -> list[tuple[str, str]]:
        keys: dict[tuple[str, str], None] = {}
        for entry in self._binaries_created_since(since):
            key = _source_key(entry)
            if key is not None and series_and_arch(entry)[0] == release:
                keys[key] = None
        if watch.active:
            # A removal adds no record: it flips the statuses of the latest ones, which
            # were created with their source publication at the earliest, up to a day
            # before it was published.
            oldest = min(watch.active.values()) - PENDING_MARGIN
            for entry in self._binaries_created_since(oldest, status="Deleted"):
                key = _source_key(entry)
                if key is not None and key in watch.active and series_and_arch(entry)[0] == release:
                    keys[key] = None
        return list(keys)

    def _source_publication(
        self, name: str, version: str, series_link: str
    ) -> Mapping[str, Any] | None:
        """The newest Updates publication of this source version, whatever its status."""
        params = {
            "ws.op": "getPublishedSources",
            "source_name": name,
            "version": version,
            "exact_match": "true",
            "distro_series": series_link,
            "pocket": POCKETS["updates"],
            "order_by_date": "true",
        }
        try:
            for entry in self._collection(self._archive_link(), params):
                if _source_key(entry) == (name, version):
                    return entry
        except (MalformedResponse, StatusError) as exc:
            log.warning("Launchpad: %s %s could not be read again: %s", name, version, exc)
        return None

    # -- one publication ----------------------------------------------------------------

    def _publication(
        self,
        entry: Mapping[str, Any],
        *,
        release: str,
        series_link: str,
        people: dict[str, PersonRecord | None],
        known: Mapping[tuple[str, str], object] | None = None,
    ) -> PublicationRecord | None:
        name = entry.get("source_package_name")
        version = entry.get("source_package_version")
        self_link = entry.get("self_link")
        component = entry.get("component_name")
        published = parse_datetime(entry.get("date_published"))
        missing = [
            field
            for field, ok in (
                ("source_package_name", isinstance(name, str) and name),
                ("source_package_version", isinstance(version, str) and version),
                ("self_link", isinstance(self_link, str) and self_link),
                ("component_name", isinstance(component, str) and component),
                ("date_published", published is not None),
            )
            if not ok
        ]
        if missing:
            log.warning(
                "Launchpad: skipping a source publication without %s: %.200r",
                ", ".join(missing),
                entry,
            )
            return None
        assert isinstance(name, str) and isinstance(version, str) and isinstance(self_link, str)
        assert isinstance(component, str) and published is not None  # checked just above
        if entry.get("pocket") not in (None, POCKETS["updates"]):
            log.warning("Launchpad: skipping %s %s, not in Updates", name, version)
            return None
        removed = REMOVED_STATUSES.get(str(entry.get("status")))
        binaries: list[dict[str, Any]] = []
        if removed is None:
            try:
                binaries = self._current_binaries(self_link)
            except (MalformedResponse, StatusError) as exc:
                log.warning(
                    "Launchpad: skipping %s %s: its binaries could not be read: %s",
                    name,
                    version,
                    exc,
                )
                return None
            if not binaries:
                # Without binaries the percentage is unknown; None would claim 100%.
                log.warning(
                    "Launchpad: skipping %s %s in %s-updates: no binary publications yet",
                    name,
                    version,
                    release,
                )
                return None
        per_binary = tuple(
            sorted(
                (
                    BinaryPercentage(
                        b["binary_package_name"],
                        series_and_arch(b)[1],
                        b.get("phased_update_percentage"),
                    )
                    for b in binaries
                ),
                key=lambda b: (b.binary, b.architecture),
            )
        )
        explicit = [b.percentage for b in per_binary if b.percentage is not None]
        try:
            previous, in_security = self._history(name, version, series_link)
        except (MalformedResponse, StatusError) as exc:
            log.warning("Launchpad: no previous version for %s %s: %s", name, version, exc)
            previous, in_security = "", False
        # Only the uploads still phasing: their pages show the bugs; older ones are settled.
        changes = (
            self._changes(self_link, name, version)
            if explicit and removed is None and (name, version) not in (known or {})
            else ""
        )
        signer = self._person(entry.get("package_signer_link"), people)
        # The Changed-By of the upload; the publication's creator (who copied it to
        # Updates) stands in only when Launchpad knows no package creator.
        uploader = self._person(
            entry.get("package_creator_link") or entry.get("creator_link"), people
        )
        return PublicationRecord(
            release=release,
            source_package=name,
            version=version,
            date_published=published,
            phased_update_percentage=min(explicit) if explicit else None,
            pocket="updates",
            previous_version=previous,
            component=component,
            status=removed or "published",
            date_superseded=parse_datetime(entry.get("date_superseded")),
            binaries=tuple(sorted({b.binary for b in per_binary})),
            signer=signer,
            uploader=uploader,
            # Launchpad's own ``sponsor`` is whoever asked for a sponsored *copy*
            # (lib/lp/soyuz/scripts/packagecopier.py 726-732), almost always nobody.
            sponsor=sponsor_of(signer, uploader),
            binary_percentages=per_binary,
            in_security=in_security,
            changelog=changes,
        )


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


__all__ = ["REDACTED", "LaunchpadSource"]
