"""A tick that costs what changed: an update's judgement is reused while its evidence is
the same.

The sequential judge (overview.judges.pipeline) is a pure function of what it reads for one
update: its percentages hour by hour, the crash events of its version and of the previous
one in its window, the machines seen on each version, the previous version's deficit, the
release's pooled belief about uptake, the test's settings. Those inputs are read for every
update each tick (a few queries however many updates); the arithmetic on them, the costly
part, runs only for the updates whose inputs differ from those of their last judgement.
The judgement is kept in the cache under a digest of its inputs, so a reused judgement is
by construction the one judging again would give (tests/overview/judges/test_reuse.py
checks it over generated histories). New crash hours, a person's action (its event
changes the percentages), a policy change or a step falling due change the inputs or the
decision taken from the judgement, which the controller takes afresh for every update.

PHASING_JUDGEMENT_REUSE turns it off; a cache that fails is a miss (the judge runs).
"""

from __future__ import annotations

import hashlib
import logging
import pickle
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

PREFIX = "judgement:v1"
# Long enough to outlive the ticks of an hour; an update judged again replaces its entry.
TIMEOUT = int(timedelta(hours=3).total_seconds())


def enabled() -> bool:
    return bool(getattr(settings, "PHASING_JUDGEMENT_REUSE", True))


def _window(
    found: Mapping[datetime, int], start: datetime, end: datetime
) -> tuple[tuple[datetime, int], ...]:
    """The hours of [start, end) with a count, and their counts: an hour left out is a 0."""
    return tuple(sorted((m, n) for m, n in found.items() if n and start <= m < end))


def input_key(
    publication_id: int,
    *,
    version_keys: tuple[tuple[int, int, str], ...],
    counts: Mapping[tuple[int, int, str], Mapping[datetime, int]],
    reports: Mapping[tuple[int, int, str], Mapping[datetime, int]],
    start: datetime,
    hours: int,
    inputs: tuple[Any, ...],
) -> str:
    """The cache key of a judgement: a digest of everything the judge reads for it.

    `version_keys`: (release, package, version) of the update and of its previous version,
    whose hourly counts in [start, start + hours) are read; `inputs`: the rest (settings,
    percentages, sightings, deficit, the release's belief), each picklable."""
    end = start + timedelta(hours=hours)
    windows = tuple(
        (
            key,
            _window(counts.get(key, {}), start, end),
            _window(reports.get(key, {}), start, end),
        )
        for key in version_keys
    )
    digest = hashlib.blake2b(
        pickle.dumps((start, hours, windows, inputs), protocol=5), digest_size=20
    ).hexdigest()
    return f"{PREFIX}:{publication_id}:{digest}"


def recall(keys: Mapping[int, str]) -> dict[int, Any]:
    """The stored judgements whose inputs are unchanged, by publication id."""
    if not keys or not enabled():
        return {}
    try:
        found = cache.get_many(list(keys.values()))
    except Exception:  # a cache that fails costs a judgement, never a tick
        log.warning("the judgement cache could not be read; judging every update", exc_info=True)
        return {}
    return {pk: found[key] for pk, key in keys.items() if key in found}


def remember(judged: Mapping[str, Any]) -> None:
    """Keep fresh judgements under their input keys."""
    if not judged or not enabled():
        return
    try:
        cache.set_many(dict(judged), timeout=TIMEOUT)
    except Exception:
        log.warning("the judgement cache could not be written", exc_info=True)
