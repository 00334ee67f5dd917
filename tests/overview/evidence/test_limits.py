"""The hourly limit of requests per machine."""

from __future__ import annotations

from datetime import timedelta

from django.core.cache import cache
from django.utils import timezone

from overview.evidence.limits import over_limit


def test_the_limit_counts_requests_per_key_and_clock_hour():
    cache.clear()
    now = timezone.now().replace(minute=10)
    assert [over_limit("t", "k", limit=2, now=now) for _ in range(3)] == [False, False, True]
    assert not over_limit("t", "other", limit=2, now=now)
    assert not over_limit("t", "k", limit=2, now=now + timedelta(hours=1))
    cache.clear()
