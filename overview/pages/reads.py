"""The overview's reads: the updates in phasing with what their compact lines need, and the
updates that need a person. Each a fixed number of queries, whatever the number of rows."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from django.db.models import Case, Count, F, OuterRef, Prefetch, Q, QuerySet, Subquery, Value, When
from django.db.models.functions import Coalesce, Concat, NullIf, Trim

from overview.models import Override, Problem
from overview.pages.selectors import PublicationInPhasing, hold_events_prefetch
from packages.holds import HoldReason
from packages.models import ACTIVE_STATES, EventKind, PhasingEvent, PhasingState, Publication
from packages.public_names import TRIAGER

# Holds for data a person has to look at: the crash source is down or old, or it does not
# know the version and the policy says hold until someone decides. ("Not enough data yet"
# is the normal start of an update, not a person's business.)
DATA_HOLDS = (HoldReason.CRASH_DATA_UNAVAILABLE, HoldReason.UNKNOWN_VERSION)
# At most this many updates of each kind are named at the top; a link lists the rest.
ATTENTION_SHOWN = 8


def _public_name_of_author() -> Coalesce:
    """The override's author as public pages name a person (packages.public_names): the
    name they gave, else the name an imported override carries, else their role. Never
    the login name."""
    full = Trim(Concat("created_by__first_name", Value(" "), "created_by__last_name"))
    return Coalesce(NullIf(full, Value("")), NullIf("created_by_name", Value("")), Value(TRIAGER))


def _problems_with_overrides() -> QuerySet[Problem]:
    """Active problems, each with the live override covering it: its id, who, why."""
    covering = Override.objects.covering().order_by("-created_at", "-id")
    return (
        Problem.objects.filter(active=True)
        .with_covering_override()
        .annotate(
            override_by=Subquery(covering.annotate(who=_public_name_of_author()).values("who")[:1]),
            override_reason=Subquery(covering.values("reason")[:1]),
        )
        .select_related("bucket")
        .order_by("id")
    )


def overview_publications(base: QuerySet[Publication]) -> QuerySet[PublicationInPhasing]:
    """The overview's rows (`base` is selectors.active_publications(), filtered), with
    their problems' overrides and their pause and halt events: two prefetches."""
    return cast(
        "QuerySet[PublicationInPhasing]",
        base.prefetch_related(None).prefetch_related(*_overview_prefetches()),
    )


# Built once per process, as selectors.active_publications() is: they hold no value.
@functools.cache
def _overview_prefetches() -> tuple[Prefetch, Prefetch]:
    return (
        Prefetch("problems", queryset=_problems_with_overrides(), to_attr="active_problems"),
        hold_events_prefetch(),
    )


@dataclass(frozen=True)
class NeedsPerson:
    """Counts of the updates in phasing a person has to look at, by kind."""

    halted: int
    held_for_data: int
    disagree: int


def _needs_person_q() -> tuple[Q, Q, Q]:
    halted = Q(state=PhasingState.HALTED)
    held = Q(state=PhasingState.PHASING, hold_reason__in=DATA_HOLDS)
    # Read back after our last write, the archive holds another percentage than we wrote.
    disagree = Q(
        written_percentage__isnull=False,
        source_percentage__isnull=False,
        synced_at__gte=F("written_at"),
    ) & ~Q(source_percentage=F("written_percentage"))
    return halted, held, disagree


def needs_person_rows(base: QuerySet[Publication]) -> list[Publication]:
    """The updates in phasing that need a person (halted, held for data, disagreeing with
    the archive), at most ATTENTION_SHOWN of each kind in order, newest problem first,
    each with its last halt's actor and reason: one query."""
    halted, held, disagree = _needs_person_q()
    last_halt = PhasingEvent.objects.filter(
        publication=OuterRef("pk"), kind=EventKind.HALTED
    ).order_by("-created_at", "-id")
    rows: list[Publication] = list(
        base.filter(state__in=ACTIVE_STATES)
        .filter(halted | held | disagree)
        .select_related("release", "source_package")
        .defer("binaries", "relations", "closed_bugs")
        .annotate(
            halt_actor=Subquery(last_halt.values("actor_name")[:1]),
            halt_reason=Subquery(last_halt.values("reason")[:1]),
            halt_at=Subquery(last_halt.values("created_at")[:1]),
        )
        .annotate(
            priority=Case(
                When(halted, then=Value(0)), When(disagree, then=Value(1)), default=Value(2)
            )
        )
        .order_by("priority", F("state_changed_at").desc(nulls_last=True), "-id")[
            : 3 * ATTENTION_SHOWN
        ]
    )
    return rows


def needs_person_counts(base: QuerySet[Publication]) -> NeedsPerson:
    """How many updates of each kind need a person: one aggregate query."""
    halted, held, disagree = _needs_person_q()
    counts = base.filter(state__in=ACTIVE_STATES).aggregate(
        halted=Count("pk", filter=halted),
        held=Count("pk", filter=held),
        disagree=Count("pk", filter=disagree),
    )
    return NeedsPerson(counts["halted"], counts["held"], counts["disagree"])


def last_halt_at(publication: Publication) -> datetime | None:
    return cast("datetime | None", getattr(publication, "halt_at", None))
