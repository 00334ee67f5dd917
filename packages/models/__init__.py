"""Releases, source packages, people, publications, policies and the phasing audit trail.

Words as in docs/architecture.md. Percentage and state of a publication change only through
`packages.services.publication_transition`, which writes the PhasingEvent with them.
"""

from __future__ import annotations

import functools
from datetime import datetime

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import get_script_prefix, get_urlconf, reverse

from packages.domain import change_words as words
from packages.domain import policy as policy_rules
from packages.holds import HoldReason, hold_words
from packages.holds import UnknownVersion as UnknownVersion

# Policies, the status of sources and services, and leases in their own modules.
from packages.models.accounts import SingleSignOnIdentity as SingleSignOnIdentity
from packages.models.labels import label_of
from packages.models.loading import LoadedFromRows
from packages.models.policies import Policy as Policy
from packages.models.scheduled import ScheduledAction as ScheduledAction
from packages.models.scheduled import ScheduledChange as ScheduledChange
from packages.models.scheduled import ScheduledState as ScheduledState
from packages.models.sources import DataVersion as DataVersion
from packages.models.sources import Lease as Lease
from packages.models.sources import SourceSync as SourceSync
from packages.source_facts import SourceFacts
from packages.source_facts import WritePermission as WritePermission
from packages.validators import validate_source_name, validate_version


class Release(LoadedFromRows, models.Model):
    codename = models.SlugField(max_length=40, unique=True)
    version = models.CharField(max_length=20, help_text="For example 24.04")
    supported = models.BooleanField(default=True)
    # Emergency stop for a whole release: while frozen, none of its updates advance.
    frozen = models.BooleanField(default=False)
    frozen_reason = models.TextField(blank=True)
    frozen_at = models.DateTimeField(null=True, blank=True)
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ("-version",)

    def __str__(self) -> str:
        return f"{self.codename} ({self.version})"


class Person(models.Model):
    account_name = models.CharField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    email = models.EmailField()

    class Meta:
        ordering = ("name",)
        verbose_name_plural = "people"

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


class SourcePackage(LoadedFromRows, models.Model):
    name = models.CharField(max_length=200, unique=True, validators=[validate_source_name])

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("overview:history", args=[self.name])


class SourcePackageBinary(models.Model):
    """A binary that one of a source package's publications builds: the union of their
    `binaries`, one row each, so "is this one of the package's own binaries?" is one
    index probe, not a read of every publication of the package (the crash ingest asks
    it for every version a crash report lists).

    Kept by database triggers on the publication table (packages.binaries), not by
    Python, so that every way a publication is written keeps it exact."""

    source_package = models.ForeignKey(
        SourcePackage, on_delete=models.CASCADE, related_name="binary_names"
    )
    name = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                name="one_row_per_source_package_binary", fields=("source_package", "name")
            )
        ]
        indexes = [
            # The crash ingest's "which packages build this binary?" for the names a batch's
            # reports list (overview.evidence.dependents_counts).
            models.Index(name="source_package_binary_name_idx", fields=("name",)),
        ]

    def __str__(self) -> str:
        return self.name


class Pocket(models.TextChoices):
    RELEASE = "release", "Release"
    SECURITY = "security", "Security"
    UPDATES = "updates", "Updates"
    PROPOSED = "proposed", "Proposed"
    BACKPORTS = "backports", "Backports"


class ArchiveStatus(models.TextChoices):
    PUBLISHED = "published", "Published"
    SUPERSEDED = "superseded", "Superseded"
    DELETED = "deleted", "Deleted"


class PhasingState(models.TextChoices):
    PHASING = "phasing", "Phasing"
    PAUSED = "paused", "Paused"
    HALTED = "halted", "Halted"
    COMPLETE = "complete", "Complete"
    SUPERSEDED = "superseded", "Superseded"


ACTIVE_STATES = (PhasingState.PHASING, PhasingState.PAUSED, PhasingState.HALTED)


@functools.cache
def _update_url_pattern(prefix: str, urlconf: str | None) -> str:
    """The update page's URL with a place for its id: reversed once, not once a row (the
    pages link every update they list). Keyed by what reversing depends on."""
    return reverse("overview:update", args=[123456789]).replace("123456789", "{}")


class Publication(SourceFacts, LoadedFromRows, models.Model):
    source_package = models.ForeignKey(
        SourcePackage, on_delete=models.CASCADE, related_name="publications"
    )
    release = models.ForeignKey(Release, on_delete=models.CASCADE, related_name="publications")
    pocket = models.CharField(max_length=20, choices=Pocket.choices, default=Pocket.UPDATES)
    version = models.CharField(max_length=200, validators=[validate_version])
    previous_version = models.CharField(max_length=200, blank=True, validators=[validate_version])
    component = models.CharField(max_length=40, default="main")
    binaries = models.JSONField(default=list, blank=True)
    # The versioned Depends, Pre-Depends, Breaks and Conflicts of its binaries, as rows of
    # [field, binary, package, operator, version] (packages.domain.dependencies).
    relations = models.JSONField(default=list, blank=True)
    signer = models.ForeignKey(
        Person, null=True, blank=True, on_delete=models.SET_NULL, related_name="signed"
    )
    # Who made the changes (the upload's Changed-By); the sponsor is the signer of
    # someone else's changes.
    uploader = models.ForeignKey(
        Person, null=True, blank=True, on_delete=models.SET_NULL, related_name="uploaded"
    )
    sponsor = models.ForeignKey(
        Person, null=True, blank=True, on_delete=models.SET_NULL, related_name="sponsored"
    )
    date_published = models.DateTimeField()
    date_superseded = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=20, choices=ArchiveStatus.choices, default=ArchiveStatus.PUBLISHED
    )
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )

    # Phasing. Assigned only by packages.services.publication_transition.
    phased_update_percentage = models.PositiveSmallIntegerField(default=0)
    state = models.CharField(
        max_length=20, choices=PhasingState.choices, default=PhasingState.PHASING
    )
    state_changed_at = models.DateTimeField(null=True, blank=True)
    last_increase_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    # What the controller saw at its last tick (typed, so pages can say why it holds).
    hold_reason = models.CharField(max_length=30, choices=HoldReason.choices, blank=True)
    hold_detail = models.CharField(max_length=500, blank=True)
    crash_data_unavailable_since = models.DateTimeField(null=True, blank=True)

    # Set by the halt, so crash rates of a halted update are still scaled by the share of
    # machines that took it (the error tracker must never be asked with 0%).
    percentage_before_halt = models.PositiveSmallIntegerField(null=True, blank=True)

    # Where the record came from, and what the source holds: the lowest percentage of its
    # binaries, and each binary's on each architecture ([binary, architecture, percentage
    # or null for 100]), as Launchpad stores them and apt reads them.
    source_name = models.CharField(max_length=40, default="simulator")
    source_percentage = models.PositiveSmallIntegerField(null=True, blank=True)
    source_percentages = models.JSONField(default=list, blank=True)
    # Also published in a -security suite: apt never phases it, so neither do we.
    in_security = models.BooleanField(default=False)
    # The Launchpad bugs the upload closes (its changelog's "LP: #N"), linked on the pages.
    closed_bugs = models.JSONField(default=list, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)
    # The last percentage the source took from us, read back at the next sync.
    written_percentage = models.PositiveSmallIntegerField(null=True, blank=True)
    written_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-date_published", "-id")
        permissions = [("change_phasing", "Can pause, resume, halt and set phasing")]
        constraints = [
            models.UniqueConstraint(
                name="one_publication_per_release_pocket_source_version",
                fields=("release", "pocket", "source_package", "version"),
            ),
            models.CheckConstraint(
                name="publication_percentage_0_to_100",
                condition=Q(phased_update_percentage__gte=0) & Q(phased_update_percentage__lte=100),
            ),
            models.CheckConstraint(
                name="publication_source_percentage_0_to_100",
                condition=Q(source_percentage__isnull=True) | Q(source_percentage__lte=100),
            ),
        ]
        indexes = [
            # Overview page and controller tick: publications in phasing, paused or halted.
            models.Index(
                name="publication_active_idx",
                fields=("release", "state", "phased_update_percentage"),
                condition=Q(state__in=ACTIVE_STATES),
            ),
            # The crash ingest: a listed library's update in phasing, looked up by package
            # (overview.evidence.dependents_counts), without reading its package's history.
            models.Index(
                name="publication_active_package_idx",
                fields=("source_package",),
                condition=Q(state__in=ACTIVE_STATES),
            ),
            # Recently completed section of the overview page.
            models.Index(
                name="publication_completed_idx",
                fields=("completed_at",),
                condition=Q(state="complete"),
            ),
            # Publishing-history page: every version of one source, newest first.
            models.Index(
                name="publication_history_idx", fields=("source_package", "-date_published")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_package.name} {self.version} ({self.release.codename}-{self.pocket})"

    def get_absolute_url(self) -> str:
        return reverse("overview:history", args=[self.source_package.name])

    def get_update_url(self) -> str:
        """The page of this update with its actions (the overview's app serves it)."""
        return _update_url_pattern(get_script_prefix(), get_urlconf()).format(self.pk)

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def hold_words(self) -> str:
        """Why the controller held it at its last tick: 'held with mutter 46.2: halted'."""
        return hold_words(self.hold_reason, self.hold_detail)

    @property
    def is_phased(self) -> bool:
        return self.pocket == Pocket.UPDATES

    def next_step_at(self, rules: policy_rules.Rules) -> datetime | None:
        """When the controller may next raise the percentage, if nothing holds it."""
        if self.state != PhasingState.PHASING:
            return None
        return policy_rules.next_step_at(
            rules,
            percentage=self.phased_update_percentage,
            last_increase_at=self.last_increase_at or self.date_published,
        )


class EventKind(models.TextChoices):
    PUBLISHED = "published", "Published"
    ADVANCED = "advanced", "Advanced"
    HALTED = "halted", "Halted"
    PAUSED = "paused", "Paused"
    RESUMED = "resumed", "Resumed"
    SET = "set", "Percentage set"
    RELEASED = "released", "Released to everyone"
    COMPLETED = "completed", "Completed"
    SUPERSEDED = "superseded", "Superseded"
    EXTERNAL = "external", "Changed at the source"
    FROZEN = "frozen", "Release frozen"
    UNFROZEN = "unfrozen", "Release unfrozen"
    POLICY = "policy", "Policy changed"
    RELEASE = "release", "Release changed"
    # A scheduled change whose author may no longer change phasing: it never runs.
    SCHEDULED_CANCELLED = "scheduled_cancelled", "Scheduled change cancelled"


# Notes on the updates a release- or package-wide decision touches (a freeze, a policy):
# in their histories and feeds, but not a change of the update itself, so never its
# "Last change".
NOTE_KINDS = (EventKind.FROZEN, EventKind.UNFROZEN, EventKind.POLICY, EventKind.RELEASE)


class WriteBack(models.TextChoices):
    NOT_NEEDED = "", "—"
    APPLIED = "applied", "Written to the source"
    DRY_RUN = "dry_run", "Dry run: the source is read-only"
    FAILED = "failed", "Writing to the source failed"
    DENIED = "denied", "No permission to change phasing at the source"
    PENDING = "pending", "Pending"


class PhasingEvent(models.Model):
    publication = models.ForeignKey(Publication, on_delete=models.CASCADE, related_name="events")
    created_at = models.DateTimeField(db_index=True)
    kind = models.CharField(max_length=20, choices=EventKind.choices)
    old_percentage = models.PositiveSmallIntegerField(null=True, blank=True)
    new_percentage = models.PositiveSmallIntegerField()
    old_state = models.CharField(max_length=20, choices=PhasingState.choices, blank=True)
    new_state = models.CharField(max_length=20, choices=PhasingState.choices)
    # A null actor is the controller (or the sync of a source, named in actor_name).
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_name = models.CharField(max_length=150, default="controller")
    reason = models.TextField(blank=True)
    write_back = models.CharField(max_length=20, choices=WriteBack.choices, blank=True)
    write_back_detail = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [
            # Publishing-history chart and events list of one publication, in time order.
            models.Index(name="event_publication_time_idx", fields=("publication", "created_at")),
        ]

    def __str__(self) -> str:
        return f"{self.publication}: {self.percentage_change} {self.kind}"

    @property
    def percentage_change(self) -> str:
        return words.percentage_change(self.old_percentage, self.new_percentage)

    @property
    def state_change(self) -> str:
        old = label_of(self, "old_state") if self.old_state else ""
        return words.state_change(old, label_of(self, "new_state"))
