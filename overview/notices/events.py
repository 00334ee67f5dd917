"""What each announcement says: the notices (type and JSON data) built from the rows that
packages.services.announcements names, one query per kind of row.

The JSON of every notice is {"type", "timestamp", "data"} (the Standard Webhooks
shape); `data` always has `title` (the update or release), `summary` (what happened, in a
few words) and `url` (the page to open), so the chat formats need nothing else. The
schema is in docs/teams.md and in overview.api (WebhookNotice).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urljoin

from django.conf import settings
from django.urls import NoReverseMatch, reverse

from overview.models import NoticeType
from packages.models import EventKind, PhasingEvent, Publication, ScheduledChange
from packages.services import announcements

# The update's own page on the site (the pages of `overview` serve it).
UPDATE_PAGE = "/updates/{id}/"

NOTICE_OF_EVENT: dict[str, str] = {
    EventKind.HALTED: NoticeType.HALTED,
    EventKind.RESUMED: NoticeType.RESUMED,
    EventKind.PAUSED: NoticeType.PAUSED,
    EventKind.RELEASED: NoticeType.RELEASED,
    EventKind.FROZEN: NoticeType.FROZEN,
}


@dataclass(frozen=True)
class Notice:
    type: str
    data: dict[str, Any]

    def payload(self, *, now: datetime) -> dict[str, Any]:
        return {"type": self.type, "timestamp": now.isoformat(), "data": self.data}


def site_url(path: str) -> str:
    return urljoin(settings.PHASING_SITE_URL.rstrip("/") + "/", path.lstrip("/"))


def _admin_url(name: str, pk: int) -> str:
    try:
        return site_url(reverse(name, args=[pk]))
    except NoReverseMatch:  # an admin without that model: the site is still a link
        return site_url("/")


def update_data(publication: Publication) -> dict[str, Any]:
    return {
        "id": publication.pk,
        "package": publication.source_package.name,
        "version": publication.version,
        "release": publication.release.codename,
        "pocket": publication.pocket,
        "percentage": publication.phased_update_percentage,
        "state": publication.state,
        "url": site_url(UPDATE_PAGE.format(id=publication.pk)),
    }


def _update_title(publication: Publication) -> str:
    return (
        f"{publication.source_package.name} {publication.version} in "
        f"{publication.release.codename}-{publication.pocket}"
    )


def wanted(topic: str, items: Iterable[announcements.Item]) -> list[announcements.Item]:
    """The items that make a notice; the others are dropped without a query."""
    if topic == announcements.PHASING_EVENTS:
        return [item for item in items if item[1] in NOTICE_OF_EVENT]
    if topic in (announcements.SIGN_OFF_REQUESTED, announcements.DATA_STALE):
        return list(items)
    return []


def notices_of(topic: str, items: list[announcements.Item]) -> list[Notice]:
    items = wanted(topic, items)
    if not items:
        return []
    ids = [pk for pk, _ in items]
    if topic == announcements.PHASING_EVENTS:
        return _event_notices(ids)
    if topic == announcements.SIGN_OFF_REQUESTED:
        return _sign_off_notices(ids)
    return _stale_notices(ids)


def _event_notices(ids: list[int]) -> list[Notice]:
    events = list(
        PhasingEvent.objects.filter(pk__in=ids)
        .select_related("publication__release", "publication__source_package")
        .order_by("pk")
    )
    notices = []
    frozen: dict[str, list[PhasingEvent]] = defaultdict(list)
    for event in events:
        if event.kind == EventKind.FROZEN:
            # One notice per release frozen, not one per update it touches.
            frozen[event.publication.release.codename].append(event)
            continue
        publication = event.publication
        notices.append(
            Notice(
                NOTICE_OF_EVENT[event.kind],
                {
                    "title": _update_title(publication),
                    "summary": f"{EventKind(event.kind).label.lower()} by {event.actor_name}"
                    + (f": {event.reason}" if event.reason else ""),
                    "url": site_url(UPDATE_PAGE.format(id=publication.pk)),
                    "update": update_data(publication),
                    "event": {
                        "id": event.pk,
                        "kind": event.kind,
                        "at": event.created_at.isoformat(),
                        "actor": event.actor_name,
                        "reason": event.reason,
                        "old_percentage": event.old_percentage,
                        "new_percentage": event.new_percentage,
                        "old_state": event.old_state,
                        "new_state": event.new_state,
                    },
                },
            )
        )
    for codename, release_events in frozen.items():
        first = release_events[0]
        notices.append(
            Notice(
                NoticeType.FROZEN,
                {
                    "title": f"{codename}-updates",
                    "summary": f"frozen by {first.actor_name}"
                    + (f": {first.reason}" if first.reason else "")
                    + f" ({len(release_events)} updates held)",
                    "url": site_url("/"),
                    "release": codename,
                    "actor": first.actor_name,
                    "reason": first.reason,
                    "updates": [update_data(e.publication) for e in release_events],
                },
            )
        )
    return notices


def _sign_off_notices(ids: list[int]) -> list[Notice]:
    changes = ScheduledChange.objects.filter(pk__in=ids).select_related(
        "publication__release", "publication__source_package", "release", "created_by"
    )
    notices = []
    for change in changes.order_by("pk"):
        publication = change.publication
        subject = (
            _update_title(publication)
            if publication is not None
            else (f"{change.release.codename}-updates" if change.release else "all updates")
        )
        who = change.created_by.get_username() if change.created_by else "someone"
        notices.append(
            Notice(
                NoticeType.SIGN_OFF_REQUESTED,
                {
                    "title": subject,
                    "summary": f"{who} asks a second archive admin to sign off: "
                    f"{change.get_action_display().lower()}"
                    + (f" to {change.percentage}%" if change.percentage is not None else "")
                    + (f" ({change.reason})" if change.reason else ""),
                    "url": _admin_url("admin:packages_scheduledchange_change", change.pk),
                    "change": {
                        "id": change.pk,
                        "action": change.action,
                        "percentage": change.percentage,
                        "run_at": change.run_at.isoformat(),
                        "reason": change.reason,
                        "requested_by": who,
                    },
                    "update": update_data(publication) if publication is not None else None,
                },
            )
        )
    return notices


def _stale_notices(ids: list[int]) -> list[Notice]:
    publications = list(
        Publication.objects.filter(pk__in=ids)
        .select_related("release", "source_package")
        .order_by("pk")
    )
    if not publications:
        return []
    detail = publications[0].hold_detail or "the crash source did not answer"
    count = len(publications)
    return [
        Notice(
            NoticeType.DATA_STALE,
            {
                "title": f"crash data for {count} update{'s' if count != 1 else ''}",
                "summary": f"crash data unavailable, the updates hold: {detail}",
                "url": site_url("/sources/"),
                "updates": [update_data(p) for p in publications],
            },
        )
    ]


def test_notice() -> Notice:
    return Notice(
        NoticeType.TEST,
        {
            "title": "a test event",
            "summary": "sent from the admin to check that this endpoint receives and verifies",
            "url": site_url("/"),
        },
    )
