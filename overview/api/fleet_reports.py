"""POST /api/v1/fleet-reports/: the fleet agent's daily batch (agent/phasing-agent).

One machine a request: a hash of its machine id, its release, and for each package with a
phased candidate (or installed at one) what apt says: held back for phasing or not, the
installed and candidate versions. Packages naming no update the archive has are skipped
and listed in the answer; the machine's last report of an update is replaced, so sending
again the same day (or the next) counts it once. Limited per machine and hour like the
crash intake (429). Measured uptake feeds the judge, so a server whose endpoint anyone can
reach sets PHASING_FLEET_TOKEN and gives it to its machines (401 without it).
"""

from __future__ import annotations

import hmac
from typing import Annotated

from django.conf import settings
from django.http import HttpRequest
from django.utils import timezone
from ninja import Field, Router, Schema
from ninja.errors import HttpError

from overview.api.routes import CODENAME
from overview.api.schemas import ErrorOut
from overview.evidence import fleet

router = Router()

_NAME = r"^[a-z0-9][a-z0-9+.-]{0,99}$"
_DEBIAN_VERSION = r"(?:[0-9]+:)?[0-9A-Za-z][A-Za-z0-9.+~:-]{0,199}"
_VERSION = rf"^{_DEBIAN_VERSION}$"


class PackageIn(Schema):
    package: Annotated[str, Field(pattern=_NAME)]
    source: Annotated[str, Field(pattern=_NAME)]
    source_version: Annotated[str, Field(pattern=_VERSION)]
    candidate: Annotated[str, Field(pattern=_VERSION)]
    installed: Annotated[str, Field(pattern=rf"^(?:{_DEBIAN_VERSION})?$")] = ""
    held_back: bool


class FleetReportIn(Schema):
    machine: Annotated[str, Field(pattern=fleet.MACHINE_HASH)]
    release: Annotated[str, Field(pattern=CODENAME)]
    packages: Annotated[list[PackageIn], Field(max_length=fleet.MAX_PACKAGES)]


class FleetReportOut(Schema):
    kept: int
    skipped: list[str]


@router.post(
    "/fleet-reports/",
    response={200: FleetReportOut, 400: ErrorOut, 401: ErrorOut, 429: ErrorOut},
    url_name="fleet_reports",
    summary="One machine's report of what apt does with each phased update",
)
def fleet_reports(request: HttpRequest, report: FleetReportIn):
    """Sent daily by agent/phasing-agent: ``machine`` is the SHA-256 of the machine id
    (never the id itself), ``release`` the codename, and ``packages`` apt's answer for each
    binary with a phased candidate: ``held_back`` is python-apt's
    ``DepCache.phasing_applied()``. Counted per update: machines reporting it, held back,
    and on the new version (measured uptake). With ``PHASING_FLEET_TOKEN`` set, only a
    batch carrying ``Authorization: Bearer <token>`` is taken."""
    token = settings.PHASING_FLEET_TOKEN
    presented = request.headers.get("Authorization", "")
    if token and not hmac.compare_digest(presented.encode(), f"Bearer {token}".encode()):
        raise HttpError(401, "this server takes fleet reports with its token only")
    now = timezone.now()
    if fleet.fleet_rate_limited(report.machine, now=now):
        raise HttpError(429, "too many reports from this machine; try again in an hour")
    facts = [
        fleet.PackageFact(
            package=p.package,
            source=p.source,
            source_version=p.source_version,
            candidate=p.candidate,
            installed=p.installed,
            held_back=p.held_back,
        )
        for p in report.packages
    ]
    summary = fleet.fleet_batch_receive(report.machine, report.release, facts, now=now)
    return {"kept": summary.kept, "skipped": summary.skipped}
