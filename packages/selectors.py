"""Reads shaped for the publishing-history page, and policies for every page."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, Q, QuerySet

from packages.domain import charts
from packages.domain import policy as policy_rules
from packages.domain.dependencies import Group, Member, groups_of
from packages.models import (
    ACTIVE_STATES,
    PhasingEvent,
    Pocket,
    Policy,
    Publication,
    Release,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
    SourcePackage,
)

PolicyMap = dict[policy_rules.Scope, policy_rules.Rules]


def policies_by_scope() -> PolicyMap:
    """Every policy's rules by scope, for policy.resolve: one query, there are few."""
    return {(p.release_id, p.source_package_id): p.rules() for p in Policy.objects.all()}


def phasing_members(*, release_ids: Iterable[int] | None = None) -> list[Member]:
    """Every update in phasing, paused or halted (of these releases), as the dependency
    rule reads it: one query, only the columns it needs."""
    rows = Publication.objects.filter(state__in=ACTIVE_STATES, pocket=Pocket.UPDATES)
    if release_ids is not None:
        rows = rows.filter(release_id__in=list(release_ids))
    return [
        Member.of(row)
        for row in rows.order_by().values(
            "pk",
            "release_id",
            "version",
            "previous_version",
            "binaries",
            "relations",
            "state",
            "source_package_id",
            source=F("source_package__name"),
            percentage=F("phased_update_percentage"),
        )
    ]


def dependency_groups(
    *, policies: PolicyMap, release_ids: Iterable[int] | None = None
) -> dict[int, Group]:
    """The updates in phasing that form dependent groups, by primary key: one query."""

    def alone(member: Member) -> bool:
        rules = policy_rules.resolve(
            policies, release_id=member.release_id, source_package_id=member.source_package_id
        )
        return not rules.phase_with_dependencies

    return groups_of(phasing_members(release_ids=release_ids), alone=alone)


def close_package_names(name: str, *, limit: int = 5) -> list[str]:
    """Names like the one asked for, for the 'no such package' page."""
    names = list(SourcePackage.objects.values_list("name", flat=True))
    close = difflib.get_close_matches(name, names, n=limit, cutoff=0.6)
    prefix = [n for n in names if n.startswith(name[:3]) and n not in close] if name else []
    return (close + prefix)[:limit]


# A publication's binaries and relations (for dependent groups, read by their own query):
# long JSON lists no history row shows.
UNSHOWN_LISTS = ("binaries", "relations")


def history_publications(
    *, package: SourcePackage, release: Release | None
) -> QuerySet[Publication]:
    """Every version of the package in every release and pocket, newest first."""
    publications = (
        Publication.objects.filter(source_package=package)
        .select_related(
            "release", "source_package", "superseded_by", "signer", "uploader", "sponsor"
        )
        .defer(*UNSHOWN_LISTS, *(f"superseded_by__{name}" for name in UNSHOWN_LISTS))
    )
    if release is not None:
        publications = publications.filter(release=release)
    return publications.order_by("-date_published", "-id")


def history_events(*, package: SourcePackage, release: Release | None) -> QuerySet[PhasingEvent]:
    # The rows say each event's release and version: not its publication's lists.
    events = (
        PhasingEvent.objects.filter(publication__source_package=package)
        .select_related("publication__release")
        .defer(*(f"publication__{name}" for name in UNSHOWN_LISTS))
    )
    if release is not None:
        events = events.filter(publication__release=release)
    return events.order_by("-created_at", "-id")


# The pages list at most this many pending scheduled changes (the admin has them all).
MAX_PENDING_SHOWN = 50


def scheduled_changes() -> QuerySet[ScheduledChange]:
    """Scheduled changes with what their words need (targets, people), soonest first."""
    return ScheduledChange.objects.select_related(
        "publication__source_package",
        "publication__release",
        "release",
        "source_package",
        "created_by",
        "signed_off_by",
        "cancelled_by",
    ).order_by("run_at", "id")


def pending_scheduled_changes(
    *, package: SourcePackage | None = None, release: Release | None = None
) -> list[ScheduledChange]:
    """The changes still to run, all of them or those touching one package (its updates,
    its policy, its releases' freezes and policies, the global policy): one query."""
    pending = scheduled_changes().filter(state=ScheduledState.PENDING)
    if package is not None:
        releases = (
            Release.objects.filter(pk=release.pk)
            if release is not None
            else Release.objects.filter(publications__source_package=package)
        )
        touching = (
            Q(publication__source_package=package)
            | Q(source_package=package)
            | Q(release__in=releases.values("pk"))
            | Q(action=ScheduledAction.POLICY, release=None, source_package=None)
        )
        if release is not None:
            touching &= Q(publication=None) | Q(publication__release=release)
        pending = pending.filter(touching)
    return list(pending[:MAX_PENDING_SHOWN])


@dataclass(frozen=True)
class ChartSeries:
    publication: Publication
    events: list[PhasingEvent]  # oldest first


MAX_CHARTS = 6
# Fewer events than this is a version that was synced after it phased: nothing to draw.
MIN_CHART_EVENTS = 3


def chart_series(publications: list[Publication]) -> list[ChartSeries]:
    """Percentage histories of the Updates publications among `publications`: the versions
    in phasing, and others whose phasing we watched, newest first; one query."""
    phased = [p for p in publications if p.is_phased][: MAX_CHARTS * 3]
    if not phased:
        return []
    by_publication: dict[int, list[PhasingEvent]] = {p.pk: [] for p in phased}
    for event in PhasingEvent.objects.filter(publication__in=phased).order_by("created_at", "id"):
        by_publication[event.publication_id].append(event)
    series = [
        ChartSeries(p, by_publication[p.pk])
        for p in phased
        if by_publication[p.pk] and (p.is_active or len(by_publication[p.pk]) >= MIN_CHART_EVENTS)
    ]
    return series[:MAX_CHARTS]


def chart_end(series: ChartSeries, now: datetime) -> datetime:
    """Where a version's chart stops: when it left phasing, or now."""
    publication = series.publication
    for moment in (publication.completed_at, publication.date_superseded):
        if moment is not None and not publication.is_active:
            return max(moment, series.events[-1].created_at)
    return now


def chart_points(series: ChartSeries) -> list[charts.ChartPoint]:
    """The chart's points: one per event, from the publication date on."""
    publication = series.publication
    first = series.events[0]
    points = []
    # Before the first event the percentage is known only if that event says what it was.
    if first.created_at > publication.date_published and first.old_percentage is not None:
        points.append(
            charts.ChartPoint(publication.date_published, first.old_percentage, "published")
        )
    for event in series.events:
        label = (
            f"{event.created_at:%Y-%m-%d %H:%M} UTC: {event.get_kind_display().lower()}, "
            f"{event.percentage_change}"
        )
        if event.kind in charts.FLAGS:
            label += f" by {event.actor_name}" + (f": {event.reason}" if event.reason else "")
        points.append(charts.ChartPoint(event.created_at, event.new_percentage, event.kind, label))
    return points
