"""Policies in the admin: saved through services.policy_set, with a reason."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from packages import services
from packages.admin.forms import PolicyAdminForm
from packages.models import Policy
from packages.permissions import acting_user


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
            actor=acting_user(request),
            reason=form.cleaned_data["reason"],
            **{name: getattr(obj, name) for name in services.POLICY_FIELDS},
        )
        obj.pk = policy.pk
        obj._state.adding = False

    def log_addition(self, request, obj, message):
        return None  # policy_set logged it, with the reason

    def log_change(self, request, obj, message):
        return None  # policy_set logged it, with the reason
