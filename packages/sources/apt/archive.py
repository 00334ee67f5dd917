"""A publication source over a plain Debian-format apt archive (local directory or HTTP).

A phased suite per release (``<codename>-updates`` unless configured otherwise: a PPA's
``<codename>``, a third party's own name; apt phases every origin that carries the
field) is that release's Updates pocket: every source version in its Packages indexes is
one publication, each binary keeps its own ``Phased-Update-Percentage`` per architecture,
read as apt reads it (packages.sources.apt.reader.apt_percentage), and the record's
percentage is the lowest. The version it replaces is the one just below it in any of the
release's suites (by default ``<codename>``, ``<codename>-security`` and
``<codename>-updates``), and a version also found in a suite whose ``Suite:`` ends in
``-security`` is marked, since apt never phases it (apt-pkg/pkgcache.cc 1067-1086).
Indexes are checked against the sizes and hashes the Release file lists, as apt checks
them. A local archive can be written (packages.sources.apt.rewrite). Nothing here
imports Django.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from debian.debian_support import Version

from packages.domain.dependencies import Relation, relations_of_stanza
from packages.sources.apt.reader import Suite, apt_percentage
from packages.sources.apt.rewrite import AptArchiveRewriter
from packages.sources.apt.writer import PHASED_FIELD
from packages.sources.base import (
    BinaryPercentage,
    PublicationRecord,
    ReleaseRecord,
    SourceError,
    Watch,
)

log = logging.getLogger(__name__)

UPDATES_POCKET = "updates"
_HREF_RE = re.compile(r'href="(?:\./)?([A-Za-z0-9][A-Za-z0-9.+_-]*-updates)/?"')
# Where previous versions are looked for; {codename} is the release's codename.
PREVIOUS_SUITES = ("{codename}", "{codename}-security", "{codename}-updates")


@dataclass
class _Group:
    component: str
    binaries: list[str] = field(default_factory=list)
    percentages: dict[tuple[str, str], int | None] = field(default_factory=dict)
    relations: set[Relation] = field(default_factory=set)


class AptArchiveSource(AptArchiveRewriter):
    """Publications of a Debian-format apt archive; writes percentages back when local."""

    name = "apt-archive"

    def __init__(self, *, previous_suites: Sequence[str] = PREVIOUS_SUITES, **kwargs) -> None:
        super().__init__(**kwargs)
        self.previous_suites = tuple(previous_suites)

    def _suite_release_record(self, suite: Suite, codename: str | None) -> ReleaseRecord:
        fallback = suite.name.removesuffix("-updates")
        return ReleaseRecord(
            codename=codename or suite.release.get("Codename", "") or fallback,
            version=suite.release.get("Version", ""),
        )

    def _update_suites(self) -> list[str]:
        if self._root is not None:
            dists = self._root / "dists"
            try:
                return sorted(p.parent.name for p in dists.glob("*-updates/Release") if p.is_file())
            except OSError as exc:
                raise SourceError(f"cannot list {dists}: {exc}") from exc
        # Over HTTP the only listing is the server's directory index, if it makes one.
        listing = self._read("dists/")
        names = sorted(set(_HREF_RE.findall(listing.decode("utf-8", "replace"))))
        if not names:
            raise SourceError(
                f"{self._base_url}dists/ lists no *-updates suites; configure the suites"
            )
        return names

    def releases(self) -> list[ReleaseRecord]:
        if self.suites:
            records = []
            for codename, suite_name in self.suites.items():
                records.append(self._suite_release_record(self._load_suite(suite_name), codename))
            return records
        records = []
        for suite_name in self._update_suites():
            found = self._load_suite(suite_name, required=False)
            if found is not None:
                records.append(self._suite_release_record(found, None))
        return records

    def _history(self, codename: str, phased: Suite) -> dict[str, list[tuple[Version, bool]]]:
        """Every (version, in a -security suite) of each source in the release's suites."""
        names = dict.fromkeys([s.format(codename=codename) for s in self.previous_suites])
        versions: dict[str, list[tuple[Version, bool]]] = {}
        for name in names:
            suite = phased if name == phased.name else self._load_suite(name, required=False)
            if suite is None:
                continue
            security = str(suite.release.get("Suite", suite.name)).endswith("-security")
            for _, _, paragraph in self._paragraphs(suite):
                try:
                    source = paragraph.source or paragraph["Package"]
                    versions.setdefault(source, []).append((paragraph.source_version, security))
                except ValueError:
                    log.warning("apt archive: unreadable version in %s: %.200r", name, paragraph)
        return versions

    def publications(
        self, *, release: str, since: datetime | None, now: datetime, watch: Watch | None = None
    ) -> Iterator[PublicationRecord]:
        """One record per source version in the phased suite.

        An archive has one date, its Release ``Date``; every publication carries it, and
        ``since`` after it means nothing has changed. Everything is read every time, so
        ``watch`` asks for nothing more.
        """
        suite_name = self._suite_name(release)
        self.recover(suite_name)
        suite = self._load_suite(suite_name)
        date = suite.date
        if date is None:
            log.warning("apt archive: %s has no readable Date; using now", suite.name)
            date = now
        if since is not None and date < since:
            return

        groups: dict[tuple[str, str], _Group] = {}
        for component, arch, paragraph in self._paragraphs(suite):
            package = paragraph["Package"]
            try:
                key = (paragraph.source or package, str(paragraph.source_version))
            except ValueError:
                # One odd stanza costs only itself, never its source's other binaries.
                log.warning(
                    "apt archive: %s has an unreadable version for %s; that stanza skipped",
                    suite.name,
                    package,
                )
                continue
            group = groups.setdefault(key, _Group(component))
            if package not in group.binaries:
                group.binaries.append(package)
            group.relations.update(relations_of_stanza(paragraph))
            raw = paragraph.get(PHASED_FIELD)
            value, ignored = apt_percentage(raw)
            if ignored:
                log.warning(
                    "apt archive: %s %s/%s in %s: Ignoring invalid Phased-Update-Percentage "
                    "value %r, as apt does (it reads 100%%)",
                    key[0],
                    package,
                    arch,
                    suite.name,
                    raw,
                )
            group.percentages[(package, arch)] = None if value == 100 else value

        history = self._history(release, suite) if groups else {}
        for (source, version), group in groups.items():
            per_binary = tuple(
                BinaryPercentage(binary, arch, percentage)
                for (binary, arch), percentage in sorted(group.percentages.items())
            )
            explicit = [b.percentage for b in per_binary if b.percentage is not None]
            known = history.get(source, [])
            yield PublicationRecord(
                release=release,
                source_package=source,
                version=version,
                date_published=date,
                phased_update_percentage=min(explicit) if explicit else None,
                pocket=UPDATES_POCKET,
                previous_version=_highest_lower([v for v, _ in known], version),
                component=group.component,
                binaries=tuple(sorted(group.binaries)),
                binary_percentages=per_binary,
                in_security=any(str(v) == version and security for v, security in known),
                relations=tuple(sorted(group.relations)),
            )


def _highest_lower(candidates: list[Version], version: str) -> str:
    try:
        current = Version(version)
    except ValueError:
        return ""
    lower = [v for v in candidates if v < current]
    return str(max(lower)) if lower else ""
