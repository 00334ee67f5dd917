"""The overview's table: one compact line per update.

django-tables2 keeps what it is good at (the sort links, pagination, the validated sort
aliases); the body is one template loop over overview.pages.lines, not a render call per
cell. The CSV and JSON export stay overview.pages.tables.OverviewTable's, with every column.
"""

from __future__ import annotations

import django_tables2 as tables

from overview.pages.lines import UpdateLine
from overview.pages.tables import OverviewTable
from packages.models import Publication


class UpdatesTable(OverviewTable):
    """Publications in phasing, one line each. Rows come from
    overview.pages.reads.overview_publications()."""

    package = tables.Column(
        accessor="source_package__name",
        verbose_name="Update",
        attrs={"th": {"class": "col-update"}},
    )
    release = tables.Column(
        accessor="release__codename",
        order_by=("-release__version", "release__codename"),
        verbose_name="Release",
        attrs={"th": {"class": "col-release"}},
    )
    percentage = tables.Column(
        accessor="phased_update_percentage",
        verbose_name="Phased",
        attrs={"th": {"class": "col-phased"}},
    )
    state = tables.Column(attrs={"th": {"class": "col-state"}})
    next = tables.Column(
        empty_values=(),
        orderable=False,
        verbose_name="Next step",
        attrs={"th": {"class": "col-next"}},
    )
    problems = tables.Column(
        accessor="problem_count", verbose_name="Problems", attrs={"th": {"class": "col-problems"}}
    )
    verdict = tables.Column(
        accessor="assessment__verdict",
        verbose_name="Verdict",
        attrs={"th": {"class": "col-verdict"}},
    )

    class Meta:
        model = Publication
        fields = ()
        order_by = ("release", "package")
        empty_text = "No update matches these filters."
        sequence = (
            "package",
            "release",
            "percentage",
            "state",
            "next",
            "problems",
            "verdict",
        )
        exclude = ("version", "previous_version", "date_published", "last_change")
        template_name = "overview/_update_lines.html"
        attrs = {"class": "data updates"}

    lines: list[UpdateLine] = []
    body_html: str = ""
