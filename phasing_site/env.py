"""Strict readers for environment variables: a malformed value stops start-up loudly."""

from __future__ import annotations

import os
from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":  # an empty line of .env.example means "not set"
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), not {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, not {value}")
    return value


def env_float(
    name: str,
    default: float,
    *,
    above: float | None = None,
    at_least: float | None = None,
    below: float | None = None,
) -> float:
    """A number strictly between `above` and `below` when they are given (or from
    `at_least` on, that bound included)."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, not {raw!r}") from exc
    low_ok = (above is None or value > above) and (at_least is None or value >= at_least)
    if value != value or not low_ok or (below is not None and value >= below):
        bounds = [
            f"{words} {bound}"
            for words, bound in (("at least", at_least), ("above", above), ("below", below))
            if bound is not None
        ]
        raise ImproperlyConfigured(
            f"{name} must be {' and '.join(bounds) or 'a number'}, not {raw}"
        )
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_pairs(name: str) -> dict[str, str]:
    """ "a=x, b=y" as {"a": "x", "b": "y"}; an item without "=" is a configuration error."""
    pairs = {}
    for item in env_list(name, []):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ImproperlyConfigured(f"{name}: {item!r} is not name=value")
        pairs[key.strip()] = value.strip()
    return pairs


def env_seconds(name: str, default: timedelta) -> timedelta:
    return timedelta(seconds=env_int(name, int(default.total_seconds()), minimum=1))
