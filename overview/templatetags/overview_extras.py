"""Template filters of the public pages: the words of overview.pages.wording. They format
what the view read and never query."""

from __future__ import annotations

from django import template
from django.core.exceptions import ObjectDoesNotExist

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
):
    register.filter(_name, getattr(wording, _name))


@register.filter
def assessment_of(publication: Publication) -> Assessment | None:
    """The publication's assessment, or None (the view prefetched it: never a query)."""
    try:
        return publication.assessment
    except ObjectDoesNotExist:
        return None
