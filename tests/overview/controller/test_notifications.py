"""Halt emails: claimed, sent, then marked sent; each once, and never lost to a crash.

The faults are injected where they happen: a mail server that refuses, a sender that dies
between sending and marking, two senders at once.
"""

from __future__ import annotations

import hashlib
import smtplib
from datetime import timedelta

import pytest
from django.core import mail
from django.core.mail import EmailMessage
from django.db import connection
from django.test.utils import CaptureQueriesContext

from overview.controller import notifications
from overview.controller.notifications import (
    CLAIM_LEASE,
    halt_notifications_create,
    notification_send,
    notifications_send_pending,
)
from overview.models import Notification
from packages.models import EventKind, PhasingEvent, PhasingState, Publication, SourceSync
from tests.factories import (
    NOW,
    PersonFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    SourcePackageFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


@pytest.fixture
def notification():
    publication = PublicationFactory(
        signer=PersonFactory(email="signer@example.org"), uploader=None, state=PhasingState.HALTED
    )
    ProblemFactory(publication=publication)
    event = PhasingEventFactory(
        publication=publication, kind=EventKind.HALTED, new_percentage=0, new_state="halted"
    )
    [created] = halt_notifications_create([(publication, event)], now=NOW)
    return created


class SenderDied(BaseException):
    """A worker killed mid-task: nothing after the send runs, no except clause catches it."""


def test_an_email_is_rendered_and_sent_by_its_own_task_and_marked_sent(notification):
    assert notification.body == ""  # nothing rendered inside the tick
    outcome = notification_send(notification_id=notification.pk, now=NOW)
    notification.refresh_from_db()
    assert outcome.status == "sent"
    assert notification.sent_at == NOW and notification.attempts == 1
    [email] = mail.outbox
    assert email.to == ["signer@example.org"]
    assert "crash_here" in email.body and email.body == notification.body
    assert email.extra_headers["Message-ID"] == notifications.message_id(notification)
    assert notification_send(notification_id=notification.pk, now=NOW).status == "not due"
    assert len(mail.outbox) == 1


def test_a_sender_killed_after_sending_leaves_an_email_that_is_sent_again_with_the_same_id(
    notification, monkeypatch
):
    sent_ids = []
    real_send = EmailMessage.send

    def send_then_die(self, *args, **kwargs):
        real_send(self, *args, **kwargs)
        sent_ids.append(self.extra_headers["Message-ID"])
        raise SenderDied

    monkeypatch.setattr(EmailMessage, "send", send_then_die)
    with pytest.raises(SenderDied):
        notification_send(notification_id=notification.pk, now=NOW)
    monkeypatch.setattr(EmailMessage, "send", real_send)
    notification.refresh_from_db()
    assert notification.sent_at is None and notification.claimed_at == NOW

    # Its claim still stands: the periodic retry leaves it to the sender that holds it...
    assert notifications_send_pending(now=NOW + CLAIM_LEASE - timedelta(seconds=1)) == 0
    # ...until the claim has expired: then the email is sent again, as the same message.
    assert notifications_send_pending(now=NOW + CLAIM_LEASE + timedelta(seconds=1)) == 1
    notification.refresh_from_db()
    assert notification.sent_at is not None and notification.attempts == 2
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == sent_ids * 2


def test_a_sender_killed_before_sending_loses_nothing(notification, monkeypatch):
    def die(self, *args, **kwargs):
        raise SenderDied

    monkeypatch.setattr(EmailMessage, "send", die)
    with pytest.raises(SenderDied):
        notification_send(notification_id=notification.pk, now=NOW)
    monkeypatch.undo()
    assert notifications_send_pending(now=NOW + CLAIM_LEASE + timedelta(minutes=1)) == 1
    assert [m.to for m in mail.outbox] == [["signer@example.org"]]


def test_a_mail_server_down_is_retried_with_a_backoff_from_the_failure(notification, monkeypatch):
    def refused(self, *args, **kwargs):
        raise ConnectionRefusedError("smtp down")

    monkeypatch.setattr(EmailMessage, "send", refused)
    first = notification_send(notification_id=notification.pk, now=NOW)
    notification.refresh_from_db()
    assert (first.status, first.retry_in) == ("failed", timedelta(seconds=30))
    assert notification.next_attempt_at == NOW + timedelta(seconds=30)
    assert notification.claimed_at is None and "smtp down" in notification.error

    # Not before its time, even for the periodic retry; then again, with a longer wait.
    assert notifications_send_pending(now=NOW + timedelta(seconds=29)) == 0
    second = notification_send(notification_id=notification.pk, now=NOW + timedelta(seconds=30))
    assert second.retry_in == timedelta(minutes=1)

    monkeypatch.undo()
    later = NOW + timedelta(minutes=3)
    assert notifications_send_pending(now=later) == 1
    notification.refresh_from_db()
    assert notification.sent_at == later and notification.error == ""


def test_a_failing_mail_server_shows_as_a_fault_until_an_email_goes_out(notification, monkeypatch):
    monkeypatch.setattr(EmailMessage, "send", lambda self, *a, **k: 1 / 0)
    notification_send(notification_id=notification.pk, now=NOW)
    fault = SourceSync.objects.get(name="email")
    assert (fault.kind, fault.failing_since) == ("service", NOW)
    assert "ZeroDivisionError" in fault.last_error
    monkeypatch.undo()
    notification_send(notification_id=notification.pk, now=NOW + timedelta(minutes=1))
    fault.refresh_from_db()
    assert fault.failing_since is None and fault.last_error == ""


def test_the_task_retries_a_failure_after_the_backoff(notification, monkeypatch):
    from overview.tasks import send_notification

    countdowns = []

    def retry(*, countdown, **kwargs):
        countdowns.append(countdown)
        raise RuntimeError("retried")

    monkeypatch.setattr(EmailMessage, "send", lambda self, *a, **k: 1 / 0)
    monkeypatch.setattr(send_notification, "retry", retry)
    with pytest.raises(RuntimeError, match="retried"):
        send_notification.run(notification.pk)
    assert countdowns == [30.0]


def test_two_senders_at_once_send_each_email_once(notification, monkeypatch):
    """The task sent after commit and the periodic retry reach the same email together."""
    real_send = EmailMessage.send
    during = []

    def send_while_the_other_runs(self, *args, **kwargs):
        # While this sender is sending, the other one looks at the same rows.
        during.append(notifications_send_pending(now=NOW + timedelta(minutes=3)))
        return real_send(self, *args, **kwargs)

    monkeypatch.setattr(EmailMessage, "send", send_while_the_other_runs)
    assert notification_send(notification_id=notification.pk, now=NOW + timedelta(minutes=3))
    assert during == [0]
    assert len(mail.outbox) == 1
    assert notifications_send_pending(now=NOW + timedelta(minutes=4)) == 0
    assert Notification.objects.get().attempts == 1


def test_links_in_an_email_use_the_configured_site_url(notification, settings):
    settings.PHASING_SITE_URL = "https://phasing.example.org/sru/"
    publication = notification.publication
    bucket_id = publication.problems.get().bucket_id

    notification_send(notification_id=notification.pk, now=NOW)

    [email] = mail.outbox
    history = (
        f"https://phasing.example.org/sru/source/{publication.source_package.name}/"
        f"?release={publication.release.codename}#publication-{publication.pk}"
    )
    assert history in email.body
    assert f"https://phasing.example.org/sru/problems/{bucket_id}/" in email.body
    # The update's page, with its actions, not the admin's read-only change page.
    assert f"https://phasing.example.org/sru/updates/{publication.pk}/" in email.body
    assert "/admin/" not in email.body
    assert "testserver" not in email.body and "127.0.0.1" not in email.body


def test_a_site_behind_a_path_prefix_is_not_given_it_twice(notification, settings):
    from django.urls import set_script_prefix

    settings.PHASING_SITE_URL = "https://example.org/phasing"
    set_script_prefix("/phasing/")
    try:
        notification_send(notification_id=notification.pk, now=NOW)
    finally:
        set_script_prefix("/")

    [email] = mail.outbox
    assert "https://example.org/phasing/source/" in email.body
    assert "/phasing/phasing/" not in email.body


def test_the_email_names_each_bucket_with_its_error_tracker_page(notification):
    notification_send(notification_id=notification.pk, now=NOW)
    [email] = mail.outbox
    bucket = notification.publication.problems.get().bucket
    digest = hashlib.sha1(bucket.signature.encode()).hexdigest()
    assert f"crash, new in this version: {bucket}" in email.body
    assert f"/problems/{bucket.pk}/" in email.body  # our page, then the tracker's
    assert f"https://errors.ubuntu.com/problem/{digest}" in email.body


def test_a_failed_email_tells_visitors_that_emails_fail_but_never_to_whom(
    notification, monkeypatch, anonymous
):
    notification.person.name = "Sig Ner"
    notification.person.save()

    def refused(self, *args, **kwargs):
        raise smtplib.SMTPRecipientsRefused({"signer@example.org": (550, b"no such user")})

    monkeypatch.setattr(EmailMessage, "send", refused)
    notification_send(notification_id=notification.pk, now=NOW)

    page = anonymous.get("/").content.decode()
    assert "sending email" in page
    assert "signer@example.org" not in page and "Sig Ner" not in page
    notification.refresh_from_db()
    assert "signer@example.org" in notification.error  # kept for the admins, on the row


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite caps a statement's values")
def test_a_tick_s_many_halts_write_their_notifications_in_one_statement():
    """However many updates one tick halts (a release-wide problem can halt thousands),
    their notifications are one INSERT, not one per 500."""
    signer = PersonFactory(email="signer@example.org")
    first = PublicationFactory(signer=signer, uploader=None, state=PhasingState.HALTED)
    publications = Publication.objects.bulk_create(
        PublicationFactory.build(
            signer=signer,
            uploader=None,
            release=first.release,
            source_package=SourcePackageFactory(name=f"halted{n}"),
            state=PhasingState.HALTED,
        )
        for n in range(600)
    )
    events = PhasingEvent.objects.bulk_create(
        PhasingEventFactory.build(
            publication=p, kind=EventKind.HALTED, new_percentage=0, new_state="halted"
        )
        for p in publications
    )
    with CaptureQueriesContext(connection) as queries:
        created = halt_notifications_create(list(zip(publications, events, strict=True)), now=NOW)
    inserts = [q for q in queries.captured_queries if "INSERT INTO" in q["sql"]]
    assert len(created) == 600 and len(inserts) == 1
