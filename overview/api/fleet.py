"""POST /api/v1/machines/: apt's decision for a fleet, every machine and every update.

apt draws per machine id (packages.domain.apt_phasing), so a fleet's answer is one draw per
machine and update in phasing; the updates are paged as elsewhere in the API, the
machines are not (up to MAX_FLEET of them in one request). A fleet that wants all its
machines in one bucket sets one ``APT::Machine-ID`` on all of them.
"""

from __future__ import annotations

from typing import Annotated

from django.http import HttpRequest
from django.utils import timezone
from ninja import Field, Router, Schema
from ninja.errors import HttpError

from overview.api.routes import CODENAME, MACHINE_ID, PageNumber
from overview.api.schemas import DecisionOut, ErrorOut, UpdateOut
from overview.api.shapes import MAX_PER_PAGE, _page, _page_links, decision_out, update_out
from overview.pages import machine_selectors
from packages.domain import apt_phasing
from packages.models import Release
from packages.selectors import dependency_groups, policies_by_scope

# Machines per request: 200 × 100 updates a page is at most 20,000 decisions.
MAX_FLEET = 200

router = Router()


class FleetIn(Schema):
    machine_ids: Annotated[
        list[Annotated[str, Field(pattern=MACHINE_ID)]],
        Field(min_length=1, max_length=MAX_FLEET),
    ]
    release: Annotated[str | None, Field(pattern=CODENAME)] = None


class FleetMachineOut(Schema):
    machine_id: str
    included_count: int
    decisions: list[DecisionOut]


class FleetPage(Schema):
    release: str | None
    count: int
    next: str | None
    previous: str | None
    updates: list[UpdateOut]
    machines: list[FleetMachineOut]


@router.post(
    "/machines/",
    response={200: FleetPage, 400: ErrorOut, 404: ErrorOut},
    url_name="machines",
    summary=f"What apt decides for up to {MAX_FLEET} machines on each update in phasing",
)
def machines(request: HttpRequest, fleet: FleetIn, page: PageNumber = 1):
    """For each machine id (used exactly as apt uses it: ``APT::Machine-ID`` verbatim,
    else the first line of /etc/machine-id) and each update in phasing: its draw, whether
    apt installs it now, the percentage from which it does, and when that is expected
    under the current policy. Up to 200 machine ids a request; the updates are paged,
    100 a page: POST the same body to ``next`` for the following page. To phase a fleet
    as one machine, give all its machines one ``APT::Machine-ID`` (apt_preferences(5)
    suggests a UUID): ``APT::Machine-ID "c0ffee00-1234-4abc-9def-0123456789ab";`` in a
    file under ``/etc/apt/apt.conf.d/``."""
    ids = []
    for index, text in enumerate(fleet.machine_ids):
        try:
            ids.append(apt_phasing.machine_id_for_apt(text))
        except ValueError as error:
            raise HttpError(400, f"machine_ids.{index}: {error}") from error
    chosen = None
    if fleet.release:
        chosen = Release.objects.filter(codename=fleet.release).first()
        if chosen is None:
            raise HttpError(404, f"no release called {fleet.release!r}")
    chunk = _page(
        request,
        machine_selectors.machine_publications(release=chosen),
        page=page,
        per_page=MAX_PER_PAGE,
    )
    publications = list(chunk)
    policies, now = policies_by_scope(), timezone.now()
    groups = dependency_groups(policies=policies)
    answers = []
    for machine_id in dict.fromkeys(ids):
        rows = machine_selectors.machine_rows(
            publications, machine_id=machine_id, policies=policies, now=now, groups=groups
        )
        answers.append(
            {
                "machine_id": machine_id,
                "included_count": sum(row.decision.included for row in rows),
                "decisions": [decision_out(row) for row in rows],
            }
        )
    return {
        "release": chosen.codename if chosen else None,
        **_page_links(request, chunk),
        "updates": [update_out(p) for p in publications],
        "machines": answers,
    }
