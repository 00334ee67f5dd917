"""Writing Debian-format apt archives: index files, Release files, signatures.

The pieces ``AptArchiveSource.set_percentage`` rewrites an archive with (the tests lay
out whole archives with them: tests/apt_archives.py). The layout is the Debian repository format
(https://wiki.debian.org/DebianRepository/Format): ``dists/<suite>/Release`` listing the
size and MD5Sum/SHA1/SHA256 of every index, ``dists/<suite>/<component>/binary-<arch>/
Packages`` (also ``.gz`` and ``.xz``), and, when signed, ``InRelease`` (clearsigned) and
``Release.gpg`` (detached). Every file is written atomically so a client reading the
archive while it changes sees either the old file or the new one. Nothing here imports
Django.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import lzma
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

# Release field name -> hashlib name, in the order apt and dak write them.
RELEASE_HASHES = (("MD5Sum", "md5"), ("SHA1", "sha1"), ("SHA256", "sha256"), ("SHA512", "sha512"))
# What we write by default; SHA512 is rewritten only where an archive already lists it.
WRITTEN_HASHES = ("MD5Sum", "SHA1", "SHA256")
# apt tries the smallest download first; so do we when reading.
PACKAGES_VARIANTS = ("Packages.xz", "Packages.gz", "Packages")
PHASED_FIELD = "Phased-Update-Percentage"
GPG_TIMEOUT = 60.0


class SigningError(Exception):
    pass


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never half.

    The temporary file lives in the same directory (os.replace is atomic only within one
    file system), is fsynced before the rename, and the directory after it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def suite_lock(suite_dir: Path) -> Iterator[None]:
    """One writer per suite at a time (two controller ticks may write at once).

    The lock is on the directory itself, so no lock file appears in the published tree.
    """
    fd = os.open(suite_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def compressed_variants(packages: bytes) -> dict[str, bytes]:
    """Packages in the three forms apt reads; gzip's mtime fixed so rewrites are stable."""
    return {
        "Packages": packages,
        "Packages.gz": gzip.compress(packages, compresslevel=9, mtime=0),
        "Packages.xz": lzma.compress(packages, format=lzma.FORMAT_XZ),
    }


def decompress(name: str, data: bytes) -> bytes:
    if name.endswith(".xz"):
        return lzma.decompress(data)
    if name.endswith(".gz"):
        return gzip.decompress(data)
    return data


def format_release_date(when: datetime) -> str:
    """RFC 2822 in UTC, as dak writes it: ``Thu, 25 Apr 2024 15:10:33 UTC``."""
    stamp = format_datetime(when.astimezone(UTC).replace(microsecond=0), usegmt=True)
    return stamp.removesuffix("GMT") + "UTC"


def file_hashes(data: bytes, fields: Iterable[str]) -> dict[str, str]:
    algorithms = dict(RELEASE_HASHES)
    return {field: hashlib.new(algorithms[field], data).hexdigest() for field in fields}


def release_text(
    fields: Sequence[tuple[str, str]],
    entries: Mapping[str, tuple[int, Mapping[str, str]]],
    hash_fields: Sequence[str] = WRITTEN_HASHES,
) -> str:
    """A Release file: ``fields`` in order, then one checksum list per hash.

    ``entries`` maps a path relative to the suite to (size, {hash field: hex digest}).
    """
    lines = [f"{name}: {value}" for name, value in fields]
    width = max((len(str(size)) for size, _ in entries.values()), default=1)
    for field in hash_fields:
        rows = [(name, size, hashes[field]) for name, (size, hashes) in entries.items()]
        if not rows:
            continue
        lines.append(f"{field}:")
        lines += [f" {digest} {size:>{width}} {name}" for name, size, digest in rows]
    return "\n".join(lines) + "\n"


def write_by_hash(index_dir: Path, data: bytes, hash_fields: Iterable[str]) -> None:
    """Copies under by-hash/, for archives that say ``Acquire-By-Hash: yes``."""
    for field, digest in file_hashes(data, hash_fields).items():
        atomic_write(Path(index_dir) / "by-hash" / field / digest, data)


def _gpg(args: Sequence[str], data: bytes, *, gpg_home: str | None) -> bytes:
    gpg = shutil.which("gpg")
    if gpg is None:
        raise SigningError("gpg is not installed, so the Release file cannot be signed")
    command = [gpg, "--batch", "--yes", "--no-tty"]
    if gpg_home:
        command += ["--homedir", gpg_home]
    try:
        proc = subprocess.run(
            command + list(args), input=data, capture_output=True, timeout=GPG_TIMEOUT
        )
    except subprocess.TimeoutExpired as exc:
        raise SigningError(f"gpg did not finish within {GPG_TIMEOUT:g} s") from exc
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise SigningError(f"gpg failed ({proc.returncode}): {message[-500:]}")
    return proc.stdout


def sign_release(release: bytes, *, gpg_key: str, gpg_home: str | None) -> dict[str, bytes]:
    """``InRelease`` and ``Release.gpg`` for this Release content (not yet written)."""
    # apt refuses SHA1 signatures; ask for a strong digest whatever gpg.conf says.
    common = ["--local-user", gpg_key, "--digest-algo", "SHA512", "--armor"]
    return {
        "InRelease": _gpg([*common, "--clearsign"], release, gpg_home=gpg_home),
        "Release.gpg": _gpg([*common, "--detach-sign"], release, gpg_home=gpg_home),
    }


def source_field(package: str, source: str, binary_version: str, source_version: str) -> str:
    """The ``Source:`` value dak writes: absent, ``name`` or ``name (version)``."""
    if source == package and source_version == binary_version:
        return ""
    if source_version == binary_version:
        return source
    return f"{source} ({source_version})"


def packages_stanza(
    *,
    package: str,
    source: str,
    version: str,
    architecture: str,
    component: str,
    percentage: int | None,
) -> str:
    fields = [("Package", package)]
    source_value = source_field(package, source, version, version)
    if source_value:
        fields.append(("Source", source_value))
    filename_version = version.split(":", 1)[-1]
    pool = source[:4] if source.startswith("lib") else source[:1]
    fields += [
        ("Version", version),
        ("Architecture", architecture),
        ("Maintainer", "Phasing Demo <phasing@example.org>"),
        ("Installed-Size", "1"),
        (
            "Filename",
            f"pool/{component}/{pool}/{source}/{package}_{filename_version}_{architecture}.deb",
        ),
        ("Size", "1000"),
        ("SHA256", hashlib.sha256(f"{package} {version}".encode()).hexdigest()),
    ]
    if percentage is not None and percentage != 100:
        fields.append((PHASED_FIELD, str(percentage)))
    fields.append(("Description", f"{package} from {source}"))
    return "".join(f"{name}: {value}\n" for name, value in fields)
