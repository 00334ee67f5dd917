"""Releases in the admin: freeze and unfreeze, each with a reason."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from packages import services
from packages.admin.actions import PhasingPermissionMixin, release_action
from packages.admin.forms import ReleaseAdminForm
from packages.models import Release
from packages.permissions import acting_user


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
    form = ReleaseAdminForm

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> tuple[str, ...]:
        # A new release needs its codename; an existing one keeps it.
        fields = self.readonly_fields
        return fields if obj is not None else tuple(f for f in fields if f != "codename")

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def save_model(
        self, request: HttpRequest, obj: Release, form: forms.ModelForm, change: bool
    ) -> None:
        if not change:
            super().save_model(request, obj, form, change)
            return
        services.release_update(
            release=obj,
            version=obj.version,
            supported=obj.supported,
            actor=acting_user(request),
            reason=form.cleaned_data["reason"],
        )

    # A sentence with the reason rather than Django's list of changed fields (LogEntry
    # keeps either), so the release's history says why.
    def construct_change_message(self, request, form, formsets, add=False) -> str:  # type: ignore[override]
        fields = ", ".join(name for name in form.changed_data if name != "reason") or "nothing"
        verb = "Added" if add else "Changed"
        return f"{verb} {fields}. Reason: {form.cleaned_data['reason']}"

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
