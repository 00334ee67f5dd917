"""Names read from a Release file, checked before they become paths.

A Release's ``Components`` and ``Architectures`` and the file names it lists are used as
directories and files under the suite: a component ``../../other`` would read and
rewrite another archive's indexes, and a listed ``../../../etc/passwd`` would have its
hashes published. So each name is checked against Debian's rules, and every path is
resolved and must stay under the archive root. A suite that breaks either is refused
whole, with the offending name in the error. Plain Python, no Django.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from packages.sources.base import SourceError

# A component: letters, digits and . + _ - (dak and reprepro), one optional level of
# "updates/main" as old security archives have; never "." or ".." (a name starts with an
# alphanumeric).
COMPONENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]*(/[A-Za-z0-9][A-Za-z0-9.+_-]*)?")
# A Debian architecture (dpkg-architecture -L): lower case letters, digits and -.
ARCHITECTURE = re.compile(r"[a-z0-9][a-z0-9-]*")
# A suite directory under dists/: noble-updates, stable/updates.
SUITE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_~-]*(/[A-Za-z0-9][A-Za-z0-9.+_~-]*)?")
# A file a Release lists: relative, each part a plain name.
_LISTED_PART = re.compile(r"[A-Za-z0-9_+.~-]+")
NAME_MAX_LENGTH = 100


def _check(value: str, pattern: re.Pattern[str], what: str, where: str) -> str:
    if len(value) > NAME_MAX_LENGTH or not pattern.fullmatch(value):
        raise SourceError(f"{where}: {value[:NAME_MAX_LENGTH]!r} is not a Debian {what} name")
    return value


def suite_name(value: str) -> str:
    return _check(value, SUITE, "suite", "the configured suite")


def component_name(value: str, *, where: str) -> str:
    return _check(value, COMPONENT, "component", where)


def architecture_name(value: str, *, where: str) -> str:
    return _check(value, ARCHITECTURE, "architecture", where)


def listed_name(value: str, *, where: str) -> str:
    """A file name as a Release lists it: relative, without . or .. parts."""
    parts = PurePosixPath(value).parts
    if (
        not value
        or value.startswith("/")
        or len(value) > 4 * NAME_MAX_LENGTH
        or any(part in (".", "..") or not _LISTED_PART.fullmatch(part) for part in parts)
    ):
        raise SourceError(f"{where}: lists {value[:200]!r}, which is not a file of the suite")
    return value


def inside(root: Path, relative: str | Path) -> Path:
    """``root / relative`` under the resolved root: refused unless, with every symbolic
    link followed, it stays there. The path itself is returned unresolved, so a file that
    is a link is replaced as a link, as before."""
    base = Path(root).resolve()
    path = base / relative
    if not path.resolve().is_relative_to(base):
        raise SourceError(f"{relative} leads outside the archive at {base}")
    return path
