"""The endpoints of the read-only JSON API and how they shape their answers."""

from __future__ import annotations

from typing import Annotated, Literal

from django.db.models import QuerySet
from django.http import HttpRequest, QueryDict
from django.shortcuts import get_object_or_404
from django.utils import timezone
from ninja import Field, Path, Query, Router, Schema
from ninja.errors import HttpError

from overview.api.schemas import (
    BucketDetailOut,
    BucketPage,
    ErrorOut,
    EventPage,
    MachinePage,
    PublicationOut,
    PublicationPage,
    ScheduledChangePage,
)
from overview.api.shapes import (
    DEFAULT_PER_PAGE,
    MAX_PER_PAGE,
    _bucket_out,
    _page,
    _page_links,
    _publication_out,
    decision_out,
    scheduled_change_out,
    update_out,
)
from overview.pages import kept, machine_selectors, selectors
from overview.pages.filters import PublicationFilter
from packages.domain import apt_phasing
from packages.domain import policy as policy_rules
from packages.models import PhasingEvent, Publication, Release, ScheduledState
from packages.selectors import dependency_groups, policies_by_scope, scheduled_changes

router = Router()

# --- Helpers ----------------------------------------------------------------------------


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
    version = kept.current_version()
    if version is None:  # inside a transaction: nothing is kept
        page = _page(request, filterset.qs, page=filters.page, per_page=filters.per_page)
        return {
            **_page_links(request, page),
            "results": _rows(request, list(page), timezone.now()),
        }
    # The whole order of the filtered updates, as ids, is kept per data version, as the
    # overview keeps its own: a page, the next one or the same again costs no sort of every
    # update in phasing. A package search, which has no bound, reads its own page.
    ids_in_order = filterset.qs.values_list("pk", flat=True)
    ordered: QuerySet[Publication, int] | list[int] = ids_in_order
    if filters.package is None:
        key = ("api-order", tuple(sorted(data.items())))
        ordered = kept.kept(key, lambda: list(ids_in_order), version=version)
    page = _page(request, ordered, page=filters.page, per_page=filters.per_page)
    now = timezone.now()
    # Each publication's answer is shaped and checked against its schema once per data
    # version and minute (its next step says when), for this site's address (its links):
    # a view reads its page's ids and answers with the kept rows, as ninja would write them.
    known: dict[int, dict] = kept.kept(
        ("api-publications", int(now.timestamp() // 60), request.build_absolute_uri("/")),
        dict,
        version=version,
    )
    ids = list(page.object_list)  # the page's slice of the ids (Paginator slices its input)
    missing = [pk for pk in ids if pk not in known]
    if missing:
        records = selectors.active_publications().filter(pk__in=missing)
        for row in _rows(request, list(records), now):
            known[row["id"]] = PublicationOut.model_validate(row).model_dump()
    answer = {**_page_links(request, page), "results": [known[pk] for pk in ids if pk in known]}
    from overview.api import api  # the API this router is part of (it imports the router)

    return api.create_response(request, answer, status=200)


def _rows(request: HttpRequest, records: list, now) -> list[dict]:
    policies = policies_by_scope()
    return [
        _publication_out(request, p, rules=policy_rules.resolve_for(policies, p), now=now)
        for p in records
    ]


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
