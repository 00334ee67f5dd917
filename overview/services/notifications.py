"""Email the people behind a halted update: signer, uploader and sponsor, once each.

One Notification row per (halt event, person) is written in the halt's transaction; a
unique constraint makes a second halt-write impossible, so nobody is emailed twice.
The mail itself goes out after commit.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
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
    for publication, event, problems in halts:
        subject = (
            f"[phasing] {publication.source_package.name} {publication.version} halted in "
            f"{publication.release.codename}-updates"
        )
        for person_id, (person, roles) in _recipients(publication).items():
            body = render_to_string(
                "overview/email/halt.txt",
                {
                    "publication": publication,
                    "person": person,
                    "roles": roles,
                    "problems": [{"problem": p, "link": _problem_link(p)} for p in problems],
                    "history_url": _site(publication.get_absolute_url()),
                    "admin_url": _site(reverse("admin:index") + "packages/publication/"),
                },
            )
            notifications.append(
                Notification(
                    publication=publication,
                    event=event,
                    person_id=person_id,
                    roles=", ".join(roles),
                    subject=subject[:300],
                    body=body,
                    created_at=now,
                )
            )
    if not notifications:
        return []
    Notification.objects.bulk_create(notifications, ignore_conflicts=True)
    event_ids = {n.event_id for n in notifications}
    # Robust: a mail server or broker failing here must not undo or block the halt; what
    # is not sent now is sent by the periodic reconcile.
    transaction.on_commit(lambda: notifications_send(event_ids=event_ids), robust=True)
    return notifications


def _problem_link(problem: Problem) -> str:
    if problem.web_link:
        return problem.web_link
    if problem.bucket is not None and problem.bucket.web_link:
        return problem.bucket.web_link
    if problem.bucket_id:
        return _site(reverse("overview:problem", args=[problem.bucket_id]))
    return ""


def notifications_send(
    *, event_ids: Iterable[int] | None = None, ids: Iterable[int] | None = None
) -> int:
    """Send unsent notifications (of these halt events, or these rows); each at most once.

    A row is claimed by setting sent_at before the mail goes out, so two senders never
    both send it; a failure clears the claim and records the error for a later retry.
    """
    pending = Notification.objects.filter(sent_at__isnull=True)
    if event_ids is not None:
        pending = pending.filter(event_id__in=list(event_ids))
    if ids is not None:
        pending = pending.filter(pk__in=list(ids))
    sent = 0
    for notification in pending.select_related("person"):
        claimed = Notification.objects.filter(pk=notification.pk, sent_at__isnull=True).update(
            sent_at=timezone.now()
        )
        if claimed != 1:
            continue
        try:
            send_mail(
                notification.subject,
                notification.body,
                settings.DEFAULT_FROM_EMAIL,
                [notification.person.email],
            )
            sent += 1
            if notification.error:
                Notification.objects.filter(pk=notification.pk).update(error="")
        except Exception as exc:  # a mail server down must not lose the record of the halt
            log.exception("could not email %s", notification.person.email)
            Notification.objects.filter(pk=notification.pk).update(
                sent_at=None, error=str(exc)[:500]
            )
    return sent


def notifications_send_pending(*, now: datetime | None = None) -> int:
    """Retry what was not sent: after a failure, or when the commit's sender never ran."""
    now = now or timezone.now()
    stale = Notification.objects.filter(
        sent_at__isnull=True, created_at__lt=now - timedelta(minutes=2)
    ).values_list("pk", flat=True)[:500]
    return notifications_send(ids=list(stale))
