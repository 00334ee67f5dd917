"""Crash sources: the simulated crash stream, the error tracker's API, and the records they
share. Which one the controller asks is overview.judges.crash_source."""

from __future__ import annotations

from functools import cache

from overview.evidence.sources.simulator import SimulatedCrashFeed
from packages.sources import simulated_archive
from packages.sources.simulator import Simulator


@cache
def _crash_feed_of(world: Simulator) -> SimulatedCrashFeed:
    return SimulatedCrashFeed(world)


def simulated_crash_feed() -> SimulatedCrashFeed:
    """The crash stream of the configured simulated archive (one per world, so its caches
    of drawn hours last as long as the world does)."""
    return _crash_feed_of(simulated_archive())
