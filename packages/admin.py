"""The archive admins' console: publications, releases, policies, the phasing audit trail.

Percentage and state are never form fields: every change is an admin action that asks
for a reason on an intermediate page and calls the same service as the controller, so it
writes a PhasingEvent with the admin as actor. Releases (frozen or not) and policies are
audited by admin LogEntry rows (their History page), with the reason in the message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from overview.models import Override, Problem, ProblemKind
from overview.permissions import can_change_phasing
from packages import policy as policy_rules
from packages import services
from packages.models import (
    Person,
    PhasingEvent,
    Policy,
    Publication,
    Release,
    SourcePackage,
)

admin.site.site_header = "Phasing administration"
admin.site.site_title = "Phasing admin"
admin.site.index_title = "Rollouts, releases and policies"
admin.site.site_url = "/"

# --- intermediate pages -------------------------------------------------------------------


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records written only by the services (audit trails, synced data): read, never edit."""

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> tuple[str, ...]:
        return tuple(field.name for field in self.model._meta.concrete_fields)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        max_length=2000,
        help_text="Recorded with the change and shown on the public history page.",
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("Say why.")
        return reason


class PercentageForm(ReasonForm):
    percentage = forms.IntegerField(min_value=0, max_value=100, label="Percentage")
    field_order = ("percentage", "reason")


class PolicyChangeForm(ReasonForm):
    SCOPES = (
        ("package", "the packages of the selection"),
        ("release", "the releases of the selection"),
    )

    scope = forms.ChoiceField(choices=SCOPES, widget=forms.RadioSelect, initial="package")
    start_percentage = forms.IntegerField(min_value=0, max_value=100, initial=10)
    step = forms.IntegerField(min_value=1, max_value=100, initial=10, help_text="Points per step")
    interval = forms.DurationField(
        initial=timedelta(hours=6), help_text="HH:MM:SS, or 'D HH:MM:SS'"
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
    min_time_at_percentage = forms.DurationField(required=False, help_text="Optional, HH:MM:SS")
    min_previous_reports = forms.IntegerField(min_value=0, initial=0)
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
        "reason",
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
        return values

    def clean_interval(self) -> timedelta:
        interval = self.cleaned_data["interval"]
        if interval <= timedelta(0):
            raise forms.ValidationError("The interval must be positive.")
        return interval

    def policy_fields(self) -> dict[str, Any]:
        return {name: self.cleaned_data[name] for name in services.POLICY_FIELDS}


def action_with_reason(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    *,
    action: str,
    title: str,
    explanation: str,
    form_class: type[ReasonForm],
    perform: Callable[[forms.Form], None],
    targets: Iterable[object] | None = None,
    targets_label: str = "Selected",
    submit_label: str = "Apply",
) -> HttpResponse | None:
    """Show the reason page; on its valid POST run `perform` and return to the changelist."""
    if request.method == "POST" and "apply" in request.POST:
        form = form_class(request.POST)
        if form.is_valid():
            perform(form)
            return None
    else:
        form = form_class()
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "explanation": explanation,
        "form": form,
        "queryset": queryset,
        "targets": list(targets if targets is not None else queryset),
        "targets_label": targets_label,
        "submit_label": submit_label,
        "action": action,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
        "opts": modeladmin.model._meta,
        "media": modeladmin.media,
    }
    return TemplateResponse(request, "admin/phasing/action_with_reason.html", context)


def _error_text(error: ValidationError) -> str:
    return "; ".join(error.messages)


def report_outcome(
    modeladmin: admin.ModelAdmin, request: HttpRequest, verb: str, done: list, failed: list
) -> None:
    if done:
        names = ", ".join(str(item) for item in done)
        modeladmin.message_user(request, f"{verb}: {names}.", messages.SUCCESS)
    for item, error in failed:
        modeladmin.message_user(request, f"{item}: {_error_text(error)}", messages.ERROR)


class PhasingPermissionMixin:
    """`@admin.action(permissions=["change_phasing"])` asks this."""

    def has_change_phasing_permission(self, request: HttpRequest) -> bool:
        return can_change_phasing(request.user)


def _releases_of(queryset: QuerySet[Publication]) -> list[Release]:
    return list(Release.objects.filter(pk__in=queryset.values("release_id")).order_by("-version"))


@dataclass(frozen=True)
class ReleaseOperation:
    service: Callable[..., Release]
    title: str
    explanation: str
    submit_label: str
    logged: str
    outcome: str


RELEASE_OPERATIONS = {
    "freeze": ReleaseOperation(
        services.release_freeze,
        "Freeze release",
        "While a release is frozen none of its updates advance.",
        "Freeze",
        "Froze the release",
        "Frozen (no update advances until unfrozen)",
    ),
    "unfreeze": ReleaseOperation(
        services.release_unfreeze,
        "Unfreeze release",
        "Updates of the release advance again at the controller's next tick.",
        "Unfreeze",
        "Unfroze the release",
        "Unfrozen",
    ),
}


def release_action(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    releases: list[Release],
    *,
    operation: str,
    action: str,
    **page: object,
):
    """Freeze or unfreeze releases from either admin, after asking for a reason."""
    op = RELEASE_OPERATIONS[operation]

    def perform(form) -> None:
        reason = form.cleaned_data["reason"]
        done, failed = [], []
        for release in releases:
            try:
                op.service(release=release, actor=request.user, reason=reason)
            except ValidationError as error:
                failed.append((release, error))
                continue
            modeladmin.log_change(request, release, f"{op.logged}. Reason: {reason}")
            done.append(release)
        report_outcome(modeladmin, request, op.outcome, done, failed)

    return action_with_reason(
        modeladmin,
        request,
        queryset,
        action=action,
        title=op.title,
        explanation=op.explanation,
        form_class=ReasonForm,
        perform=perform,
        submit_label=op.submit_label,
        **page,
    )


# --- publications --------------------------------------------------------------------------


class ProblemsFilter(admin.SimpleListFilter):
    title = "problems"
    parameter_name = "problems"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin):
        return (
            ("unresolved", "With problems not overridden"),
            ("any", "With problems"),
            ("none", "Without problems"),
        )

    def queryset(self, request: HttpRequest, queryset: QuerySet[Publication]):
        active = Problem.objects.filter(publication=OuterRef("pk"), active=True)
        if self.value() == "any":
            return queryset.filter(Exists(active))
        if self.value() == "none":
            return queryset.exclude(Exists(active))
        if self.value() == "unresolved":
            covering = Override.objects.filter(
                Q(version="") | Q(version=OuterRef("publication__version")),
                revoked_at__isnull=True,
                source_package=OuterRef("publication__source_package"),
                kind=OuterRef("kind"),
            ).filter(Q(kind=ProblemKind.INCREASED_RATE) | Q(bucket=OuterRef("bucket")))
            return queryset.filter(Exists(active.exclude(Exists(covering))))
        return queryset


class PhasingEventInline(admin.TabularInline):
    model = PhasingEvent
    fields = (
        "created_at",
        "kind",
        "old_percentage",
        "new_percentage",
        "new_state",
        "actor_name",
        "reason",
        "write_back",
    )
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("-created_at", "-id")
    verbose_name_plural = "phasing events (newest first)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[PhasingEvent]:
        # Each row's title names its publication: fetch it with the events, not per row.
        return (
            super()
            .get_queryset(request)
            .select_related("publication__source_package", "publication__release")
        )

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Publication)
class PublicationAdmin(PhasingPermissionMixin, admin.ModelAdmin):
    list_display = (
        "package",
        "release_codename",
        "version",
        "percentage",
        "state",
        "last_change",
        "problem_count",
        "public_page",
    )
    list_display_links = ("version",)
    list_filter = ("release", "state", ProblemsFilter, "pocket")
    search_fields = ("source_package__name",)
    list_select_related = ("release", "source_package")
    list_per_page = 100
    ordering = ("-date_published", "-id")
    inlines = (PhasingEventInline,)
    actions = (
        "pause",
        "resume",
        "halt",
        "set_percentage",
        "release_to_everyone",
        "freeze_release",
        "unfreeze_release",
        "change_policy",
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Publication]:
        last_event = (
            PhasingEvent.objects.filter(publication=OuterRef("pk"))
            .order_by("-created_at", "-id")
            .values("created_at")[:1]
        )
        problems = (
            Problem.objects.filter(publication=OuterRef("pk"), active=True)
            .order_by()
            .values("publication")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return (
            super()
            .get_queryset(request)
            .annotate(
                last_change_at=Subquery(last_event),
                active_problem_count=Coalesce(Subquery(problems, output_field=IntegerField()), 0),
            )
        )

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> tuple[str, ...]:
        # Everything comes from the publication source or from the phasing services.
        return tuple(field.name for field in Publication._meta.concrete_fields)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        # Deleting would take the phasing events, the audit trail, with it.
        return False

    @admin.display(description="package", ordering="source_package__name")
    def package(self, obj: Publication) -> str:
        return obj.source_package.name

    @admin.display(description="release", ordering="release__version")
    def release_codename(self, obj: Publication) -> str:
        return obj.release.codename

    @admin.display(description="percentage", ordering="phased_update_percentage")
    def percentage(self, obj: Publication) -> str:
        return f"{obj.phased_update_percentage}%"

    @admin.display(description="last change", ordering="last_change_at")
    def last_change(self, obj: Publication):
        return obj.last_change_at or obj.state_changed_at

    @admin.display(description="problems", ordering="active_problem_count")
    def problem_count(self, obj: Publication) -> int:
        return obj.active_problem_count

    @admin.display(description="public page")
    def public_page(self, obj: Publication) -> str:
        return format_html(
            '<a href="{}">history</a>', reverse("packages:history", args=[obj.source_package.name])
        )

    # Each action: ask for the reason, call the service per publication, report both ways.

    def _per_publication(
        self,
        request: HttpRequest,
        queryset: QuerySet[Publication],
        *,
        action: str,
        title: str,
        explanation: str,
        verb: str,
        call: Callable[[Publication, forms.Form], object],
        form_class: type[ReasonForm] = ReasonForm,
    ) -> HttpResponse | None:
        publications = list(queryset.select_related("release", "source_package"))

        def perform(form: forms.Form) -> None:
            done, failed = [], []
            for publication in publications:
                try:
                    call(publication, form)
                except ValidationError as error:
                    failed.append((publication, error))
                else:
                    done.append(publication)
            report_outcome(self, request, verb, done, failed)

        return action_with_reason(
            self,
            request,
            queryset,
            action=action,
            title=title,
            explanation=explanation,
            form_class=form_class,
            perform=perform,
            targets=[_publication_line(p) for p in publications],
            targets_label="Updates",
            submit_label=title,
        )

    @admin.action(description="Pause the selected updates", permissions=["change_phasing"])
    def pause(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="pause",
            title="Pause",
            explanation="A paused update keeps its percentage and does not advance until a person resumes it.",
            verb="Paused",
            call=lambda p, form: services.publication_pause(
                publication=p, actor=request.user, reason=form.cleaned_data["reason"]
            ),
        )

    @admin.action(description="Resume the selected updates", permissions=["change_phasing"])
    def resume(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="resume",
            title="Resume",
            explanation="A paused update resumes at its percentage; a halted one restarts at the "
            "policy's first step. The controller raises it again at the next interval. "
            "A problem that no triager has overridden halts it again at the next tick, "
            "and its signer and uploader are emailed again.",
            verb="Resumed",
            call=lambda p, form: services.publication_resume(
                publication=p, actor=request.user, reason=form.cleaned_data["reason"]
            ),
        )

    @admin.action(
        description="Halt / pull the selected updates to 0%%", permissions=["change_phasing"]
    )
    def halt(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="halt",
            title="Halt",
            explanation="The percentage goes to 0% and the update stays halted until a person "
            "resumes it. About 1 machine in 100 still takes an update at 0%: pull a real "
            "regression from the archive too.",
            verb="Halted at 0%",
            call=lambda p, form: services.publication_halt(
                publication=p, actor=request.user, reason=form.cleaned_data["reason"]
            ),
        )

    @admin.action(
        description="Set the percentage of the selected updates", permissions=["change_phasing"]
    )
    def set_percentage(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="set_percentage",
            title="Set percentage",
            explanation="Sets the phased-update percentage (0..100). On a halted update this is a "
            "decision to go on phasing from there.",
            verb="Percentage set",
            form_class=PercentageForm,
            call=lambda p, form: services.publication_set_percentage(
                publication=p,
                percentage=form.cleaned_data["percentage"],
                actor=request.user,
                reason=form.cleaned_data["reason"],
            ),
        )

    @admin.action(
        description="Release the selected updates to everyone (100%%)",
        permissions=["change_phasing"],
    )
    def release_to_everyone(self, request: HttpRequest, queryset: QuerySet[Publication]):
        return self._per_publication(
            request,
            queryset,
            action="release_to_everyone",
            title="Release to everyone",
            explanation="Straight to 100% for every machine, for an urgent fix.",
            verb="Released to everyone",
            call=lambda p, form: services.publication_release(
                publication=p, actor=request.user, reason=form.cleaned_data["reason"]
            ),
        )

    @admin.action(
        description="Freeze the releases of the selected updates", permissions=["change_phasing"]
    )
    def freeze_release(self, request: HttpRequest, queryset: QuerySet[Publication]):
        releases = _releases_of(queryset)
        return release_action(
            self,
            request,
            queryset,
            releases,
            operation="freeze",
            action="freeze_release",
            targets=releases,
            targets_label="Releases",
        )

    @admin.action(
        description="Unfreeze the releases of the selected updates", permissions=["change_phasing"]
    )
    def unfreeze_release(self, request: HttpRequest, queryset: QuerySet[Publication]):
        releases = _releases_of(queryset)
        return release_action(
            self,
            request,
            queryset,
            releases,
            operation="unfreeze",
            action="unfreeze_release",
            targets=releases,
            targets_label="Releases",
        )

    @admin.action(
        description="Change the policy of the selected updates' packages or releases",
        permissions=["change_phasing"],
    )
    def change_policy(self, request: HttpRequest, queryset: QuerySet[Publication]):
        publications = list(queryset.select_related("release", "source_package"))
        packages = sorted({p.source_package for p in publications}, key=lambda s: s.name)
        releases = sorted({p.release for p in publications}, key=lambda r: r.version, reverse=True)

        def perform(form: forms.Form) -> None:
            scope = form.cleaned_data["scope"]
            targets = packages if scope == "package" else releases
            done, failed = [], []
            for target in targets:
                scope_kwargs = (
                    {"scope_package": target} if scope == "package" else {"scope_release": target}
                )
                try:
                    policy = services.policy_set(
                        **scope_kwargs,
                        actor=request.user,
                        reason=form.cleaned_data["reason"],
                        **form.policy_fields(),
                    )
                except ValidationError as error:
                    failed.append((target, error))
                else:
                    done.append(policy)
            report_outcome(self, request, "Policy set", done, failed)

        return action_with_reason(
            self,
            request,
            queryset,
            action="change_policy",
            title="Change policy",
            explanation="Sets how fast updates phase for each package (or release) of the "
            "selection. A package's policy wins over its release's, which wins over the "
            "global one. The controller uses it from its next tick.",
            form_class=PolicyChangeForm,
            perform=perform,
            targets=[f"package {p.name}" for p in packages]
            + [f"release {r.codename}" for r in releases],
            targets_label="Packages and releases of the selection",
            submit_label="Set policy",
        )


def _publication_line(publication: Publication) -> str:
    return (
        f"{publication.source_package.name} {publication.version} in {publication.release.codename}: "
        f"{publication.phased_update_percentage}%, {publication.get_state_display().lower()}"
    )


@admin.register(PhasingEvent)
class PhasingEventAdmin(ReadOnlyAdmin):
    """The audit trail: nobody adds, edits or deletes it, superusers included."""

    list_display = (
        "created_at",
        "publication",
        "kind",
        "old_percentage",
        "new_percentage",
        "new_state",
        "actor_name",
        "reason",
        "write_back",
    )
    list_filter = ("kind", "write_back", "publication__release")
    search_fields = ("publication__source_package__name", "actor_name", "reason")
    list_select_related = ("publication__source_package", "publication__release")
    ordering = ("-created_at", "-id")
    list_per_page = 100


# --- releases, policies, packages, people -----------------------------------------------------


@admin.register(Release)
class ReleaseAdmin(PhasingPermissionMixin, admin.ModelAdmin):
    list_display = (
        "codename",
        "version",
        "supported",
        "frozen",
        "frozen_at",
        "frozen_by",
        "frozen_reason",
    )
    list_filter = ("supported", "frozen")
    list_select_related = ("frozen_by",)
    # The codename is how every source names the release: renaming it would split it in two.
    readonly_fields = ("codename", "frozen", "frozen_reason", "frozen_at", "frozen_by")
    actions = ("freeze", "unfreeze")

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    @admin.action(description="Freeze the selected releases", permissions=["change_phasing"])
    def freeze(self, request: HttpRequest, queryset: QuerySet[Release]):
        releases = list(queryset)
        return release_action(
            self, request, queryset, releases, operation="freeze", action="freeze"
        )

    @admin.action(description="Unfreeze the selected releases", permissions=["change_phasing"])
    def unfreeze(self, request: HttpRequest, queryset: QuerySet[Release]):
        releases = list(queryset)
        return release_action(
            self, request, queryset, releases, operation="unfreeze", action="unfreeze"
        )


class PolicyAdminForm(forms.ModelForm):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        max_length=2000,
        help_text="Why this policy changes; kept in the policy's history.",
    )

    class Meta:
        model = Policy
        fields = ("release", "source_package", *services.POLICY_FIELDS)

    def clean(self) -> dict:
        data = super().clean()
        try:
            policy_rules.Rules(
                start=data.get("start_percentage", 10),
                step=data.get("step", 10),
                interval=data.get("interval") or timedelta(hours=6),
                ceiling=data.get("ceiling", 100),
                schedule=tuple(data.get("schedule") or ()),
            )
        except (ValueError, TypeError) as error:
            raise forms.ValidationError(str(error)) from error
        return data


@admin.register(Policy)
class PolicyAdmin(admin.ModelAdmin):
    """Saving goes through services.policy_set, which writes the history entry itself."""

    form = PolicyAdminForm
    list_display = (
        "scope",
        "start_percentage",
        "step",
        "interval",
        "ceiling",
        "schedule",
        "quiet_weekend",
    )
    list_select_related = ("release", "source_package")
    autocomplete_fields = ("source_package",)

    @admin.display(description="applies to")
    def scope(self, obj: Policy) -> str:
        return obj.scope_label

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> tuple[str, ...]:
        return ("release", "source_package") if obj is not None else ()

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        # A policy is changed with a reason, never silently removed.
        return False

    def save_model(
        self, request: HttpRequest, obj: Policy, form: forms.ModelForm, change: bool
    ) -> None:
        policy = services.policy_set(
            scope_release=obj.release,
            scope_package=obj.source_package,
            actor=request.user,
            reason=form.cleaned_data["reason"],
            **{name: getattr(obj, name) for name in services.POLICY_FIELDS},
        )
        obj.pk = policy.pk
        obj._state.adding = False

    def log_addition(self, request, obj, message):
        return None  # policy_set logged it, with the reason

    def log_change(self, request, obj, message):
        return None  # policy_set logged it, with the reason


@admin.register(SourcePackage)
class SourcePackageAdmin(admin.ModelAdmin):
    list_display = ("name", "public_page")
    search_fields = ("name",)

    @admin.display(description="public page")
    def public_page(self, obj: SourcePackage) -> str:
        return format_html('<a href="{}">history</a>', obj.get_absolute_url())

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Person)
class PersonAdmin(admin.ModelAdmin):
    list_display = ("name", "account_name", "email")
    search_fields = ("name", "account_name", "email")
