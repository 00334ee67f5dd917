"""django-tables2 tables of the public pages: sortable columns, export, paginated."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

import django_tables2 as tables
from django.core.paginator import Paginator
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django_tables2.export import TableExport
from tablib import Dataset

from overview.models import Assessment
from overview.pages import outlook as outlook_of
from overview.pages import selectors
from overview.pages.selectors import PublicationInPhasing
from overview.pages.wording import age, outlook_lines, share_line, utc_time, verdict_label
from packages import links
from packages.domain import charts
from packages.domain import policy as policy_rules
from packages.domain.dependencies import Group
from packages.models import Publication, Release
from packages.selectors import PolicyMap

PER_PAGE = 25
MAX_PER_PAGE = 100


class CappedPaginator(Paginator):
    """A paginator that will not be asked for a million rows at once through ?per_page=,
    and that takes the number of rows when the caller counted them already."""

    def __init__(self, object_list, per_page, *args, count: int | None = None, **kwargs) -> None:
        super().__init__(object_list, min(max(int(per_page), 1), MAX_PER_PAGE), *args, **kwargs)
        if count is not None:
            self.count = count  # fills the cached_property: no COUNT query


PAGINATE = {"per_page": PER_PAGE, "paginator_class": CappedPaginator}

# What a spreadsheet reads as the start of a formula (OWASP, "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> object:
    """A text cell that a spreadsheet would run is written as text (a leading quote)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return f"'{value}"
    return value


class SafeTableExport(TableExport):
    """django-tables2's export, with no cell a spreadsheet would run as a formula: names,
    functions and reasons come from sources and people."""

    def table_to_dataset(self, table, exclude_columns, dataset_kwargs=None):
        dataset = super().table_to_dataset(table, exclude_columns, dataset_kwargs)
        if self.format in (self.CSV, self.TSV):
            rows = [tuple(spreadsheet_safe(cell) for cell in row) for row in dataset]
            dataset = Dataset(*rows, headers=dataset.headers, title=dataset.title)
        return dataset


def _short_time(moment: datetime) -> str:
    """'3 Dec 14:05 UTC' (Django's "j M H:i T", without its formatter's cost per cell): a
    time read on a page people keep open across time zones says its zone."""
    return f"{moment.day} {moment:%b %H:%M %Z}"


_NONE = mark_safe('<span class="muted">none</span>')
_DASH = mark_safe('<span class="muted">—</span>')


@dataclass(frozen=True)
class OverviewRow:
    """One row of the overview's body: its release heading when a group starts, and its
    cells as (td attributes, column header, HTML)."""

    group: Release | None
    cells: list[tuple[str, str, str]]


def _line(html: SafeString) -> SafeString:
    """A secondary line of a cell, or nothing when there is nothing to say."""
    return format_html("<br>{}", html) if html else html


def _problems_cell(problems: list[selectors.ProblemView]) -> str:
    if not problems:
        return _NONE
    items = format_html_join(
        "\n",
        "  <li{}>{}{}{}</li>",
        (
            (
                mark_safe(' class="overridden"') if view.overridden else "",
                format_html('<a href="{}">{}</a>', view.url, view.title)
                if view.url
                else view.title,
                mark_safe(' <span class="tag">overridden</span>') if view.overridden else "",
                format_html(
                    ' <a class="out" href="{}" rel="noopener" title="{}">↗</a>',
                    view.tracker_url,
                    "This problem in the error tracker",
                )
                if view.tracker_url
                else "",
            )
            for view in problems
        ),
    )
    return format_html(
        '<span class="count">{}</span>\n<ul class="problem-list">\n{}\n</ul>',
        len(problems),
        items,
    )


def _verdict_cell(assessment: Assessment | None) -> str:
    if assessment is None:
        return mark_safe('<span class="muted">not yet judged</span>')
    return format_html(
        '<span class="verdict verdict-{}">{}</span><br><small class="muted">{}</small>',
        assessment.verdict,
        verdict_label(assessment),
        assessment.evidence,
    )


class OverviewTable(tables.Table):
    """Publications in phasing. Rows come from selectors.active_publications()."""

    release = tables.Column(
        accessor="release__codename",
        order_by=("-release__version", "release__codename"),
        verbose_name="Release",
    )
    package = tables.Column(
        accessor="source_package__name", verbose_name="Source package", linkify=False
    )
    version = tables.Column(attrs={"td": {"class": "version"}})
    previous_version = tables.Column(
        verbose_name="Previous version", attrs={"td": {"class": "version"}}
    )
    date_published = tables.DateTimeColumn(verbose_name="Published")
    percentage = tables.Column(
        accessor="phased_update_percentage",
        verbose_name="Phased",
        attrs={"th": {"class": "num"}, "td": {"class": "num"}},
    )
    state = tables.Column()
    last_change = tables.Column(verbose_name="Last change")
    next = tables.Column(empty_values=(), orderable=False, verbose_name="What happens next")
    problems = tables.Column(
        accessor="problem_count", verbose_name="Problems", attrs={"td": {"class": "problems"}}
    )
    verdict = tables.Column(
        accessor="assessment__verdict", verbose_name="Verdict", attrs={"td": {"class": "verdict"}}
    )

    class Meta:
        model = Publication
        fields = ()
        sequence = (
            "release",
            "package",
            "version",
            "previous_version",
            "date_published",
            "percentage",
            "state",
            "last_change",
            "next",
            "problems",
            "verdict",
        )
        order_by = ("release", "package")
        template_name = "overview/_overview_table.html"
        empty_text = "No update matches these filters."
        attrs = {"class": "data overview"}

    caption = "Updates in phasing"

    def __init__(
        self,
        *args,
        policies: PolicyMap,
        now: datetime,
        groups: Mapping[int, Group] | None = None,
        **kwargs,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.policies = policies
        self.groups = groups or {}
        self.now = now
        self._outlooks: dict[int, outlook_of.Outlook] = {}

    @property
    def grouped(self) -> bool:
        """Rows are grouped under release headings while they are sorted by release."""
        order = list(self.order_by or ())
        return bool(order) and order[0].lstrip("-") == "release"

    def outlook(self, record: PublicationInPhasing) -> outlook_of.Outlook:
        if record.pk not in self._outlooks:
            self._outlooks[record.pk] = outlook_of.publication_outlook(
                record, rules=policy_rules.resolve_for(self.policies, record), now=self.now
            )
        return self._outlooks[record.pk]

    # The body is one template over rows built here (overview/_overview_table.html), not
    # django-tables2's render call per cell: that call (a signature inspection and a
    # template lookup per cell) was most of the page's time (bench/). Sorting, pagination
    # and export stay django-tables2's.
    def body(self) -> list[OverviewRow]:
        """The rows of the current page, each cell's HTML built once, in column order."""
        bound_rows = self.page.object_list if self.page is not None else self.rows
        records = [row.record for row in bound_rows]
        columns = [
            (column.name, column.attrs["td"].as_html(), column.header) for column in self.columns
        ]
        rows = []
        previous_release = None
        for record in records:
            group = None
            if self.grouped and record.release_id != previous_release:
                group, previous_release = record.release, record.release_id
            cells = self._cells(record)
            rows.append(
                OverviewRow(
                    group=group,
                    cells=[(attrs, header, cells[name]) for name, attrs, header in columns],
                )
            )
        return rows

    def _cells(self, record: PublicationInPhasing) -> dict[str, str]:
        release, package = record.release, record.source_package
        return {
            "release": format_html('<span title="{}">{}</span>', release.version, release.codename),
            "package": format_html(
                '<a href="{}?release={}">{}</a>{}{}',
                package.get_absolute_url(),
                release.codename,
                package.name,
                _line(links.package_links_html(package.name)),
                group_note(self.groups.get(record.pk)),
            ),
            "version": self._version_cell(record),
            "previous_version": links.anchor(
                links.version_url(package.name, record.previous_version),
                record.previous_version,
            )
            if record.previous_version
            else "—",
            "date_published": self._time_cell(record.date_published),
            "percentage": self._percentage_cell(record),
            "state": format_html(
                '<span class="state state-{}">{}</span>', record.state, record.get_state_display()
            ),
            "last_change": self._time_cell(record.last_change),
            "next": format_html_join(
                "",
                '<span class="next {}">{}</span>',
                (
                    ("next-first" if n == 0 else "muted", line)
                    for n, line in enumerate(outlook_lines(self.outlook(record)))
                ),
            ),
            "problems": _problems_cell(selectors.problem_views(record)),
            "verdict": _verdict_cell(getattr(record, "assessment", None)),
        }

    def _version_cell(self, record: PublicationInPhasing) -> SafeString:
        name, version = record.source_package.name, record.version
        cell = links.anchor(links.version_url(name, version), version)
        changes = links.changes_url(name, version)
        if changes:
            cell += format_html(
                ' <small><a class="out" href="{}" rel="noopener" title="{}">.changes</a></small>',
                changes,
                "The upload's .changes file",
            )
        bugs = links.bugs_html(record.closed_bugs)
        if bugs:
            cell += format_html('<br><small class="bugs">{}</small>', bugs)
        return cell

    def _percentage_cell(self, record: PublicationInPhasing) -> SafeString:
        # charts.percentage_bar writes only a clamped integer into its markup.
        bar = mark_safe(charts.percentage_bar(record.phased_update_percentage))
        notes = record.source_notes()  # fields of the row: no query
        running = share_line(getattr(record, "assessment", None))
        if running:
            bar += format_html('<br><small class="muted share">{}</small>', running)
        if not notes:
            return bar
        return bar + format_html_join(
            "", '<br><small class="source-note">{}</small>', ((note,) for note in notes)
        )

    def _time_cell(self, moment: datetime | None) -> str:
        if not moment:
            return _DASH
        return format_html(
            '<time datetime="{}" title="{}">{}</time> <span class="muted age">{}</span>',
            moment.isoformat(),
            utc_time(moment),
            _short_time(timezone.localtime(moment)),
            age(moment, self.now),
        )

    # Plain values for the CSV and JSON export.
    def value_release(self, record: PublicationInPhasing) -> str:
        return record.release.codename

    def value_package(self, record: PublicationInPhasing) -> str:
        return record.source_package.name

    def value_date_published(self, record: PublicationInPhasing) -> str:
        return record.date_published.isoformat()

    def value_last_change(self, value: datetime) -> str:
        return value.isoformat()

    def value_percentage(self, value: int) -> int:
        return value

    def value_state(self, record: PublicationInPhasing) -> str:
        return record.state

    def value_next(self, record: PublicationInPhasing) -> str:
        return "; ".join(outlook_lines(self.outlook(record)))

    def value_verdict(self, record: PublicationInPhasing) -> str:
        assessment = getattr(record, "assessment", None)
        return f"{assessment.verdict}: {assessment.evidence}" if assessment else ""

    def value_problems(self, record: PublicationInPhasing) -> str:
        return "; ".join(
            f"{view.title}{' (overridden)' if view.overridden else ''}"
            for view in selectors.problem_views(record)
        )


def group_note(group: Group | None) -> SafeString:
    """What an update in a dependent group needs, what needs it, and the share of machines
    that can take it with what it needs (the pages' footnote says why it is a product)."""
    if group is None:
        return SafeString("")
    lines = [*group.need_lines(), *group.needed_by_lines()]
    if group.needs:
        lines.append(
            f"with what it needs: {group.share_words}"
            + (" · its policy lets it phase alone" if group.alone else "")
        )
    return format_html(
        '<ul class="group-note">{}</ul>',
        format_html_join("", "<li>{}</li>", ((line,) for line in lines)),
    )


class BucketCountsTable(tables.Table):
    """Reports of one bucket per release, package and version: aggregates only."""

    release = tables.Column(accessor="release__codename", verbose_name="Release")
    package = tables.Column(accessor="source_package__name", verbose_name="Source package")
    version = tables.Column(attrs={"td": {"class": "version"}})
    reports = tables.Column(attrs={"th": {"class": "num"}, "td": {"class": "num"}})
    systems = tables.Column(attrs={"th": {"class": "num"}, "td": {"class": "num"}})
    first_reported = tables.Column(verbose_name="First reported")
    last_reported = tables.Column(verbose_name="Last reported")

    class Meta:
        template_name = "django_tables2/phasing_table.html"
        empty_text = "No crash reports are recorded for this problem."
        attrs = {"class": "data"}
        orderable = False

    caption = "Crash reports by release and version"

    def render_first_reported(self, value: datetime) -> str:
        return utc_time(value)

    def render_last_reported(self, value: datetime) -> str:
        return utc_time(value)
