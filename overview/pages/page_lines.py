"""The lines of the overview's current page, each built once per data version and minute.

An update's line (overview.pages.lines) changes only when its data does (every committed
write raises the data version) or when its words about time do ("in 3 h": the minute).
So at a data version the lines are kept in this process by update and minute, with the
row each one renders to (overview.pages.line_rows), and so is the order of the updates a
choice of filters and sort lists: a view slices its page out of that order (no query)
and builds only the lines it lacks (the rows with their problems and events: three
queries). Inside a transaction nothing is kept (overview.pages.kept).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from datetime import datetime

from overview.pages import kept, selectors
from overview.pages import reads as overview_reads
from overview.pages.lines import UpdateLine, update_lines
from overview.pages.updates_table import UpdatesTable
from packages.domain.dependencies import Group
from packages.models import ScheduledChange
from packages.selectors import PolicyMap


def page_lines(
    table: UpdatesTable,
    *,
    version: int | None,
    minute: int,
    policies: PolicyMap,
    groups: Mapping[int, Group],
    scheduled: Sequence[ScheduledChange],
    now: datetime,
    order: Hashable | None = None,
) -> list[UpdateLine]:
    """The lines of the table's page (sorted and paginated by django-tables2). `order`:
    the key the filtered, sorted updates' ids may be kept under (None: read the page's)."""
    rows = table.page.object_list if table.page is not None else table.rows

    def build(records) -> list[UpdateLine]:
        return update_lines(
            list(records), policies=policies, groups=groups, scheduled=scheduled, now=now
        )

    if version is None or table.page is None:
        return build(row.record for row in rows)
    ids = _page_ids(table, rows, version=version, order=order)
    known: dict[int, UpdateLine] = kept.kept(("lines", minute), dict, version=version)
    missing = [pk for pk in ids if pk not in known]
    if missing:
        records = overview_reads.overview_publications(
            selectors.active_publications().filter(pk__in=missing)
        )
        for line in build(records):
            known[line.pk] = line
    return [known[pk] for pk in ids if pk in known]


def _page_ids(table: UpdatesTable, rows, *, version: int, order: Hashable | None) -> list[int]:
    """The page's slice of the sorted, filtered updates, as ids: no row, no prefetch. The
    whole order is kept per data version (a few thousand ids), so paging and viewing again
    cost no query; a free-text search reads its page only, so that searches, which have no
    bound, never push out what other views keep."""
    if order is None:
        return list(rows.data.values_list("pk", flat=True))
    every = kept.kept(
        ("order", order),
        lambda: list(table.data.data.values_list("pk", flat=True)),
        version=version,
    )
    page = table.page
    start = (page.number - 1) * page.paginator.per_page
    return every[start : start + page.paginator.per_page]
