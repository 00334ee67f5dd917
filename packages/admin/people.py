"""Source packages and people in the admin, and when each source last answered."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from packages.admin.actions import ReadOnlyAdmin
from packages.models import Person, SourcePackage, SourceSync


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


@admin.register(SourceSync)
class SourceSyncAdmin(ReadOnlyAdmin):
    list_display = (
        "name",
        "kind",
        "last_attempt_at",
        "last_success_at",
        "failing_since",
        "last_error",
    )
