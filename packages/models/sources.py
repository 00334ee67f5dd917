"""When each source last answered, which service fails since when, and leases that die
with their holder: the operational state the pages, the controller and the tasks share."""

from __future__ import annotations

from django.db import models

from packages.source_facts import WritePermission


class SourceSync(models.Model):
    """When each configured source (publications or crashes) last answered, for the pages,
    the controller's freshness rule and `phasing_sources check`."""

    name = models.CharField(max_length=40, unique=True)
    kind = models.CharField(
        max_length=20, help_text="publications or crashes; service (email, write-back); beat"
    )
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_summary = models.JSONField(default=dict, blank=True)
    # Since when it has failed without a success in between (None: it works).
    failing_since = models.DateTimeField(null=True, blank=True)
    # Whether the publication source takes our percentages: a lasting state, set by each
    # write and by `phasing_sources check`, not an outage that retries.
    write_permission = models.CharField(max_length=20, choices=WritePermission.choices, blank=True)
    write_checked_at = models.DateTimeField(null=True, blank=True)
    write_detail = models.TextField(blank=True)

    def __str__(self) -> str:
        return self.name


class Lease(models.Model):
    """A lock that dies with its holder: held until `expires_at`, renewed while working.

    Claimed and renewed with conditional updates (packages.services.leases), so it works
    the same on PostgreSQL and SQLite, with the time injected.
    """

    name = models.CharField(max_length=40, unique=True)
    holder = models.CharField(max_length=100, blank=True)
    acquired_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.name}: {self.holder or 'free'}"


class DataVersion(models.Model):
    """One row whose number rises with every committed write to what the public pages show.

    Database triggers raise it (packages.data_version), in the writing transaction, so no
    write path can forget it: the event writer, the sync, bulk statements, the admin, a
    psql session. Pages cached under this number are never stale.
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    number = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"data version {self.number}"
