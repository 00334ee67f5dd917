"""Refuse requests no page can answer, before they reach a view or the database; answer a
database that is down with a 503; the site's own error pages in development too."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.response import HttpResponseBase
from django.urls import Resolver404, resolve

from overview.pages.errors import (
    DATABASE_DOWN,
    api_error,
    database_unavailable,
    is_api,
    not_found,
    server_error,
)

log = logging.getLogger("django.request")


class RejectNulBytesMiddleware:
    """A NUL byte in the path or query string is never valid input, and PostgreSQL refuses
    it in a query; answer 400 instead of letting a view fail with a 500."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            "\x00" in request.path
            or "\x00" in request.META.get("QUERY_STRING", "")
            or any("\x00" in value for values in request.GET.lists() for value in values[1])
        ):
            message = "NUL bytes are not allowed in a request."
            if is_api(request):
                return api_error(400, message)
            return HttpResponseBadRequest(message, content_type="text/plain")
        return self.get_response(request)


class ApiErrorsAsJsonMiddleware:
    """Under the API every error is JSON, also the 404 of an address no endpoint has, which
    Django answers with its own HTML page in development (DEBUG skips handler404)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            is_api(request)
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            replaced = api_error(response.status_code, response.reason_phrase)
            for header in ("Retry-After", "Allow"):
                if header in response:
                    replaced[header] = response[header]
            return replaced
        return response


class DatabaseUnavailableMiddleware:
    """A view that finds the database gone answers 503 (JSON under the API), in development
    as in production, rather than a server error page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, DATABASE_DOWN):
            return database_unavailable(request, exception)
        return None


class StyledErrorsInDevelopmentMiddleware:
    """With DEBUG on (the demo), Django answers a 404 and a 500 with its technical pages,
    which skip handler404 and handler500: a newcomer trying the demo would meet a URLconf
    dump. Everyone but a superuser (a developer) gets the site's own pages instead, as in
    production; the 500's traceback still goes to the log."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def _styled(self, request: HttpRequest) -> bool:
        return settings.DEBUG and not is_api(request) and not request.user.is_superuser

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self._styled(request):
            # An address no route takes never reaches a view (nor process_exception).
            try:
                resolve(request.path_info, getattr(request, "urlconf", None))
            except Resolver404 as error:
                return not_found(request, error)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not self._styled(request) or isinstance(exception, DATABASE_DOWN):
            return None  # DatabaseUnavailableMiddleware answers a database that is down
        if isinstance(exception, Http404):
            return not_found(request, exception)
        log.error("Internal Server Error: %s", request.path, exc_info=exception)
        return server_error(request)


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, with each policy built once instead of on every answer
    (static files and cached pages included): the site sets its policies in settings only,
    with no nonce and no per-view change, so the header is the same string every time. A
    response or request that does carry its own parts is built as django-csp builds it."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        if getattr(request, "_csp_nonce", None) is not None or any(
            getattr(response, name, None) is not None for name in _PER_RESPONSE_PARTS
        ):
            return super().process_response(request, response)
        if response.status_code in (500, 404) and settings.DEBUG:
            return response
        for header, setting, exempt in _POLICIES:
            config = getattr(settings, setting, None) or {}
            policy = _policy(header, repr(config))
            prefixes = tuple(config.get("EXCLUDE_URL_PREFIXES", None) or ())
            if (
                policy
                and header not in response
                and getattr(response, exempt, False) is False
                and not request.path_info.startswith(prefixes)
            ):
                response[header] = policy
        # As django-csp: a nonce asked for after the header is written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)  # type: ignore[attr-defined]
        return response


_PER_RESPONSE_PARTS = (
    "_csp_config",
    "_csp_update",
    "_csp_replace",
    "_csp_config_ro",
    "_csp_update_ro",
    "_csp_replace_ro",
)
_POLICIES = (
    (HEADER, "CONTENT_SECURITY_POLICY", "_csp_exempt"),
    (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", "_csp_exempt_ro"),
)


@functools.lru_cache(maxsize=8)
def _policy(header: str, config: str) -> str:
    """The header's policy as django-csp builds it from settings (`config` is the
    setting's repr: a changed setting builds again)."""
    return build_policy(report_only=header == HEADER_REPORT_ONLY)
