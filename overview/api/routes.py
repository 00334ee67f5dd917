"""The endpoints of the read-only JSON API and how they shape their answers."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from django.core.paginator import EmptyPage, Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, QueryDict
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils import timezone
from ninja import Field, Path, Query, Router, Schema
from ninja.errors import HttpError

from overview.api.schemas import (
    BucketDetailOut,
    BucketPage,
    ErrorOut,
    EventPage,
    MachinePage,
    PublicationPage,
    ScheduledChangePage,
)
from overview.pages import machine_selectors, selectors
from overview.pages import outlook as outlook_of
from overview.pages.filters import PublicationFilter
from overview.pages.selectors import PublicationInPhasing
from overview.pages.wording import outlook_lines
from packages.domain import apt_phasing
from packages.domain import policy as policy_rules
from packages.models import PhasingEvent, Publication, Release, ScheduledChange, ScheduledState
from packages.public_names import public_name
from packages.selectors import dependency_groups, policies_by_scope, scheduled_changes
from packages.services.scheduled import AWAITING_SIGN_OFF

DEFAULT_PER_PAGE = 25
MAX_PER_PAGE = 100


router = Router()

# --- Helpers ----------------------------------------------------------------------------


def _page(request: HttpRequest, items: QuerySet, *, page: int, per_page: int) -> Page:
    try:
        return Paginator(items, per_page).page(page)
    except EmptyPage as error:
        raise HttpError(404, f"page {page} does not exist") from error


def _page_links(request: HttpRequest, page: Page) -> dict[str, int | str | None]:
    def link(number: int) -> str:
        query = request.GET.copy()
        query["page"] = str(number)
        return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")

    return {
        "count": page.paginator.count,
        "next": link(page.next_page_number()) if page.has_next() else None,
        "previous": link(page.previous_page_number()) if page.has_previous() else None,
    }


def _policy_out(rules: policy_rules.Rules) -> dict:
    return {
        "start_percentage": rules.start,
        "step": rules.step,
        "interval_seconds": int(rules.interval.total_seconds()),
        "ceiling": rules.ceiling,
        "schedule": list(rules.schedule),
        "quiet_weekend": rules.quiet_weekend,
        "judge": rules.judge,
        "insufficient_gate": rules.insufficient_gate,
        "insufficient_max_hold_seconds": int(rules.insufficient_max_hold.total_seconds()),
    }


def _verdict_out(publication: PublicationInPhasing) -> dict | None:
    assessment = getattr(publication, "assessment", None)
    if assessment is None:
        return None
    return {
        "verdict": assessment.verdict,
        "judge": assessment.judge,
        "evidence": assessment.evidence,
        "rate_ratio": assessment.ratio,
        "rate_ratio_low": assessment.ratio_low,
        "rate_ratio_high": assessment.ratio_high,
        "crash_events_new": assessment.crashes_new,
        "crash_events_previous": assessment.crashes_old,
        "crash_events_needed": assessment.crashes_needed,
        "share_running": assessment.share,
        "share_running_low": assessment.share_low,
        "share_running_high": assessment.share_high,
        "share_measured": assessment.share_measured,
        "uptake_hours": assessment.uptake_hours,
        "exposure_hours": assessment.exposure_hours,
        "crashes_averted": assessment.averted,
        "assessed_at": assessment.assessed_at,
    }


def _publication_out(
    request: HttpRequest,
    publication: PublicationInPhasing,
    *,
    rules: policy_rules.Rules,
    now: datetime,
) -> dict:
    outlook = outlook_of.publication_outlook(publication, rules=rules, now=now)
    history = publication.source_package.get_absolute_url()
    return {
        "id": publication.pk,
        "release": publication.release.codename,
        "release_version": publication.release.version,
        "source_package": publication.source_package.name,
        "version": publication.version,
        "previous_version": publication.previous_version,
        "pocket": publication.pocket,
        "date_published": publication.date_published,
        "phased_update_percentage": publication.phased_update_percentage,
        "state": publication.state,
        "hold_reason": publication.hold_reason,
        "last_change": publication.last_change,
        "policy": _policy_out(rules),
        "next_step": {
            "kind": outlook.kind,
            "text": "; ".join(outlook_lines(outlook)),
            "percentage": outlook.next_percentage,
            "at": outlook.next_at,
            "full_at": outlook.full_at,
        },
        "problems": [
            {
                "kind": view.problem.kind,
                "title": view.title,
                "bucket_id": view.problem.bucket_id,
                "url": request.build_absolute_uri(view.url) if view.url else None,
                "report_count": view.problem.report_count,
                "overridden": view.overridden,
            }
            for view in selectors.problem_views(publication)
        ],
        "verdict": _verdict_out(publication),
        "history_url": request.build_absolute_uri(
            f"{history}?release={publication.release.codename}"
        ),
        "events_url": request.build_absolute_uri(
            reverse("api:publication_events", args=[publication.pk])
        ),
    }


def _bucket_out(request: HttpRequest, bucket) -> dict:
    return {
        "id": bucket.pk,
        "signature": bucket.signature,
        "function": bucket.function,
        "problem_type": bucket.problem_type,
        "source_package": bucket.source_package.name if bucket.source_package else None,
        "first_seen": bucket.first_seen,
        "last_seen": bucket.last_seen,
        "error_tracker_url": bucket.tracker_link,
        "url": request.build_absolute_uri(bucket.get_absolute_url()),
    }


def update_out(publication: Publication) -> dict:
    return {
        "publication_id": publication.pk,
        "release": publication.release.codename,
        "source_package": publication.source_package.name,
        "version": publication.version,
        "phased_update_percentage": publication.phased_update_percentage,
        "state": publication.state,
    }


def _username(user) -> str | None:
    # Public: a display name or the role, never a login name.
    return public_name(user) if user is not None else None


def scheduled_change_out(change: ScheduledChange) -> dict:
    publication = change.publication
    release = change.release or (publication.release if publication else None)
    package = change.source_package or (publication.source_package if publication else None)
    return {
        "id": change.pk,
        "action": change.action,
        "what": change.what,
        "target": change.target_label,
        "publication_id": change.publication_id,
        "release": release.codename if release else None,
        "source_package": package.name if package else None,
        "percentage": change.percentage,
        "policy": change.policy,
        "run_at": change.run_at,
        "reason": change.reason,
        "state": change.state,
        "scheduled_by": public_name(change.created_by),
        "created_at": change.created_at,
        "sign_off_needed": change.is_pending and change.outcome == AWAITING_SIGN_OFF,
        "signed_off_by": _username(change.signed_off_by),
        "signed_off_at": change.signed_off_at,
        "cancelled_by": _username(change.cancelled_by),
        "cancelled_at": change.cancelled_at,
        "cancel_reason": change.cancel_reason,
        "ran_at": change.ran_at,
        "outcome": change.outcome,
    }


def decision_out(row: machine_selectors.MachineRow) -> dict:
    return {
        "publication_id": row.publication.pk,
        "draw": row.decision.draw,
        "included": row.decision.included,
        "included_from_percentage": row.decision.included_from_percentage,
        "included_at": row.included_at,
        "waiting_for": row.waiting_for,
        "installs": row.installs,
        "kept_back_for": [
            {
                "publication_id": kept.need.needed.pk,
                "source_package": kept.need.needed.source,
                "version": kept.need.needed.version,
                "relation": kept.need.why,
                "draw": kept.draw,
                "percentage": kept.need.needed.percentage,
                "explanation": kept.words,
            }
            for kept in row.kept_back
        ],
    }


# --- Endpoints ----------------------------------------------------------------------------


# What the schema declares is what the endpoints check: a request the schema allows is
# answered, one it does not is a 400 (django-ninja validates the declarations).
CODENAME = r"^[a-z0-9][a-z0-9-]{0,39}$"
NAME_PART = r"^[A-Za-z0-9+.-]{0,200}$"
# As apt takes it (packages.domain.apt_phasing.machine_id_for_apt): one line of at most 200
# characters without control characters, its line end allowed.
MACHINE_ID = r"^[^\x00-\x1f\x7f]{1,200}\r?\n?$"
PageNumber = Annotated[int, Query(ge=1, le=1_000_000)]
Id = Annotated[int, Path(ge=1, le=2**63 - 1)]
Percentage = Annotated[int | None, Field(ge=0, le=100)]


class PublicationFilters(Schema):
    release: Annotated[str | None, Field(pattern=CODENAME)] = None
    state: Literal["phasing", "paused", "halted"] | None = None
    percentage_min: Percentage = None
    percentage_max: Percentage = None
    verdict: Literal["regressed", "healthy", "insufficient"] | None = None
    package: Annotated[
        str | None, Field(pattern=NAME_PART, description="Part of a source package name.")
    ] = None
    page: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    per_page: Annotated[int, Field(ge=1, le=MAX_PER_PAGE)] = DEFAULT_PER_PAGE


@router.get(
    "/publications/",
    response={200: PublicationPage, 400: ErrorOut, 404: ErrorOut},
    url_name="publications",
    summary="Publications in phasing, paused or halted",
)
def publications(request: HttpRequest, filters: Query[PublicationFilters]):
    """Filters as on the overview page: release (codename), state (phasing, paused,
    halted), verdict (regressed, healthy, insufficient), percentage_min and percentage_max
    (0..100), package (part of the package name, as the overview's `q`). An unknown
    release, or a page past the last, is a 404; a range whose lowest percentage is above
    its highest matches nothing; a parameter not listed here is a 400."""
    low, high = filters.percentage_min, filters.percentage_max
    if low is not None and high is not None and low > high:
        return {"count": 0, "next": None, "previous": None, "results": []}
    data = QueryDict(mutable=True)
    for name in ("release", "state", "verdict", "percentage_min", "percentage_max"):
        value = getattr(filters, name)
        if value is not None:
            data[name] = str(value)
    if filters.package is not None:
        data["q"] = filters.package  # the overview filter's name for it
    filterset = PublicationFilter(
        data,
        queryset=selectors.active_publications().order_by(
            "-release__version", "source_package__name", "version", "id"
        ),
    )
    if not filterset.is_valid():
        if "release" in filterset.errors:  # the pattern fits, but no such release
            raise HttpError(404, f"no release called {filters.release!r}")
        problems = [
            f"{field}: {' '.join(messages)}" if field != "__all__" else " ".join(messages)
            for field, messages in filterset.errors.items()
        ]
        raise HttpError(400, "; ".join(problems))
    page = _page(request, filterset.qs, page=filters.page, per_page=filters.per_page)
    policies, now = policies_by_scope(), timezone.now()
    results = [
        _publication_out(request, p, rules=policy_rules.resolve_for(policies, p), now=now)
        for p in page
    ]
    return {**_page_links(request, page), "results": results}


@router.get(
    "/publications/{publication_id}/events/",
    response={200: EventPage, 400: ErrorOut, 404: ErrorOut},
    url_name="publication_events",
    summary="Phasing events of one publication, newest first",
)
def publication_events(request: HttpRequest, publication_id: Id, page: PageNumber = 1):
    publication = get_object_or_404(Publication, pk=publication_id)
    events = PhasingEvent.objects.filter(publication=publication).order_by("-created_at", "-id")
    chunk = _page(request, events, page=page, per_page=MAX_PER_PAGE)
    results = [
        {
            "id": e.pk,
            "created_at": e.created_at,
            "kind": e.kind,
            "old_percentage": e.old_percentage,
            "new_percentage": e.new_percentage,
            "old_state": e.old_state,
            "new_state": e.new_state,
            "actor": e.actor_name,
            "reason": e.reason,
        }
        for e in chunk
    ]
    return {**_page_links(request, chunk), "results": results}


@router.get(
    "/scheduled-changes/",
    response={200: ScheduledChangePage, 400: ErrorOut, 404: ErrorOut},
    url_name="scheduled_changes",
    summary="Changes archive admins scheduled, and their outcome",
)
def scheduled_changes_list(
    request: HttpRequest,
    state: Literal["pending", "done", "failed", "cancelled"] | None = None,
    page: PageNumber = 1,
):
    """Pending changes soonest first; with another state or none, the latest first. A
    change waiting for a second archive admin's sign-off says so (sign_off_needed)."""
    changes = scheduled_changes()
    if state is not None:
        changes = changes.filter(state=state)
    if state != ScheduledState.PENDING:
        changes = changes.order_by("-run_at", "-id")
    chunk = _page(request, changes, page=page, per_page=MAX_PER_PAGE)
    return {**_page_links(request, chunk), "results": [scheduled_change_out(c) for c in chunk]}


@router.get(
    "/problems/",
    response={200: BucketPage, 400: ErrorOut, 404: ErrorOut},
    url_name="problems",
    summary="Problem buckets: public fields only",
)
def problems(request: HttpRequest, page: PageNumber = 1):
    chunk = _page(request, selectors.public_buckets(), page=page, per_page=DEFAULT_PER_PAGE)
    return {**_page_links(request, chunk), "results": [_bucket_out(request, b) for b in chunk]}


@router.get(
    "/problems/{bucket_id}/",
    response={200: BucketDetailOut, 400: ErrorOut, 404: ErrorOut},
    url_name="problem",
    summary="One problem bucket: report counts per version and the updates it affects",
)
def problem(request: HttpRequest, bucket_id: Id):
    bucket = get_object_or_404(selectors.public_buckets(), pk=bucket_id)
    counts = selectors.bucket_report_counts(bucket)[:MAX_PER_PAGE]
    affected = selectors.bucket_problems(bucket)[:MAX_PER_PAGE]
    return {
        **_bucket_out(request, bucket),
        "report_counts": [
            {
                "release": row["release__codename"],
                "source_package": row["source_package__name"],
                "version": row["version"],
                "reports": row["reports"],
                "systems": row["systems"],
                "first_reported": row["first_reported"],
                "last_reported": row["last_reported"],
            }
            for row in counts
        ],
        "affects": [
            {
                "publication_id": p.publication_id,
                "release": p.publication.release.codename,
                "source_package": p.publication.source_package.name,
                "version": p.publication.version,
                "kind": p.kind,
                "active": p.active,
                "state": p.publication.state,
                "phased_update_percentage": p.publication.phased_update_percentage,
                "overridden": p.is_overridden,
            }
            for p in affected
        ],
    }


@router.get(
    "/machine/",
    response={200: MachinePage, 400: ErrorOut, 404: ErrorOut},
    url_name="machine",
    summary="What apt decides for one machine on each update in phasing",
)
def machine(
    request: HttpRequest,
    machine_id: Annotated[str, Query(pattern=MACHINE_ID)],
    release: Annotated[str | None, Query(pattern=CODENAME)] = None,
    page: PageNumber = 1,
):
    """The draw of this machine for each publication in phasing (apt 2.1.16 and later),
    whether apt installs it now, the percentage from which it does, and when that is
    expected under the current policy."""
    try:
        machine_id = apt_phasing.machine_id_for_apt(machine_id)
    except ValueError as error:
        raise HttpError(400, str(error)) from error
    chosen = None
    if release:
        chosen = Release.objects.filter(codename=release).first()
        if chosen is None:
            raise HttpError(404, f"no release called {release!r}")
    chunk = _page(
        request,
        machine_selectors.machine_publications(release=chosen),
        page=page,
        per_page=MAX_PER_PAGE,
    )
    policies = policies_by_scope()
    rows = machine_selectors.machine_rows(
        list(chunk),
        machine_id=machine_id,
        policies=policies,
        now=timezone.now(),
        groups=dependency_groups(policies=policies),
    )
    return {
        "machine_id": machine_id,
        "release": chosen.codename if chosen else None,
        **_page_links(request, chunk),
        "results": [{**update_out(row.publication), **decision_out(row)} for row in rows],
    }
