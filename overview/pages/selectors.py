"""Reads shaped for the public pages, feeds and API.

Each selector costs a fixed number of queries whatever the number of rows: forward keys
with select_related, reverse ones prefetched into `to_attr` lists, which the helpers
below read and never query again.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypedDict, cast

from django.conf import settings
from django.db.models import (
    Count,
    Exists,
    Max,
    Min,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Sum,
)
from django.db.models.functions import Coalesce

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

from overview.models import (
    BucketSystem,
    BucketVersionStat,
    ErrorBucket,
    Override,
    Problem,
)
from packages.domain import inputs
from packages.models import (
    ACTIVE_STATES,
    NOTE_KINDS,
    EventKind,
    PhasingEvent,
    PhasingState,
    Publication,
    Release,
    SourcePackage,
)

RECENTLY_COMPLETED_DAYS = 7


class PhasingContext(TypedDict):
    """What active_publications() adds to each publication, for the pages and the API."""

    last_change: datetime
    problem_count: int
    active_problems: list[Problem]
    hold_events: list[PhasingEvent]


if TYPE_CHECKING:
    PublicationInPhasing = WithAnnotations[Publication, PhasingContext]
else:
    PublicationInPhasing = Publication


# --- Publications in phasing --------------------------------------------------------------


def _with_phasing_context(publications: QuerySet[Publication]) -> QuerySet[Publication]:
    """What the problems and 'what happens next' cells need, prefetched for the page."""
    return publications.select_related("release", "source_package", "assessment").prefetch_related(
        Prefetch(
            "problems",
            queryset=Problem.objects.filter(active=True)
            .with_covering_override()
            .select_related("bucket")
            .order_by("id"),
            to_attr="active_problems",
        ),
        hold_events_prefetch(),
    )


def hold_events_prefetch() -> Prefetch:
    """Each publication's pause and halt events, newest first, as `hold_events`."""
    return Prefetch(
        "events",
        queryset=PhasingEvent.objects.filter(
            kind__in=(EventKind.PAUSED, EventKind.HALTED)
        ).order_by("-created_at", "-id"),
        to_attr="hold_events",
    )


def active_publications() -> QuerySet[PublicationInPhasing]:
    """Publications in phasing, paused or halted, with their sort keys annotated."""
    return _active_publications().all()


# Building the queryset (its subqueries resolved, its prefetches) cost more than running
# it on every overview and API view: it is built once per process and cloned (`.all()`).
# It holds no value of its own, no time, and is never evaluated itself.
@functools.cache
def _active_publications() -> QuerySet[PublicationInPhasing]:
    last_event = (
        PhasingEvent.objects.filter(publication=OuterRef("pk"))
        .exclude(kind__in=NOTE_KINDS)
        .order_by("-created_at", "-id")
    )
    publications = (
        Publication.objects.filter(state__in=ACTIVE_STATES)
        .defer("binaries")
        .annotate(
            last_change=Coalesce(Subquery(last_event.values("created_at")[:1]), "date_published"),
            problem_count=Problem.objects.active_count_of(OuterRef("pk")),
        )
    )
    return cast("QuerySet[PublicationInPhasing]", _with_phasing_context(publications))


@dataclass(frozen=True)
class ProblemView:
    problem: Problem
    overridden: bool

    @property
    def title(self) -> str:
        return str(self.problem)

    @property
    def tracker_url(self) -> str:
        """The bucket's page in the error tracker (none for a rise in the crash rate)."""
        return self.problem.bucket.tracker_link if self.problem.bucket is not None else ""

    @property
    def url(self) -> str:
        """Our bucket page, else the source's link when it is http(s), else none."""
        if self.problem.bucket is not None:
            return self.problem.bucket.get_absolute_url()
        return self.problem.web_link if inputs.is_safe_link(self.problem.web_link) else ""


def problem_views(publication: PublicationInPhasing) -> list[ProblemView]:
    """Active problems of a publication from `active_publications()`, each marked overridden."""
    return [ProblemView(problem, problem.is_overridden) for problem in publication.active_problems]


@dataclass
class ReleaseSummary:
    release_id: int
    codename: str
    version: str
    counts: list[tuple[int, int]] = field(default_factory=list)  # (percentage, how many)
    halted: int = 0
    paused: int = 0
    frozen: bool = False
    frozen_reason: str = ""

    @property
    def total(self) -> int:
        return sum(n for _, n in self.counts)


def release_summaries(publications: QuerySet[Publication]) -> list[ReleaseSummary]:
    """'3 at 90%, 5 at 80%, 2 at 0%' per release, newest release first, with how many are
    halted and paused and whether the release is frozen: one query."""
    rows = (
        publications.order_by()
        .values(
            "release_id",
            "release__codename",
            "release__version",
            "release__frozen",
            "release__frozen_reason",
            "phased_update_percentage",
            "state",
        )
        .annotate(n=Count("id"))
        .order_by("-release__version", "release_id", "-phased_update_percentage", "state")
    )
    summaries: dict[int, ReleaseSummary] = {}
    for row in rows:
        summary = summaries.setdefault(
            row["release_id"],
            ReleaseSummary(
                row["release_id"],
                row["release__codename"],
                row["release__version"],
                frozen=row["release__frozen"],
                frozen_reason=row["release__frozen_reason"],
            ),
        )
        percentage, n = row["phased_update_percentage"], row["n"]
        if summary.counts and summary.counts[-1][0] == percentage:
            summary.counts[-1] = (percentage, summary.counts[-1][1] + n)
        else:
            summary.counts.append((percentage, n))
        if row["state"] == PhasingState.HALTED:
            summary.halted += n
        elif row["state"] == PhasingState.PAUSED:
            summary.paused += n
    return list(summaries.values())


@dataclass(frozen=True)
class Averted:
    """Crashes that halts spared the machines that never took the update."""

    crashes: float
    halts: int  # halted updates with an estimate
    days: int  # over how many days since each halt
    period: int  # at 100% for how many days
    halted: int = 0  # every update halted in those days, estimated or not


def averted(*, now: datetime, days: int = 30) -> Averted:
    """The estimate for the updates halted in the last `days` days: one query."""
    halted = PhasingEvent.objects.filter(
        publication=OuterRef("pk"),
        kind=EventKind.HALTED,
        created_at__gte=now - timedelta(days=days),
    )
    estimated = Q(assessment__averted__isnull=False)
    totals = Publication.objects.filter(Exists(halted)).aggregate(
        crashes=Sum("assessment__averted", filter=estimated),
        halts=Count("pk", filter=estimated),
        halted=Count("pk"),
    )
    return Averted(
        crashes=totals["crashes"] or 0.0,
        halts=totals["halts"] or 0,
        days=days,
        period=settings.PHASING_AVERTED_DAYS,
        halted=totals["halted"] or 0,
    )


def recently_completed(*, now: datetime, days: int = RECENTLY_COMPLETED_DAYS, limit: int = 100):
    """Updates completed in the last `days` days (at 100%, their watch there over),
    newest first."""
    return list(
        Publication.objects.filter(
            state=PhasingState.COMPLETE, completed_at__gte=now - timedelta(days=days)
        )
        .select_related("release", "source_package")
        .order_by("-completed_at", "-id")[:limit]
    )


# --- Problem (bucket) pages ---------------------------------------------------------------


def public_buckets() -> QuerySet[ErrorBucket]:
    return ErrorBucket.objects.select_related("source_package").order_by("-last_seen", "id")


def bucket_report_counts(bucket: ErrorBucket) -> QuerySet:
    """Reports and distinct systems per release, package and version, from the counters
    the ingest keeps (they outlive the reports a purge drops, and cost the same however
    many reports there are)."""
    return (
        BucketVersionStat.objects.filter(bucket=bucket)
        .values(
            "release__codename",
            "release__version",
            "source_package__name",
            "version",
            "reports",
            "systems",
            "first_reported",
            "last_reported",
        )
        .order_by("-release__version", "source_package__name", "-last_reported")
    )


def bucket_report_totals(bucket: ErrorBucket) -> dict:
    """Reports, distinct systems and the span of a bucket's counted reports, from the
    counters: two aggregates over rows per version and systems seen, never the reports."""
    totals = BucketVersionStat.objects.filter(bucket=bucket).aggregate(
        reports=Coalesce(Sum("reports"), 0),
        first=Min("first_reported"),
        last=Max("last_reported"),
    )
    totals["systems"] = (
        BucketSystem.objects.filter(bucket=bucket).values("system_id").distinct().count()
    )
    return totals


def bucket_problems(bucket: ErrorBucket) -> QuerySet[Problem]:
    """The publications this bucket is a problem of, each with its covering override's id."""
    return (
        Problem.objects.filter(bucket=bucket)
        .with_covering_override()
        .select_related("publication__release", "publication__source_package", "bucket")
        .order_by("-publication__date_published", "id")
    )


def covering_overrides(problems: Iterable[Problem]) -> dict[int, Override]:
    """The overrides covering these problems from `bucket_problems()`, by id: one query."""
    ids = {p.covering_override for p in problems if p.is_overridden}
    return Override.objects.in_bulk(ids) if ids else {}


# --- Feeds ----------------------------------------------------------------------------------


# Notes a person's decision leaves on every update it touches (a freeze, a policy, a
# release's change): one line each would flood a feed, so feeds show them once a release.
RELEASE_NOTES = (EventKind.FROZEN, EventKind.UNFROZEN, EventKind.POLICY, EventKind.RELEASE)


@dataclass(frozen=True)
class ReleaseNote:
    """One decision noted on `count` updates of a release at once."""

    first_id: int
    codename: str
    kind: str
    created_at: datetime
    reason: str
    actor_name: str
    count: int

    def get_kind_display(self) -> str:
        return EventKind(self.kind).label


def phasing_events(
    *,
    release: Release | None,
    package: SourcePackage | None = None,
    kinds: tuple[str, ...] = (),
    limit: int = 50,
) -> list[PhasingEvent | ReleaseNote]:
    """The latest events, newest first, the notes of one decision on many updates of a
    release as one ReleaseNote; two queries."""
    events = PhasingEvent.objects.select_related(
        "publication__release", "publication__source_package", "publication__assessment"
    ).order_by("-created_at", "-id")
    if kinds:
        events = events.filter(kind__in=kinds)
    if release is not None:
        events = events.filter(publication__release=release)
    if package is not None:
        events = events.filter(publication__source_package=package)
    notes_kinds = [kind for kind in RELEASE_NOTES if not kinds or kind in kinds]
    notes = (
        []
        if not notes_kinds
        else [
            ReleaseNote(
                first_id=row["first_id"],
                codename=row["publication__release__codename"],
                kind=row["kind"],
                created_at=row["created_at"],
                reason=row["reason"],
                actor_name=row["actor_name"],
                count=row["n"],
            )
            for row in events.filter(kind__in=notes_kinds)
            .order_by()
            .values("publication__release__codename", "kind", "created_at", "reason", "actor_name")
            .annotate(n=Count("id"), first_id=Min("id"))
            .order_by("-created_at", "-first_id")[:limit]
        ]
    )
    items: list[PhasingEvent | ReleaseNote] = [
        *events.exclude(kind__in=RELEASE_NOTES)[:limit],
        *notes,
    ]
    items.sort(
        key=lambda item: (
            item.created_at,
            item.first_id if isinstance(item, ReleaseNote) else item.pk,
        ),
        reverse=True,
    )
    return items[:limit]
