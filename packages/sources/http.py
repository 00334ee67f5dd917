"""A small retrying JSON-over-HTTP client shared by the remote sources.

Every request has a timeout. Connection errors, timeouts, 5xx and 429 are retried with
exponential backoff (``backoff * 2**attempt`` seconds, or the server's ``Retry-After`` when
it asks for longer, capped); other 4xx answers fail at once. Failures are SourceError
subclasses whose message is meant for people. Nothing here imports Django.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import requests

from packages.sources.base import SourceError

log = logging.getLogger(__name__)

# Launchpad and the error tracker answer errors with short text bodies; a page of HTML from a
# proxy is not worth repeating in a message.
_BODY_EXCERPT = 300


class HttpError(SourceError):
    """A request failed; ``url`` says which one."""

    def __init__(self, message: str, *, url: str = "") -> None:
        super().__init__(message)
        self.url = url


class RetriesExhausted(HttpError):
    """Connection errors, timeouts, 5xx or 429 outlasted every retry."""


class StatusError(HttpError):
    """The server answered with a status that retrying will not change (4xx but 429)."""

    def __init__(self, message: str, *, url: str = "", status: int = 0) -> None:
        super().__init__(message, url=url)
        self.status = status


class MalformedResponse(HttpError):
    """The body is not JSON, or not of the shape the API documents."""


def _retry_after_seconds(value: str | None, *, now: datetime) -> float | None:
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _excerpt(response: requests.Response) -> str:
    text = (response.text or "").strip().replace("\n", " ")
    return text[:_BODY_EXCERPT]


class RetryingClient:
    """requests with a timeout on every call, bounded retries and readable failures."""

    def __init__(
        self,
        *,
        service: str,
        timeout: float,
        max_retries: int,
        backoff: float,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_retry_after: float = 120.0,
        user_agent: str = "phasing/0.1 (phased-update controller)",
    ) -> None:
        self.service = service
        self.timeout = timeout
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self.session = session if session is not None else requests.Session()
        self.sleep = sleep
        self.max_retry_after = max_retry_after
        self.user_agent = user_agent

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        sign: Callable[[], Mapping[str, str]] | None = None,
    ) -> requests.Response:
        """One logical request; ``sign`` makes fresh auth headers for each attempt."""
        attempts = self.max_retries + 1
        last_problem = ""
        for attempt in range(attempts):
            request_headers = {"Accept": "application/json", "User-Agent": self.user_agent}
            request_headers.update(headers or {})
            if sign is not None:
                # OAuth nonces must not repeat, so every attempt is signed anew.
                request_headers.update(sign())
            delay = self.backoff * (2**attempt)
            try:
                response = self.session.request(
                    method,
                    url,
                    params=params,
                    data=data,
                    headers=request_headers,
                    timeout=self.timeout,
                    allow_redirects=True,
                )
            except requests.Timeout:
                last_problem = f"no answer within {self.timeout:g} s"
            except requests.ConnectionError as exc:
                last_problem = f"connection failed ({exc.__class__.__name__})"
            except requests.RequestException as exc:
                raise HttpError(
                    f"{self.service} request to {url} could not be made: {exc}", url=url
                ) from exc
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return response
                if status == 429 or status >= 500:
                    last_problem = f"HTTP {status}"
                    retry_after = _retry_after_seconds(
                        response.headers.get("Retry-After"), now=datetime.now(UTC)
                    )
                    if retry_after is not None:
                        delay = max(delay, min(retry_after, self.max_retry_after))
                else:
                    raise StatusError(
                        f"{self.service} answered HTTP {status} for {method} {url}: "
                        f"{_excerpt(response) or response.reason}",
                        url=url,
                        status=status,
                    )
            if attempt + 1 < attempts:
                log.info(
                    "%s: %s for %s %s; retrying in %.2f s (%d/%d)",
                    self.service,
                    last_problem,
                    method,
                    url,
                    delay,
                    attempt + 1,
                    self.max_retries,
                )
                self.sleep(delay)
        raise RetriesExhausted(
            f"{self.service}: {method} {url} failed: {last_problem} "
            f"after {attempts} attempt{'s' if attempts != 1 else ''}",
            url=url,
        )

    def get_json(
        self,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        sign: Callable[[], Mapping[str, str]] | None = None,
    ) -> Any:
        response = self.request("GET", url, params=params, sign=sign)
        return decode_json(response, service=self.service)


def decode_json(response: requests.Response, *, service: str) -> Any:
    try:
        return json.loads(response.content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise MalformedResponse(
            f"{service} answered {response.url} with a body that is not JSON "
            f"({exc.__class__.__name__}: {_excerpt(response)[:80]!r})",
            url=response.url,
        ) from exc
