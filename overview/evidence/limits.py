"""How many requests one machine may send an hour, counted in Django's cache (Redis in
production): the crash intake's and the fleet reports' limit."""

from __future__ import annotations

from datetime import datetime

from django.core.cache import cache


def over_limit(kind: str, key: str, *, limit: int, now: datetime) -> bool:
    """Count one request of `key` in the current hour; True when it is over `limit`.

    A fixed window per clock hour: two small cache operations, no database. A cache that
    does not answer lets the request through (the body limit still bounds the cost).
    """
    window = f"phasing:{kind}:{key}:{now:%Y%m%d%H}"
    try:
        if cache.add(window, 1, timeout=3600):
            return limit < 1
        return cache.incr(window) > limit
    except Exception:  # a cache outage must not refuse reports
        return False
