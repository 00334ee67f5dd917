"""The emails about halts: one per person per halt, kept with how sending went."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from packages.models import Person, Publication


class Notification(models.Model):
    """An email about a halt, sent once per person per halt."""

    publication = models.ForeignKey(
        Publication, on_delete=models.CASCADE, related_name="notifications"
    )
    event = models.ForeignKey(
        "packages.PhasingEvent", on_delete=models.CASCADE, related_name="notifications"
    )
    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="notifications")
    roles = models.CharField(max_length=100, help_text="signer, uploader, sponsor")
    subject = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)
    # Set by the sender that is sending it now; a claim older than the lease is a sender
    # that died, and another may take it over.
    claimed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    # After a failure: not before then (backoff from the failure).
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ("-created_at",)
        # In the admin: every email the product wrote, sent or not.
        verbose_name = "email in the outbox"
        verbose_name_plural = "outbox"
        constraints = [
            models.UniqueConstraint(
                name="one_email_per_person_per_halt", fields=("event", "person")
            )
        ]
        indexes = [
            # The reconcile: emails not sent yet, oldest first.
            models.Index(
                name="notification_unsent_idx",
                fields=("created_at",),
                condition=Q(sent_at__isnull=True),
            )
        ]

    def __str__(self) -> str:
        return f"{self.subject} → {self.person}"
