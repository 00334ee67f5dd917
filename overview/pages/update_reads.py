"""Everything the page of one update shows, read in a fixed number of queries whatever the
number of its events, problems, reports or group members."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import F, Prefetch, Q, Window
from django.db.models.functions import RowNumber
from django.http import Http404

from overview.models import Assessment, CrashReport, Problem
from overview.pages import lines, selectors, words
from overview.pages import outlook as outlook_of
from packages.dependency_warnings import needs_behind
from packages.domain import policy as policy_rules
from packages.domain.dependencies import Group, Member, groups_of
from packages.models import (
    ACTIVE_STATES,
    EventKind,
    PhasingEvent,
    PhasingState,
    Pocket,
    Publication,
    ScheduledAction,
    ScheduledChange,
    ScheduledState,
)
from packages.selectors import ChartSeries, policies_by_scope, scheduled_changes

# The page lists at most this many events, newest first (the history page has them all).
MAX_EVENTS = 200
# Reports shown per problem to those who may read them (the bucket's page has them all).
REPORTS_PER_PROBLEM = 5
# A group stays on the page this long after its members completed.
GROUP_KEPT = timedelta(days=14)
# Scheduled changes of the update listed, newest first, whatever became of them.
MAX_DECISIONS = 20
MAX_SCHEDULED = 70
# Past this many binary and relation names, the group is read from the whole release.
MAX_NAMES_ASKED = 200


@dataclass
class UpdatePage:
    publication: Publication
    events: list[PhasingEvent]  # newest first
    series: ChartSeries | None
    problems: list[selectors.ProblemView]
    reports: dict[int, list[CrashReport]]  # by bucket id; empty unless allowed to read
    outlook: outlook_of.Outlook
    rules: policy_rules.Rules
    group: Group | None
    group_members: list[Member]
    pending: list[ScheduledChange]  # to run, soonest first: this update's, its release's, policies
    decisions: list[ScheduledChange]  # this update's scheduled changes that ran or were cancelled
    awaiting_sign_off: list[ScheduledChange] = field(default_factory=list)
    # This update's pending changes that wait only for their time.
    scheduled_later: list[ScheduledChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The verdict in the overview's words (overview.pages.words), with its problems.
    verdict: words.VerdictWords | None = None

    @property
    def assessment(self) -> Assessment | None:
        try:
            return self.publication.assessment
        except Assessment.DoesNotExist:
            return None


def _publication(pk: int) -> Publication:
    """The update with its people, release, assessment, problems and events: three queries."""
    rows = (
        Publication.objects.filter(pk=pk)
        .select_related(
            "release",
            "source_package",
            "assessment",
            "signer",
            "uploader",
            "sponsor",
            "superseded_by",
        )
        .prefetch_related(
            Prefetch(
                "problems",
                queryset=Problem.objects.filter(active=True)
                .with_covering_override()
                .select_related("bucket")
                .order_by("id"),
                to_attr="active_problems",
            ),
            Prefetch(
                "events",
                # Each event's publication is this one, set by the prefetch: no join.
                queryset=PhasingEvent.objects.order_by("-created_at", "-id"),
                to_attr="all_events",
            ),
        )
    )
    publication = next(iter(rows), None)
    if publication is None:
        raise Http404("No such update.")
    events = publication.all_events
    # What selectors.publication_outlook reads: the latest pauses and halts.
    publication.hold_events = [  # type: ignore[attr-defined]
        e for e in events if e.kind in (EventKind.PAUSED, EventKind.HALTED)
    ]
    return publication


def _reports(
    problems: list[selectors.ProblemView], publication: Publication
) -> dict[int, list[CrashReport]]:
    """The latest reports of this version in each problem's bucket: one query."""
    buckets = [v.problem.bucket_id for v in problems if v.problem.bucket_id is not None]
    if not buckets:
        return {}
    rows = (
        CrashReport.objects.filter(
            bucket_id__in=buckets,
            source_package_id=publication.source_package_id,
            version=publication.version,
            release_id=publication.release_id,
        )
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("bucket_id")],
                order_by=[F("reported_at").desc(), F("id").desc()],
            )
        )
        .filter(rank__lte=REPORTS_PER_PROBLEM)
        .defer("stack_trace", "environment", "package_versions")
        .order_by("bucket_id", "rank")
    )
    by_bucket: dict[int, list[CrashReport]] = {}
    for report in rows:
        by_bucket.setdefault(report.bucket_id, []).append(report)
    return by_bucket


def _related(publication: Publication) -> Q | None:
    """The updates that can need it or that it can need, by name: those with a binary its
    relations name, and those whose relations name one of its binaries (JSON containment,
    so the database picks them out of thousands); None when the names are too many to ask
    for one by one."""
    names = {
        row[2]
        for row in publication.relations
        if isinstance(row, list) and len(row) > 2 and isinstance(row[2], str)
    }
    binaries = {name for name in publication.binaries if isinstance(name, str)}
    if len(names) + len(binaries) > MAX_NAMES_ASKED:
        return None
    if not connection.features.supports_json_field_contains:
        return None  # SQLite: the release's updates are read and matched here instead
    related = Q(pk=publication.pk)
    for name in sorted(names):
        related |= Q(binaries__contains=[name])
    for name in sorted(binaries):
        related |= Q(relations__contains=[[name]])
    return related


def _members(publication: Publication, *, now: datetime) -> list[Member]:
    """The updates of its release that can share a group with it: in phasing, or completed
    lately (a group stays on the page until every member is done); one query. Only those
    that need it or that it needs: the share of machines that can take it with what it
    needs then counts one step of needs, not the needs of what it needs."""
    rows = Publication.objects.filter(
        release_id=publication.release_id, pocket=Pocket.UPDATES
    ).filter(
        Q(state__in=ACTIVE_STATES)
        | Q(state=PhasingState.COMPLETE, completed_at__gte=now - GROUP_KEPT)
        | Q(pk=publication.pk)
    )
    related = _related(publication)
    if related is not None:
        rows = rows.filter(related)
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


def _scheduled(publication: Publication) -> tuple[list[ScheduledChange], list[ScheduledChange]]:
    """Pending changes touching the update (its own, its release's freezes, its package's,
    its release's and the global policy) and its own past ones: one query."""
    pending_touching = Q(state=ScheduledState.PENDING) & (
        Q(publication=publication)
        | Q(publication=None, release_id=publication.release_id)
        | Q(action=ScheduledAction.POLICY, source_package_id=publication.source_package_id)
        | Q(action=ScheduledAction.POLICY, release=None, source_package=None)
    )
    rows = list(
        scheduled_changes()
        .filter(pending_touching | Q(publication=publication))
        .order_by("-created_at", "-id")[:MAX_SCHEDULED]
    )
    pending = sorted(
        (c for c in rows if c.state == ScheduledState.PENDING), key=lambda c: (c.run_at, c.pk)
    )
    decisions = [c for c in rows if c.state != ScheduledState.PENDING][:MAX_DECISIONS]
    return pending, decisions


def update_page(pk: int, *, now: datetime, can_read_reports: bool) -> UpdatePage:
    publication = _publication(pk)
    policies = policies_by_scope()
    rules = policy_rules.resolve_for(policies, publication)
    problems = selectors.problem_views(publication)  # type: ignore[arg-type]
    events: list[PhasingEvent] = publication.all_events  # type: ignore[attr-defined]
    members = _members(publication, now=now)

    def alone(member: Member) -> bool:
        return not policy_rules.resolve(
            policies, release_id=member.release_id, source_package_id=member.source_package_id
        ).phase_with_dependencies

    groups = groups_of(members, alone=alone)
    group = groups.get(publication.pk)
    group_members: list[Member] = []
    if group is not None:
        in_group = {need.needed.pk for need in group.needs} | {
            need.dependent.pk for need in group.needed_by
        }
        group_members = sorted((m for m in members if m.pk in in_group), key=lambda m: m.label)
        if all(m.state == PhasingState.COMPLETE for m in [group.member, *group_members]):
            group, group_members = None, []
    pending, decisions = _scheduled(publication)
    warnings: list[str] = []
    if publication.is_active:
        behind = needs_behind(publication, policy_rules.FULL, members=members)
        warnings = [
            f"{need.needed.label} is "
            + (
                need.needed.state
                if need.needed.state in ("halted", "paused")
                else f"at {need.needed.percentage}%"
            )
            + f": raising or releasing {publication.source_package.name} past it lets machines"
            f" take it before what it needs ({need.why})."
            for need in behind
        ]
    own = [c for c in pending if c.publication_id == publication.pk]
    series = ChartSeries(publication, list(reversed(events[:MAX_EVENTS]))) if events else None
    return UpdatePage(
        publication=publication,
        events=events[:MAX_EVENTS],
        series=series,
        problems=problems,
        reports=_reports(problems, publication) if can_read_reports else {},
        outlook=outlook_of.publication_outlook(publication, rules=rules, now=now),  # type: ignore[arg-type]
        rules=rules,
        group=group,
        group_members=group_members,
        pending=pending,
        decisions=decisions,
        awaiting_sign_off=[c for c in own if c.outcome and c.signed_off_by_id is None],
        scheduled_later=[c for c in own if not (c.outcome and c.signed_off_by_id is None)],
        warnings=warnings,
        verdict=lines.verdict_of(publication, rules, now),  # type: ignore[arg-type]
    )
