"""The machinery every archive-admin action shares: a reason page, then a service per row.

Percentage and state are never form fields: every change is an admin action that asks
for a reason on an intermediate page and calls the same service as the controller, so it
writes a PhasingEvent with the admin as actor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from packages import services
from packages.admin.forms import ReasonForm, ScheduledReasonForm
from packages.models import Release, ScheduledAction, ScheduledChange
from packages.permissions import acting_user, can_change_phasing
from packages.services.scheduled import scheduled_change_create


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
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    verb: str,
    done: list,
    failed: list,
    scheduled: Sequence[ScheduledChange] = (),
) -> None:
    if done:
        names = ", ".join(str(item) for item in done)
        modeladmin.message_user(request, f"{verb}: {names}.", messages.SUCCESS)
    for change in scheduled:
        parts = []
        if change.run_at > change.created_at:
            parts.append(f"scheduled for {change.run_at:%Y-%m-%d %H:%M} UTC")
        if change.outcome:  # it waits for a sign-off
            parts.append("awaiting a second archive admin's sign-off")
        when = ", ".join(parts)
        modeladmin.message_user(
            request, f"{change.get_action_display()} {change.target_label}: {when}.", messages.INFO
        )
    for item, error in failed:
        modeladmin.message_user(request, f"{item}: {_error_text(error)}", messages.ERROR)


class PhasingPermissionMixin:
    """`@admin.action(permissions=["change_phasing"])` asks this."""

    def has_change_phasing_permission(self, request: HttpRequest) -> bool:
        return can_change_phasing(request.user)


@dataclass(frozen=True)
class ReleaseOperation:
    service: Callable[..., Release]
    scheduled_action: str
    title: str
    explanation: str
    submit_label: str
    logged: str
    outcome: str


RELEASE_OPERATIONS = {
    "freeze": ReleaseOperation(
        services.release_freeze,
        ScheduledAction.FREEZE,
        "Freeze release",
        "While a release is frozen none of its updates advance.",
        "Freeze",
        "Froze the release",
        "Frozen (no update advances until unfrozen)",
    ),
    "unfreeze": ReleaseOperation(
        services.release_unfreeze,
        ScheduledAction.UNFREEZE,
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
    targets: Iterable[object] | None = None,
    targets_label: str = "Selected",
) -> HttpResponse | None:
    """Freeze or unfreeze releases from either admin, after asking for a reason."""
    op = RELEASE_OPERATIONS[operation]

    def perform(form) -> None:
        reason, run_at = form.cleaned_data["reason"], form.cleaned_data["run_at"]
        done, failed, scheduled = [], [], []
        for release in releases:
            try:
                if run_at is not None:
                    scheduled.append(
                        scheduled_change_create(
                            action=op.scheduled_action,
                            release=release,
                            run_at=run_at,
                            actor=acting_user(request),
                            reason=reason,
                        )
                    )
                    continue
                op.service(release=release, actor=acting_user(request), reason=reason)
            except ValidationError as error:
                failed.append((release, error))
                continue
            modeladmin.log_change(request, release, f"{op.logged}. Reason: {reason}")
            done.append(release)
        report_outcome(modeladmin, request, op.outcome, done, failed, scheduled)

    return action_with_reason(
        modeladmin,
        request,
        queryset,
        action=action,
        title=op.title,
        explanation=op.explanation,
        form_class=ScheduledReasonForm,
        perform=perform,
        submit_label=op.submit_label,
        targets=targets,
        targets_label=targets_label,
    )
