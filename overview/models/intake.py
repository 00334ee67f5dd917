"""What machines send by themselves: crash reports received over whoopsie's protocol, kept
as sent (the allow-listed fields only) for the crash sync, and the fleet agent's reports of
what apt does with each update."""

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


class FleetReport(models.Model):
    """What apt on one machine says of one update, as the fleet agent last reported it:
    one row per machine and update, replaced by the machine's next report (so a machine
    that reports twice a day, or every day, counts once)."""

    # A hash of the machine id (never the id itself: apt's draw is computed from it).
    machine = models.CharField(max_length=64)
    publication = models.ForeignKey(
        "packages.Publication", on_delete=models.CASCADE, related_name="fleet_reports"
    )
    installed_version = models.CharField(max_length=200, blank=True)
    # apt keeps the new version back for phasing (DepCache.phasing_applied()).
    held_back = models.BooleanField(default=False)
    # The machine runs the update's version.
    on_new_version = models.BooleanField(default=False)
    reported_at = models.DateTimeField()
    day = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                name="one_fleet_report_per_machine_and_update", fields=("publication", "machine")
            )
        ]
        indexes = [
            # The judges and the pages: an update's reports of the last days, hour by hour.
            models.Index(name="fleetreport_pub_time_idx", fields=("publication", "reported_at")),
            # The daily purge.
            models.Index(name="fleetreport_time_idx", fields=("reported_at",)),
        ]

    def __str__(self) -> str:
        return f"{self.machine[:12]} on {self.publication_id}"
