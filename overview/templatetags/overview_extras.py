"""Template filters of the public pages: the words of overview.wording, and the footer."""

from __future__ import annotations

from django import template

from overview import wording

register = template.Library()

for _name in (
    "duration_words",
    "age",
    "time_until",
    "about_duration",
    "utc_time",
    "outlook_text",
    "summary_words",
):
    register.filter(_name, getattr(wording, _name))


@register.inclusion_tag("overview/_source_syncs.html")
def source_syncs() -> dict:
    # One query per page whatever it shows; imported here to keep the module light.
    from overview.selectors import source_sync_rows

    return {"syncs": source_sync_rows()}
