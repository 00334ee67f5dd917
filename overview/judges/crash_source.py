"""The configured crash source, built from settings: the controller asks here and nowhere
else. The local source judges the reports held here by Ubuntu's rule, so the choice sits
with the judges, above the evidence it reads."""

from __future__ import annotations

from django.conf import settings

from overview.evidence.sources import simulated_crash_feed
from overview.evidence.sources.base import CrashSource
from overview.judges.local import LocalCrashSource


def crash_source(name: str | None = None) -> CrashSource:
    name = name or settings.PHASING_CRASH_SOURCE
    if name == "simulator":
        return LocalCrashSource(feed=simulated_crash_feed())
    if name == "local":
        return LocalCrashSource(feed=None)
    if name == "intake":
        from overview.evidence.sources.intake import IntakeFeed

        return LocalCrashSource(feed=IntakeFeed())
    if name == "errortracker":
        from overview.evidence.sources.errortracker import (
            ErrorTrackerSource,
            release_names_from_versions,
        )
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
