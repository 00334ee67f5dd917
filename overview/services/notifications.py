"""Email the people behind a halted update: signer, uploader and sponsor, once each.

One Notification row per (halt event, person) is written in the halt's transaction; a
unique constraint makes a second halt-write impossible, so nobody is emailed twice.
The mail itself goes out after commit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from urllib.parse import urljoin

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from overview.models import Notification, Problem
from packages.models import PhasingEvent, Publication

log = logging.getLogger(__name__)


def _recipients(publication: Publication) -> dict[int, tuple[object, list[str]]]:
    people: dict[int, tuple[object, list[str]]] = {}
    for role in ("signer", "uploader", "sponsor"):
        person = getattr(publication, role)
        if person is not None and person.email:
            people.setdefault(person.pk, (person, []))[1].append(role)
    return people


def _site(path: str) -> str:
    return urljoin(settings.PHASING_SITE_URL.rstrip("/") + "/", path.lstrip("/"))


def halt_notifications_create(
    halts: Sequence[tuple[Publication, PhasingEvent, Sequence[Problem]]], *, now: datetime
) -> list[Notification]:
    """Write the notifications of these halts and send them after commit."""
    notifications: list[Notification] = []
    bodies: dict[tuple[int, int], str] = {}
    for publication, event, problems in halts:
        subject = (
            f"[phasing] {publication.source_package.name} {publication.version} halted in "
            f"{publication.release.codename}-updates"
        )
        for person_id, (person, roles) in _recipients(publication).items():
            notifications.append(
                Notification(
                    publication=publication,
                    event=event,
                    person_id=person_id,
                    roles=", ".join(roles),
                    subject=subject[:300],
                    created_at=now,
                )
            )
            bodies[(event.pk, person_id)] = render_to_string(
                "overview/email/halt.txt",
                {
                    "publication": publication,
                    "person": person,
                    "roles": roles,
                    "problems": [
                        {
                            "problem": problem,
                            "link": problem.web_link
                            or (problem.bucket.web_link if problem.bucket else "")
                            or (
                                _site(reverse("overview:problem", args=[problem.bucket_id]))
                                if problem.bucket_id
                                else ""
                            ),
                        }
                        for problem in problems
                    ],
                    "history_url": _site(publication.get_absolute_url()),
                    "admin_url": _site(reverse("admin:index") + "packages/publication/"),
                },
            )
    if not notifications:
        return []
    Notification.objects.bulk_create(notifications, ignore_conflicts=True)
    keys = list(bodies)

    def send() -> None:
        notifications_send(keys=keys, bodies=bodies)

    transaction.on_commit(send)
    return notifications


def notifications_send(*, keys: list[tuple[int, int]], bodies: dict[tuple[int, int], str]) -> int:
    """Send the unsent notifications among `keys`; a claimed row is never sent twice."""
    sent = 0
    for event_id, person_id in keys:
        claimed = Notification.objects.filter(
            event_id=event_id, person_id=person_id, sent_at__isnull=True, error=""
        ).update(sent_at=timezone.now())
        if claimed != 1:
            continue
        notification = Notification.objects.select_related("person").get(
            event_id=event_id, person_id=person_id
        )
        try:
            send_mail(
                notification.subject,
                bodies[(event_id, person_id)],
                settings.DEFAULT_FROM_EMAIL,
                [notification.person.email],
            )
            sent += 1
        except Exception as exc:  # a mail server down must not lose the record of the halt
            log.exception("could not email %s", notification.person.email)
            Notification.objects.filter(pk=notification.pk).update(
                sent_at=None, error=str(exc)[:500]
            )
    return sent
