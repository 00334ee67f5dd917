"""Publications and percentages from Launchpad's web service (a PublicationSource).

It talks through packages.sources.launchpad_api (a thin REST client, not launchpadlib).

Shapes (lib/lp/soyuz/interfaces/publishing.py, archive.py, registry/interfaces/
distroseries.py in the launchpad tree): a source publication has ``source_package_name``,
``source_package_version``, ``component_name``, ``status``, ``pocket``, ``date_published``,
``date_superseded``, ``date_created``, ``package_signer_link``, ``package_creator_link``,
``creator_link``, ``sponsor_link`` and the read op ``getPublishedBinaries`` (the Published
or Pending binary publications built from it in the same series, archive and pocket); a
binary publication has ``binary_package_name``, ``distro_arch_series_link``,
``phased_update_percentage`` (None means 100) and the devel write op ``changeOverride``
(``new_phased_update_percentage`` 0..100; Launchpad stores 100 as None and makes a new
publishing record each time).

The source only yields what Launchpad says; it never claims a publication is gone, so a
sync that stops half-way deletes nothing. Records with missing or malformed fields are
logged and skipped, never yielded in part.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from functools import cmp_to_key
from typing import Any
from urllib.parse import urlsplit

from debian.debian_support import version_compare

from packages.sources.base import (
    PersonRecord,
    PublicationRecord,
    ReleaseRecord,
    SourceError,
    WriteResult,
)
from packages.sources.http import MalformedResponse, StatusError
from packages.sources.launchpad_api import LaunchpadClient

log = logging.getLogger(__name__)

REDACTED = "tag:launchpad.net:2008:redacted"

# Our pocket names (packages.models) to Launchpad's PackagePublishingPocket titles.
POCKETS = {
    "release": "Release",
    "security": "Security",
    "updates": "Updates",
    "proposed": "Proposed",
    "backports": "Backports",
}
# SeriesStatus titles of released, still maintained series: the ones with an Updates pocket
# worth phasing. "Active Development" and "Pre-release Freeze" are active but unreleased.
STABLE_SERIES_STATUSES = frozenset({"Current Stable Release", "Supported"})
# Where the version an update replaces lives, as phased-updater compares: not -proposed
# (never reached users) nor -backports, and not deleted publications.
PREVIOUS_VERSION_POCKETS = frozenset({"Release", "Security", "Updates"})
PREVIOUS_VERSION_STATUSES = frozenset({"Published", "Superseded"})
CURRENT_BINARY_STATUSES = frozenset({"Published", "Pending"})


def _parse_datetime(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    # Launchpad keeps and returns UTC; a missing offset still means UTC.
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _account_name(person_link: str) -> str:
    last = urlsplit(person_link).path.rstrip("/").rsplit("/", 1)[-1]
    return last[1:] if last.startswith("~") else ""


def _percentage(entry: Mapping[str, Any]) -> int:
    value = entry.get("phased_update_percentage")
    return 100 if value is None else value


class LaunchpadSource(LaunchpadClient):
    """Updates publications of one distribution, and their phased-update percentages."""

    name = "launchpad"

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
        self, *, release: str, since: datetime | None, now: datetime
    ) -> Iterator[PublicationRecord]:
        series_link = self._series_link(release)
        params: dict[str, str] = {
            "ws.op": "getPublishedSources",
            "distro_series": series_link,
            "pocket": POCKETS["updates"],
            "status": "Published",
        }
        if since is not None:
            params["created_since_date"] = since.astimezone(UTC).isoformat()
        people: dict[str, PersonRecord | None] = {}
        for entry in self._collection(self._archive_link(), params):
            record = self._publication(
                entry, release=release, series_link=series_link, people=people
            )
            if record is not None:
                yield record

    def set_percentage(
        self, *, release: str, pocket: str, source_package: str, version: str, percentage: int
    ) -> WriteResult:
        target = f"{source_package} {version} in {release}-{pocket}"
        if (
            isinstance(percentage, bool)
            or not isinstance(percentage, int)
            or not 0 <= percentage <= 100
        ):
            return WriteResult(
                "failed", f"{percentage!r} is not a percentage (0..100) for {target}"
            )
        if not self.can_write:
            return WriteResult(
                "dry_run",
                f"Launchpad credentials not configured: would set {target} to {percentage}%",
            )
        lp_pocket = POCKETS.get(pocket.lower())
        if lp_pocket is None:
            return WriteResult("failed", f"unknown pocket {pocket!r} for {target}")
        changed = 0
        binaries: list[dict[str, Any]] = []
        try:
            binaries = self._binaries_of_version(
                release=release, pocket=lp_pocket, source_package=source_package, version=version
            )
            if not binaries:
                return WriteResult(
                    "failed", f"Launchpad has no published binaries of {target} to change"
                )
            for binary in binaries:
                if _percentage(binary) == percentage:
                    continue
                # Retried like a read: the value is absolute, so a repeat after a lost answer
                # sets the same percentage again (at worst one more history row).
                self._http.request(
                    "POST",
                    self._checked_link(binary["self_link"]),
                    data={
                        "ws.op": "changeOverride",
                        "new_phased_update_percentage": str(percentage),
                    },
                    sign=self._signer(),
                )
                changed += 1
        except SourceError as exc:
            partial = (
                f" ({changed} of {len(binaries)} binary publications were already changed)"
                if changed
                else ""
            )
            return WriteResult("failed", f"{exc}{partial}")
        unchanged = len(binaries) - changed
        detail = f"set {changed} binary publication(s) of {target} to {percentage}%"
        if unchanged:
            detail += f"; {unchanged} already at {percentage}%"
        return WriteResult("applied", detail)

    # -- one publication ----------------------------------------------------------------

    def _publication(
        self,
        entry: Mapping[str, Any],
        *,
        release: str,
        series_link: str,
        people: dict[str, PersonRecord | None],
    ) -> PublicationRecord | None:
        name = entry.get("source_package_name")
        version = entry.get("source_package_version")
        self_link = entry.get("self_link")
        component = entry.get("component_name")
        published = _parse_datetime(entry.get("date_published"))
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
        try:
            binaries = self._current_binaries(self_link)
        except (MalformedResponse, StatusError) as exc:
            log.warning(
                "Launchpad: skipping %s %s: its binaries could not be read: %s", name, version, exc
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
        percentages = [b.get("phased_update_percentage") for b in binaries]
        explicit = [p for p in percentages if p is not None]
        phased = min(explicit) if explicit else None
        try:
            previous = self._previous_version(name, version, series_link)
        except (MalformedResponse, StatusError) as exc:
            log.warning("Launchpad: no previous version for %s %s: %s", name, version, exc)
            previous = ""
        return PublicationRecord(
            release=release,
            source_package=name,
            version=version,
            date_published=published,
            phased_update_percentage=phased,
            pocket="updates",
            previous_version=previous,
            component=component,
            status="published",
            date_superseded=_parse_datetime(entry.get("date_superseded")),
            binaries=tuple(sorted({b["binary_package_name"] for b in binaries})),
            signer=self._person(entry.get("package_signer_link"), people),
            # The Changed-By of the upload; the publication's creator (who copied it to
            # Updates) stands in only when Launchpad knows no package creator.
            uploader=self._person(
                entry.get("package_creator_link") or entry.get("creator_link"), people
            ),
            sponsor=self._person(entry.get("sponsor_link"), people),
        )

    def _current_binaries(self, source_publication_link: str) -> list[dict[str, Any]]:
        """The newest Published/Pending record per (binary, architecture).

        changeOverride leaves the old Published record until the publisher runs and adds a
        Pending one; the newest is the percentage Launchpad is about to publish.
        """
        newest: dict[tuple[str, str], tuple[datetime, dict[str, Any]]] = {}
        for entry in self._collection(
            self._checked_link(source_publication_link), {"ws.op": "getPublishedBinaries"}
        ):
            name = entry.get("binary_package_name")
            percentage = entry.get("phased_update_percentage")
            link = entry.get("self_link")
            if not (isinstance(name, str) and name and isinstance(link, str) and link):
                raise MalformedResponse(
                    f"Launchpad binary publication without name or link: {entry!r:.200}"
                )
            if percentage is not None and (
                isinstance(percentage, bool)
                or not isinstance(percentage, int)
                or not 0 <= percentage <= 100
            ):
                raise MalformedResponse(
                    f"Launchpad binary publication {link} has phased_update_percentage "
                    f"{percentage!r}"
                )
            if entry.get("status") not in CURRENT_BINARY_STATUSES:
                continue
            arch = entry.get("distro_arch_series_link")
            key = (name, arch if isinstance(arch, str) else "")
            created = _parse_datetime(entry.get("date_created")) or datetime.min.replace(tzinfo=UTC)
            if key not in newest or created >= newest[key][0]:
                newest[key] = (created, entry)
        return [entry for _, entry in newest.values()]

    def _binaries_of_version(
        self, *, release: str, pocket: str, source_package: str, version: str
    ) -> list[dict[str, Any]]:
        params = {
            "ws.op": "getPublishedSources",
            "source_name": source_package,
            "version": version,
            "exact_match": "true",
            "distro_series": self._series_link(release),
            "pocket": pocket,
            "status": "Published",
        }
        binaries: dict[str, dict[str, Any]] = {}
        for source in self._collection(self._archive_link(), params):
            link = source.get("self_link")
            if (
                source.get("source_package_name") != source_package
                or source.get("source_package_version") != version
                or not isinstance(link, str)
            ):
                continue
            for binary in self._current_binaries(link):
                binaries[binary["self_link"]] = binary
        return list(binaries.values())

    def _previous_version(self, name: str, version: str, series_link: str) -> str:
        """The highest version below this one that reached users of the series."""
        params = {
            "ws.op": "getPublishedSources",
            "source_name": name,
            "exact_match": "true",
            "distro_series": series_link,
        }
        older: set[str] = set()
        for entry in self._collection(self._archive_link(), params):
            other = entry.get("source_package_version")
            if (
                entry.get("source_package_name") == name
                and isinstance(other, str)
                and other
                and entry.get("pocket") in PREVIOUS_VERSION_POCKETS
                and entry.get("status") in PREVIOUS_VERSION_STATUSES
                and entry.get("date_published")
            ):
                try:
                    if version_compare(other, version) < 0:
                        older.add(other)
                except ValueError:
                    log.warning("Launchpad: ignoring unparsable version %r of %s", other, name)
        if not older:
            return ""
        return max(older, key=cmp_to_key(version_compare))

    def _person(self, link: Any, people: dict[str, PersonRecord | None]) -> PersonRecord | None:
        if not isinstance(link, str) or not link or link == REDACTED:
            return None
        if link in people:
            return people[link]
        account = _account_name(link)
        record: PersonRecord | None = PersonRecord(account_name=account) if account else None
        try:
            body = self._http.get_json(self._checked_link(link), sign=self._signer())
        except (MalformedResponse, StatusError) as exc:
            log.warning("Launchpad: person %s could not be read: %s", link, exc)
        else:
            if isinstance(body, dict) and isinstance(body.get("name"), str) and body["name"]:
                display = body.get("display_name")
                record = PersonRecord(
                    account_name=body["name"],
                    name=display if isinstance(display, str) else "",
                    email=self._email(body.get("preferred_email_address_link")),
                )
            else:
                log.warning("Launchpad: person %s has no name: %.200r", link, body)
        people[link] = record
        return record

    def _email(self, link: Any) -> str:
        # Hidden addresses come back redacted; that is an answer, not an error.
        if not isinstance(link, str) or not link or link == REDACTED:
            return ""
        try:
            body = self._http.get_json(self._checked_link(link), sign=self._signer())
        except (MalformedResponse, StatusError) as exc:
            log.warning("Launchpad: email address %s could not be read: %s", link, exc)
            return ""
        email = body.get("email") if isinstance(body, dict) else None
        return email if isinstance(email, str) and email != REDACTED else ""
