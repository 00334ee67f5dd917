"""Signed webhook deliveries: from a halt to a receiver that verifies the signature, with
retries, backoff, answers recorded, and an endpoint that keeps failing disabled."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from overview.models import DeliveryStatus, NoticeType, WebhookDelivery, WebhookEndpoint
from overview.notices import delivery, tasks
from packages.models import SourceSync
from packages.services import announcements, releases, rollouts
from tests.factories import PublicationFactory
from tests.fake_http import Reply
from tests.overview.notices.conftest import drain

pytestmark = pytest.mark.django_db


def test_a_halt_reaches_the_receiver_signed_and_verifiable(
    receiver, endpoint, queued, archive_admin_user, django_capture_on_commit_callbacks
):
    publication = PublicationFactory()
    with django_capture_on_commit_callbacks(execute=True):
        rollouts.publication_halt(
            publication=publication, reason="segfault on start", actor=archive_admin_user
        )
    assert len(queued) == 1
    [outcome] = drain(queued)

    assert outcome.status == DeliveryStatus.DELIVERED
    [payload] = receiver.verified
    assert payload["type"] == "update.halted"
    assert payload["data"]["update"]["id"] == publication.pk
    assert payload["data"]["update"]["url"].endswith(f"/updates/{publication.pk}/")
    assert payload["data"]["event"]["reason"] == "segfault on start"
    assert "segfault on start" in payload["data"]["summary"]
    row = WebhookDelivery.objects.get()
    assert (row.status, row.attempts, row.response_status) == ("delivered", 1, 204)
    assert row.response_ms is not None and row.delivered_at is not None


def test_a_receiver_with_another_secret_refuses_the_signature(
    http_server, allow_local, endpoint, queued
):
    from tests.overview.notices.conftest import Receiver

    wrong = Receiver(secret="whsec_" + "c2VjcmV0LW9mLWFub3RoZXItZW5kcG9pbnQ=")
    http_server.post("/hooks", wrong)
    delivery.sample_event_send(endpoint)
    [outcome] = [delivery.delivery_attempt(delivery_id=d.pk) for d in WebhookDelivery.objects.all()]
    assert outcome.status == DeliveryStatus.RETRYING
    assert wrong.refused == ["No matching signature found"]
    assert WebhookDelivery.objects.get().response_status == 401


def test_an_endpoint_hears_only_the_events_it_chose(
    receiver, endpoint, queued, archive_admin_user, django_capture_on_commit_callbacks
):
    endpoint.events = [NoticeType.RESUMED]
    endpoint.save()
    publication = PublicationFactory()
    with django_capture_on_commit_callbacks(execute=True):
        rollouts.publication_halt(publication=publication, reason="bad", actor=archive_admin_user)
    assert WebhookDelivery.objects.count() == 0
    with django_capture_on_commit_callbacks(execute=True):
        rollouts.publication_resume(
            publication=publication, reason="fixed", actor=archive_admin_user
        )
    drain(queued)
    assert [p["type"] for p in receiver.verified] == ["update.resumed"]


def test_a_freeze_is_one_notice_for_the_release_not_one_per_update(
    receiver, endpoint, queued, archive_admin_user, django_capture_on_commit_callbacks
):
    first = PublicationFactory()
    PublicationFactory(release=first.release)
    with django_capture_on_commit_callbacks(execute=True):
        releases.release_freeze(release=first.release, actor=archive_admin_user, reason="rebuild")
    drain(queued)
    [payload] = receiver.verified
    assert payload["type"] == "release.frozen"
    assert payload["data"]["release"] == "noble"
    assert len(payload["data"]["updates"]) == 2


def test_an_advance_makes_no_notice_and_costs_no_query(
    endpoint, queued, django_capture_on_commit_callbacks, django_assert_num_queries
):
    with django_assert_num_queries(0):
        delivery.on_announcement(announcements.PHASING_EVENTS, [(1, "advanced")])
    assert WebhookDelivery.objects.count() == 0


def test_nothing_is_queued_when_no_endpoint_is_enabled(
    queued, django_capture_on_commit_callbacks, archive_admin_user, monkeypatch
):
    fanned = []
    monkeypatch.setattr(tasks.fan_out, "delay", lambda *a: fanned.append(a))
    with django_capture_on_commit_callbacks(execute=True):
        rollouts.publication_halt(
            publication=PublicationFactory(), reason="bad", actor=archive_admin_user
        )
    assert fanned == []


def test_a_broker_down_does_not_fail_the_persons_action(
    endpoint, archive_admin_user, django_capture_on_commit_callbacks, monkeypatch
):
    def down(*args):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.fan_out, "delay", down)
    publication = PublicationFactory()
    with django_capture_on_commit_callbacks(execute=True):
        event = rollouts.publication_halt(
            publication=publication, reason="bad", actor=archive_admin_user
        )
    publication.refresh_from_db()
    assert publication.state == "halted" and event.pk


def test_a_5xx_is_retried_with_a_growing_backoff_then_delivered(
    http_server, allow_local, endpoint, queued
):
    from tests.overview.notices.conftest import Receiver

    verifier = Receiver()
    http_server.post("/hooks", Reply(status=503), Reply(status=502), verifier)
    delivery.sample_event_send(endpoint)
    pk = WebhookDelivery.objects.get().pk
    now = timezone.now()
    first = delivery.delivery_attempt(delivery_id=pk, now=now)
    second = delivery.delivery_attempt(delivery_id=pk, now=now + first.retry_in)
    assert first.status == second.status == DeliveryStatus.RETRYING
    assert first.retry_in == timedelta(seconds=30) and second.retry_in == timedelta(seconds=60)
    assert "HTTP 503" in first.error
    third = delivery.delivery_attempt(delivery_id=pk, now=now + timedelta(minutes=5))
    assert third.status == DeliveryStatus.DELIVERED
    assert len(verifier.verified) == 1
    # Every attempt carries the same webhook-id: the receiver can drop a repeat.
    assert len({r.headers["webhook-id"] for r in http_server.made("POST", "/hooks")}) == 1
    endpoint.refresh_from_db()
    assert endpoint.consecutive_failures == 0


def test_a_delivery_gives_up_after_the_last_attempt(
    http_server, allow_local, endpoint, queued, settings
):
    settings.PHASING_WEBHOOKS_MAX_ATTEMPTS = 2
    http_server.post("/hooks", Reply(status=500))
    delivery.sample_event_send(endpoint)
    pk = WebhookDelivery.objects.get().pk
    now = timezone.now()
    delivery.delivery_attempt(delivery_id=pk, now=now)
    last = delivery.delivery_attempt(delivery_id=pk, now=now + timedelta(minutes=1))
    assert last.status == DeliveryStatus.FAILED and last.retry_in is None
    assert delivery.delivery_attempt(delivery_id=pk, now=now + timedelta(hours=1)).status == (
        "not due"
    )


def test_a_slow_endpoint_times_out_and_is_retried(http_server, allow_local, endpoint, settings):
    settings.PHASING_WEBHOOKS_TIMEOUT = 1
    http_server.post("/hooks", Reply(status=204, delay=1.5))
    sent = delivery.sample_event_send(endpoint)
    outcome = delivery.delivery_attempt(delivery_id=sent.pk)
    assert outcome.status == DeliveryStatus.RETRYING
    assert "timed out" in outcome.error.lower()


def test_a_redirect_is_not_followed(http_server, allow_local, endpoint):
    http_server.post("/hooks", Reply(status=307, headers={"Location": "/hooks"}))
    sent = delivery.sample_event_send(endpoint)
    outcome = delivery.delivery_attempt(delivery_id=sent.pk)
    assert outcome.status == DeliveryStatus.RETRYING
    assert "not followed" in outcome.error
    assert len(http_server.made("POST", "/hooks")) == 1


def test_a_private_address_is_refused_without_a_request_and_never_retried(http_server, endpoint):
    sent = delivery.sample_event_send(endpoint)
    outcome = delivery.delivery_attempt(delivery_id=sent.pk)
    assert outcome.status == DeliveryStatus.REFUSED and outcome.retry_in is None
    assert "127.0.0.1" in outcome.error
    assert http_server.requests == []


def test_an_endpoint_that_keeps_failing_is_disabled_with_a_notice(
    http_server,
    allow_local,
    endpoint,
    settings,
    archive_admin_user,
    django_capture_on_commit_callbacks,
    queued,
    caplog,
):
    settings.PHASING_WEBHOOKS_DISABLE_AFTER = 3
    http_server.post("/hooks", Reply(status=500))
    now = timezone.now()
    for _ in range(3):
        sent = delivery.sample_event_send(endpoint)
        delivery.delivery_attempt(delivery_id=sent.pk, now=now)
    endpoint.refresh_from_db()
    assert not endpoint.enabled
    assert endpoint.disabled_reason.startswith("disabled after 3 failed attempts in a row")
    assert "webhook endpoint release team disabled" in caplog.text
    fault = SourceSync.objects.get(name=delivery.service_name(endpoint))
    assert fault.failing_since is not None and "HTTP 500" in fault.last_error
    # A disabled endpoint hears nothing more, until an admin enables it again.
    with django_capture_on_commit_callbacks(execute=True):
        rollouts.publication_halt(
            publication=PublicationFactory(), reason="bad", actor=archive_admin_user
        )
    assert WebhookDelivery.objects.exclude(notice_type="test").count() == 0
    delivery.endpoint_enable(endpoint)
    endpoint.refresh_from_db()
    assert endpoint.enabled and endpoint.consecutive_failures == 0
    fault.refresh_from_db()
    assert fault.failing_since is None


def test_the_sweep_sends_a_delivery_no_task_took(receiver, endpoint):
    sent = delivery.sample_event_send(endpoint)
    assert delivery.deliveries_send_due(now=timezone.now()) == 0  # too fresh: a task has it
    assert delivery.deliveries_send_due(now=timezone.now() + timedelta(minutes=2)) == 1
    sent.refresh_from_db()
    assert sent.status == DeliveryStatus.DELIVERED


def test_a_sign_off_request_is_announced(
    receiver, endpoint, queued, archive_admin_user, settings, django_capture_on_commit_callbacks
):
    from packages.services.scheduled import scheduled_change_create

    settings.PHASING_SIGN_OFF_REQUIRED = True
    publication = PublicationFactory()
    with django_capture_on_commit_callbacks(execute=True):
        scheduled_change_create(
            action="release",
            publication=publication,
            actor=archive_admin_user,
            reason="urgent fix",
        )
    drain(queued)
    [payload] = receiver.verified
    assert payload["type"] == "sign_off.requested"
    assert payload["data"]["change"]["requested_by"] == "archiveadmin"
    assert "urgent fix" in payload["data"]["summary"]


def test_the_task_retries_after_the_services_backoff(
    http_server, allow_local, endpoint, monkeypatch
):
    http_server.post("/hooks", Reply(status=503))
    sent = delivery.sample_event_send(endpoint)
    retried = []

    def retry(*, countdown, **kwargs):
        retried.append(countdown)
        return RuntimeError("retry")

    monkeypatch.setattr(tasks.deliver, "retry", retry)
    with pytest.raises(RuntimeError):
        tasks.deliver(sent.pk)
    assert retried == [30.0]


def test_a_disabled_endpoint_still_takes_a_test_event(receiver, endpoint):
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(enabled=False)
    sent = delivery.sample_event_send(endpoint)
    assert delivery.delivery_attempt(delivery_id=sent.pk).status == DeliveryStatus.DELIVERED
    assert receiver.verified[0]["type"] == "test"
