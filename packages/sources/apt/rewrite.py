"""Writing a percentage into a local apt archive, for AptArchiveSource.

The field is rewritten in every Packages index of the suite, the Release file made again
(and, with a key, signed), and the whole change committed as one step
(packages.sources.apt.commit). A halt writes ``Phased-Update-Percentage: 0`` explicitly:
apt reads an absent field as 100%, so a writer that dropped a 0 would publish a halted
update to everyone. (Launchpad's own writer for PPAs does drop it: lib/lp/archivepublisher/
indices.py 47-50 skips false values; the primary archive goes through apt-ftparchive's
override files, which keep 0: archivepublisher/model/ftparchive.py 595-605.) 100 removes
the field, as Launchpad does. Nothing here imports Django.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from debian import deb822
from debian.debian_support import Version

from packages.sources.apt import names as apt_names
from packages.sources.apt.commit import suite_commit, suite_recover
from packages.sources.apt.reader import (
    HASH_FIELDS,
    RELEASE_CHECKSUM_FIELDS,
    AptArchiveReader,
    IndexMismatch,
    Suite,
    parse_release_date,
)
from packages.sources.apt.writer import (
    PHASED_FIELD,
    WRITTEN_HASHES,
    SigningError,
    compressed_variants,
    file_hashes,
    format_release_date,
    release_text,
    sign_release,
    suite_lock,
    write_by_hash,
)
from packages.sources.base import DENIED, NO_PERMISSION, SourceError, WriteResult

log = logging.getLogger(__name__)


def _on_read_only_file_system(path: Path) -> bool:
    """A file system mounted read-only (a disk remounted after an error, a mount made
    read-only by mistake) is a fault that ends, retried like any failure; a directory this
    user may not write is a refusal that lasts until someone changes it (DENIED)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class AptArchiveRewriter(AptArchiveReader):
    """set_percentage and check_write of a local archive; read-only over HTTP."""

    def recover(self, suite_name: str) -> None:
        """Undo a write of this suite that stopped half-way, if one did (local only)."""
        if self._root is None:
            return
        suite_dir = apt_names.inside(self._root, f"dists/{apt_names.suite_name(suite_name)}")
        if not (suite_dir / ".phasing-commit").exists():
            return
        try:
            with suite_lock(suite_dir):
                if suite_recover(suite_dir):
                    log.warning("apt archive: undid an interrupted write of %s", suite_dir)
        except OSError as exc:
            raise SourceError(
                f"{suite_dir} was left half-written by an interrupted write and cannot be "
                f"repaired here: {exc}"
            ) from exc

    def check_write(self) -> WriteResult:
        if not self.can_write:
            return WriteResult("dry_run", f"the archive at {self.location} is read-only over HTTP")
        assert self._root is not None
        dists = self._root / "dists"
        if _on_read_only_file_system(dists):
            return WriteResult("failed", f"{dists} is on a read-only file system")
        if not os.access(dists, os.W_OK | os.X_OK):
            return WriteResult(DENIED, f"{NO_PERMISSION}: {dists} is not writable by this user")
        if self.gpg_key and shutil.which("gpg") is None:
            return WriteResult("failed", "gpg is not installed; the Release file cannot be signed")
        return WriteResult("applied", f"{dists} is writable")

    def set_percentage(
        self, *, release: str, pocket: str, source_package: str, version: str, percentage: int
    ) -> WriteResult:
        if not self.can_write:
            return WriteResult(
                "dry_run", f"the archive at {self.location} is read-only over HTTP; nothing written"
            )
        if pocket != "updates":
            return WriteResult("failed", f"only the updates pocket is phased, not {pocket!r}")
        if not isinstance(percentage, int) or not 0 <= percentage <= 100:
            return WriteResult("failed", f"a percentage is 0..100, not {percentage!r}")
        try:
            Version(version)
        except ValueError:
            return WriteResult("failed", f"{version!r} is not a Debian version")
        assert self._root is not None  # can_write: a local archive
        try:
            suite_name = self._suite_name(release)
            suite_dir = apt_names.inside(self._root, f"dists/{suite_name}")
        except SourceError as exc:
            log.error("apt archive: refused to write %s: %s", release, exc)
            return WriteResult("failed", str(exc))
        if not (suite_dir / "Release").is_file():
            return WriteResult("failed", f"{suite_dir}/Release does not exist")
        if _on_read_only_file_system(suite_dir):
            return WriteResult("failed", f"{suite_dir} is on a read-only file system")
        if not os.access(suite_dir, os.W_OK | os.X_OK):
            return WriteResult(DENIED, f"{NO_PERMISSION}: {suite_dir} is not writable by this user")
        signed = (suite_dir / "InRelease").exists() or (suite_dir / "Release.gpg").exists()
        if signed and not self.gpg_key:
            return WriteResult(
                "failed", f"{suite_name} is signed but no GnuPG key is configured to sign it again"
            )
        if self.gpg_key and shutil.which("gpg") is None:
            return WriteResult("failed", "gpg is not installed; cannot sign the Release file")
        try:
            with suite_lock(suite_dir):
                if suite_recover(suite_dir):
                    log.warning("apt archive: undid an interrupted write of %s", suite_dir)
                try:
                    return self._rewrite(suite_name, suite_dir, source_package, version, percentage)
                except IndexMismatch as exc:
                    # Torn without a journal (a Release newer than its indexes, however it
                    # happened): unreadable for ever unless rebuilt. The indexes on disk
                    # are taken as they are, and this write then sets the product's own
                    # percentage over them.
                    log.warning(
                        "apt archive: %s is torn (%s); rebuilding its Release", suite_name, exc
                    )
                    self._rebuild(suite_name, suite_dir)
                    return self._rewrite(suite_name, suite_dir, source_package, version, percentage)
        except SourceError as exc:
            # A hostile or torn suite: named in the write-back's failure, and in the log.
            log.error("apt archive: writing %s failed: %s", suite_name, exc)
            return WriteResult("failed", str(exc))
        except SigningError as exc:
            return WriteResult("failed", f"signing failed, nothing written: {exc}")
        except OSError as exc:
            return WriteResult("failed", f"writing {suite_dir} failed, nothing changed: {exc}")

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
                    # 0 included: an absent field would read as 100%.
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
        # Published with Acquire-By-Hash, as Debian's archive tools do: a reader that
        # fetched the Release just before this write still finds the indexes it lists,
        # by their hashes, while their names are being replaced.
        by_hash_before = suite.release.get("Acquire-By-Hash", "").strip().lower() == "yes"

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
        # Content-addressed copies: new names, so writing them first changes nothing. The
        # first time, the unchanged indexes get theirs too, so the Release's promise holds.
        for relative, data in new_files.items():
            write_by_hash((suite_dir / relative).parent, data, hash_fields)
        if not by_hash_before:
            for relative in suite.listed:
                path = apt_names.inside(suite_dir, relative)
                if relative not in new_files and path.is_file():
                    write_by_hash(path.parent, path.read_bytes(), hash_fields)
        suite_commit(suite_dir, {**new_files, "Release": release_bytes, **signatures})
        shown = "100% (field removed)" if percentage == 100 else f"{percentage}%"
        return WriteResult(
            "applied", f"{source_package} {version} set to {shown} in {matched} binaries"
        )

    def _rebuild(self, suite_name: str, suite_dir: Path) -> None:
        """A new Release over the suite's plain Packages indexes as they are on disk, with
        their compressed forms made again from them, committed as one step."""
        suite = self._load_suite(suite_name)
        hash_fields = [f for f in HASH_FIELDS if f in suite.release or f in WRITTEN_HASHES]
        new_files: dict[str, bytes] = {}
        for component, arch in suite.index_dirs:
            index_dir = f"{component}/binary-{arch}"
            plain = apt_names.inside(suite_dir, f"{index_dir}/Packages")
            if not plain.is_file():
                continue
            for name, data in compressed_variants(plain.read_bytes()).items():
                new_files[f"{index_dir}/{name}"] = data
        release_bytes = self._new_release(suite, suite_dir, new_files, hash_fields)
        signatures = (
            sign_release(release_bytes, gpg_key=self.gpg_key, gpg_home=self.gpg_home)
            if self.gpg_key
            else {}
        )
        for relative, data in new_files.items():
            write_by_hash((suite_dir / relative).parent, data, hash_fields)
        suite_commit(suite_dir, {**new_files, "Release": release_bytes, **signatures})

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
            if name == "Acquire-By-Hash":
                continue
            fields.append((name, value))
        if "Date" not in suite.release:
            fields.append(("Date", format_release_date(now)))
        fields.append(("Acquire-By-Hash", "yes"))

        names = list(suite.listed) + sorted(n for n in new_files if n not in suite.listed)
        entries: dict[str, tuple[int, dict[str, str]]] = {}
        for name in names:
            data = new_files.get(name)
            if data is None:
                path = apt_names.inside(suite_dir, name)
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
