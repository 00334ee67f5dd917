"""The phasing audit trail in the admin: read, never written."""

from __future__ import annotations

from django.contrib import admin

from packages.admin.actions import ReadOnlyAdmin
from packages.models import PhasingEvent


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
