"""Filters of the update page: they format and look up, never query."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def percent_of(share: float) -> str:
    """0.214 → '21%': a share of machines, to the whole percent."""
    return f"{round(100 * share)}%"


@register.filter
def get_reports(reports: dict[int, list[object]], bucket_id: int) -> list[object]:
    return reports.get(bucket_id, [])
