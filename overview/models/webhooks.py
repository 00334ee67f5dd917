"""Where notices go (webhook endpoints: a receiver's URL or a chat room) and each delivery
of one notice to one endpoint, with how it went."""

from __future__ import annotations

import base64
import secrets

from django.db import models


def new_secret() -> str:
    """A Standard Webhooks secret: "whsec_" and 24 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


class NoticeType(models.TextChoices):
    HALTED = "update.halted", "An update halted"
    RESUMED = "update.resumed", "An update resumed"
    PAUSED = "update.paused", "An update paused"
    RELEASED = "update.released", "An update released to everyone"
    FROZEN = "release.frozen", "A release frozen"
    SIGN_OFF_REQUESTED = "sign_off.requested", "A change awaits a sign-off"
    DATA_STALE = "crash_data.stale", "Crash data went missing"
    TEST = "test", "A test event"


class EndpointFormat(models.TextChoices):
    STANDARD = "standard", "JSON (Standard Webhooks)"
    MATRIX = "matrix", "Matrix room"
    MATTERMOST = "mattermost", "Mattermost incoming webhook"
    SLACK = "slack", "Slack incoming webhook"


class WebhookEndpoint(models.Model):
    name = models.CharField(max_length=100, unique=True)
    format = models.CharField(
        max_length=20, choices=EndpointFormat.choices, default=EndpointFormat.STANDARD
    )
    url = models.URLField(
        max_length=500,
        help_text="The receiver's URL; for Matrix, the homeserver (https://matrix.example.org).",
    )
    # Every request is signed with it, whatever the format (Standard Webhooks headers).
    secret = models.CharField(max_length=100, default=new_secret)
    events = models.JSONField(
        default=list, blank=True, help_text="The notice types sent here (empty: all)."
    )
    matrix_room = models.CharField(
        max_length=255, blank=True, help_text="Matrix only: the room id, !abc:example.org."
    )
    matrix_access_token = models.CharField(
        max_length=255, blank=True, help_text="Matrix only: the sending account's access token."
    )
    enabled = models.BooleanField(default=True)
    # Attempts failed in a row (reset by a success); too many disable the endpoint.
    consecutive_failures = models.PositiveIntegerField(default=0)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name

    def wants(self, notice_type: str) -> bool:
        return notice_type == NoticeType.TEST or not self.events or notice_type in self.events


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    RETRYING = "retrying", "Failed, will retry"
    FAILED = "failed", "Failed, gave up"
    REFUSED = "refused", "Refused before sending (address not allowed)"


class WebhookDelivery(models.Model):
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    # The webhook-id header: the same on every attempt, so a receiver drops a repeat.
    message_id = models.CharField(max_length=64, unique=True)
    notice_type = models.CharField(max_length=40, choices=NoticeType.choices)
    payload = models.JSONField()
    created_at = models.DateTimeField()
    status = models.CharField(
        max_length=20, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_ms = models.PositiveIntegerField(null=True, blank=True, help_text="answer time")
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        verbose_name_plural = "webhook deliveries"
        indexes = [
            # The sweep of deliveries due again (notices.delivery.deliveries_send_due).
            models.Index(
                fields=("next_attempt_at",),
                name="webhook_delivery_due",
                condition=models.Q(status__in=("pending", "retrying")),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.notice_type} to {self.endpoint_id} ({self.status})"
