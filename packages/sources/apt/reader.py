"""Reading a Debian-format apt archive as apt does: Release, then the indexes it vouches for.

A local directory or an HTTP root. Indexes are checked against the sizes and hashes the
Release file lists, and only the variants it lists are read when it lists any. Nothing
here imports Django.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Literal, overload

import requests
from debian import deb822

from packages.sources.apt import names as apt_names
from packages.sources.apt.writer import PACKAGES_VARIANTS, RELEASE_HASHES, decompress
from packages.sources.base import SourceError

HASH_FIELDS = tuple(name for name, _ in RELEASE_HASHES)
_ULLONG_MAX = 2**64 - 1
_STRTOULL_SPACE = " \t\n\v\f\r"
# pkgTagSection::FindULLInternal copies the value into a 100-byte buffer first.
_FIND_BUFFER = 100


def apt_percentage(value: str | None) -> tuple[int, bool]:
    """A ``Phased-Update-Percentage`` value as apt reads it: (percentage, apt warns).

    apt-pkg/deb/deblistparser.cc 322-327 reads it with ``FindULL(..., 100)``, which is
    ``strtoull`` (apt-pkg/tagfile.cc 803-822): leading blanks and a sign are allowed, the
    leading digits count and the rest is ignored ("50x" is 50), no digits at all is the
    default 100 without a word, and a value too long for its buffer is 100 as well. The
    version keeps 100 when the number is above 100, with the warning "Ignoring invalid
    Phased-Update-Percentage value" (cacheiterators.h 294-300); "-1" wraps around to a huge
    number and is one of those.
    """
    if value is None or len(value.encode("utf-8", "replace")) >= _FIND_BUFFER:
        return 100, False
    text = value.lstrip(_STRTOULL_SPACE)
    negative = text[:1] == "-"
    if text[:1] in "+-" and text:
        text = text[1:]
    digits = len(text) - len(text.lstrip("0123456789"))
    if not digits:
        return 100, False
    number = min(int(text[:digits]), _ULLONG_MAX)
    if negative and number and number != _ULLONG_MAX:
        number = _ULLONG_MAX + 1 - number
    if number > 100:
        return 100, True
    return number, False


_INDEX_RE = re.compile(r"^(?P<component>.+)/binary-(?P<arch>[^/]+)/Packages(\.gz|\.xz)?$")
RELEASE_CHECKSUM_FIELDS = {name.lower() for name in HASH_FIELDS}


class IndexMismatch(SourceError):
    """An index that does not match the size or hash its Release lists: a torn suite."""


@dataclass
class Listed:
    """One file as the Release lists it: size and the digests of each hash list."""

    size: int
    hashes: dict[str, str] = field(default_factory=dict)

    def check(self, name: str, data: bytes) -> None:
        if len(data) != self.size:
            raise IndexMismatch(
                f"{name} is {len(data)} bytes but the Release file says {self.size} "
                "(archive being rewritten, or corrupt)"
            )
        # The strongest hash listed decides, as in apt.
        for field_name in reversed(HASH_FIELDS):
            if field_name in self.hashes:
                algorithm = dict(RELEASE_HASHES)[field_name]
                digest = hashlib.new(algorithm, data).hexdigest()
                if digest != self.hashes[field_name]:
                    raise IndexMismatch(
                        f"{name} does not match its {field_name} in the Release file "
                        "(archive being rewritten, or corrupt)"
                    )
                return


@dataclass
class Suite:
    name: str
    release: deb822.Release
    listed: dict[str, Listed]

    @property
    def index_dirs(self) -> list[tuple[str, str]]:
        """(component, architecture) pairs, in the Release's component order; a name that
        Debian's rules do not allow refuses the suite (packages.sources.apt.names)."""
        where = f"dists/{self.name}/Release"
        components = [
            apt_names.component_name(c, where=where)
            for c in self.release.get("Components", "").split()
        ]
        architectures = [
            apt_names.architecture_name(a, where=where)
            for a in self.release.get("Architectures", "").split()
        ]
        pairs = [(c, a) for c in components for a in architectures]
        for name in self.listed:
            match = _INDEX_RE.match(name)
            if match and (match["component"], match["arch"]) not in pairs:
                pairs.append(
                    (
                        apt_names.component_name(match["component"], where=where),
                        apt_names.architecture_name(match["arch"], where=where),
                    )
                )
        return pairs

    @property
    def date(self) -> datetime | None:
        return parse_release_date(self.release.get("Date", ""))


def parse_release_date(text: str) -> datetime | None:
    """A Release ``Date`` (RFC 2822) as an aware UTC datetime, or None when unreadable."""
    if not text.strip():
        return None
    try:
        when = parsedate_to_datetime(text.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        # "-0000" parses as naive; RFC 2822 calls that UTC with no offset information.
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


def listed_files(release: deb822.Release) -> dict[str, Listed]:
    listed: dict[str, Listed] = {}
    for field_name in HASH_FIELDS:
        for entry in release.get(field_name, []) or []:
            try:
                size = int(entry["size"])
            except (KeyError, TypeError, ValueError):
                continue
            item = listed.setdefault(entry["name"], Listed(size=size))
            item.hashes[field_name] = entry[field_name.lower()].lower()
    return listed


class AptArchiveReader:
    """Where an archive is, and how to read its suites and Packages indexes."""

    def __init__(
        self,
        *,
        location: str,
        suites: dict[str, str] | None = None,
        gpg_key: str | None = None,
        gpg_home: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.location = location
        self.suites = dict(suites or {})
        self.gpg_key = gpg_key
        self.gpg_home = gpg_home
        self.timeout = timeout
        self._is_http = location.startswith(("http://", "https://"))
        if self._is_http:
            self._base_url = location.rstrip("/") + "/"
            self._session = requests.Session()
            self._root = None
        else:
            path = location.removeprefix("file://")
            self._root = Path(path)

    @property
    def can_write(self) -> bool:
        return not self._is_http

    @overload
    def _read(self, relative: str, *, required: Literal[True] = True) -> bytes: ...

    @overload
    def _read(self, relative: str, *, required: bool) -> bytes | None: ...

    def _read(self, relative: str, *, required: bool = True) -> bytes | None:
        """A file under the archive root; None when absent and not ``required``."""
        if self._root is not None:
            path = apt_names.inside(self._root, relative)
            try:
                return path.read_bytes()
            except FileNotFoundError:
                if required:
                    raise SourceError(f"{path} does not exist") from None
                return None
            except OSError as exc:
                raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
        url = self._base_url + relative
        try:
            response = self._session.get(url, timeout=self.timeout)
        except requests.Timeout as exc:
            raise SourceError(f"{url} did not answer within {self.timeout:g} s") from exc
        except requests.RequestException as exc:
            raise SourceError(f"cannot fetch {url}: {exc.__class__.__name__}") from exc
        if response.status_code == 404 and not required:
            return None
        if response.status_code != 200:
            raise SourceError(f"{url} answered HTTP {response.status_code}")
        return response.content

    def _suite_name(self, codename: str) -> str:
        return apt_names.suite_name(self.suites.get(codename, f"{codename}-updates"))

    @overload
    def _load_suite(self, suite: str, *, required: Literal[True] = True) -> Suite: ...

    @overload
    def _load_suite(self, suite: str, *, required: bool) -> Suite | None: ...

    def _load_suite(self, suite: str, *, required: bool = True) -> Suite | None:
        apt_names.suite_name(suite)
        data = self._read(f"dists/{suite}/Release", required=required)
        if data is None:
            return None
        try:
            release = deb822.Release(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise SourceError(f"dists/{suite}/Release is not a readable Release file") from exc
        listed = listed_files(release)
        for name in listed:
            apt_names.listed_name(name, where=f"dists/{suite}/Release")
        return Suite(name=suite, release=release, listed=listed)

    def _read_index(self, suite: Suite, component: str, arch: str) -> tuple[str, bytes] | None:
        """The best available Packages index of one component and architecture.

        When the Release lists some of its variants only those are read, as apt does: a
        file the Release does not vouch for is not trusted.
        """
        index_dir = f"{component}/binary-{arch}"
        variants = [v for v in PACKAGES_VARIANTS if f"{index_dir}/{v}" in suite.listed]
        by_hash = suite.release.get("Acquire-By-Hash", "").strip().lower() == "yes"
        for variant in variants or PACKAGES_VARIANTS:
            relative = f"{index_dir}/{variant}"
            name = f"dists/{suite.name}/{relative}"
            data = None
            listed_here = suite.listed.get(relative)
            if by_hash and listed_here is not None:
                # As apt does: the content this Release vouches for, by its hash, which a
                # writer replacing the index by name does not touch.
                field_name = next(
                    (f for f in reversed(HASH_FIELDS) if f in listed_here.hashes), None
                )
                if field_name is not None:
                    digest = listed_here.hashes[field_name]
                    data = self._read(
                        f"dists/{suite.name}/{index_dir}/by-hash/{field_name}/{digest}",
                        required=False,
                    )
            if data is None:
                data = self._read(name, required=False)
            if data is None:
                continue
            listed = suite.listed.get(relative)
            if listed is not None:
                listed.check(name, data)
            try:
                return variant, decompress(variant, data)
            except (OSError, EOFError, lzma.LZMAError) as exc:
                raise SourceError(f"{name} cannot be decompressed: {exc}") from exc
        return None

    def _paragraphs(self, suite: Suite) -> Iterator[tuple[str, str, deb822.Packages]]:
        """(component, architecture, stanza) of every index the suite lists."""
        for component, arch in suite.index_dirs:
            found = self._read_index(suite, component, arch)
            if found is None:
                continue
            _, content = found
            text = content.decode("utf-8", "replace")
            for paragraph in deb822.Packages.iter_paragraphs(io.StringIO(text), use_apt_pkg=False):
                if "Package" in paragraph:
                    yield component, arch, paragraph
