"""Formatting for the publishing-history page."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from packages import links
from packages.domain import charts
from packages.models import PhasingEvent, WriteBack
from packages.models.labels import label_of
from packages.public_names import public_name
from packages.selectors import ChartSeries, chart_end, chart_points

register = template.Library()
register.filter("public_name", public_name)


@register.simple_tag
def link_out(
    kind: str, *args: str, text: object = None, title: str = "", optional: bool = False
) -> SafeString:
    """A link out built from the configured template of `kind` (packages.links.BUILDERS),
    showing `text` (the last argument by default); plain text when there is no link, or
    nothing at all when the link is all there is to show (`optional`)."""
    url = links.BUILDERS[kind](*args)
    if optional and not url:
        return SafeString("")
    return links.anchor(url, args[-1] if text is None else text, title=title)


@register.simple_tag
def package_out_links(source: str) -> SafeString:
    return links.package_links_html(source)


@register.simple_tag
def upload_people_links(publication: object) -> SafeString:
    """Who made, signed and sponsored an upload, each linked to their page."""
    return links.people_html(
        uploader=getattr(publication, "uploader", None),
        signer=getattr(publication, "signer", None),
        sponsor=getattr(publication, "sponsor", None),
    )


@register.filter
def closed_bugs_links(bugs: object) -> SafeString:
    return links.bugs_html(bugs if isinstance(bugs, list | tuple) else ())


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
    # charts.percentage_chart escapes every piece of text it writes; the legend writes none
    # of the data.
    return mark_safe(
        charts.percentage_chart(
            points,
            end=chart_end(series, now),
            chart_id=f"chart-{publication.pk}",
            title=f"{publication.source_package.name} {publication.version} "
            f"({publication.release.codename}): percentage over time",
            description=description,
        )
        + charts.legend(points)
    )


@register.filter
def percentage_bar(percentage: int) -> SafeString:
    # charts.percentage_bar writes only a clamped integer into its markup.
    return mark_safe(charts.percentage_bar(percentage))


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _write_back_cell(event: PhasingEvent) -> SafeString:
    title = format_html(' title="{}"', event.write_back_detail) if event.write_back_detail else ""
    if not event.write_back:
        words: SafeString | str = "—"
    elif event.write_back in (WriteBack.DRY_RUN, WriteBack.FAILED, WriteBack.DENIED):
        words = format_html(
            "{}<br><small>{}</small>", label_of(event, "write_back"), event.write_back_detail
        )
    else:
        words = label_of(event, "write_back")
    return format_html(
        '<td class="write-back write-back-{}" data-label="At the source"{}>{}</td>',
        event.write_back or "none",
        title,
        words,
    )


@register.simple_tag
def event_rows(events: Iterable[PhasingEvent]) -> SafeString:
    """The rows of the events table, each built once in Python: a page of 50 events with
    nine cells each cost more in template lookups than all its queries."""
    return format_html_join(
        "\n",
        # data-label: a phone shows each row as a card, each cell with its column's name.
        '<tr id="event-{}" class="event-{}"><td class="time" data-label="Time">{}</td>'
        '<td data-label="Release">{}</td><td class="version" data-label="Version">{}</td>'
        '<td data-label="Change">{}</td><td data-label="From → to">{}</td>'
        '<td data-label="State">{}</td><td class="actor" data-label="Actor">{}</td>'
        '<td class="reason" data-label="Reason">{}</td>{}</tr>',
        (
            (
                event.pk,
                event.kind,
                _utc(event.created_at),
                event.publication.release.codename,
                event.publication.version,
                label_of(event, "kind"),
                event.percentage_change,
                event.state_change,
                event.actor_name,
                event.reason or "—",
                _write_back_cell(event),
            )
            for event in events
        ),
    )
