"""Refuse requests no page can answer, before they reach a view or the database."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest


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
            return HttpResponseBadRequest(
                "NUL bytes are not allowed in a request.", content_type="text/plain"
            )
        return self.get_response(request)
