"""The publishing-history page of a source package: every version, its chart, its verdict,
and the events with who and why."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.db.models import prefetch_related_objects
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from overview.evidence.fleet_reads import fleet_counts
from packages import selectors
from packages.group_cache import groups_for_pages
from packages.models import Release, SourcePackage

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
    publications = Paginator(
        selectors.history_publications(package=package, release=release), PUBLICATIONS_PAGE_SIZE
    ).get_page(request.GET.get("page"))
    # Versions in a dependent group say what they need and what needs them.
    groups = groups_for_pages(policies=selectors.policies_by_scope())
    prefetch_related_objects(list(publications), "assessment")  # each version's verdict
    counts = fleet_counts((p.pk for p in publications), now=now)  # measured uptake
    for publication in publications:
        publication.fleet_counts = counts.get(publication.pk)  # type: ignore[attr-defined]
    grouped = [(p, groups.get(p.pk)) for p in publications]
    events = Paginator(
        selectors.history_events(package=package, release=release), EVENTS_PAGE_SIZE
    ).get_page(request.GET.get("events-page"))
    context = {
        "package": package,
        "releases": releases,
        "release": release,
        "publications": publications,
        "grouped": grouped,
        "group_count": sum(1 for _, group in grouped if group is not None),
        "series": selectors.chart_series(list(publications)),
        "events": events,
        "scheduled": selectors.pending_scheduled_changes(package=package, release=release),
        "now": now,
    }
    return render(request, "overview/history.html", context)
