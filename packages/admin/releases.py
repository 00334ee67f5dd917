"""Releases in the admin: freeze and unfreeze, each with a reason."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from packages.admin.actions import PhasingPermissionMixin, release_action
from packages.models import Release


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
