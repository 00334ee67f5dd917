"""People of Launchpad publications: account, display name and, where visible, email.

A person is ``GET <person link>`` (``name``, ``display_name``,
``preferred_email_address_link``) and the address ``GET <that link>`` (``email``); what the
caller may not see comes back as ``tag:launchpad.net:2008:redacted``, an answer rather than
an error (lib/lp/registry/interfaces/person.py, lazr.restful's redaction).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from packages.sources.base import PersonRecord
from packages.sources.http import MalformedResponse, StatusError
from packages.sources.launchpad.api import LaunchpadClient

log = logging.getLogger(__name__)

REDACTED = "tag:launchpad.net:2008:redacted"


def _account_name(person_link: str) -> str:
    last = urlsplit(person_link).path.rstrip("/").rsplit("/", 1)[-1]
    return last[1:] if last.startswith("~") else ""


class LaunchpadPeople(LaunchpadClient):
    """Each person read once per sync (``people`` is the caller's memo)."""

    def _person(self, link: Any, people: dict[str, PersonRecord | None]) -> PersonRecord | None:
        if not isinstance(link, str) or not link or link == REDACTED:
            return None
        if link in people:
            return people[link]
        account = _account_name(link)
        record: PersonRecord | None = PersonRecord(account_name=account) if account else None
        try:
            body = self._http.get_json(self._checked_link(link), sign=self._signer())
        except (MalformedResponse, StatusError) as exc:
            log.warning("Launchpad: person %s could not be read: %s", link, exc)
        else:
            if isinstance(body, dict) and isinstance(body.get("name"), str) and body["name"]:
                display = body.get("display_name")
                record = PersonRecord(
                    account_name=body["name"],
                    name=display if isinstance(display, str) else "",
                    email=self._email(body.get("preferred_email_address_link")),
                )
            else:
                log.warning("Launchpad: person %s has no name: %.200r", link, body)
        people[link] = record
        return record

    def _email(self, link: Any) -> str:
        # Hidden addresses come back redacted; that is an answer, not an error.
        if not isinstance(link, str) or not link or link == REDACTED:
            return ""
        try:
            body = self._http.get_json(self._checked_link(link), sign=self._signer())
        except (MalformedResponse, StatusError) as exc:
            log.warning("Launchpad: email address %s could not be read: %s", link, exc)
            return ""
        email = body.get("email") if isinstance(body, dict) else None
        return email if isinstance(email, str) and email != REDACTED else ""
