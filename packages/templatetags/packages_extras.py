"""Formatting for the publishing-history page."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils.safestring import SafeString, mark_safe

from packages import charts
from packages.selectors import ChartSeries, chart_end, chart_points

register = template.Library()


@register.simple_tag
def history_chart(series: ChartSeries, now: datetime) -> SafeString:
    publication = series.publication
    points = chart_points(series)
    halts = sum(1 for p in points if p.kind == charts.HALT)
    description = (
        f"Phased-update percentage of {publication.source_package.name} {publication.version} "
        f"in {publication.release.codename} over time: {len(series.events)} events, "
        f"now {publication.phased_update_percentage}% ({publication.get_state_display().lower()})"
        + (f", halted {halts} time{'s' if halts != 1 else ''}." if halts else ".")
    )
    # charts.percentage_chart escapes every piece of text it writes.
    return mark_safe(
        charts.percentage_chart(
            points,
            end=chart_end(series, now),
            chart_id=f"chart-{publication.pk}",
            title=f"{publication.source_package.name} {publication.version} "
            f"({publication.release.codename}): percentage over time",
            description=description,
        )
    )


@register.filter
def percentage_bar(percentage: int) -> SafeString:
    # charts.percentage_bar writes only a clamped integer into its markup.
    return mark_safe(charts.percentage_bar(percentage))
