"""Template filters of the public pages: the words of overview.wording, and the footer."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import prefetch_related_objects
from django.utils import timezone

from overview import wording
from overview.demo_seeding import progress as demo_seeding_progress
from overview.models import Assessment
from packages.models import Publication

register = template.Library()

for _name in (
    "duration_words",
    "age",
    "time_until",
    "about_duration",
    "utc_time",
    "outlook_text",
    "summary_words",
    "summary_holds",
    "verdict_label",
    "share_line",
    "averted_words",
):
    register.filter(_name, getattr(wording, _name))


@register.inclusion_tag("overview/_source_syncs.html", takes_context=True)
def source_syncs(context: template.Context) -> dict:
    """The footer: where the data comes from, and what is failing since when. One query
    per page, none when the page's view read it already (the overview shows it on top)."""
    status = context.get("service_status")
    if status is None:
        # Imported here to keep the module light.
        from overview.status import service_status

        status = service_status(now=timezone.now())
    return {"syncs": status.sources, "faults": status.faults}


@register.inclusion_tag("overview/_demo_seeding.html")
def demo_seeding() -> dict:
    """The banner while seed_demo replays the demo's week (read from the cache, no query)."""
    return {"seeding": demo_seeding_progress()}


@register.simple_tag
def with_assessments(publications: Iterable[Publication]) -> str:
    """Fetch the assessments of a page of publications in one query, so each row can read
    `publication.assessment` (for the publishing-history page, which the archive's app
    draws without knowing of verdicts)."""
    rows = list(publications)
    prefetch_related_objects(rows, "assessment")
    return ""


@register.filter
def assessment_of(publication: Publication) -> Assessment | None:
    """The publication's assessment, or None (never a query: see with_assessments)."""
    try:
        return publication.assessment
    except ObjectDoesNotExist:
        return None
