"""The history page's versions, a row each, written in Python as its events are
(packages_extras.event_rows): thirty rows of nine cells cost more in template lookups
and tags than every query of the page.

The markup is the one templates/overview/history.html had in its loop; each value is
escaped by format_html.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.template.defaultfilters import floatformat
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from overview.models import Assessment
from overview.pages.tables import group_note
from overview.pages.wording import share_line, utc_time, verdict_label
from overview.templatetags.fleet_extras import fleet_line
from packages import links
from packages.domain import charts
from packages.domain.dependencies import Group
from packages.models import Publication
from packages.models.labels import label_of

_UPDATE_LINK_TITLE = "This update's page: its evidence, events and actions"
_MUTED_DASH = mark_safe('<span class="muted">—</span>')


def _version_cell(publication: Publication, name: str, group: Group | None) -> SafeString:
    version = publication.version
    if publication.is_phased:
        cell = format_html(
            '<a href="{}" class="update-link" title="{}">{}</a> ',
            publication.get_update_url(),
            _UPDATE_LINK_TITLE,
            version,
        )
        launchpad = links.version_url(name, version)
        if launchpad:
            cell += format_html("<small>({})</small>", links.anchor(launchpad, "Launchpad"))
    else:
        cell = links.anchor(links.version_url(name, version), version)
    changes = links.changes_url(name, version)
    if changes:
        cell += format_html(
            " <small>({})</small>",
            links.anchor(changes, ".changes", title="The upload's .changes file"),
        )
    if publication.previous_version:
        cell += format_html(
            '<br><span class="muted">after {}</span>',
            links.anchor(
                links.version_url(name, publication.previous_version),
                publication.previous_version,
            ),
        )
    bugs = publication.closed_bugs
    if bugs:
        cell += format_html(
            '<br><small class="bugs">{}</small>',
            links.bugs_html(bugs if isinstance(bugs, list | tuple) else ()),
        )
    people = links.people_html(
        uploader=publication.uploader, signer=publication.signer, sponsor=publication.sponsor
    )
    if people:
        cell += format_html('<br><span class="muted people">{}</span>', people)
    if group is not None:
        cell += group_note(group)
    return cell


def _phased_cell(publication: Publication) -> SafeString:
    if publication.is_phased:
        # charts.percentage_bar writes only a clamped integer into its markup.
        cell = mark_safe(charts.percentage_bar(publication.phased_update_percentage))  # noqa: S308
    else:
        cell = mark_safe('<span class="muted">not phased</span>')
    for note in publication.source_notes():
        cell += format_html('<br><small class="source-note">{}</small>', note)
    return cell


def _state_cell(publication: Publication) -> SafeString:
    if not publication.is_phased:
        return _MUTED_DASH
    cell = format_html(
        '<span class="state state-{}">{}</span>',
        publication.state,
        label_of(publication, "state"),
    )
    if publication.hold_reason == "dependency" and publication.is_active:
        cell += format_html('<br><small class="hold">{}</small>', publication.hold_words)
    return cell


def _verdict_cell(publication: Publication) -> SafeString:
    try:
        assessment: Assessment | None = publication.assessment
    except Assessment.DoesNotExist:
        assessment = None
    if assessment is None:
        cell = _MUTED_DASH
    else:
        cell = format_html(
            '<span class="verdict verdict-{}">{}</span> <span class="muted">({})</span>'
            "<br><small>{}</small>",
            assessment.verdict,
            verdict_label(assessment),
            label_of(assessment, "judge"),
            assessment.evidence,
        )
        running = share_line(assessment)
        if running:
            events = assessment.crashes_new
            cell += format_html(
                '<br><small class="muted">{}; {} crash event{} on it</small>',
                running,
                events,
                "" if events == 1 else "s",
            )
        if assessment.averted:
            cell += format_html(
                "<br><small>The halt spared about {} crashes (estimate).</small>",
                floatformat(assessment.averted, 0),
            )
    fleet = fleet_line(publication)
    if fleet:
        cell += format_html('<br><small class="fleet">{}</small>', fleet)
    return cell


_ROW = (
    '\n    <tr id="publication-{}">\n      <td data-label="Release">{}</td>'
    '\n      <td data-label="Pocket">{}</td>'
    '\n      <td class="version" data-label="Version">{}</td>'
    '\n      <td data-label="Status">{}</td>'
    '\n      <td data-label="Published">{}</td>'
    '\n      <td data-label="Superseded">{}</td>'
    '\n      <td class="num" data-label="Phased now">{}</td>'
    '\n      <td data-label="Phasing">{}</td>'
    '\n      <td class="verdict" data-label="Verdict and evidence">{}</td>\n    </tr>'
)


def version_rows(grouped: Iterable[tuple[Publication, Group | None]], *, name: str) -> SafeString:
    """The rows of the versions table of source package `name`, each with its group."""
    rows = []
    for publication, group in grouped:
        status = label_of(publication, "status")
        superseded_by = publication.superseded_by
        rows.append(
            format_html(
                _ROW,
                publication.pk,
                publication.release.codename,
                label_of(publication, "pocket"),
                _version_cell(publication, name, group),
                format_html('{} <span class="muted">by {}</span>', status, superseded_by.version)
                if superseded_by is not None
                else status,
                utc_time(publication.date_published),
                utc_time(publication.date_superseded) or "—",
                _phased_cell(publication),
                _state_cell(publication),
                _verdict_cell(publication),
            )
        )
    return mark_safe("".join(rows))  # noqa: S308 (each row escaped by format_html)
