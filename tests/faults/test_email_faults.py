"""Halt emails through an SMTP relay that is down, or that takes a message and drops the
connection before its 250: none lost, and copies only in the second case, with one
Message-ID."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from overview.controller.notifications import (
    halt_notifications_create,
    notification_send,
    notifications_send_pending,
)
from overview.models import Notification
from packages.models import EventKind, PhasingState, SourceSync
from tests.factories import NOW, PersonFactory, PhasingEventFactory, PublicationFactory
from tests.faults.smtp_sink import DOWN, DROP_AFTER_DATA, smtp_sink
from tests.faults.worker import overview_faults

pytestmark = pytest.mark.django_db


@pytest.fixture
def sink(settings):
    with smtp_sink() as sink:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", sink.port
        settings.EMAIL_USE_TLS, settings.EMAIL_TIMEOUT = False, 3
        yield sink


@pytest.fixture
def notifications():
    made = []
    for n in range(3):
        publication = PublicationFactory(
            signer=PersonFactory(email=f"signer{n}@example.org"),
            uploader=None,
            state=PhasingState.HALTED,
        )
        event = PhasingEventFactory(
            publication=publication, kind=EventKind.HALTED, new_percentage=0, new_state="halted"
        )
        made += halt_notifications_create([(publication, event)], now=NOW)
    return made


def _message_ids(sink) -> list[str]:
    return [re.search(rb"Message-ID: (\S+)", m, re.I)[1].decode() for m in sink.received]


def test_with_smtp_down_nothing_is_sent_or_lost_and_all_go_out_once_it_is_back(
    sink, notifications, anonymous
):
    sink.mode = DOWN
    for n in notifications:
        assert notification_send(notification_id=n.pk, now=NOW).status == "failed"
    assert sink.received == []
    assert SourceSync.objects.get(name="email").failing_since == NOW
    assert "sending email" in overview_faults(anonymous)  # shown while it lasts

    sink.mode = "accept"
    assert notifications_send_pending(now=NOW + timedelta(minutes=5)) == 3

    assert sorted(_message_ids(sink)) == sorted(set(_message_ids(sink)))  # none doubled
    assert len(sink.received) == 3
    assert not Notification.objects.filter(sent_at__isnull=True).exists()
    assert SourceSync.objects.get(name="email").failing_since is None  # back without a person
    assert "sending email" not in overview_faults(anonymous)


def test_a_relay_that_drops_after_data_gets_a_copy_with_the_same_message_id(sink, notifications):
    first = notifications[0]
    sink.mode = DROP_AFTER_DATA
    assert notification_send(notification_id=first.pk, now=NOW).status == "failed"

    sink.mode = "accept"
    assert notifications_send_pending(now=NOW + timedelta(minutes=5)) == 3

    ids = _message_ids(sink)
    assert len(ids) == 4  # the dropped one twice, the others once
    assert len(set(ids)) == 3
    [doubled] = {i for i in ids if ids.count(i) == 2}
    assert doubled.startswith(f"<halt-{first.event_id}-")
