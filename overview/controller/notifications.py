"""Email the people behind a halted update: signer, uploader and sponsor, once each.

One Notification row per (halt event, person) is written in the halt's transaction; a
unique constraint makes a second halt-write impossible. After commit one task per row
renders and sends it (overview.tasks.send_notification), so a tick costs the same
whatever the number of halts, and one email that cannot be rendered or sent fails alone.

Sending is claim, send, then mark sent: a sender that dies between the send and the mark
leaves a claim that expires, and the email is sent again with the same Message-ID, so
the copy is recognised as the same message. A failure is retried with a backoff that
starts from the failure; the periodic reconcile sends what no task ever took.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode, urljoin, urlsplit

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q
from django.template.loader import render_to_string
from django.urls import get_script_prefix, reverse
from django.utils import timezone

from overview.controller import notifications_ubuntu
from overview.models import Notification, Problem
from packages.domain import inputs
from packages.models import PhasingEvent, Publication
from packages.services.faults import retry_delay, service_failed, service_recovered
from packages.services.queueing import SEND_NOTIFICATION, task_enqueue

log = logging.getLogger(__name__)

# A sender that has not marked its email sent within this long has died: take it over.
CLAIM_LEASE = timedelta(minutes=5)
EMAIL_SERVICE = "email"
_ROLES = ("signer", "uploader", "sponsor")


def _people_read(publications: list[Publication]) -> None:
    """The people behind these halted updates, in one query: the tick reads no one else's."""
    if not publications:
        return
    rows = Publication.objects.filter(pk__in=[p.pk for p in publications])
    people = {row.pk: row for row in rows.select_related(*_ROLES).only("pk", *_ROLES)}
    for publication in publications:
        for role in _ROLES:
            setattr(publication, role, getattr(people[publication.pk], role))


def _recipients(publication: Publication) -> dict[int, list[str]]:
    people: dict[int, list[str]] = {}
    for role in _ROLES:
        person = getattr(publication, role)
        if person is not None and person.email:
            people.setdefault(person.pk, []).append(role)
    return people


def _site(path: str) -> str:
    """The page at `path` (from reverse()) on the configured site, PHASING_SITE_URL, which
    may have a path of its own: the one in reverse()'s answer is dropped so it is not doubled."""
    prefix = get_script_prefix()
    if path.startswith(prefix):
        path = path[len(prefix) :]
    return urljoin(settings.PHASING_SITE_URL.rstrip("/") + "/", path.lstrip("/"))


def halt_notifications_create(
    halts: Sequence[tuple[Publication, PhasingEvent]], *, now: datetime
) -> list[Notification]:
    """Write the notifications of these halts; one task per row sends it after commit."""
    _people_read([publication for publication, _ in halts])
    if settings.PHASING_HALT_EMAILS == notifications_ubuntu.UBUNTU:
        notifications = notifications_ubuntu.ubuntu_halt_notifications(halts, now=now)
    else:
        notifications = _halt_notifications(halts, now=now)
    if not notifications:
        return []
    # No conflict is possible: the events are this transaction's own, one row per person.
    Notification.objects.bulk_create(notifications)
    ids = [n.pk for n in notifications]
    transaction.on_commit(lambda: notifications_enqueue(ids))
    return notifications


def _halt_notifications(
    halts: Sequence[tuple[Publication, PhasingEvent]], *, now: datetime
) -> list[Notification]:
    return [
        Notification(
            publication=publication,
            event=event,
            person_id=person_id,
            roles=", ".join(roles),
            subject=(
                f"[phasing] {publication.source_package.name} {publication.version} halted in "
                f"{publication.release.codename}-updates"
            )[:300],
            created_at=now,
        )
        for publication, event in halts
        for person_id, roles in _recipients(publication).items()
    ]


def _cc() -> list[str]:
    """Ubuntu's way Cc's a team address (PHASING_HALT_EMAILS_CC); the product's does not."""
    if settings.PHASING_HALT_EMAILS != notifications_ubuntu.UBUNTU:
        return []
    return [settings.PHASING_HALT_EMAILS_CC] if settings.PHASING_HALT_EMAILS_CC else []


_sent_here: ContextVar[bool] = ContextVar("emails_sent_here", default=False)


@contextmanager
def notifications_sent_here() -> Iterator[None]:
    """Send each email in this process at commit instead of queueing a task per email.

    For bulk work without a worker (seeding a demo, replaying the past).
    """
    token = _sent_here.set(True)
    try:
        yield
    finally:
        _sent_here.reset(token)


def notifications_enqueue(ids: Sequence[int]) -> None:
    """Hand each email to a task; one the broker does not take is left to the reconcile."""
    if _sent_here.get():
        # Replaying the past: each email goes out at the moment it was written.
        written = dict(Notification.objects.filter(pk__in=ids).values_list("pk", "created_at"))
        for pk in ids:
            notification_send(notification_id=pk, now=written.get(pk))
        return
    for pk in ids:
        try:
            task_enqueue(SEND_NOTIFICATION, pk)
        except Exception:  # a broker down must not lose the halt: the reconcile sends it
            log.exception("could not queue email %s; the reconcile will send it", pk)


def _problem_link(problem: Problem) -> str:
    for link in (problem.web_link, problem.bucket.web_link if problem.bucket else ""):
        if inputs.is_safe_link(link):
            return link
    if problem.bucket_id:
        return _site(reverse("overview:problem", args=[problem.bucket_id]))
    return ""


def _body(notification: Notification) -> str:
    publication = notification.publication
    problems = (
        Problem.objects.filter(publication=publication, active=True)
        .with_covering_override()
        .select_related("bucket")
        .order_by("id")
    )
    return render_to_string(
        "overview/email/halt.txt",
        {
            "publication": publication,
            "person": notification.person,
            "roles": notification.roles.split(", "),
            "problems": [
                {
                    "problem": p,
                    "link": _problem_link(p),
                    # The error tracker's page of the bucket, from the configured template.
                    "tracker": p.bucket.tracker_link if p.bucket else "",
                }
                for p in problems
                if not p.is_overridden
            ],
            "history_url": _site(
                f"{publication.get_absolute_url()}?{urlencode({'release': publication.release.codename})}"
                f"#publication-{publication.pk}"
            ),
            # The update's page, where archive admins resume, set or pull it.
            "update_url": _site(publication.get_update_url()),
        },
    )


def message_id(notification: Notification) -> str:
    """The same for every copy of one email, so a copy sent again after a crash is known
    by mail clients and lists for the message they already have."""
    domain = urlsplit(settings.PHASING_SITE_URL).hostname or "phasing.invalid"
    return f"<halt-{notification.event_id}-{notification.person_id}@{domain}>"


@dataclass(frozen=True)
class SendOutcome:
    status: str  # "sent", "not due" (sent, or claimed by a live sender), "failed"
    retry_in: timedelta | None = None
    error: str = ""


def notification_send(*, notification_id: int, now: datetime | None = None) -> SendOutcome:
    """Claim, send, mark sent: one email, at most once unless its sender died mid-way."""
    now = now or timezone.now()
    claimed = (
        Notification.objects.filter(pk=notification_id, sent_at__isnull=True)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_LEASE))
        .update(claimed_at=now, attempts=F("attempts") + 1)
    )
    if claimed != 1:
        return SendOutcome("not due")
    notification = Notification.objects.select_related(
        "person", "publication__release", "publication__source_package", "event"
    ).get(pk=notification_id)
    try:
        if not notification.body:
            notification.body = _body(notification)
            Notification.objects.filter(pk=notification_id).update(body=notification.body)
        EmailMessage(
            notification.subject,
            notification.body,
            settings.DEFAULT_FROM_EMAIL,
            [notification.person.email],
            cc=_cc(),
            headers={"Message-ID": message_id(notification)},
        ).send()
    except Exception as exc:  # a mail server down, or a row that cannot be rendered
        error = f"{type(exc).__name__}: {exc}"[:500]
        delay = retry_delay(notification.attempts)
        log.warning("could not email %s about a halt: %s", notification.person.email, error)
        Notification.objects.filter(pk=notification_id).update(
            claimed_at=None, error=error, next_attempt_at=now + delay
        )
        # Every page's footer shows this to everyone: that emails fail, never to whom (the
        # error text of a refused recipient names the address; the row keeps it for staff).
        service_failed(
            EMAIL_SERVICE, now=now, error=f"a halt email was not sent ({type(exc).__name__})"
        )
        return SendOutcome("failed", retry_in=delay, error=error)
    Notification.objects.filter(pk=notification_id).update(
        sent_at=now, error="", next_attempt_at=None
    )
    service_recovered(EMAIL_SERVICE, now=now)
    return SendOutcome("sent")


def notifications_send_pending(*, now: datetime | None = None) -> int:
    """Send what no task sent: queued while the broker was down, a sender that died with
    its claim, or a retry whose task is gone. Each is due at its own backoff."""
    now = now or timezone.now()
    due = (
        Notification.objects.filter(sent_at__isnull=True, created_at__lt=now - timedelta(minutes=2))
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_LEASE))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:500]
    )
    return sum(notification_send(notification_id=pk, now=now).status == "sent" for pk in list(due))
