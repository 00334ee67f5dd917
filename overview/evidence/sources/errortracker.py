"""Problems of publications from the Ubuntu error tracker's public API (a CrashSource).

The API (ubuntu/error-tracker, src/errors/api/resources.py over src/errors/cassie.py) is
django-tastypie, GET only, JSON with ``format=json``. Every list answer is tastypie's
envelope ``{"meta": {"limit", "next", "offset", "previous", "total_count"}, "objects": [...]}``
and paginates (``limit=0`` asks for its maximum, 360), so ``meta.next`` is followed. Errors
are ``{"error_message": ...}`` with a non-2xx status.

A 404 means the tracker does not know the source version: it asks Launchpad whether the
primary archive ever published it (src/errors/api/resources.py 658-665,
src/errortracker/launchpad.py 458-464), so the answer lasts; it is not an outage. In
production the body is tastypie's canned "Sorry, this request could not be processed.
Please try again later." (tastypie resources.py 291-315 with DEBUG off), which explains
nothing and is never shown to people. The answer says so (``unknown_version``) and, when
a ``fallback`` source is given, carries what the reports held locally show; the policy
decides whether to hold or judge on those.

- ``package-version-new-buckets/?package=&previous_version=&new_version=``: objects
  ``{function, web_link}``, for a source and its two versions across all releases (no
  release parameter; cassie.py 706-736), so one answer serves every release. ``function`` is the
  bucket id itself (the crash signature);
  ``web_link`` is ``<root>/problem/<sha1 of the bucket id>`` or ``<root>/bucket/?id=<quoted
  id>``. The tracker has already kept only buckets absent from the previous version, not
  failed to retrace, and seen on more than 2 systems (cassie.get_package_new_buckets).
  Package install failures (apport's ``ProblemType: Package``) are bucketed there too, by
  their ``DuplicateSignature`` ``package:<binary>:<version>:<error>`` (daisy/submit.py
  buckets a report's DuplicateSignature as is), so a bucket id of that form is an install
  failure; with ``install_failures`` off they are left out (the tracker's own threshold
  of systems stands: the local minimum does not apply to it).
- ``package-rate-of-crashes/?package=&old_version=&new_version=&phased_update_percentage=
  &date=&release=&exclude_proposed=``: one object ``{increase, difference, web_link,
  previous_period_in_days, previous_average}`` (tastypie turns ``difference`` into an
  integer). ``release`` is the tracker's release name, "Ubuntu 24.04"; ``date`` is
  ``YYYYMMDD`` and bounds the previous version's daily counters (<= date), while "today"
  is the tracker's own UTC day (cassie.get_package_crash_rate). ``exclude_proposed`` is
  tested for truth as a string, so "False" would still exclude: we send it only to exclude.
  So is ``phased_update_percentage`` (cassie.py 683-684, ``if pup:`` on the raw string):
  "0" multiplies the baseline by 0 and any three crashes count as a rise. The rate is never
  asked at 0%; a halted update is asked with the percentage it had before its halt.

The public tracker never hands out restricted crash reports, so ``reports()`` yields none.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import requests

from overview.evidence.sources.base import (
    INSTALL_FAILURE,
    CrashAnswer,
    CrashQuery,
    CrashReportRecord,
    CrashSource,
    ProblemRecord,
    bucket_type,
)
from packages.sources.base import SourceError
from packages.sources.http import MalformedResponse, RetryingClient, StatusError

log = logging.getLogger(__name__)

# Codename -> the tracker's release name, for the releases it knows in 2025-26. A codename
# neither here nor in ``release_names`` makes that query's answer an error (hold), since a
# guessed name would silently compare against no data.
DEFAULT_RELEASE_NAMES: Mapping[str, str] = {
    "focal": "Ubuntu 20.04",
    "jammy": "Ubuntu 22.04",
    "noble": "Ubuntu 24.04",
    "oracular": "Ubuntu 24.10",
    "plucky": "Ubuntu 25.04",
    "questing": "Ubuntu 25.10",
    "resolute": "Ubuntu 26.04",
}

# The tracker computes the whole list on every page request, so ask for its largest page.
_PAGE_ALL = "0"
_MAX_PAGES = 50
# tastypie's TASTYPIE_CANNED_ERROR default: says nothing about what went wrong.
_CANNED = "Sorry, this request could not be processed"

NewBucketsKey = tuple[str, str, str]


class _UnknownVersion(SourceError):
    """The tracker answered 404: it does not know one of the two source versions."""


def _reason(exc: SourceError) -> str:
    """What went wrong, for people: the tracker's own canned text is not a reason."""
    if isinstance(exc, StatusError):
        where = urlsplit(exc.url).path.rstrip("/").rsplit("/", 1)[-1] or exc.url
        return f"the error tracker answered HTTP {exc.status} to {where}"
    text = str(exc)
    return text.split(_CANNED)[0].rstrip(" :({'\"") if _CANNED in text else text


def _unknown_words(query: CrashQuery) -> str:
    return (
        f"errors.ubuntu.com keeps no crash data for {query.source_package} {query.version} "
        f"or {query.previous_version}: it answers 404 for a source version Ubuntu's archive "
        "never published (a PPA's or another archive's version, say)"
    )


def release_names_from_versions(versions: Mapping[str, str]) -> dict[str, str]:
    """{"noble": "24.04"} -> {"noble": "Ubuntu 24.04"}: the tracker's naming of releases."""
    return {codename: f"Ubuntu {version}" for codename, version in versions.items() if version}


def _bucket_id(function: str, web_link: str) -> str:
    if function:
        return function
    parts = urlsplit(web_link)
    ids = parse_qs(parts.query).get("id")
    if ids and ids[0]:
        return ids[0]
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) >= 2 and segments[-2] == "problem":
        return segments[-1]
    return web_link


def _install_error(signature: str) -> str:
    """dpkg's error of an install failure's bucket id, package:<binary>:<version>:<error>:
    what the pages name it by. A version with an epoch holds a colon of its own."""
    parts = signature.split(":")
    skip = 5 if len(parts) > 5 and parts[2].isdigit() else 4
    return ":".join(parts[skip:]) or signature


class ErrorTrackerSource:
    """New buckets and crash-rate increases for (package, version, previous version)."""

    name = "errortracker"

    def __init__(
        self,
        *,
        api_root: str = "https://errors.ubuntu.com/api/1.0/",
        timeout: float = 10.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        exclude_proposed: bool = True,
        release_names: Mapping[str, str] | None = None,
        fallback: CrashSource | None = None,
        install_failures: bool = True,
    ) -> None:
        """``release_names`` maps a codename to the tracker's release name ("noble" ->
        "Ubuntu 24.04"); it extends DEFAULT_RELEASE_NAMES. Build it from the releases'
        versions with ``release_names_from_versions``. ``fallback`` answers for the
        versions the tracker does not know, from the reports held locally."""
        self.api_root = api_root if api_root.endswith("/") else api_root + "/"
        self.fallback = fallback
        self.install_failures = install_failures
        self.exclude_proposed = exclude_proposed
        self.release_names = {**DEFAULT_RELEASE_NAMES, **(release_names or {})}
        self._http = RetryingClient(
            service="the error tracker",
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            session=session,
            sleep=sleep,
        )

    def problems(
        self, queries: Sequence[CrashQuery], *, now: datetime
    ) -> dict[CrashQuery, CrashAnswer]:
        answers: dict[CrashQuery, CrashAnswer] = {}
        # New buckets are the same for every release of one source version pair.
        new_buckets: dict[NewBucketsKey, list[ProblemRecord] | SourceError] = {}
        unknown: list[CrashQuery] = []
        for query in queries:
            if query in answers:
                continue
            try:
                answers[query] = self._answer(query, now=now, new_buckets=new_buckets)
            except _UnknownVersion:
                answers[query] = CrashAnswer(unknown_version=_unknown_words(query))
                unknown.append(query)
            except SourceError as exc:
                log.warning(
                    "Error tracker: no crash data for %s %s: %s",
                    query.source_package,
                    query.version,
                    exc,
                )
                answers[query] = CrashAnswer(error=f"crash data unavailable: {_reason(exc)}")
            except Exception as exc:  # one bad answer must not cost the other queries theirs
                log.exception(
                    "Error tracker: unexpected failure for %s %s",
                    query.source_package,
                    query.version,
                )
                answers[query] = CrashAnswer(
                    error=f"crash data unavailable: {exc.__class__.__name__}: {exc}"
                )
        if unknown and self.fallback is not None:
            local = self.fallback.problems(unknown, now=now)
            for query in unknown:
                held = local.get(query) or CrashAnswer(error="no local answer")
                answers[query] = CrashAnswer(
                    problems=held.problems,
                    error=held.error,
                    previous_reports=held.previous_reports,
                    unknown_version=answers[query].unknown_version,
                )
        return answers

    def reports(self, *, since: datetime | None, now: datetime) -> Iterator[CrashReportRecord]:
        # Restricted reports (stack traces, environments) are not in the public API.
        return iter(())

    # -- one query ------------------------------------------------------------------------

    def _answer(
        self,
        query: CrashQuery,
        *,
        now: datetime,
        new_buckets: dict[NewBucketsKey, list[ProblemRecord] | SourceError],
    ) -> CrashAnswer:
        if not query.previous_version:
            # Nothing to compare with: phased-updater does not look for regressions of a
            # package's first version either, and the tracker would answer 404.
            return CrashAnswer()
        release_name = self.release_names.get(query.release)
        if not release_name:
            raise SourceError(f"no error-tracker release name for {query.release!r}")
        key = (query.source_package, query.previous_version, query.version)
        if key not in new_buckets:
            try:
                new_buckets[key] = list(self._new_buckets(query))
            except StatusError as exc:
                new_buckets[key] = _UnknownVersion(str(exc)) if exc.status == 404 else exc
            except SourceError as exc:
                new_buckets[key] = exc
        found = new_buckets[key]
        if isinstance(found, SourceError):
            raise found
        problems = list(found)
        # At 0% the tracker would scale the baseline by 0: not asked (see the module's doc).
        rate = (
            self._rate(query, release_name=release_name, now=now) if query.percentage > 0 else None
        )
        if rate is not None:
            problems.append(rate)
        return CrashAnswer(problems=tuple(problems))

    def _new_buckets(self, query: CrashQuery) -> Iterator[ProblemRecord]:
        params = {
            "format": "json",
            "package": query.source_package,
            "previous_version": query.previous_version,
            "new_version": query.version,
            "limit": _PAGE_ALL,
        }
        for item in self._objects("package-version-new-buckets/", params):
            function, web_link = item.get("function"), item.get("web_link")
            if (
                not isinstance(function, str)
                or not isinstance(web_link, str)
                or not (function or web_link)
            ):
                raise MalformedResponse(f"new bucket without function/web_link: {item!r:.200}")
            signature = _bucket_id(function, web_link)
            kind = bucket_type("", signature)
            if kind == INSTALL_FAILURE and not self.install_failures:
                continue
            yield ProblemRecord(
                kind="new_bucket",
                signature=signature,
                function=_install_error(signature) if kind == INSTALL_FAILURE else function,
                web_link=urljoin(self.api_root, web_link),
                bucket_type=kind,
            )

    def _rate(self, query: CrashQuery, *, release_name: str, now: datetime) -> ProblemRecord | None:
        params = {
            "format": "json",
            "package": query.source_package,
            "old_version": query.previous_version,
            "new_version": query.version,
            "phased_update_percentage": str(query.percentage),
            "date": self._baseline_date(query, now=now).strftime("%Y%m%d"),
            "release": release_name,
        }
        if self.exclude_proposed:
            params["exclude_proposed"] = "True"
        try:
            objects = list(self._objects("package-rate-of-crashes/", params))
        except StatusError as exc:
            if exc.status == 404:
                raise _UnknownVersion(str(exc)) from exc
            raise
        if len(objects) != 1:
            raise MalformedResponse(f"rate of crashes: expected one object, got {len(objects)}")
        result = objects[0]
        increase = result.get("increase")
        if not isinstance(increase, bool):
            raise MalformedResponse(f"rate of crashes without a boolean increase: {result!r:.200}")
        if not increase:
            return None
        difference = result.get("difference")
        web_link = result.get("web_link")
        if difference is not None and (
            isinstance(difference, bool) or not isinstance(difference, int | float)
        ):
            raise MalformedResponse(f"rate of crashes with difference {difference!r}")
        if web_link is not None and not isinstance(web_link, str):
            raise MalformedResponse(f"rate of crashes with web_link {web_link!r}")
        return ProblemRecord(
            kind="increased_rate",
            web_link=urljoin(self.api_root, web_link) if web_link else "",
            difference=float(difference) if difference is not None else None,
        )

    @staticmethod
    def _baseline_date(query: CrashQuery, *, now: datetime) -> date:
        # The previous version's counters up to this day are the baseline. The day the
        # update was published keeps the upgrade itself out of it, when the query knows it.
        published = getattr(query, "date_published", None)
        moment = published if isinstance(published, datetime) else now
        return moment.astimezone(UTC).date()

    def _objects(self, resource: str, params: Mapping[str, str]) -> Iterator[dict[str, Any]]:
        url = urljoin(self.api_root, resource)
        query_params: Mapping[str, str] | None = params
        root = urlsplit(self.api_root)
        for _ in range(_MAX_PAGES):
            body = self._http.get_json(url, params=query_params)
            if not isinstance(body, dict):
                raise MalformedResponse(f"{resource} answered {type(body).__name__}, not an object")
            if "error_message" in body:
                message = str(body["error_message"])
                raise MalformedResponse(
                    f"{resource} answered an error"
                    + ("" if _CANNED in message else f": {message!r:.200}")
                )
            objects = body.get("objects")
            if not isinstance(objects, list):
                raise MalformedResponse(f"{resource} answered without an objects list")
            for item in objects:
                if not isinstance(item, dict):
                    raise MalformedResponse(f"{resource} listed a non-object: {item!r:.100}")
                yield item
            meta = body.get("meta")
            following = meta.get("next") if isinstance(meta, dict) else None
            if not following:
                return
            if not isinstance(following, str):
                raise MalformedResponse(f"{resource} answered a bad meta.next: {following!r:.100}")
            url = urljoin(self.api_root, following)
            if urlsplit(url).netloc != root.netloc:
                raise MalformedResponse(f"{resource} paged outside the tracker: {url}")
            query_params = None
        raise MalformedResponse(f"{resource} paged more than {_MAX_PAGES} times")
