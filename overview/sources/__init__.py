"""The configured sources, built from settings. The controller asks here and nowhere else."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from overview.sources.base import CrashSource, PublicationSource


@cache
def simulated_archive():
    from overview.sources.simulator import Simulator

    return Simulator(
        seed=settings.PHASING_SIMULATOR_SEED,
        packages=settings.PHASING_SIMULATOR_PACKAGES,
        mean_days_between_updates=settings.PHASING_SIMULATOR_MEAN_DAYS,
    )


def publication_source(name: str | None = None) -> PublicationSource:
    name = name or settings.PHASING_PUBLICATION_SOURCE
    if name == "simulator":
        return simulated_archive()
    if name == "launchpad":
        from overview.sources.launchpad import LaunchpadSource

        return LaunchpadSource(
            api_root=settings.PHASING_LAUNCHPAD_API_ROOT,
            distribution=settings.PHASING_LAUNCHPAD_DISTRIBUTION,
            consumer_key=settings.PHASING_LAUNCHPAD_CONSUMER_KEY,
            token=settings.PHASING_LAUNCHPAD_TOKEN,
            token_secret=settings.PHASING_LAUNCHPAD_TOKEN_SECRET,
            timeout=settings.PHASING_HTTP_TIMEOUT,
        )
    if name == "apt":
        from overview.sources.apt_archive import AptArchiveSource

        return AptArchiveSource(
            location=settings.PHASING_APT_ARCHIVE,
            gpg_key=settings.PHASING_APT_GPG_KEY or None,
            gpg_home=settings.PHASING_APT_GPG_HOME or None,
            timeout=settings.PHASING_HTTP_TIMEOUT,
        )
    raise ValueError(f"unknown publication source {name!r}")


def crash_source(name: str | None = None) -> CrashSource:
    name = name or settings.PHASING_CRASH_SOURCE
    if name == "simulator":
        from overview.sources.local import LocalCrashSource

        return LocalCrashSource(feed=simulated_archive())
    if name == "local":
        from overview.sources.local import LocalCrashSource

        return LocalCrashSource(feed=None)
    if name == "errortracker":
        from overview.sources.errortracker import ErrorTrackerSource, release_names_from_versions
        from packages.models import Release

        return ErrorTrackerSource(
            api_root=settings.PHASING_ERRORTRACKER_API_ROOT,
            timeout=settings.PHASING_HTTP_TIMEOUT,
            exclude_proposed=settings.PHASING_EXCLUDE_PROPOSED,
            release_names=release_names_from_versions(
                dict(Release.objects.values_list("codename", "version"))
            ),
        )
    raise ValueError(f"unknown crash source {name!r}")
