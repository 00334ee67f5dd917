"""A scenario file's fields, checked one by one: each bad value is a ScenarioError saying
where it is and what was expected."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from debian.debian_support import Version


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with why (the key and the update named)."""


def _mapping(
    raw: Any, where: str, allowed: set[str], *, required: tuple[str, ...]
) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"{where} must be an object")
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ScenarioError(f"{where}: unknown key {unknown[0]!r}")
    missing = [name for name in required if name not in raw]
    if missing:
        raise ScenarioError(f"{where}: missing key {missing[0]!r}")
    return dict(raw)


def _number(
    value: Any,
    where: str,
    *,
    integer: bool = False,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ScenarioError(f"{where} must be a number")
    if integer and value != int(value):
        raise ScenarioError(f"{where} must be a whole number")
    if low is not None and (value < low or (low_open and value == low)):
        raise ScenarioError(f"{where} must be {'above' if low_open else 'at least'} {low:g}")
    if high is not None and value > high:
        raise ScenarioError(f"{where} must be at most {high:g}")
    return value


def _text(value: Any, where: str, pattern: re.Pattern[str]) -> str:
    if not isinstance(value, str) or not pattern.match(value):
        raise ScenarioError(f"{where} must match {pattern.pattern[2:-2]}")
    return value


def _version(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 200:
        raise ScenarioError(f"{where} must be a Debian version")
    try:
        Version(value)
    except ValueError as error:
        raise ScenarioError(f"{where} is not a Debian version: {error}") from error
    if any(c.isspace() for c in value) or not value[0].isdigit():
        raise ScenarioError(f"{where} is not a Debian version")
    return value


def _moment(value: Any, where: str) -> datetime:
    if not isinstance(value, str):
        raise ScenarioError(f"{where} must be an ISO 8601 date and time")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as error:
        raise ScenarioError(f"{where} must be an ISO 8601 date and time: {value!r}") from error
    if moment.tzinfo is None:
        raise ScenarioError(f"{where} needs a time zone (Z for UTC)")
    if moment.minute or moment.second or moment.microsecond:
        raise ScenarioError(f"{where} must be on the hour")
    return moment.astimezone(UTC)
