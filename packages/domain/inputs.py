"""What a name, a version, a text, a link or a moment must be before it is kept.

Everything that comes from outside (a publication or crash source, an overrides file, a
form, the API) is checked here at the door, so one bad record is named, logged and
skipped instead of breaking a page (a package named with a `/` cannot be linked), a
batch (PostgreSQL refuses a NUL byte, or a value longer than its column) or a tick.

Plain Python (python-debian for versions), no Django: each check returns why a value
is refused, or "" when it is fine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from debian.debian_support import Version

# Debian policy 5.6.1: at least two characters, lower case letters, digits, + - and .,
# starting with an alphanumeric. Binary package names follow the same rule.
SOURCE_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
# Release codenames are slugs in URLs: noble, jammy, trusty-backports is not one.
CODENAME = re.compile(r"[a-z0-9][a-z0-9-]*")
# As wide as the columns that keep them (SourcePackage.name, Publication.version).
NAME_MAX_LENGTH = 200
VERSION_MAX_LENGTH = 200
CODENAME_MAX_LENGTH = 40
LINK_SCHEMES = ("http", "https")
# A record dated further ahead than this is not from a clock that drifted: it is wrong.
FUTURE_SLACK = timedelta(days=1)
EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)
# What a link never holds: whitespace (Unicode's, as str.isspace) or a control character.
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f]")


def _encodable(text: str) -> bool:
    """Whether the text can be written as UTF-8: Python's JSON accepts a lone surrogate
    ("\\ud800") that no database driver can send."""
    if text.isascii():  # the usual case, answered without encoding
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def text_problem(value: object, *, max_length: int | None = None, required: bool = False) -> str:
    """A string without NUL bytes that fits its column."""
    if not isinstance(value, str):
        return "is not text"
    if required and not value.strip():
        return "is empty"
    if "\x00" in value:
        return "contains a NUL byte"
    if not _encodable(value):
        return "contains a lone surrogate (not valid Unicode)"
    if max_length is not None and len(value) > max_length:
        return f"is longer than {max_length} characters"
    return ""


def _pattern_problem(value: object, pattern: re.Pattern[str], max_length: int, what: str) -> str:
    problem = text_problem(value, max_length=max_length, required=True)
    if problem:
        return problem
    assert isinstance(value, str)
    return "" if pattern.fullmatch(value) else f"is not {what} ({pattern.pattern})"


def source_name_problem(value: object) -> str:
    """A source (or binary) package name as Debian policy allows it."""
    return _pattern_problem(value, SOURCE_NAME, NAME_MAX_LENGTH, "a Debian package name")


def version_problem(value: object, *, blank: bool = False) -> str:
    """A Debian version (epoch:upstream-revision), as python-debian parses it."""
    if blank and value == "":
        return ""
    problem = text_problem(value, max_length=VERSION_MAX_LENGTH, required=True)
    if problem:
        return problem
    assert isinstance(value, str)
    try:
        Version(value)
    except ValueError:
        return "is not a Debian version"
    return ""


def codename_problem(value: object) -> str:
    return _pattern_problem(value, CODENAME, CODENAME_MAX_LENGTH, "a release codename")


def link_problem(value: object, *, max_length: int = 1000) -> str:
    """Empty, or an http(s) URL that fits its column: nothing else is ever a link."""
    if value == "":
        return ""
    problem = text_problem(value, max_length=max_length)
    if problem:
        return problem
    assert isinstance(value, str)
    parts = urlsplit(value)
    if parts.scheme.lower() not in LINK_SCHEMES or not parts.netloc:
        return "is not an http(s) URL"
    if _SPACE_OR_CONTROL.search(value):
        return "contains spaces or control characters"
    return ""


def is_safe_link(value: object) -> bool:
    return bool(value) and not link_problem(value)


def moment_problem(value: object, *, now: datetime) -> str:
    """An aware datetime that could have happened: not before 1990, not after tomorrow."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        return "is not an aware datetime"
    if value < EARLIEST or value > now + FUTURE_SLACK:
        return f"is an impossible date ({value:%Y-%m-%d})"
    return ""


def count_problem(value: object, *, maximum: int = 2**31 - 1) -> str:
    """A whole number a positive integer column holds."""
    if not isinstance(value, int) or isinstance(value, bool):
        return "is not a whole number"
    if not 0 <= value <= maximum:
        return f"is out of range ({value})"
    return ""


# One encoder for every check: json.dumps builds one per call when given an option.
_JSON = json.JSONEncoder(ensure_ascii=False)


def json_problem(value: object) -> str:
    """A mapping that PostgreSQL's jsonb can store (no NUL byte anywhere in it)."""
    return json_text(value)[0]


def json_text(value: object) -> tuple[str, str]:
    """Why a mapping cannot be stored as jsonb (json_problem), else "" and its JSON text,
    written once for the check and the store alike (a bulk ingest writes every report's)."""
    if not isinstance(value, Mapping):
        return "is not a mapping", ""
    try:
        # Control characters, NUL included, are escaped either way; non-ASCII is kept.
        text = _JSON.encode(value)
    except (TypeError, ValueError):
        return "is not plain JSON", ""
    if "\\u0000" in text:
        return "contains a NUL byte", ""
    if not _encodable(text):
        return "contains a lone surrogate (not valid Unicode)", ""
    return "", text


def first_problem(checks: Mapping[str, str]) -> str:
    """'version is not a Debian version': the first field that failed, named."""
    for name, problem in checks.items():
        if problem:
            return f"{name} {problem}"
    return ""
