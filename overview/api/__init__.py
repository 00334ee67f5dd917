"""The read-only JSON API, /api/v1/, with its OpenAPI schema and browsable docs.

Public data only: publications, their events, problem buckets as aggregates, and the
machine check. Lists are paginated with `next` and `previous` links and cost a fixed
number of queries whatever their length. Bad query parameters, and ones an endpoint does
not take, answer 400 with a message; `/api/v1/` lists the endpoints.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import ValidationError
from ninja.openapi.docs import Swagger

from overview.api.fleet import MAX_FLEET
from overview.api.fleet import router as fleet_router
from overview.api.fleet_reports import router as fleet_reports_router
from overview.api.index import router as index_router
from overview.api.parameters import refuse_unknown_parameters
from overview.api.routes import router
from overview.notices.schema import openapi_webhooks
from overview.pages.errors import database_unavailable
from packages.domain import apt_phasing

api = NinjaAPI(
    title="Phasing API",
    version="1",
    description=(
        "Read-only JSON about phased updates: publications in phasing with their "
        "percentages, policies, next steps and problems; phasing events; problem buckets "
        "(public aggregates only); and what apt decides for one machine or a fleet."
    ),
    urls_namespace="api",
    # Swagger UI from django-ninja's own static files ("ninja" is an installed app), no CDN.
    # Without deep links an operation's summary holds no link inside its button (axe:
    # nested-interactive); without highlighting its examples keep a readable contrast.
    docs=Swagger({"persistAuthorization": False, "deepLinking": False, "syntaxHighlight": False}),
    docs_url="/docs",
    # The notices POSTed to webhook endpoints (docs/teams.md), as OpenAPI 3.1 webhooks.
    openapi_extra=openapi_webhooks(),
)


# What a parameter that does not match its declared pattern should have been.
_PATTERN_WORDS = {
    "release": "a release codename: lower case letters, digits and -",
    "package": "part of a package name: letters, digits, +, - and .",
}


def _refused_value(request: HttpRequest, loc: tuple) -> object:
    """What the request sent at `loc` (django-ninja's errors leave the value out)."""
    try:
        if loc[0] == "query":
            return request.GET.get(str(loc[1]))
        value: object = json.loads(request.body)
        for part in loc[2:]:
            value = value[part]  # type: ignore[index]
        return value
    except (LookupError, TypeError, ValueError):
        return None


def _words(request: HttpRequest, item: dict, name: str) -> str:
    """The message of one refused parameter, as the endpoint itself would word it."""
    kind, value = item.get("type"), _refused_value(request, tuple(item.get("loc", ())))
    if kind == "string_pattern_mismatch" and name.startswith("machine_id"):
        try:  # the schema's pattern is apt's rule: let the rule say what is wrong
            apt_phasing.machine_id_for_apt(str(value))
        except ValueError as refused:
            return str(refused)
    if kind == "string_pattern_mismatch" and name in _PATTERN_WORDS:
        return _PATTERN_WORDS[name]
    if kind in ("too_short", "too_long") and name == "machine_ids":
        return f"1 to {MAX_FLEET} machine ids"
    return str(item.get("msg", "invalid"))


@api.exception_handler(ValidationError)
def _bad_parameters(request: HttpRequest, error: ValidationError) -> HttpResponse:
    messages = []
    for item in error.errors:
        parts = [str(part) for part in item.get("loc", ())]
        # Where: the parameter's own name (a body's fields after the body's name).
        parts = parts[2:] if parts[:1] == ["body"] else parts[1:]
        named = [part for part in parts if not part.isdigit()]
        words = _words(request, item, named[-1] if named else "")
        messages.append(f"{'.'.join(parts)}: {words}")
    return api.create_response(
        request, {"detail": "; ".join(messages) or "invalid parameters"}, status=400
    )


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def _database_unavailable(request: HttpRequest, error: Exception) -> HttpResponse:
    return database_unavailable(request, error)


@api.exception_handler(RequestDataTooBig)
def _body_too_large(request: HttpRequest, error: Exception) -> HttpResponse:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / (1024 * 1024)
    return api.create_response(
        request, {"detail": f"the request body is larger than {limit:g} MB"}, status=413
    )


api.add_decorator(refuse_unknown_parameters, mode="view")
api.add_router("", index_router)
api.add_router("", router)
api.add_router("", fleet_router)
api.add_router("", fleet_reports_router)
