"""Template filters of the public pages: the words of overview.wording, and the footer."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.core.exceptions import ObjectDoesNotExist
from django.db.models import prefetch_related_objects

from overview import wording
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
    "verdict_label",
    "share_line",
    "averted_words",
):
    register.filter(_name, getattr(wording, _name))


@register.inclusion_tag("overview/_source_syncs.html")
def source_syncs() -> dict:
    # One query per page whatever it shows; imported here to keep the module light.
    from overview.selectors import source_sync_rows

    return {"syncs": source_sync_rows()}


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
