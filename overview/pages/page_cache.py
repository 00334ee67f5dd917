"""Pages kept for anonymous visitors until the data changes: never stale, no time-to-live.

An entry is kept under its URL together with the stamp it was rendered at: the data
version (packages.data_version, raised by the database on every committed write) and
the minute (relative times such as "5 min ago" change with it). A request is answered
from the cache only when the stamp is still the current one, so a visitor sees a change
as soon as it is committed; otherwise the page is rendered and the entry replaced. There
is one entry per URL, so entries need no expiry to stay bounded; views opt in per
response (`mark_cacheable`) only for URLs whose every parameter they validated.

The lookup is a middleware ahead of sessions, authentication and CSRF, so a hit costs
one small query (the version) and a read of this process's last pages, or of the shared
cache (Redis). When the cache (Redis) cannot be
reached, pages are rendered as if there were no cache, and a warning is logged.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, get_urlconf, resolve
from django.utils import timezone

from overview.pages.errors import DATABASE_DOWN
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


# The last pages this process served, in front of the shared cache: a hit then costs only
# the version query. Entries carry their stamp like the shared ones, so they are never
# served stale; the oldest goes when there are more than this many.
_LOCAL_ENTRIES = 32
_local: OrderedDict[str, tuple[str, dict[str, str], bytes]] = OrderedDict()
_local_lock = threading.Lock()


def _cache_get(key: str, stamp: str) -> Any:
    with _local_lock:
        entry = _local.get(key)
        if entry is not None and entry[0] == stamp:
            _local.move_to_end(key)
            return entry
    try:
        entry = caches[settings.PHASING_PAGE_CACHE_ALIAS].get(key)
    except Exception as error:  # Redis down: serve the page without the cache
        _warn("get", error)
        return None
    if isinstance(entry, tuple) and len(entry) == 3 and entry[0] == stamp:
        _remember(key, entry)
    return entry


def _remember(key: str, entry: tuple[str, dict[str, str], bytes]) -> None:
    with _local_lock:
        _local[key] = entry
        _local.move_to_end(key)
        while len(_local) > _LOCAL_ENTRIES:
            _local.popitem(last=False)


def local_pages_forget() -> None:
    """Forget this process's last pages (tests that start the data version again)."""
    with _local_lock:
        _local.clear()


def _cache_set(key: str, value: tuple[str, dict[str, str], bytes]) -> None:
    _remember(key, value)
    try:
        caches[settings.PHASING_PAGE_CACHE_ALIAS].set(key, value, timeout=None)
    except Exception as error:
        _warn("set", error)


def _is_anonymous(request: HttpRequest) -> bool:
    return settings.SESSION_COOKIE_NAME not in request.COOKIES and "messages" not in request.COOKIES


def _opted_in(request: HttpRequest) -> bool:
    return _opted_in_path(request.path_info, get_urlconf(), settings.ROOT_URLCONF)


# Resolving the path was a tenth of a cached page's cost: each path's answer is kept (the
# last 1,024), keyed by what resolving depends on.
@functools.lru_cache(maxsize=1024)
def _opted_in_path(path: str, urlconf: str | None, root_urlconf: str) -> bool:
    try:
        match = resolve(path, urlconf)
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
        try:
            stamp = current_stamp()
        except DATABASE_DOWN:
            # The view answers a database that is down (a 503), not this middleware.
            return self.get_response(request)
        key = _key(request)
        entry = _cache_get(key, stamp)
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
