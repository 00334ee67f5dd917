"""What Launchpad says of an upload's history: its .changes file (the bugs it closes) and the
version it replaces, as phased-updater finds them. A part of LaunchpadSource."""

from __future__ import annotations

import logging
from typing import Any

from debian.debian_support import version_compare

from packages.domain import inputs
from packages.sources.base import SourceError
from packages.sources.launchpad.api import LaunchpadClient
from packages.sources.launchpad.write import CURRENT_BINARY_STATUSES, POCKETS

log = logging.getLogger(__name__)

PREVIOUS_VERSION_PUBLICATIONS = frozenset({("Updates", "Superseded"), ("Release", "Published")})

CHANGES_MAX_CHARS = 200_000


class LaunchpadHistory(LaunchpadClient):
    read_changes: bool
    _changes_memo: dict[str, str]

    def _changes(self, self_link: str, name: str, version: str) -> str:
        """The upload's .changes file (its Launchpad-Bugs-Fixed and changelog), as
        ``changesFileUrl()`` of the source publication locates it (lib/lp/soyuz's
        ProxiedLibraryFileAlias: ``<archive>/+files/<source>_<version>_source.changes`` on
        the web host, redirected to the librarian); '' when it cannot be had, which costs
        only the list of closed bugs."""
        if not self.read_changes:
            return ""
        if self_link in self._changes_memo:
            return self._changes_memo[self_link]
        text = ""
        try:
            url = self._http.get_json(
                self._checked_link(self_link),
                params={"ws.op": "changesFileUrl"},
                sign=self._signer(),
            )
            if isinstance(url, str) and inputs.is_safe_link(url):
                # A public file off the API: never sent the credentials.
                text = self._http.request("GET", url).text[:CHANGES_MAX_CHARS]
        except SourceError as exc:
            log.warning("Launchpad: no .changes for %s %s: %s", name, version, exc)
        self._changes_memo[self_link] = text
        return text

    def _history(self, name: str, version: str, series_link: str) -> tuple[str, bool]:
        """The previous version as phased-updater finds it (``package_previous_version``):
        the newest publication in the series superseded in Updates or published in the
        Release pocket (Proposed, Security, Backports and deleted ones never count), below
        this version; and whether this very version is also in Security."""
        params = {
            "ws.op": "getPublishedSources",
            "source_name": name,
            "exact_match": "true",
            "distro_series": series_link,
        }
        older: list[tuple[int, str]] = []
        in_security = False
        for entry in self._collection(self._archive_link(), params):
            other = entry.get("source_package_version")
            if entry.get("source_package_name") != name or not isinstance(other, str) or not other:
                continue
            if (
                other == version
                and entry.get("pocket") == POCKETS["security"]
                and entry.get("status") in CURRENT_BINARY_STATUSES
            ):
                in_security = True
            if (entry.get("pocket"), entry.get("status")) in PREVIOUS_VERSION_PUBLICATIONS and (
                entry.get("date_published")
            ):
                try:
                    if version_compare(other, version) < 0:
                        older.append((_publication_id(entry), other))
                except ValueError:
                    log.warning("Launchpad: ignoring unparsable version %r of %s", other, name)
        # Launchpad numbers publications in the order they were made: the newest is the
        # highest id (phased-updater takes the first of getPublishedSources, newest first).
        previous = max(older)[1] if older else ""
        return previous, in_security


def _publication_id(entry: dict[str, Any]) -> int:
    tail = str(entry.get("self_link") or "").rstrip("/").rsplit("/", 1)[-1]
    return int(tail) if tail.isdigit() else -1
