"""A publication source over a plain Debian-format apt archive (local directory or HTTP).

The archive's ``dists/<codename>-updates`` suite is the Updates pocket: every source
version in its Packages indexes is one publication, and its binaries'
``Phased-Update-Percentage`` is the percentage (absent means 100%, as Launchpad writes
it). ``dists/<codename>`` (the release pocket), when present, gives previous versions.
Indexes are checked against the sizes and hashes the Release file lists, as apt checks
them. A local archive can be written: the field is rewritten in every Packages index of
the suite, the Release file regenerated and, with a key, signed. Nothing here imports
Django.
"""

from __future__ import annotations

import io
import logging
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from debian import deb822
from debian.debian_support import Version

from packages.sources.apt_reader import (
    HASH_FIELDS,
    RELEASE_CHECKSUM_FIELDS,
    AptArchiveReader,
    Suite,
    parse_release_date,
)
from packages.sources.apt_writer import (
    PHASED_FIELD,
    WRITTEN_HASHES,
    SigningError,
    atomic_write,
    compressed_variants,
    file_hashes,
    format_release_date,
    release_text,
    sign_release,
    suite_lock,
    write_by_hash,
)
from packages.sources.base import PublicationRecord, ReleaseRecord, SourceError, WriteResult

log = logging.getLogger(__name__)

UPDATES_POCKET = "updates"
_HREF_RE = re.compile(r'href="(?:\./)?([A-Za-z0-9][A-Za-z0-9.+_-]*-updates)/?"')


def _parse_percentage(value: str) -> int:
    text = value.strip()
    if not text.isdigit() or not 0 <= int(text) <= 100:
        raise ValueError(f"{PHASED_FIELD} must be a whole number from 0 to 100, not {value!r}")
    return int(text)


class AptArchiveSource(AptArchiveReader):
    """Publications of a Debian-format apt archive; writes percentages back when local."""

    name = "apt-archive"

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

    def _previous_versions(self, codename: str) -> dict[str, list[Version]]:
        suite = self._load_suite(codename, required=False)
        versions: dict[str, list[Version]] = {}
        if suite is None:
            return versions
        for _, paragraph in self._paragraphs(suite):
            try:
                source = paragraph.source or paragraph["Package"]
                versions.setdefault(source, []).append(paragraph.source_version)
            except ValueError:
                log.warning("apt archive: unreadable version in %s: %r", codename, paragraph)
        return versions

    def publications(
        self, *, release: str, since: datetime | None, now: datetime
    ) -> Iterator[PublicationRecord]:
        """One record per source version in the Updates suite.

        An archive has one date, its Release ``Date``; every publication carries it, and
        ``since`` after it means nothing has changed.
        """
        suite = self._load_suite(self._suite_name(release))
        date = suite.date
        if date is None:
            log.warning("apt archive: %s has no readable Date; using now", suite.name)
            date = now
        if since is not None and date < since:
            return

        groups: dict[tuple[str, str], dict] = {}
        for component, paragraph in self._paragraphs(suite):
            try:
                key = (paragraph.source or paragraph["Package"], str(paragraph.source_version))
            except ValueError:
                log.warning(
                    "apt archive: %s has an unreadable version for %s; skipped",
                    suite.name,
                    paragraph.get("Package"),
                )
                continue
            group = groups.setdefault(
                key, {"component": component, "binaries": [], "percentages": [], "bad": ""}
            )
            if paragraph["Package"] not in group["binaries"]:
                group["binaries"].append(paragraph["Package"])
            raw = paragraph.get(PHASED_FIELD)
            if raw is None:
                group["percentages"].append(None)
                continue
            try:
                group["percentages"].append(_parse_percentage(raw))
            except ValueError as exc:
                group["bad"] = f"{paragraph['Package']} ({component}): {exc}"

        previous = self._previous_versions(release) if groups else {}
        for (source, version), group in groups.items():
            if group["bad"]:
                log.warning(
                    "apt archive: skipping %s %s in %s: %s",
                    source,
                    version,
                    suite.name,
                    group["bad"],
                )
                continue
            yield PublicationRecord(
                release=release,
                source_package=source,
                version=version,
                date_published=date,
                phased_update_percentage=self._record_percentage(source, version, group),
                pocket=UPDATES_POCKET,
                previous_version=_highest_lower(previous.get(source, []), version),
                component=group["component"],
                binaries=tuple(sorted(group["binaries"])),
            )

    @staticmethod
    def _record_percentage(source: str, version: str, group: dict) -> int | None:
        values = group["percentages"]
        numbers = [100 if v is None else v for v in values]
        if len(set(numbers)) > 1:
            # Binaries phase one by one in apt; the lowest is how far the whole update got.
            log.info(
                "apt archive: %s %s binaries disagree on percentage %s", source, version, values
            )
        lowest = min(numbers)
        if lowest == 100 and None in values:
            return None
        return lowest

    # Writing ------------------------------------------------------------------------

    def set_percentage(
        self, *, release: str, pocket: str, source_package: str, version: str, percentage: int
    ) -> WriteResult:
        if not self.can_write:
            return WriteResult(
                "dry_run", f"the archive at {self.location} is read-only over HTTP; nothing written"
            )
        if pocket != UPDATES_POCKET:
            return WriteResult("failed", f"only the updates pocket is phased, not {pocket!r}")
        if not isinstance(percentage, int) or not 0 <= percentage <= 100:
            return WriteResult("failed", f"a percentage is 0..100, not {percentage!r}")
        try:
            Version(version)
        except ValueError:
            return WriteResult("failed", f"{version!r} is not a Debian version")
        suite_name = self._suite_name(release)
        assert self._root is not None  # can_write: a local archive
        suite_dir = self._root / "dists" / suite_name
        if not (suite_dir / "Release").is_file():
            return WriteResult("failed", f"{suite_dir}/Release does not exist")
        signed = (suite_dir / "InRelease").exists() or (suite_dir / "Release.gpg").exists()
        if signed and not self.gpg_key:
            return WriteResult(
                "failed", f"{suite_name} is signed but no GnuPG key is configured to sign it again"
            )
        if self.gpg_key and shutil.which("gpg") is None:
            return WriteResult("failed", "gpg is not installed; cannot sign the Release file")
        try:
            with suite_lock(suite_dir):
                return self._rewrite(suite_name, suite_dir, source_package, version, percentage)
        except SourceError as exc:
            return WriteResult("failed", str(exc))
        except SigningError as exc:
            return WriteResult("failed", f"signing failed, nothing written: {exc}")
        except OSError as exc:
            return WriteResult("failed", f"writing {suite_dir} failed: {exc}")

    def _rewrite(
        self, suite_name: str, suite_dir: Path, source_package: str, version: str, percentage: int
    ) -> WriteResult:
        suite = self._load_suite(suite_name)
        wanted = Version(version)
        rewritten: dict[str, bytes] = {}  # index dir -> new uncompressed Packages
        matched = changed = 0
        for component, arch in suite.index_dirs:
            found = self._read_index(suite, component, arch)
            if found is None:
                continue
            try:
                text = found[1].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SourceError(f"{component}/binary-{arch} index is not UTF-8") from exc
            paragraphs = list(deb822.Packages.iter_paragraphs(io.StringIO(text), use_apt_pkg=False))
            touched = False
            for paragraph in paragraphs:
                if "Package" not in paragraph:
                    continue
                try:
                    if paragraph.source != source_package or paragraph.source_version != wanted:
                        continue
                except ValueError:
                    continue
                matched += 1
                before = paragraph.get(PHASED_FIELD)
                if percentage == 100:
                    if before is not None:
                        del paragraph[PHASED_FIELD]
                        touched = True
                elif before != str(percentage):
                    paragraph[PHASED_FIELD] = str(percentage)
                    touched = True
            if touched:
                changed += 1
                rewritten[f"{component}/binary-{arch}"] = "\n".join(
                    p.dump() for p in paragraphs
                ).encode("utf-8")
        if not matched:
            return WriteResult(
                "failed", f"no binaries of {source_package} {version} in {suite_name}"
            )
        if not changed:
            return WriteResult("applied", f"already at {percentage}%")

        # SHA512 stays only where the archive already lists it; apt trusts the strongest.
        hash_fields = [f for f in HASH_FIELDS if f in suite.release or f in WRITTEN_HASHES]
        by_hash = suite.release.get("Acquire-By-Hash", "").strip().lower() == "yes"

        new_files: dict[str, bytes] = {}
        for index_dir, content in rewritten.items():
            for name, data in compressed_variants(content).items():
                new_files[f"{index_dir}/{name}"] = data
        release_bytes = self._new_release(suite, suite_dir, new_files, hash_fields)
        signatures = (
            sign_release(release_bytes, gpg_key=self.gpg_key, gpg_home=self.gpg_home)
            if self.gpg_key
            else {}
        )
        # Indexes before the Release that lists them, so a client that sees the new
        # Release finds the new indexes.
        for relative, data in new_files.items():
            if by_hash:
                write_by_hash((suite_dir / relative).parent, data, hash_fields)
            atomic_write(suite_dir / relative, data)
        atomic_write(suite_dir / "Release", release_bytes)
        for name, data in signatures.items():
            atomic_write(suite_dir / name, data)
        shown = "100% (field removed)" if percentage == 100 else f"{percentage}%"
        return WriteResult(
            "applied", f"{source_package} {version} set to {shown} in {matched} binaries"
        )

    def _new_release(
        self, suite: Suite, suite_dir: Path, new_files: dict[str, bytes], hash_fields: list[str]
    ) -> bytes:
        now = datetime.now(UTC)
        fields = []
        old_date = suite.date
        for name, value in suite.release.items():
            if name.lower() in RELEASE_CHECKSUM_FIELDS:
                continue
            if name == "Date":
                value = format_release_date(now)
            elif name == "Valid-Until" and old_date is not None:
                # Keep the archive's validity window: same distance from the new Date.
                old_until = parse_release_date(value)
                if old_until is not None:
                    value = format_release_date(now + (old_until - old_date))
            fields.append((name, value))
        if "Date" not in suite.release:
            fields.append(("Date", format_release_date(now)))

        names = list(suite.listed) + sorted(n for n in new_files if n not in suite.listed)
        entries: dict[str, tuple[int, dict[str, str]]] = {}
        for name in names:
            data = new_files.get(name)
            if data is None:
                path = suite_dir / name
                if path.is_file():
                    data = path.read_bytes()
            if data is not None:
                entries[name] = (len(data), file_hashes(data, hash_fields))
            else:
                # Listed but absent (archives list uncompressed indexes they do not ship):
                # keep the old entry where it has every hash we write.
                old = suite.listed[name]
                if all(f in old.hashes for f in hash_fields):
                    entries[name] = (old.size, dict(old.hashes))
        return release_text(fields, entries, hash_fields).encode("utf-8")


def _highest_lower(candidates: list[Version], version: str) -> str:
    try:
        current = Version(version)
    except ValueError:
        return ""
    lower = [v for v in candidates if v < current]
    return str(max(lower)) if lower else ""
