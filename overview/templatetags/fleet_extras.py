"""The fleet agents' measured uptake beside the estimate, on the publishing history."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.utils import timezone

from overview.evidence.fleet_reads import FleetCounts, fleet_counts
from packages.models import Publication

register = template.Library()


@register.simple_tag
def with_fleet_counts(publications: Iterable[Publication]) -> str:
    """Read the fleet counts of a page of publications in one query, so each row's
    `fleet_line` reads `publication.fleet_counts` (never a query of its own)."""
    rows = list(publications)
    counts = fleet_counts((p.pk for p in rows), now=timezone.now())
    for publication in rows:
        publication.fleet_counts = counts.get(publication.pk)  # type: ignore[attr-defined]
    return ""


@register.filter
def fleet_line(publication: Publication) -> str:
    """'measured: 2 of 20 reporting machines run it (10%), apt holds it back on 18'."""
    counts: FleetCounts | None = getattr(publication, "fleet_counts", None)
    if counts is None or not counts.machines:
        return ""
    plural = "s" if counts.machines != 1 else ""
    return (
        f"measured: {counts.on_new_version} of {counts.machines} reporting machine{plural} "
        f"run it ({round(100 * counts.uptake)}%), apt holds it back on {counts.held_back}"
    )
