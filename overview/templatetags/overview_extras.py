"""Template filters of the public pages: the words of overview.pages.wording. They format
what the view read and never query."""

from __future__ import annotations

from django import template
from django.core.exceptions import ObjectDoesNotExist

from overview.demo_seeding import progress as demo_seeding_progress
from overview.models import Assessment
from overview.pages import wording
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
    "problem_counts",
):
    register.filter(_name, getattr(wording, _name))


@register.inclusion_tag("overview/_demo_seeding.html")
def demo_seeding() -> dict:
    """The banner while seed_demo replays the demo's week (read from the cache, no query)."""
    return {"seeding": demo_seeding_progress()}


@register.filter
def assessment_of(publication: Publication) -> Assessment | None:
    """The publication's assessment, or None (the view prefetched it: never a query)."""
    try:
        return publication.assessment
    except ObjectDoesNotExist:
        return None
