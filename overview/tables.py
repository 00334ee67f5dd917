"""django-tables2 tables of the public pages: sortable columns, export, paginated."""

from __future__ import annotations

from datetime import datetime

import django_tables2 as tables
from django.core.paginator import Paginator
from django.template.loader import render_to_string
from django.utils import dateformat, timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from overview import selectors
from overview.selectors import PublicationInPhasing
from overview.wording import age, outlook_lines, share_line, utc_time, verdict_label
from packages import charts
from packages import policy as policy_rules
from packages.models import Publication
from packages.selectors import PolicyMap

PER_PAGE = 25
MAX_PER_PAGE = 100


class CappedPaginator(Paginator):
    """A paginator that will not be asked for a million rows at once through ?per_page=."""

    def __init__(self, object_list, per_page, *args, **kwargs) -> None:
        super().__init__(object_list, min(max(int(per_page), 1), MAX_PER_PAGE), *args, **kwargs)


PAGINATE = {"per_page": PER_PAGE, "paginator_class": CappedPaginator}


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
        accessor="assessment__verdict",
        verbose_name="Verdict",
        # Shown, not rendered, where there is no assessment yet.
        default=mark_safe('<span class="muted">not yet judged</span>'),
        attrs={"td": {"class": "verdict"}},
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
        template_name = "django_tables2/phasing_table.html"
        empty_text = "No update matches these filters."
        attrs = {"class": "data overview"}

    caption = "Updates in phasing"

    def __init__(self, *args, policies: PolicyMap, now: datetime, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.policies = policies
        self.now = now
        self._outlooks: dict[int, selectors.Outlook] = {}

    @property
    def grouped(self) -> bool:
        """Rows are grouped under release headings while they are sorted by release."""
        order = list(self.order_by or ())
        return bool(order) and order[0].lstrip("-") == "release"

    def outlook(self, record: PublicationInPhasing) -> selectors.Outlook:
        if record.pk not in self._outlooks:
            self._outlooks[record.pk] = selectors.publication_outlook(
                record, rules=policy_rules.resolve_for(self.policies, record), now=self.now
            )
        return self._outlooks[record.pk]

    def render_release(self, record: PublicationInPhasing) -> str:
        return format_html(
            '<span title="{}">{}</span>', record.release.version, record.release.codename
        )

    def render_package(self, record: PublicationInPhasing) -> str:
        return format_html(
            '<a href="{}?release={}">{}</a>',
            record.source_package.get_absolute_url(),
            record.release.codename,
            record.source_package.name,
        )

    # Cells built with format_html, not a template each: a page of rows renders several
    # cells per row, and template rendering dominated the page's time (bench/).
    def _time_cell(self, moment: datetime | None) -> str:
        if not moment:
            return format_html('<span class="muted">—</span>')
        return format_html(
            '<time datetime="{}" title="{}">{}</time> <span class="muted age">{}</span>',
            moment.isoformat(),
            utc_time(moment),
            dateformat.format(timezone.localtime(moment), "j M H:i"),
            age(moment, self.now),
        )

    def render_date_published(self, record: PublicationInPhasing) -> str:
        return self._time_cell(record.date_published)

    def render_last_change(self, value: datetime) -> str:
        return self._time_cell(value)

    def render_percentage(self, record: PublicationInPhasing, value: int) -> SafeString:
        # charts.percentage_bar writes only a clamped integer into its markup.
        bar = mark_safe(charts.percentage_bar(value))
        notes = record.source_notes()  # fields of the row: no query
        running = share_line(getattr(record, "assessment", None))
        if running:
            bar += format_html('<br><small class="muted share">{}</small>', running)
        if not notes:
            return bar
        return bar + format_html_join(
            "", '<br><small class="source-note">{}</small>', ((note,) for note in notes)
        )

    def render_verdict(self, record: PublicationInPhasing) -> str:
        assessment = getattr(record, "assessment", None)
        if assessment is None:
            return format_html('<span class="muted">not yet judged</span>')
        return format_html(
            '<span class="verdict verdict-{}">{}</span><br><small class="muted">{}</small>',
            assessment.verdict,
            verdict_label(assessment),
            assessment.evidence,
        )

    def render_state(self, record: PublicationInPhasing) -> str:
        return format_html(
            '<span class="state state-{}">{}</span>', record.state, record.get_state_display()
        )

    def render_next(self, record: PublicationInPhasing) -> str:
        lines = outlook_lines(self.outlook(record))
        return format_html_join(
            "",
            '<span class="next {}">{}</span>',
            (("next-first" if n == 0 else "muted", line) for n, line in enumerate(lines)),
        )

    def render_problems(self, record: PublicationInPhasing) -> str:
        return render_to_string(
            "overview/_cell_problems.html", {"problems": selectors.problem_views(record)}
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
