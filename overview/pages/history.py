"""The publishing-history page of a source package: every version, its chart, its verdict,
and the events with who and why."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import prefetch_related_objects
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from overview.evidence.fleet_reads import fleet_counts
from overview.pages import kept
from overview.pages.history_rows import version_rows
from packages import selectors
from packages.group_cache import groups_for_pages
from packages.models import Release, SourcePackage
from packages.templatetags.packages_extras import event_rows

PUBLICATIONS_PAGE_SIZE = 30
EVENTS_PAGE_SIZE = 50


def history(request: HttpRequest, name: str) -> HttpResponse:
    context: dict[str, object]
    package = SourcePackage.objects.filter(name=name).first()
    if package is None:
        context = {
            "name": name,
            "suggestions": selectors.close_package_names(name),
        }
        return render(request, "overview/unknown_package.html", context, status=404)

    releases = list(Release.objects.filter(publications__source_package=package).distinct())
    codename = request.GET.get("release") or ""
    release = next((r for r in releases if r.codename == codename), None)
    if codename and release is None:
        context = {"package": package, "releases": releases, "unknown_release": codename}
        return render(request, "overview/history.html", context, status=404)

    now = timezone.now()
    # What the page shows of its versions, charts, events and scheduled changes changes
    # only with the data (the data version) and, for the charts' ends and the measured
    # uptake, with the minute: kept per version in this process (overview.pages.kept).
    version = kept.current_version()
    minute = int(now.timestamp() // 60)
    shown = (package.pk, release.pk if release is not None else None)
    page = request.GET.get("page")
    versions = kept.kept(
        ("history-versions", shown, page, minute),
        lambda: _versions(package, release, page, now),
        version=version,
    )
    events_page = request.GET.get("events-page")
    events = kept.kept(
        ("history-events", shown, events_page),
        lambda: _events(package, release, events_page),
        version=version,
    )
    context = {
        "package": package,
        "releases": releases,
        "release": release,
        "publications": versions.publications,
        "version_rows": versions.rows,
        "group_count": versions.group_count,
        "charts": versions.charts,
        "events": events.page,
        "event_rows": events.rows,
        "scheduled": kept.kept(
            ("history-scheduled", shown),
            lambda: selectors.pending_scheduled_changes(package=package, release=release),
            version=version,
        ),
        "now": now,
    }
    return render(request, "overview/history.html", context)


@dataclass(frozen=True)
class _Versions:
    publications: Page
    rows: SafeString
    group_count: int
    charts: SafeString


def _versions(package: SourcePackage, release: Release | None, page: str | None, now) -> _Versions:
    """One page of the package's versions, their rows and their charts: six queries."""
    publications = Paginator(
        selectors.history_publications(package=package, release=release), PUBLICATIONS_PAGE_SIZE
    ).get_page(page)
    # Versions in a dependent group say what they need and what needs them.
    groups = groups_for_pages(policies=selectors.policies_by_scope())
    prefetch_related_objects(list(publications), "assessment")  # each version's verdict
    counts = fleet_counts((p.pk for p in publications), now=now)  # measured uptake
    for publication in publications:
        publication.fleet_counts = counts.get(publication.pk)  # type: ignore[attr-defined]
    grouped = [(p, groups.get(p.pk)) for p in publications]
    series = selectors.chart_series(list(publications))
    return _Versions(
        publications=publications,
        # Written in Python (overview.pages.history_rows), not a template lookup per value.
        rows=version_rows(grouped, name=package.name),
        group_count=sum(1 for _, group in grouped if group is not None),
        charts=mark_safe(  # noqa: S308 (our own template, autoescaped)
            render_to_string("overview/_history_charts.html", {"series": series, "now": now})
        ),
    )


@dataclass(frozen=True)
class _Events:
    page: Page
    rows: SafeString


def _events(package: SourcePackage, release: Release | None, page: str | None) -> _Events:
    events = Paginator(
        selectors.history_events(package=package, release=release), EVENTS_PAGE_SIZE
    ).get_page(page)
    return _Events(events, event_rows(events) if events else SafeString(""))
