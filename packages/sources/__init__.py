"""The configured publication source, built from settings. Sync and write-back ask here."""

from __future__ import annotations

from functools import cache

from django.conf import settings

from packages.sources.base import PublicationSource
from packages.sources.simulator import Simulator


@cache
def simulated_archive() -> Simulator:
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
        from packages.sources.apt.relations import AptRelations
        from packages.sources.launchpad.source import LaunchpadSource

        packages_archive = None
        if settings.PHASING_LAUNCHPAD_PACKAGES_ARCHIVE:
            packages_archive = AptRelations(
                location=settings.PHASING_LAUNCHPAD_PACKAGES_ARCHIVE,
                architectures=settings.PHASING_LAUNCHPAD_PACKAGES_ARCHITECTURES,
                timeout=settings.PHASING_HTTP_TIMEOUT,
            )
        return LaunchpadSource(
            packages_archive=packages_archive,
            api_root=settings.PHASING_LAUNCHPAD_API_ROOT,
            distribution=settings.PHASING_LAUNCHPAD_DISTRIBUTION,
            consumer_key=settings.PHASING_LAUNCHPAD_CONSUMER_KEY,
            token=settings.PHASING_LAUNCHPAD_TOKEN,
            token_secret=settings.PHASING_LAUNCHPAD_TOKEN_SECRET,
            timeout=settings.PHASING_HTTP_TIMEOUT,
        )
    if name == "apt":
        from packages.sources.apt.archive import AptArchiveSource

        return AptArchiveSource(
            location=settings.PHASING_APT_ARCHIVE,
            suites=settings.PHASING_APT_SUITES,
            previous_suites=settings.PHASING_APT_PREVIOUS_SUITES,
            gpg_key=settings.PHASING_APT_GPG_KEY or None,
            gpg_home=settings.PHASING_APT_GPG_HOME or None,
            timeout=settings.PHASING_HTTP_TIMEOUT,
        )
    raise ValueError(f"unknown publication source {name!r}")
