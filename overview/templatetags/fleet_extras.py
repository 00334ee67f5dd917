"""The fleet agents' measured uptake beside the estimate, on the publishing history (the
view reads the counts; the filter only words them)."""

from __future__ import annotations

from django import template

from overview.evidence.fleet_reads import FleetCounts
from packages.models import Publication

register = template.Library()


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
