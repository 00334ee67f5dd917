"""Deliver notices to webhook endpoints: one delivery row per (notice, endpoint), sent by a
task, signed with the Standard Webhooks scheme, retried with backoff, each attempt's
answer recorded; an endpoint that keeps failing is disabled with a notice.

Sending is claim, send, record (as overview.controller.notifications does for email): a
sender that dies between the send and the record leaves a claim that expires, and the
delivery is sent again with the same webhook-id, so the receiver knows it for a repeat.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from overview.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from overview.notices import events, formats, guard
from packages.services import announcements
from packages.services.faults import retry_delay, service_failed, service_recovered
from packages.services.queueing import task_enqueue

log = logging.getLogger(__name__)

# The tasks that send notices, queued by name (overview.notices.tasks calls this module).
FAN_OUT = "overview.notices.fan_out"
DELIVER = "overview.notices.deliver"

# A sender that has not recorded its attempt within this long has died: take it over.
CLAIM_LEASE = timedelta(minutes=2)


def service_name(endpoint: WebhookEndpoint) -> str:
    """The name under which an endpoint's failure shows with the other services."""
    return f"webhook {endpoint.pk}: {endpoint.name}"[:40]


def new_message_id() -> str:
    return "msg_" + secrets.token_urlsafe(18)


def deliveries_create(
    notices: Sequence[events.Notice], *, now: datetime, endpoints: Sequence[WebhookEndpoint]
) -> list[WebhookDelivery]:
    """Write one delivery per (notice, endpoint that wants it); tasks send them after commit."""
    deliveries = [
        WebhookDelivery(
            endpoint=endpoint,
            message_id=new_message_id(),
            notice_type=notice.type,
            payload=notice.payload(now=now),
            created_at=now,
        )
        for notice in notices
        for endpoint in endpoints
        if endpoint.wants(notice.type)
    ]
    if not deliveries:
        return []
    WebhookDelivery.objects.bulk_create(deliveries)
    ids = [d.pk for d in deliveries]
    transaction.on_commit(lambda: deliveries_enqueue(ids), robust=True)
    return deliveries


def notices_fan_out(
    topic: str, items: list[announcements.Item], *, now: datetime | None = None
) -> list[WebhookDelivery]:
    """The deliveries of what was announced, to every enabled endpoint that wants it."""
    now = now or timezone.now()
    if not events.wanted(topic, items):
        return []
    endpoints = list(WebhookEndpoint.objects.filter(enabled=True))
    if not endpoints:
        return []
    with transaction.atomic():
        return deliveries_create(events.notices_of(topic, items), now=now, endpoints=endpoints)


def sample_event_send(endpoint: WebhookEndpoint, *, now: datetime | None = None) -> WebhookDelivery:
    """A test notice to one endpoint, enabled or not (the admin's "send a test event")."""
    now = now or timezone.now()
    with transaction.atomic():
        (delivery,) = deliveries_create([events.test_notice()], now=now, endpoints=[endpoint])
    return delivery


def on_announcement(topic: str, items: list[announcements.Item]) -> None:
    """The listener registered with packages.services.announcements: after the writer's
    commit, hand the work to a task, so neither the tick nor a person's action waits for
    an endpoint (nor for the queries that build the notices)."""
    if not events.wanted(topic, items):
        return
    if not WebhookEndpoint.objects.filter(enabled=True).exists():
        return
    try:
        task_enqueue(FAN_OUT, topic, items)
    except Exception:  # a broker down must not fail the writer's commit callbacks
        log.exception("could not queue the webhook notices of %s %s", topic, items[:10])


def deliveries_enqueue(ids: Sequence[int]) -> None:
    for pk in ids:
        try:
            task_enqueue(DELIVER, pk)
        except Exception:  # the periodic sweep sends what no task took
            log.exception("could not queue webhook delivery %s; the sweep will send it", pk)


@dataclass(frozen=True)
class AttemptOutcome:
    status: str  # a DeliveryStatus, or "not due" (claimed by a live sender, or done)
    retry_in: timedelta | None = None
    error: str = ""


def signed_headers(
    endpoint: WebhookEndpoint, delivery: WebhookDelivery, body: bytes, *, now: datetime
) -> dict[str, str]:
    """webhook-id, webhook-timestamp, webhook-signature (Standard Webhooks, v1 HMAC-SHA256)."""
    signature = Webhook(endpoint.secret).sign(delivery.message_id, now, body.decode())
    return {
        "webhook-id": delivery.message_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }


def _claim(delivery_id: int, now: datetime) -> bool:
    return (
        WebhookDelivery.objects.filter(
            pk=delivery_id, status__in=(DeliveryStatus.PENDING, DeliveryStatus.RETRYING)
        )
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_LEASE))
        .update(claimed_at=now, attempts=F("attempts") + 1)
        == 1
    )


def delivery_attempt(*, delivery_id: int, now: datetime | None = None) -> AttemptOutcome:
    """Claim, send, record: one attempt of one delivery."""
    now = now or timezone.now()
    if not _claim(delivery_id, now):
        return AttemptOutcome("not due")
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    endpoint = delivery.endpoint
    if not endpoint.enabled and delivery.notice_type != "test":
        return _record(delivery, now=now, status=DeliveryStatus.FAILED, error="endpoint disabled")
    request = formats.request_for(endpoint, delivery)
    headers = {**request.headers, **signed_headers(endpoint, delivery, request.body, now=now)}
    try:
        target = guard.target_resolve(request.url)
    except guard.RefusedTarget as exc:
        # Never sent, and no retry makes the address acceptable: refused at once.
        return _failed(delivery, now=now, error=str(exc), final=True)
    try:
        answer = guard.send(
            target,
            method=request.method,
            body=request.body,
            headers=headers,
            timeout=settings.PHASING_WEBHOOKS_TIMEOUT,
        )
    except (OSError, ValueError) as exc:  # refused, reset, timed out, a bad certificate
        return _failed(delivery, now=now, error=f"{type(exc).__name__}: {exc}")
    if 200 <= answer.status < 300:
        return _delivered(delivery, now=now, status=answer.status, ms=answer.milliseconds)
    if 300 <= answer.status < 400:
        error = f"HTTP {answer.status}: a redirect to {answer.location or '?'} is not followed"
    else:
        error = f"HTTP {answer.status}: {answer.body[:200]}"
    return _failed(delivery, now=now, error=error, status=answer.status, ms=answer.milliseconds)


def _record(
    delivery: WebhookDelivery,
    *,
    now: datetime,
    status: str,
    error: str = "",
    response_status: int | None = None,
    ms: int | None = None,
    next_attempt_at: datetime | None = None,
) -> AttemptOutcome:
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=status,
        claimed_at=None,
        error=error[:500],
        response_status=response_status,
        response_ms=ms,
        next_attempt_at=next_attempt_at,
        delivered_at=now if status == DeliveryStatus.DELIVERED else None,
    )
    retry_in = next_attempt_at - now if next_attempt_at else None
    return AttemptOutcome(status, retry_in=retry_in, error=error)


def _delivered(delivery: WebhookDelivery, *, now: datetime, status: int, ms: int) -> AttemptOutcome:
    endpoint = delivery.endpoint
    WebhookEndpoint.objects.filter(pk=endpoint.pk, consecutive_failures__gt=0).update(
        consecutive_failures=0
    )
    service_recovered(service_name(endpoint), now=now)
    return _record(
        delivery, now=now, status=DeliveryStatus.DELIVERED, response_status=status, ms=ms
    )


def _failed(
    delivery: WebhookDelivery,
    *,
    now: datetime,
    error: str,
    status: int | None = None,
    ms: int | None = None,
    final: bool = False,
) -> AttemptOutcome:
    endpoint = delivery.endpoint
    log.warning(
        "webhook delivery %s to %s failed (attempt %s): %s",
        delivery.pk,
        endpoint.name,
        delivery.attempts,
        error,
    )
    _endpoint_failed(endpoint, now=now, error=error)
    if final:
        return _record(
            delivery, now=now, status=DeliveryStatus.REFUSED, error=error, response_status=status
        )
    if delivery.attempts >= settings.PHASING_WEBHOOKS_MAX_ATTEMPTS:
        return _record(
            delivery,
            now=now,
            status=DeliveryStatus.FAILED,
            error=error,
            response_status=status,
            ms=ms,
        )
    return _record(
        delivery,
        now=now,
        status=DeliveryStatus.RETRYING,
        error=error,
        response_status=status,
        ms=ms,
        next_attempt_at=now + retry_delay(delivery.attempts),
    )


def _endpoint_failed(endpoint: WebhookEndpoint, *, now: datetime, error: str) -> None:
    """Count a failure in a row; at the limit, disable the endpoint and say so."""
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        consecutive_failures=F("consecutive_failures") + 1
    )
    limit = settings.PHASING_WEBHOOKS_DISABLE_AFTER
    reason = f"disabled after {limit} failed attempts in a row; the last: {error}"[:500]
    disabled = WebhookEndpoint.objects.filter(
        pk=endpoint.pk, enabled=True, consecutive_failures__gte=limit
    ).update(enabled=False, disabled_at=now, disabled_reason=reason)
    service_failed(service_name(endpoint), now=now, error=f"{endpoint.name}: {error}")
    if disabled:
        log.error("webhook endpoint %s %s", endpoint.name, reason)


def endpoint_enable(endpoint: WebhookEndpoint, *, now: datetime | None = None) -> None:
    """Enable again (an admin's action): the count of failures starts over."""
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        enabled=True, consecutive_failures=0, disabled_at=None, disabled_reason=""
    )
    service_recovered(service_name(endpoint), now=now or timezone.now())


def deliveries_send_due(*, now: datetime | None = None, limit: int = 200) -> int:
    """Send what no task sent: queued while the broker was down, a sender that died with
    its claim, or a retry whose task is gone. Each is due at its own backoff."""
    now = now or timezone.now()
    due = list(
        WebhookDelivery.objects.filter(
            status__in=(DeliveryStatus.PENDING, DeliveryStatus.RETRYING),
            created_at__lt=now - timedelta(minutes=1),
        )
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_LEASE))
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        .order_by("created_at", "id")
        .values_list("pk", flat=True)[:limit]
    )
    return sum(
        delivery_attempt(delivery_id=pk, now=now).status == DeliveryStatus.DELIVERED for pk in due
    )
