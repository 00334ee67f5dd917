"""Scheduled changes: an archive admin's decision to act on a rollout at a given time.

As in Balrog, a scheduled change names its action and target, runs once at its time
through the same service as the immediate action, and keeps what became of it: done,
failed (with the error) or cancelled (by whom, why). An immediate change that needs a
second archive admin's sign-off is one too, due at once and waiting for the sign-off.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class ScheduledAction(models.TextChoices):
    PAUSE = "pause", "Pause"
    RESUME = "resume", "Resume"
    SET = "set", "Set percentage"
    RELEASE = "release", "Release to everyone"
    FREEZE = "freeze", "Freeze release"
    UNFREEZE = "unfreeze", "Unfreeze release"
    POLICY = "policy", "Change policy"


# Which target each action takes (a policy's scope may also be all updates: neither).
PUBLICATION_ACTIONS = (
    ScheduledAction.PAUSE,
    ScheduledAction.RESUME,
    ScheduledAction.SET,
    ScheduledAction.RELEASE,
)
RELEASE_ACTIONS = (ScheduledAction.FREEZE, ScheduledAction.UNFREEZE)


class ScheduledState(models.TextChoices):
    PENDING = "pending", "Pending"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class ScheduledChange(models.Model):
    action = models.CharField(max_length=20, choices=ScheduledAction.choices)
    publication = models.ForeignKey(
        "packages.Publication",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="scheduled_changes",
    )
    release = models.ForeignKey(
        "packages.Release",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="scheduled_changes",
    )
    source_package = models.ForeignKey(
        "packages.SourcePackage",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="scheduled_changes",
    )
    percentage = models.PositiveSmallIntegerField(null=True, blank=True)
    # A policy change's settings, durations in seconds (packages.services.scheduled).
    policy = models.JSONField(default=dict, blank=True)
    run_at = models.DateTimeField()
    reason = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField()
    state = models.CharField(
        max_length=20, choices=ScheduledState.choices, default=ScheduledState.PENDING
    )
    signed_off_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    signed_off_at = models.DateTimeField(null=True, blank=True)
    # Why the second archive admin agreed, kept in the update's history with the change.
    sign_off_reason = models.TextField(blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.TextField(blank=True)
    ran_at = models.DateTimeField(null=True, blank=True)
    # What happened when it ran: the change made, or the error that stopped it.
    outcome = models.TextField(blank=True)

    class Meta:
        ordering = ("run_at", "id")
        constraints = [
            models.CheckConstraint(
                name="scheduled_change_percentage_0_to_100",
                condition=Q(percentage__isnull=True) | Q(percentage__lte=100),
            ),
            models.CheckConstraint(
                name="scheduled_change_target_fits_action",
                condition=(
                    Q(
                        action__in=PUBLICATION_ACTIONS,
                        publication__isnull=False,
                        release__isnull=True,
                        source_package__isnull=True,
                    )
                    | Q(
                        action__in=RELEASE_ACTIONS,
                        publication__isnull=True,
                        release__isnull=False,
                        source_package__isnull=True,
                    )
                    | Q(
                        action=ScheduledAction.POLICY,
                        publication__isnull=True,
                    )
                    & ~Q(release__isnull=False, source_package__isnull=False)
                ),
            ),
            models.CheckConstraint(
                name="scheduled_change_set_has_percentage",
                condition=~Q(action=ScheduledAction.SET) | Q(percentage__isnull=False),
            ),
        ]
        indexes = [
            # The task's due changes and the pages' pending ones: pending, by time.
            models.Index(
                name="scheduled_change_pending_idx",
                fields=("run_at",),
                condition=Q(state="pending"),
            ),
        ]

    def __str__(self) -> str:
        return (
            f"{self.get_action_display()} {self.target_label} at {self.run_at:%Y-%m-%d %H:%M} UTC"
        )

    @property
    def target_label(self) -> str:
        """What it acts on, in words (needs its targets fetched with it)."""
        if self.publication_id is not None:
            p = self.publication
            assert p is not None
            return f"{p.source_package.name} {p.version} in {p.release.codename}"
        if self.release_id is not None:
            assert self.release is not None
            label = f"release {self.release.codename}"
            return label if self.action != ScheduledAction.POLICY else f"the policy of {label}"
        if self.source_package_id is not None:
            assert self.source_package is not None
            return f"the policy of package {self.source_package.name}"
        return "the global policy"

    @property
    def what(self) -> str:
        """'set percentage to 50%', 'pause', ... lower case."""
        if self.action == ScheduledAction.SET:
            return f"set percentage to {self.percentage}%"
        return self.get_action_display().lower()

    @property
    def is_pending(self) -> bool:
        return self.state == ScheduledState.PENDING
