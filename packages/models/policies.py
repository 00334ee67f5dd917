"""How fast updates phase: a policy per package, per release, or for all updates, each
setting within the bounds of packages.domain.policy (checked here and by the database)."""

from __future__ import annotations

from datetime import timedelta

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q, Value
from django.db.models.functions import Coalesce

from packages.domain import policy as policy_rules
from packages.holds import UnknownVersion


class Policy(models.Model):
    """How fast updates phase. Resolved per package, else per release, else global."""

    release = models.OneToOneField(
        "packages.Release", null=True, blank=True, on_delete=models.CASCADE, related_name="policy"
    )
    source_package = models.OneToOneField(
        "packages.SourcePackage",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="policy",
    )
    start_percentage = models.PositiveSmallIntegerField(
        default=10, validators=[MaxValueValidator(policy_rules.FULL)]
    )
    step = models.PositiveSmallIntegerField(
        default=10,
        help_text="Points added per step",
        validators=[MinValueValidator(1), MaxValueValidator(policy_rules.FULL)],
    )
    interval = models.DurationField(
        default=timedelta(hours=6),
        help_text="Between one minute and 30 days",
        validators=[
            MinValueValidator(policy_rules.MIN_INTERVAL),
            MaxValueValidator(policy_rules.MAX_INTERVAL),
        ],
    )
    ceiling = models.PositiveSmallIntegerField(
        default=100, validators=[MinValueValidator(1), MaxValueValidator(policy_rules.FULL)]
    )
    schedule = models.JSONField(
        default=list,
        blank=True,
        help_text="Explicit percentages to step through, e.g. [1, 2, 5, 10, 20, 50, 100]; "
        "overrides start and step when set.",
    )
    quiet_weekend = models.BooleanField(
        default=False, help_text="Never reach 100% between Friday 00:00 and Monday 12:00 UTC"
    )
    min_time_at_percentage = models.DurationField(
        null=True,
        blank=True,
        help_text="Hold with 'not enough data' until this long at a step (at most 30 days)",
        validators=[MaxValueValidator(policy_rules.MAX_MIN_TIME_AT_PERCENTAGE)],
    )
    min_previous_reports = models.PositiveIntegerField(
        default=0,
        help_text="Reports of the previous version needed to compare crash rates",
        validators=[MaxValueValidator(policy_rules.MAX_PREVIOUS_REPORTS)],
    )
    judge = models.CharField(
        max_length=20,
        choices=policy_rules.JUDGE_CHOICES,
        default=policy_rules.DEFAULT_JUDGE,
        help_text="Who decides a rise in crash rate; both halt on a bucket new in the version",
    )
    insufficient_gate = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="While the evidence is insufficient, hold at this percentage until it is "
        "healthy or the longest hold has passed; empty: carry on",
        validators=[MaxValueValidator(policy_rules.FULL)],
    )
    insufficient_max_hold = models.DurationField(
        default=timedelta(hours=48),
        help_text="The longest hold at the gate (at most 30 days)",
        validators=[
            MinValueValidator(timedelta(0)),
            MaxValueValidator(policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
        ],
    )
    unknown_version = models.CharField(
        max_length=10,
        choices=UnknownVersion.choices,
        default=UnknownVersion.HOLD,
        help_text="When the error tracker does not know the version (it answers 404)",
    )
    phase_with_dependencies = models.BooleanField(
        default=True,
        help_text="Hold an update together with the updates in phasing it needs (versioned "
        "Depends, or Breaks of their old version): never ahead of them, never complete before them",
    )
    auto_resume = models.BooleanField(
        default=False,
        help_text="As Ubuntu's phased-updater: a halted update resumes by itself, one step "
        "above its last percentage, when its checks come back clean (a person's pull never)",
    )
    watch_at_full = models.DurationField(
        default=policy_rules.Rules.watch_at_full,
        help_text="Under the sequential judge, how long an update at 100% is still judged "
        "(and halted on a regression) before it is complete; at most 30 days, 0: at once",
        validators=[
            MinValueValidator(timedelta(0)),
            MaxValueValidator(policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
        ],
    )

    class Meta:
        verbose_name_plural = "policies"
        constraints = [
            models.CheckConstraint(
                name="policy_scope_is_release_or_package",
                condition=~(Q(release__isnull=False) & Q(source_package__isnull=False)),
            ),
            # One policy per scope; the global one has neither release nor package.
            models.UniqueConstraint(
                Coalesce("release", Value(0)),
                Coalesce("source_package", Value(0)),
                name="one_policy_per_scope",
            ),
            models.CheckConstraint(name="policy_step_positive", condition=Q(step__gte=1)),
            models.CheckConstraint(
                name="policy_percentages_in_range",
                condition=Q(start_percentage__lte=100) & Q(ceiling__lte=100) & Q(ceiling__gte=1),
            ),
            models.CheckConstraint(name="policy_step_at_most_100", condition=Q(step__lte=100)),
            models.CheckConstraint(
                name="policy_interval_in_range",
                condition=Q(interval__gte=policy_rules.MIN_INTERVAL)
                & Q(interval__lte=policy_rules.MAX_INTERVAL),
            ),
            models.CheckConstraint(
                name="policy_min_time_in_range",
                condition=Q(min_time_at_percentage__isnull=True)
                | Q(min_time_at_percentage__lte=policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
            ),
            models.CheckConstraint(
                name="policy_previous_reports_in_range",
                condition=Q(min_previous_reports__lte=policy_rules.MAX_PREVIOUS_REPORTS),
            ),
            models.CheckConstraint(
                name="policy_gate_in_range",
                condition=Q(insufficient_gate__isnull=True) | Q(insufficient_gate__lte=100),
            ),
            models.CheckConstraint(
                name="policy_longest_hold_in_range",
                condition=Q(insufficient_max_hold__gte=timedelta(0))
                & Q(insufficient_max_hold__lte=policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
            ),
            models.CheckConstraint(
                name="policy_watch_at_full_in_range",
                condition=Q(watch_at_full__gte=timedelta(0))
                & Q(watch_at_full__lte=policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
            ),
        ]

    def __str__(self) -> str:
        return f"Policy for {self.scope_label}"

    @property
    def scope_label(self) -> str:
        if self.source_package_id:
            return f"package {self.source_package}"
        if self.release is not None:
            return f"release {self.release.codename}"
        return "all updates"

    def rules(self) -> policy_rules.Rules:
        return policy_rules.Rules(
            start=self.start_percentage,
            step=self.step,
            interval=self.interval,
            ceiling=self.ceiling,
            schedule=tuple(self.schedule or ()),
            quiet_weekend=self.quiet_weekend,
            min_time_at_percentage=self.min_time_at_percentage,
            min_previous_reports=self.min_previous_reports,
            judge=self.judge,
            insufficient_gate=self.insufficient_gate,
            insufficient_max_hold=self.insufficient_max_hold,
            unknown_version=self.unknown_version,
            phase_with_dependencies=self.phase_with_dependencies,
            auto_resume=self.auto_resume,
            watch_at_full=self.watch_at_full,
        )
