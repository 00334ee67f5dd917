"""Writing a percentage to Launchpad, and asking whether we may, for LaunchpadSource.

``changeOverride(new_phased_update_percentage=N)`` on a binary publication (devel, a
form-encoded POST; lib/lp/soyuz/interfaces/publishing.py 1059-1097) makes a new Pending
publishing record; 100 is stored as None, and the same value as now changes nothing and
answers ``null`` (lib/lp/soyuz/model/publishing.py 1156-1289). Launchpad refuses it:

- on a debug-symbols (ddeb) publication, with a 400 (``OverrideError``, publishing.py
  1179-1183); the override of the deb is applied to its ddeb by Launchpad itself
  (1242-1264), so ddebs are never sent;
- without the permission: ``launchpad.Edit`` on the publication is ``launchpad.Append``
  on its archive, membership of the archive owner's team for the primary archive
  (lib/lp/soyuz/security.py 556-563), and the OAuth token needs write access
  (lib/lp/services/webapp/authorization.py 66-91); either refusal is a 401 (zope's
  Unauthorized; no 403 was found, and one is treated the same);
- in a suite that may not be modified, with a 400 "Cannot change overrides in suite
  '<suite>'" (publishing.py 1234-1240, Archive.canModifySuite in model/archive.py
  1696-1733: a stable series' Release pocket, a development series' -updates).

The last two are ``denied``: a lasting state a person must fix, not an outage to retry.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from packages.sources.base import DENIED, NO_PERMISSION, SourceError, WriteResult
from packages.sources.http import MalformedResponse, StatusError
from packages.sources.launchpad.api import LaunchpadClient

log = logging.getLogger(__name__)

# Our pocket names (packages.models) to Launchpad's PackagePublishingPocket titles.
POCKETS = {
    "release": "Release",
    "security": "Security",
    "updates": "Updates",
    "proposed": "Proposed",
    "backports": "Backports",
}
CURRENT_BINARY_STATUSES = frozenset({"Published", "Pending"})
SUITE_REFUSAL = "Cannot change overrides in suite"


def parse_datetime(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    # Launchpad keeps and returns UTC; a missing offset still means UTC.
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def series_and_arch(entry: Mapping[str, Any]) -> tuple[str, str]:
    """('noble', 'amd64') from a binary publication's ``distro_arch_series_link``."""
    link = entry.get("distro_arch_series_link")
    parts = urlsplit(link).path.rstrip("/").split("/") if isinstance(link, str) else []
    return (parts[-2], parts[-1]) if len(parts) >= 2 else ("", "")


def is_debug_symbols(entry: Mapping[str, Any]) -> bool:
    """A ddeb: ``is_debug`` in devel; older API versions lack it, and only ddebs are
    named ``*-dbgsym`` in Ubuntu."""
    flag = entry.get("is_debug")
    if isinstance(flag, bool):
        return flag
    name = entry.get("binary_package_name")
    return isinstance(name, str) and name.endswith("-dbgsym")


def _refusal(exc: StatusError) -> str:
    """Why Launchpad will not take an override from us, or '' when it is another failure."""
    if exc.status in (401, 403):
        return (
            f"{NO_PERMISSION}: Launchpad answered HTTP {exc.status}; the token needs write "
            "access and its owner must be in the archive owner's team"
        )
    if exc.status == 400 and SUITE_REFUSAL in str(exc):
        return f"{NO_PERMISSION}: {str(exc).split(': ', 1)[-1]}"
    return ""


class LaunchpadWriter(LaunchpadClient):
    """changeOverride on every deb of a version; a harmless probe of the permission."""

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
            refusal = _refusal(exc) if isinstance(exc, StatusError) else ""
            if refusal:
                return WriteResult(DENIED, f"{refusal}{partial}")
            return WriteResult("failed", f"{exc}{partial}")
        unchanged = len(binaries) - changed
        detail = f"set {changed} binary publication(s) of {target} to {percentage}%"
        if unchanged:
            detail += f"; {unchanged} already at {percentage}%"
        return WriteResult("applied", detail)

    def check_write(self) -> WriteResult:
        """Send one binary publication of Updates its own percentage: Launchpad checks the
        permission first and then changes nothing (publishing.py 1211-1217 returns before
        any new record), so the answer says whether our overrides would be taken."""
        if not self.can_write:
            return WriteResult("dry_run", "no Launchpad credentials are configured: read-only")
        params = {
            "ws.op": "getPublishedBinaries",
            "pocket": POCKETS["updates"],
            "status": "Published",
            "order_by_date": "true",
        }
        try:
            probe = next(
                (
                    entry
                    for entry in self._collection(self._archive_link(), params, size=20)
                    if not is_debug_symbols(entry) and isinstance(entry.get("self_link"), str)
                ),
                None,
            )
            if probe is None:
                return WriteResult("failed", "no binary publication in Updates to ask about")
            self._http.request(
                "POST",
                self._checked_link(probe["self_link"]),
                data={
                    "ws.op": "changeOverride",
                    "new_phased_update_percentage": str(_percentage(probe)),
                },
                sign=self._signer(),
            )
        except StatusError as exc:
            refusal = _refusal(exc)
            return WriteResult(DENIED, refusal) if refusal else WriteResult("failed", str(exc))
        except SourceError as exc:
            return WriteResult("failed", str(exc))
        name = probe.get("display_name") or probe["self_link"]
        return WriteResult(
            "applied", f"Launchpad takes our overrides (asked with {name}, unchanged)"
        )

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

    def _current_binaries(self, source_publication_link: str) -> list[dict[str, Any]]:
        """The newest Published/Pending record per (binary, architecture), ddebs left out.

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
            if entry.get("status") not in CURRENT_BINARY_STATUSES or is_debug_symbols(entry):
                continue
            key = (name, series_and_arch(entry)[1])
            created = parse_datetime(entry.get("date_created")) or datetime.min.replace(tzinfo=UTC)
            if key not in newest or created >= newest[key][0]:
                newest[key] = (created, entry)
        return [entry for _, entry in newest.values()]


def _percentage(entry: Mapping[str, Any]) -> int:
    value = entry.get("phased_update_percentage")
    return 100 if value is None else int(value)
