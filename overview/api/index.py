"""GET /api/v1/: the API's endpoints, each with its address and what it answers."""

from __future__ import annotations

from django.http import HttpRequest
from django.urls import reverse
from ninja import Router, Schema

router = Router()


class EndpointOut(Schema):
    name: str
    method: str
    url: str
    description: str


class IndexOut(Schema):
    title: str
    openapi: str
    docs: str
    endpoints: list[EndpointOut]


# (url name, method, the path's parameters as {name}, what it answers), in reading order.
_ENDPOINTS = (
    (
        "publications",
        "GET",
        "",
        "Updates in phasing, paused or halted; filters: release, "
        "state, verdict, percentage_min, percentage_max, package (part of the name).",
    ),
    (
        "publication_events",
        "GET",
        "{publication_id}",
        "Phasing events of one publication, newest first.",
    ),
    ("scheduled_changes", "GET", "", "Changes archive admins scheduled, and their outcome."),
    ("problems", "GET", "", "Problem buckets: public fields only."),
    (
        "problem",
        "GET",
        "{bucket_id}",
        "One problem bucket: report counts per version and the updates it affects.",
    ),
    (
        "machine",
        "GET",
        "",
        "What apt decides for one machine (machine_id) on each update in phasing.",
    ),
    ("machines", "POST", "", "What apt decides for up to 200 machines on each update in phasing."),
)


def _url(request: HttpRequest, name: str, placeholder: str) -> str:
    if not placeholder:
        return request.build_absolute_uri(reverse(f"api:{name}"))
    # Reversed with a stand-in id, then the stand-in shown as the parameter's name.
    return request.build_absolute_uri(reverse(f"api:{name}", args=[1])).replace(
        "/1/", f"/{placeholder}/"
    )


@router.get("/", response=IndexOut, url_name="index", summary="The API's endpoints")
def index(request: HttpRequest) -> dict:
    """Where each endpoint is and what it answers; the OpenAPI schema says the rest."""
    return {
        "title": "Phasing API",
        "openapi": request.build_absolute_uri(reverse("api:openapi-json")),
        "docs": request.build_absolute_uri(reverse("api:openapi-view")),
        "endpoints": [
            {
                "name": name,
                "method": method,
                "url": _url(request, name, placeholder),
                "description": description,
            }
            for name, method, placeholder, description in _ENDPOINTS
        ],
    }
