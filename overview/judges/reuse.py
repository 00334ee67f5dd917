"""A tick that costs what changed: an update whose evidence has not changed since its last
judgement is neither read nor judged again.

The sequential judge (overview.judges.pipeline) is a pure function of what it reads for one
update: its percentages hour by hour, the crash events of its version and of the previous
one in its window, the machines seen on each version, the previous version's deficit, the
release's pooled belief about uptake, the test's settings. Each tick reads, in a few
grouped queries, a stamp of each update's evidence (overview.judges.stamps: a short row per
update, however many hours it has); a judgement is kept in the cache under a digest of its
stamp, with the sightings and deficit it read and the belief it was judged under. An
update whose stamp finds a kept judgement is not read: what its sightings and deficit
measured counts in its release's belief, and its judgement stands if that belief is the one it was judged
under (else it is read and judged again). So a reused judgement is by construction the one
judging again would give (tests/overview/judges/test_reuse.py checks it over generated
histories). A person's action (its event), new crash hours, new sightings or fleet
reports, the hour turning change the stamp; a policy change or a step falling due change
the decision taken from the judgement, which the controller takes afresh for every update.

The dependents' judgement of a library (overview.judges.dependents) is kept the same way,
under a digest of everything it is a function of (its percentages, the machines the fleet
saw on each version, its dependents' crashes hour by hour, the test's settings).

PHASING_JUDGEMENT_REUSE turns it off; a cache that fails is a miss (the update is read).
"""

from __future__ import annotations

import hashlib
import logging
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

# Raised whenever the judge's arithmetic changes, so that no judgement kept by the code
# before a deploy stands for the code after it (v3: the margin for an uptake of another
# shape, the anchored test's ignorers' allowance).
PREFIX = "judgement:v3"
# Long enough to outlive the ticks of an hour; an update judged again replaces its entry.
TIMEOUT = int(timedelta(hours=3).total_seconds())


def enabled() -> bool:
    return bool(getattr(settings, "PHASING_JUDGEMENT_REUSE", True))


@dataclass(frozen=True)
class Kept:
    """What a judgement kept for the next tick: the update's part of its release's belief
    about uptake (what its sightings and deficit measured), the belief it was judged
    under, and the judgement."""

    part: Any  # release_uptake.Part | None
    belief: Any  # exposure.Uptake
    judgement: Any  # pipeline.Judgement


def stamp_key(publication_id: int, stamp: tuple[Any, ...]) -> str:
    """The cache key of an update's judgement: a digest of its evidence stamp
    (overview.judges.stamps) and of the judge's settings, each picklable."""
    digest = hashlib.blake2b(pickle.dumps(stamp, protocol=5), digest_size=20).hexdigest()
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
