"""Crash reports received from machines over whoopsie's protocol, kept as sent (the
allow-listed fields only) until the crash sync brings them into the evidence."""

from __future__ import annotations

from django.db import models


class ReceivedCrash(models.Model):
    """One report a machine posted to the intake. Restricted like a crash report: the
    system id and the fields are for triagers and superusers only."""

    oops_id = models.UUIDField(unique=True)
    # The SHA-512 (128 hex digits) whoopsie sends in the URL, stored as sent.
    system_id = models.CharField(max_length=128)
    received_at = models.DateTimeField()
    # daisy's duplicate check: a system sends a crash once (Date, ExecutablePath, ProcStatus).
    replay_key = models.CharField(max_length=64, unique=True)
    # The allow-listed fields (overview.evidence.intake.IntakeReport.as_fields).
    fields = models.JSONField(default=dict)

    class Meta:
        ordering = ("received_at", "id")
        indexes = [
            # The crash sync: reports received since its last success, in order.
            models.Index(name="receivedcrash_received_idx", fields=("received_at", "id")),
        ]

    def __str__(self) -> str:
        return f"Received crash {self.oops_id}"
