"""Public pages: the overview, problem (bucket) pages and 'is my machine in the phase?'.

Views stay thin: a selector reads, a table or form shapes, a template words.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django_tables2 import RequestConfig

from overview.monitoring.status import service_status
from overview.pages import attention as attention_list
from overview.pages import kept, machine_selectors, selectors
from overview.pages import reads as overview_reads
from overview.pages.filters import PublicationFilter
from overview.pages.forms import MachineForm
from overview.pages.line_rows import rows_html
from overview.pages.page_cache import anonymous_page_cache, mark_cacheable
from overview.pages.page_lines import page_lines
from overview.pages.source_statuses import source_statuses
from overview.pages.tables import PAGINATE, BucketCountsTable, OverviewTable, SafeTableExport
from overview.pages.updates_table import UpdatesTable
from packages.group_cache import groups_for_pages
from packages.models import ACTIVE_STATES, Publication, ScheduledChange
from packages.selectors import dependency_groups, pending_scheduled_changes, policies_by_scope

EXPORT_FORMATS = ("csv", "json")
MACHINE_PAGE_SIZE = 50
AFFECTED_PAGE_SIZE = 25


# Parameters of the overview whose values are validated, so a URL made only of these is
# one of a bounded set and may be kept by the page cache. The name search `q` is free text.
# The overview's filters: what the summaries and the attention list are kept under.
_FILTERS = ("release", "state", "verdict", "percentage_min", "percentage_max", "q")

_CACHEABLE_PARAMETERS = frozenset(
    {"release", "state", "verdict", "percentage_min", "percentage_max", "sort", "page", "per_page"}
)


def _cacheable(request: HttpRequest, table: OverviewTable) -> bool:
    orderings = {
        alias for c in table.columns.iterall() if c.orderable for alias in (c.name, "-" + c.name)
    }
    for name, values in request.GET.lists():
        if name not in _CACHEABLE_PARAMETERS or len(values) != 1:
            return False
        if name == "sort" and values[0] not in orderings:
            return False
        if name in ("page", "per_page") and not (values[0].isdigit() and len(values[0]) <= 4):
            return False
    return True


@anonymous_page_cache
def index(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    filterset = PublicationFilter(request.GET or None, queryset=selectors.active_publications())
    # What does not change between two writes is kept per data version (overview.pages.kept):
    # the policies, the dependent groups, the summaries, what needs a person, the scheduled
    # changes. A request with a bad filter computes its own.
    version = kept.current_version() if not filterset.errors else None
    policies = kept.kept("policies", policies_by_scope, version=version)
    export_format = request.GET.get("_export")
    if export_format in EXPORT_FORMATS:
        # The whole filtered table with every column, sorted as shown, not one page of it.
        export = OverviewTable(filterset.qs, policies=policies, now=now)
        RequestConfig(request, paginate=False).configure(export)
        return SafeTableExport(export_format, export).response(f"phasing-updates.{export_format}")
    table = UpdatesTable(
        overview_reads.overview_publications(filterset.qs), policies=policies, now=now
    )
    filters = tuple((name, tuple(request.GET.getlist(name))) for name in _FILTERS)
    minute = int(now.timestamp() // 60)
    groups = table.groups = kept.kept(
        "groups", lambda: dependency_groups(policies=policies), version=version
    )
    in_phasing = filterset.apply_to(Publication.objects.filter(state__in=ACTIVE_STATES))
    summaries = kept.kept(
        ("summaries", filters), lambda: selectors.release_summaries(in_phasing), version=version
    )
    # The summaries counted the same rows: the paginator need not count them again.
    total = sum(summary.total for summary in summaries)
    RequestConfig(request, paginate={**PAGINATE, "count": total}).configure(table)
    if table.grouped:
        # The release headings say it; the column comes back when sorting by another.
        table.columns.hide("release")
    scheduled = kept.kept("scheduled", pending_scheduled_changes, version=version)
    table.lines = page_lines(
        table,
        version=version,
        minute=minute,
        policies=policies,
        groups=groups,
        scheduled=scheduled,
        now=now,
        # The filters' values are validated, so their keys are a bounded set; not `q`'s.
        order=None if request.GET.get("q") else (filters, request.GET.get("sort", "")),
    )
    # The body: each line's row written once and kept with the line (line_rows).
    body = rows_html(table.lines, grouped=table.grouped, colspan=len(table.columns))
    # The table around it (caption, sort links, pager) depends only on the query and the
    # data version (the count): kept rendered with a mark where the body goes.
    frame = kept.kept(
        ("table", tuple((name, tuple(values)) for name, values in request.GET.lists())),
        lambda: _table_frame(table, request),
        version=version,
    )
    table_html = mark_safe(frame.replace(_BODY, body))  # noqa: S308 (both escaped as written)
    sort = request.GET.get("sort", "")
    context = {
        "filter": filterset,
        # The form's widgets, rendered by Django's form renderer, are kept with the data
        # version (the releases it offers) and the filters chosen; a form with errors is
        # rendered each time (version None).
        "filters_html": kept.kept(
            ("filters", filters, sort),
            lambda: mark_safe(  # noqa: S308 (our own template, autoescaped)
                render_to_string("overview/_filters.html", {"filter": filterset, "sort": sort})
            ),
            version=version,
        ),
        "table": table,
        "table_html": table_html,
        # What needs a person, the summaries, the scheduled changes and the completed
        # updates, rendered once per data version and minute (their times say "ago").
        "fragments": kept.kept(
            ("fragments", filters, minute),
            lambda: _fragments(
                in_phasing,
                summaries=summaries,
                scheduled=scheduled,
                now=now,
                bound=filterset.is_bound,
            ),
            version=version,
        ),
        "summaries": summaries,
        "averted": kept.kept(
            ("averted", minute), lambda: selectors.averted(now=now), version=version
        ),
        "group_count": sum(1 for group in groups.values() if group.needs),
        "now": now,
        # Shown on top when something fails, and in the footer (which reads it from here).
        "service_status": service_status(now=now),
    }
    status = 400 if filterset.is_bound and filterset.errors else 200
    response = render(request, "overview/index.html", context, status=status)
    if status == 200 and _cacheable(request, table):
        mark_cacheable(response)
    return response


# Where the body's rows go in the kept table: no row, value or query string holds a NUL.
_BODY = "\x00body\x00"


def _table_frame(table: UpdatesTable, request: HttpRequest) -> str:
    """The table rendered by django-tables2 (overview/_update_lines.html) around a mark
    that stands for its body."""
    table.body_html = _BODY
    return table.as_html(request)


def _fragments(
    in_phasing: QuerySet[Publication],
    *,
    summaries: list[selectors.ReleaseSummary],
    scheduled: list[ScheduledChange],
    now: datetime,
    bound: bool,
) -> dict[str, SafeString]:
    """The parts of the overview that are the same for every view of one data version."""
    attention = attention_list.attention(
        rows=overview_reads.needs_person_rows(in_phasing),
        counts=overview_reads.needs_person_counts(in_phasing),
        scheduled=scheduled,
        summaries=summaries,
        now=now,
    )
    completed = {
        "completed": selectors.recently_completed(now=now),
        "completed_days": selectors.RECENTLY_COMPLETED_DAYS,
    }
    return {
        # Our own templates, autoescaped as they render: safe as they come.
        "top": mark_safe(
            render_to_string(
                "overview/_top.html",
                {"attention": attention, "summaries": summaries, "filter": {"is_bound": bound}},
            )
        ),
        "scheduled": mark_safe(
            render_to_string("overview/_scheduled_changes.html", {"scheduled": scheduled})
        ),
        "completed": mark_safe(render_to_string("overview/_completed.html", completed)),
    }


def problem(request: HttpRequest, pk: int) -> HttpResponse:
    bucket = get_object_or_404(selectors.public_buckets(), pk=pk)
    counts = BucketCountsTable(selectors.bucket_report_counts(bucket), prefix="counts-")
    RequestConfig(request, paginate=PAGINATE).configure(counts)
    totals = selectors.bucket_report_totals(bucket)
    affected = Paginator(selectors.bucket_problems(bucket), AFFECTED_PAGE_SIZE).get_page(
        request.GET.get("affected-page")
    )
    overrides = selectors.covering_overrides(affected)
    context = {
        "bucket": bucket,
        "counts": counts,
        "totals": totals,
        "affected": affected,
        "affected_rows": [(p, overrides.get(p.covering_override or 0)) for p in affected],
    }
    return render(request, "overview/problem.html", context)


def machine(request: HttpRequest) -> HttpResponse:
    """Which updates apt on this machine takes now, and when it takes the others."""
    now = timezone.now()
    bound = "machine_id" in request.GET
    form = MachineForm(
        request.GET if bound else None, initial={"release": request.GET.get("release")}
    )
    context: dict = {"form": form, "now": now}
    status = 200
    if bound and form.is_valid():
        release = form.cleaned_data["release"]
        page = Paginator(
            machine_selectors.machine_publications(release=release), MACHINE_PAGE_SIZE
        ).get_page(request.GET.get("page"))
        policies = policies_by_scope()
        rows = machine_selectors.machine_rows(
            list(page),
            machine_id=form.cleaned_data["machine_id"],
            policies=policies,
            now=now,
            groups=groups_for_pages(policies=policies),
        )
        context.update(
            page=page,
            rows=rows,
            machine_id=form.cleaned_data["machine_id"],
            release=release,
            included_count=sum(1 for row in rows if row.installs),
        )
    elif bound:
        status = 400
    return render(request, "overview/machine.html", context, status=status)


def sources(request: HttpRequest) -> HttpResponse:
    """Each configured source: does it answer, does it take our percentages, how fresh."""
    rows = source_statuses(now=timezone.now(), max_age=settings.PHASING_CRASH_DATA_MAX_AGE)
    return render(request, "overview/sources.html", {"rows": rows})
