"""Scheduled changes in the admin: seen, cancelled and signed off by archive admins.

They are made by the actions of the publication and release admins (a "Run at" time, or
a change that needs a sign-off); here they are read, never edited, and each cancel or
sign-off asks for a reason that is kept in the change's admin history.
"""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest

from packages.admin.actions import (
    PhasingPermissionMixin,
    ReadOnlyAdmin,
    action_with_reason,
    report_outcome,
)
from packages.admin.forms import ReasonForm
from packages.models import ScheduledAction, ScheduledChange, ScheduledState
from packages.permissions import acting_user, can_change_phasing
from packages.services.scheduled import (
    AWAITING_SIGN_OFF,
    scheduled_change_cancel,
    scheduled_change_sign_off,
)
from packages.services.sign_off import sign_off_required


@admin.register(ScheduledChange)
class ScheduledChangeAdmin(PhasingPermissionMixin, ReadOnlyAdmin):
    list_display = (
        "run_at",
        "what",
        "target",
        "state",
        "created_by",
        "reason",
        "sign_off_state",
        "outcome_text",
    )
    list_filter = ("state", "action")
    list_select_related = (
        "publication__source_package",
        "publication__release",
        "release",
        "source_package",
        "created_by",
        "signed_off_by",
        "cancelled_by",
    )
    ordering = ("-run_at", "-id")
    actions = ("cancel", "sign_off")

    # Only archive admins (and superusers) see them, whatever their model permissions.
    def has_module_permission(self, request: HttpRequest) -> bool:
        return can_change_phasing(request.user)

    def has_view_permission(self, request: HttpRequest, obj=None) -> bool:
        return can_change_phasing(request.user)

    @admin.display(description="action")
    def what(self, obj: ScheduledChange) -> str:
        return obj.what

    @admin.display(description="target")
    def target(self, obj: ScheduledChange) -> str:
        return obj.target_label

    @admin.display(description="sign-off")
    def sign_off_state(self, obj: ScheduledChange) -> str:
        if obj.signed_off_by is not None and obj.signed_off_at is not None:
            return f"signed off by {obj.signed_off_by} at {obj.signed_off_at:%Y-%m-%d %H:%M} UTC"
        # A policy's rule reads its scope's policy: its creation and each run say it in the
        # outcome, so the changelist costs no query per row.
        needed = obj.outcome == AWAITING_SIGN_OFF or (
            obj.action != ScheduledAction.POLICY and sign_off_required(obj)
        )
        return "needed" if needed and obj.is_pending else "—"

    @admin.display(description="outcome")
    def outcome_text(self, obj: ScheduledChange) -> str:
        if obj.state == ScheduledState.CANCELLED and obj.cancelled_at is not None:
            return (
                f"cancelled by {obj.cancelled_by} at {obj.cancelled_at:%Y-%m-%d %H:%M} UTC: "
                f"{obj.cancel_reason}"
            )
        if obj.ran_at is not None:
            return f"ran at {obj.ran_at:%Y-%m-%d %H:%M} UTC: {obj.outcome}"
        return obj.outcome

    def _each(
        self,
        request: HttpRequest,
        queryset: QuerySet[ScheduledChange],
        *,
        action: str,
        title: str,
        explanation: str,
        verb: str,
        call,
    ):
        changes = list(queryset.select_related(*self.list_select_related))

        def perform(form) -> None:
            reason = form.cleaned_data["reason"]
            done, failed = [], []
            for change in changes:
                try:
                    result = call(change, reason)
                except ValidationError as error:
                    failed.append((change, error))
                    continue
                self.log_change(request, change, f"{verb}. Reason: {reason}")
                if result.state == ScheduledState.FAILED:  # signed off, ran, and was refused
                    failed.append(
                        (change, ValidationError(f"{verb}; it ran and failed: {result.outcome}"))
                    )
                else:
                    done.append(change)
            report_outcome(self, request, verb, done, failed)

        return action_with_reason(
            self,
            request,
            queryset,
            action=action,
            title=title,
            explanation=explanation,
            form_class=ReasonForm,
            perform=perform,
            targets=changes,
            targets_label="Scheduled changes",
            submit_label=title,
        )

    @admin.action(description="Cancel the selected changes", permissions=["change_phasing"])
    def cancel(self, request: HttpRequest, queryset: QuerySet[ScheduledChange]):
        return self._each(
            request,
            queryset,
            action="cancel",
            title="Cancel",
            explanation="A cancelled change never runs; who cancelled it and why are kept.",
            verb="Cancelled",
            call=lambda change, reason: scheduled_change_cancel(
                change=change, actor=acting_user(request), reason=reason
            ),
        )

    @admin.action(description="Sign off the selected changes", permissions=["change_phasing"])
    def sign_off(self, request: HttpRequest, queryset: QuerySet[ScheduledChange]):
        return self._each(
            request,
            queryset,
            action="sign_off",
            title="Sign off",
            explanation="A second archive admin agrees: a change whose time has come runs now, "
            "through the same service as the immediate action; the history of the update "
            "names who asked and who signed off. The admin who asked cannot sign it off.",
            verb="Signed off",
            call=lambda change, reason: scheduled_change_sign_off(
                change=change, actor=acting_user(request), reason=reason
            ),
        )
