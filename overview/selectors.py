"""Reads shaped for pages."""

from __future__ import annotations

from dataclasses import dataclass

from packages.models import ACTIVE_STATES, Publication, Release


@dataclass
class ReleaseGroup:
    release: Release
    publications: list[Publication]


def overview_by_release() -> list[ReleaseGroup]:
    publications = (
        Publication.objects.filter(state__in=ACTIVE_STATES)
        .select_related("release", "source_package")
        .order_by("-release__version", "source_package__name", "version")
    )
    groups: dict[int, ReleaseGroup] = {}
    for publication in publications:
        group = groups.setdefault(publication.release_id, ReleaseGroup(publication.release, []))
        group.publications.append(publication)
    return list(groups.values())
