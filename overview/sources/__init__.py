"""The configured crash source, built from settings. The controller asks here and nowhere else."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from overview.sources.base import CrashSource
from overview.sources.simulator import SimulatedCrashFeed
from packages.sources import simulated_archive
from packages.sources.simulator import Simulator


@cache
def _crash_feed_of(world: Simulator) -> SimulatedCrashFeed:
    return SimulatedCrashFeed(world)


def simulated_crash_feed() -> SimulatedCrashFeed:
    """The crash stream of the configured simulated archive (one per world, so its caches
    of drawn hours last as long as the world does)."""
    return _crash_feed_of(simulated_archive())


def crash_source(name: str | None = None) -> CrashSource:
    name = name or settings.PHASING_CRASH_SOURCE
    if name == "simulator":
        from overview.sources.local import LocalCrashSource

        return LocalCrashSource(feed=simulated_crash_feed())
    if name == "local":
        from overview.sources.local import LocalCrashSource

        return LocalCrashSource(feed=None)
    if name == "intake":
        from overview.sources.intake import IntakeFeed
        from overview.sources.local import LocalCrashSource

        return LocalCrashSource(feed=IntakeFeed())
    if name == "errortracker":
        from overview.sources.errortracker import ErrorTrackerSource, release_names_from_versions
        from overview.sources.local import LocalCrashSource
        from packages.models import Release

        return ErrorTrackerSource(
            api_root=settings.PHASING_ERRORTRACKER_API_ROOT,
            timeout=settings.PHASING_HTTP_TIMEOUT,
            exclude_proposed=settings.PHASING_EXCLUDE_PROPOSED,
            install_failures=settings.PHASING_INSTALL_FAILURES,
            release_names=release_names_from_versions(
                dict(Release.objects.values_list("codename", "version"))
            ),
            # Versions the tracker does not know are judged on the reports held here,
            # when the policy says so (Policy.unknown_version).
            fallback=LocalCrashSource(feed=None),
        )
    raise ValueError(f"unknown crash source {name!r}")
