"""Forms of the archive admins' actions: a reason always, and what else each change needs."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator, MaxValueValidator, MinValueValidator
from django.utils import timezone

from packages import services
from packages.domain import policy as policy_rules
from packages.models import Policy, Release, ScheduledAction, ScheduledChange, UnknownVersion
from packages.services.scheduled import PAST_TOLERANCE
from packages.services.sign_off import sign_off_required


def reason_field(help_text: str) -> forms.CharField:
    """The reason every change that affects phasing asks for."""
    return forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}), max_length=2000, help_text=help_text
    )


class ReasonRequired:
    """A reason of blanks is no reason."""

    cleaned_data: dict[str, Any]

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("Say why.")
        return reason


class ReasonForm(ReasonRequired, forms.Form):
    reason = reason_field("Recorded with the change and shown on the public history page.")


class PercentageForm(ReasonForm):
    percentage = forms.IntegerField(min_value=0, max_value=100, label="Percentage")
    field_order = ("percentage", "reason")


class RunAt(forms.Form):
    """When a schedulable action runs: now (empty), or at a later time (a scheduled change)."""

    run_at = forms.DateTimeField(
        required=False,
        label="Run at (UTC)",
        help_text="Empty: now. A later time, YYYY-MM-DD HH:MM in UTC, schedules the change: it "
        "shows on the pages until it runs, and can be cancelled in Scheduled changes.",
    )

    def clean_run_at(self) -> datetime | None:
        value = self.cleaned_data["run_at"]
        if value is None:
            return None
        now = timezone.now()
        if value < now - PAST_TOLERANCE:
            raise forms.ValidationError("That time has passed.")
        return value if value > now else None


class ScheduledReasonForm(RunAt, ReasonForm):
    pass


class ScheduledPercentageForm(RunAt, PercentageForm):
    pass


class PolicyChangeForm(RunAt, ReasonForm):
    SCOPES = (
        ("package", "the packages of the selection"),
        ("release", "the releases of the selection"),
    )

    scope = forms.ChoiceField(choices=SCOPES, widget=forms.RadioSelect, initial="package")
    start_percentage = forms.IntegerField(min_value=0, max_value=100, initial=10)
    step = forms.IntegerField(min_value=1, max_value=100, initial=10, help_text="Points per step")
    interval = forms.DurationField(
        initial=timedelta(hours=6),
        help_text="HH:MM:SS, or 'D HH:MM:SS'; between one minute and 30 days",
        validators=[
            MinValueValidator(policy_rules.MIN_INTERVAL),
            MaxValueValidator(policy_rules.MAX_INTERVAL),
        ],
    )
    ceiling = forms.IntegerField(min_value=1, max_value=100, initial=100)
    schedule = forms.CharField(
        required=False,
        help_text="Explicit percentages, rising, e.g. 1, 2, 5, 10, 20, 50, 100 "
        "(overrides start and step)",
    )
    quiet_weekend = forms.BooleanField(
        required=False, help_text="Never reach 100% between Friday 00:00 and Monday 12:00 UTC"
    )
    min_time_at_percentage = forms.DurationField(
        required=False,
        help_text="Optional, HH:MM:SS; at most 30 days",
        validators=[
            MinValueValidator(timedelta(0)),
            MaxValueValidator(policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
        ],
    )
    min_previous_reports = forms.IntegerField(
        min_value=0, max_value=policy_rules.MAX_PREVIOUS_REPORTS, initial=0
    )
    judge = forms.ChoiceField(
        choices=policy_rules.JUDGE_CHOICES,
        initial=policy_rules.DEFAULT_JUDGE,
        help_text="Who decides a rise in crash rate; both halt on a bucket new in the version",
    )
    insufficient_gate = forms.IntegerField(
        min_value=0,
        max_value=100,
        required=False,
        help_text="While the evidence is insufficient, hold at this percentage; empty: carry on",
    )
    insufficient_max_hold = forms.DurationField(
        initial=timedelta(hours=48),
        help_text="The longest hold at the gate, HH:MM:SS; at most 30 days",
        validators=[
            MinValueValidator(timedelta(0)),
            MaxValueValidator(policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
        ],
    )
    unknown_version = forms.ChoiceField(
        choices=UnknownVersion.choices,
        initial=UnknownVersion.HOLD,
        required=False,
        label="Version unknown to the error tracker",
    )
    phase_with_dependencies = forms.BooleanField(
        required=False,
        initial=True,
        help_text="Hold an update with the updates in phasing it needs (versioned Depends, "
        "or Breaks of their old version); unticked, the package phases alone",
    )
    auto_resume = forms.BooleanField(
        required=False,
        initial=False,
        label="Resume a halted update by itself",
        help_text="As Ubuntu's phased-updater: when the checks come back clean, one step "
        "above its last percentage (a rate-only halt can clear itself after midnight UTC)",
    )
    watch_at_full = forms.DurationField(
        required=False,
        initial=policy_rules.Rules.watch_at_full,
        label="Watch at 100%",
        help_text="Under the sequential judge, how long an update at 100% is still judged "
        "before it is complete, D HH:MM:SS; at most 30 days; empty: 3 days, 0: at once",
        validators=[
            MinValueValidator(timedelta(0)),
            MaxValueValidator(policy_rules.MAX_MIN_TIME_AT_PERCENTAGE),
        ],
    )
    field_order = (
        "scope",
        "start_percentage",
        "step",
        "interval",
        "ceiling",
        "schedule",
        "quiet_weekend",
        "min_time_at_percentage",
        "min_previous_reports",
        "judge",
        "insufficient_gate",
        "insufficient_max_hold",
        "unknown_version",
        "phase_with_dependencies",
        "auto_resume",
        "watch_at_full",
        "reason",
        "run_at",
    )

    def clean_schedule(self) -> list[int]:
        text = self.cleaned_data["schedule"].strip()
        if not text:
            return []
        try:
            values = [int(part) for part in text.replace(",", " ").split()]
        except ValueError:
            raise forms.ValidationError("Whole numbers separated by commas.") from None
        if values != sorted(values) or any(not 0 <= value <= 100 for value in values):
            raise forms.ValidationError("Rising percentages between 0 and 100.")
        if len(values) > policy_rules.MAX_SCHEDULE_STEPS:
            raise forms.ValidationError(f"At most {policy_rules.MAX_SCHEDULE_STEPS} percentages.")
        return values

    def clean_unknown_version(self) -> str:
        return self.cleaned_data["unknown_version"] or UnknownVersion.HOLD

    def clean_watch_at_full(self) -> timedelta:
        return _watch_or_default(self.cleaned_data["watch_at_full"])

    def policy_fields(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in services.POLICY_FIELDS}


def _watch_or_default(watch: timedelta | None) -> timedelta:
    """An empty watch at 100% is the default one (0 is none)."""
    return policy_rules.Rules.watch_at_full if watch is None else watch


class PolicyAdminForm(ReasonRequired, forms.ModelForm):
    reason = reason_field("Why this policy changes; kept in the policy's history.")

    class Meta:
        model = Policy
        fields = ("release", "source_package", *services.POLICY_FIELDS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Older forms and scripts post without them: holding and the default watch.
        self.fields["unknown_version"].required = False
        self.fields["watch_at_full"].required = False

    def clean_unknown_version(self) -> str:
        return self.cleaned_data["unknown_version"] or UnknownVersion.HOLD

    def clean_watch_at_full(self) -> timedelta:
        return _watch_or_default(self.cleaned_data["watch_at_full"])

    def clean(self) -> dict:
        data = super().clean() or {}
        if self.errors:
            return data  # each field already says what is wrong with it
        try:
            policy_rules.Rules(
                start=data.get("start_percentage", 10),
                step=data.get("step", 10),
                interval=data.get("interval") or timedelta(hours=6),
                ceiling=data.get("ceiling", 100),
                schedule=tuple(data.get("schedule") or ()),
                min_time_at_percentage=data.get("min_time_at_percentage"),
                min_previous_reports=data.get("min_previous_reports") or 0,
                judge=data.get("judge") or policy_rules.DEFAULT_JUDGE,
                insufficient_gate=data.get("insufficient_gate"),
                insufficient_max_hold=data.get("insufficient_max_hold") or timedelta(0),
                watch_at_full=data.get("watch_at_full") or timedelta(0),
            )
        except (ValueError, TypeError) as error:
            raise forms.ValidationError(f"{str(error).capitalize()}.") from error
        release = data.get("release") or self.instance.release
        package = data.get("source_package") or self.instance.source_package
        proposed = ScheduledChange(
            action=ScheduledAction.POLICY,
            release=release,
            source_package=package,
            policy={
                name: data.get(name) for name in ("start_percentage", "step", "ceiling", "schedule")
            },
        )
        why = sign_off_required(proposed, current_policy=self.instance)
        if why:
            # This form saves at once; the "Change policy" action asks for the sign-off.
            raise forms.ValidationError(
                f"{why[0].upper()}{why[1:]}: use the updates' Change policy action, "
                "which waits for it."
            )
        return data


class ReleaseAdminForm(ReasonRequired, forms.ModelForm):
    """A release's version and support change phasing (the sync skips unsupported ones):
    each change says why, and the reason goes into the history of its updates."""

    reason = reason_field(
        "Why this release changes; recorded in the history of each of its updates."
    )

    class Meta:
        model = Release
        fields = ("codename", "version", "supported")


class CappedUsernameMixin(forms.Form):
    """Django sets the username field's max_length after building its validators, so a
    longer name reached the login-failure log (axes, 255 characters) and failed there.
    Refuse it as the form's own error instead."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        assert isinstance(field, forms.CharField) and field.max_length is not None
        field.validators.append(MaxLengthValidator(field.max_length))


class LoginForm(CappedUsernameMixin, AuthenticationForm):
    pass


class AdminLoginForm(CappedUsernameMixin, AdminAuthenticationForm):
    pass
