"""Pages kept for anonymous visitors until the data changes: never stale, no time-to-live.

An entry is kept under its URL together with the stamp it was rendered at: the data
version (packages.data_version, raised by the database on every committed write) and
the minute (relative times such as "5 min ago" change with it). A request is answered
from the cache only when the stamp is still the current one, so a visitor sees a change
as soon as it is committed; otherwise the page is rendered and the entry replaced. There
is one entry per URL, so entries need no expiry to stay bounded; views opt in per
response (`mark_cacheable`) only for URLs whose every parameter they validated.

The lookup is a middleware ahead of sessions, authentication and CSRF, so a hit costs
one small query (the version) and one cache read. When the cache (Redis) cannot be
reached, pages are rendered as if there were no cache, and a warning is logged.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils import timezone

from packages.data_version import data_version

log = logging.getLogger(__name__)

_VIEW_FLAG = "anonymous_page_cache"
_RESPONSE_FLAG = "page_cacheable"
_WARN_EVERY = 60.0
_last_warning = 0.0


def anonymous_page_cache(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Let the middleware answer this view's anonymous GETs from the cache."""
    setattr(view, _VIEW_FLAG, True)
    return view


def mark_cacheable(response: HttpResponse) -> HttpResponse:
    """The view vouches that this response is the same for every anonymous visitor and
    that its URL is one of a bounded set (every parameter validated)."""
    setattr(response, _RESPONSE_FLAG, True)
    return response


def current_stamp() -> str:
    """What a cached page must have been rendered at to be served: version and minute."""
    return f"{data_version()}:{int(timezone.now().timestamp() // 60)}"


def _key(request: HttpRequest) -> str:
    return "page:" + hashlib.sha256(request.get_full_path().encode()).hexdigest()


def _warn(action: str, error: Exception) -> None:
    global _last_warning
    if time.monotonic() - _last_warning >= _WARN_EVERY:
        _last_warning = time.monotonic()
        log.warning("page cache unavailable (%s: %s); pages are rendered uncached", action, error)


def _cache_get(key: str) -> Any:
    try:
        return caches[settings.PHASING_PAGE_CACHE_ALIAS].get(key)
    except Exception as error:  # Redis down: serve the page without the cache
        _warn("get", error)
        return None


def _cache_set(key: str, value: object) -> None:
    try:
        caches[settings.PHASING_PAGE_CACHE_ALIAS].set(key, value, timeout=None)
    except Exception as error:
        _warn("set", error)


def _is_anonymous(request: HttpRequest) -> bool:
    return (
        settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
    )


def _opted_in(request: HttpRequest) -> bool:
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return False
    return getattr(match.func, _VIEW_FLAG, False)


class AnonymousPageCacheMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not (
            settings.PHASING_PAGE_CACHE
            and request.method == "GET"
            and _is_anonymous(request)
            and _opted_in(request)
        ):
            return self.get_response(request)
        stamp, key = current_stamp(), _key(request)
        entry = _cache_get(key)
        if isinstance(entry, tuple) and len(entry) == 3 and entry[0] == stamp:
            # The headers the middleware after this one set (X-Frame-Options...) come too.
            _, headers, content = entry
            return HttpResponse(content, headers=headers)
        response = self.get_response(request)
        if (
            getattr(response, _RESPONSE_FLAG, False)
            and response.status_code == 200
            and not response.cookies
            and not response.streaming
        ):
            _cache_set(key, (stamp, dict(response.headers), response.content))
        return response
