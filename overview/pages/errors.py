"""How the site answers when something goes wrong: JSON under the API, a page elsewhere,
and a 503 that says so when the database does not answer (never a bare 500)."""

from __future__ import annotations

import logging
import sys
from datetime import datetime

from django.core.cache import cache
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils import timezone
from django.views import defaults

from overview.pages.wording import utc_time

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1/"
# Unreachable, refused, timed out, locked: the database is there but cannot answer now.
DATABASE_DOWN = (OperationalError, InterfaceError)
_DOWN_SINCE = "phasing:database-down-since"
# How long after the last failure an outage counts as over.
_OUTAGE_GAP_SECONDS = 120


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def api_error(status: int, detail: str) -> JsonResponse:
    return JsonResponse({"detail": detail}, status=status)


def database_down_since(now: datetime) -> datetime | None:
    """When this outage began, as far as the cache remembers (None if it cannot tell)."""
    try:
        cache.add(_DOWN_SINCE, now, timeout=_OUTAGE_GAP_SECONDS)
        cache.touch(_DOWN_SINCE, _OUTAGE_GAP_SECONDS)
        since = cache.get(_DOWN_SINCE)
    except Exception:  # the cache may be down too; the answer goes out all the same
        return None
    return since if isinstance(since, datetime) else None


def database_unavailable(request: HttpRequest, error: BaseException) -> HttpResponse:
    now = timezone.now()
    since = database_down_since(now)
    log.error("database unavailable for %s: %s", request.path, error)
    words = "The database is not answering" + (f" (since {utc_time(since)})" if since else "")
    if is_api(request):
        response: HttpResponse = api_error(503, f"{words}; try again in a minute.")
    else:
        # A page of its own: the usual layout reads the database (the footer, the user).
        response = HttpResponse(render_to_string("503.html", {"words": words}), status=503)
    response["Retry-After"] = "60"
    return response


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return api_error(400, "bad request")
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return api_error(403, "Forbidden")
    return defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return api_error(404, "Not Found")
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    error = sys.exc_info()[1]
    if isinstance(error, DATABASE_DOWN):
        return database_unavailable(request, error)
    if is_api(request):
        return api_error(500, "server error")
    return defaults.server_error(request)
