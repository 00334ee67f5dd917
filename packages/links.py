"""Links out to where people work: the archive's pages, its bug tracker, people, buckets.

Every URL is built from a configured template (``PHASING_LINK_*``, defaults for Ubuntu's
Launchpad and errors.ubuntu.com), so a self-hosted archive points at its own tracker; an
empty template means no link, and the name is shown as plain text. Each value is
percent-quoted into the template and the result must be an http(s) URL
(packages.domain.inputs), so no name, however hostile, becomes a link a browser would run.

Shapes (checked against the services' code):
- Launchpad: ``/ubuntu/+source/<source>/+publishinghistory`` and ``/<version>``
  (lp.registry's distribution source package and release pages); the upload's .changes as
  ``SourcePackagePublishingHistory.changesFileUrl()`` answers it, a ProxiedLibraryFileAlias
  under the archive, ``/ubuntu/+archive/primary/+files/<source>_<version without
  epoch>_source.changes``; ``https://bugs.launchpad.net/bugs/<n>``; ``/~<account>``.
- errors.ubuntu.com (ubuntu/error-tracker): ``/problem/<sha1 of the bucket id>``
  (src/errors/urls.py and api/resources.py, which links every bucket so) and the front
  page filtered by package, ``/?package=<source>&period=<day|week|month|year>``
  (src/errors/static/js/most_common_problems.js).
"""

from __future__ import annotations

import functools
import hashlib
import string
from collections.abc import Callable, Iterable
from typing import Protocol
from urllib.parse import quote

from django.conf import settings
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from packages.domain import change_words as words
from packages.domain import inputs

# The placeholders each template may use.
PLACEHOLDERS = {
    "PHASING_LINK_SOURCE": {"source"},
    "PHASING_LINK_VERSION": {"source", "version", "version_no_epoch"},
    "PHASING_LINK_CHANGES": {"source", "version", "version_no_epoch"},
    "PHASING_LINK_BUG": {"bug"},
    "PHASING_LINK_PERSON": {"person"},
    "PHASING_LINK_BUCKET": {"signature", "signature_sha1"},
    "PHASING_LINK_PACKAGE_ERRORS": {"source"},
}


def template_problem(setting: str, template: str) -> str:
    """Why a configured template cannot build links ('' when it can, or is empty)."""
    if not template:
        return ""
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        return f"{setting} is not a template: {exc}"
    unknown = names - PLACEHOLDERS[setting]
    if unknown:
        return f"{setting} uses {sorted(unknown)}; it may use {sorted(PLACEHOLDERS[setting])}"
    sample = template.format(**{name: "x" for name in PLACEHOLDERS[setting]})
    if not inputs.is_safe_link(sample):
        return f"{setting} must be an http(s) URL, not {template!r}"
    return ""


def build(setting: str, **values: str | int) -> str:
    """The URL of a template with each value percent-quoted, or '' when the template is
    empty, a value is missing, or the result is not an http(s) URL."""
    template: str = getattr(settings, setting, "")
    if not template or any(value in ("", None) for value in values.values()):
        return ""
    return _built(template, tuple(values.items()))


# A page links the same versions, bugs and people on every view: each URL is built and
# checked once per process. Keyed by the template itself, so a changed setting misses.
@functools.lru_cache(maxsize=8192)
def _built(template: str, values: tuple[tuple[str, str | int], ...]) -> str:
    url = template.format(**{name: quote(str(value), safe="") for name, value in values})
    return url if inputs.is_safe_link(url) else ""


def _without_epoch(version: str) -> str:
    return version.split(":", 1)[1] if ":" in version else version


def source_url(source: str) -> str:
    return build("PHASING_LINK_SOURCE", source=source)


def version_url(source: str, version: str) -> str:
    return build(
        "PHASING_LINK_VERSION",
        source=source,
        version=version,
        version_no_epoch=_without_epoch(version),
    )


def changes_url(source: str, version: str) -> str:
    return build(
        "PHASING_LINK_CHANGES",
        source=source,
        version=version,
        version_no_epoch=_without_epoch(version),
    )


def bug_url(bug: int) -> str:
    return build("PHASING_LINK_BUG", bug=bug)


def person_url(account_name: str) -> str:
    return build("PHASING_LINK_PERSON", person=account_name)


def bucket_url(signature: str) -> str:
    return build(
        "PHASING_LINK_BUCKET",
        signature=signature,
        signature_sha1=hashlib.sha1(signature.encode()).hexdigest() if signature else "",
    )


def package_errors_url(source: str) -> str:
    return build("PHASING_LINK_PACKAGE_ERRORS", source=source)


def anchor(url: str, text: object, *, title: str = "") -> SafeString:
    """``<a>`` to a link out, or the text alone (escaped) when there is no link."""
    if not url:
        return format_html("{}", text)
    if title:
        return format_html(
            '<a class="out" href="{}" rel="noopener" title="{}">{}</a>', url, title, text
        )
    return format_html('<a class="out" href="{}" rel="noopener">{}</a>', url, text)


def bugs_html(bugs: Iterable[int]) -> SafeString:
    """ "LP: #1, #2", each number linked to its bug: the bugs an upload closes."""
    numbers = [n for n in bugs if isinstance(n, int) and not isinstance(n, bool)]
    if not numbers:
        return SafeString("")
    return format_html(
        "closes LP: {}",
        format_html_join(", ", "{}", ((anchor(bug_url(n), f"#{n}"),) for n in numbers)),
    )


class _Person(Protocol):
    account_name: str
    name: str


def people_html(
    *, uploader: _Person | None, signer: _Person | None, sponsor: _Person | None
) -> SafeString:
    """words.upload_people with each person's name linked to their page (Launchpad's ~name)."""
    tokens: dict[str, str] = {}
    linked: dict[str, SafeString] = {}

    def token(person: _Person | None) -> str:
        if person is None:
            return ""
        key = tokens.setdefault(person.account_name, f"p{len(tokens)}")
        linked[key] = anchor(person_url(person.account_name), person.name or person.account_name)
        return "{" + key + "}"

    text = words.upload_people(
        uploader=token(uploader), signer=token(signer), sponsor=token(sponsor)
    )
    return format_html(text, **linked) if text else SafeString("")


def package_links_html(source: str) -> SafeString:
    """The package's pages elsewhere, "archive · errors": its publishing history and its
    error-tracker page; nothing when neither is configured."""
    found = [
        (url, title, text)
        for url, text, title in (
            (source_url(source), "archive", "Publishing history in the archive"),
            (package_errors_url(source), "errors", "Problems in the error tracker"),
        )
        if url
    ]
    if not found:
        return SafeString("")
    return format_html(
        '<small class="out-links">{}</small>',
        format_html_join(" · ", '<a class="out" href="{}" rel="noopener" title="{}">{}</a>', found),
    )


# By name, for the template tag {% link_out "version" source version %}.
BUILDERS: dict[str, Callable[..., str]] = {
    "source": source_url,
    "version": version_url,
    "changes": changes_url,
    "bug": bug_url,
    "person": person_url,
    "bucket": bucket_url,
    "package_errors": package_errors_url,
}
