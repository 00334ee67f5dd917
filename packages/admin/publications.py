"""Publications in the admin: read-only rows, changed only through the phasing actions."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

from packages.admin.actions import (
    PhasingPermissionMixin,
)
from packages.admin.filters import PublicationStateFilter
from packages.admin.publication_actions import PublicationActions
from packages.dependency_warnings import needs_behind, warning_lines
from packages.models import (
    NOTE_KINDS,
    PhasingEvent,
    Publication,
)


class _ChangelistColumns(TypedDict):
    last_change_at: datetime | None


if TYPE_CHECKING:
    PublicationRow = WithAnnotations[Publication, _ChangelistColumns]
else:
    PublicationRow = Publication


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
class PublicationAdmin(PhasingPermissionMixin, PublicationActions):
    list_display = (
        "package",
        "release_codename",
        "version",
        "percentage",
        "state",
        "last_change",
        "public_page",
    )
    list_display_links = ("version",)
    # Opens on the updates in phasing; "All" under state shows every publication.
    list_filter = ("release", PublicationStateFilter, "pocket")
    # "bash 5.2" finds bash's versions containing 5.2: each word must match one field.
    search_fields = ("source_package__name", "version")
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
            .exclude(kind__in=NOTE_KINDS)
            .order_by("-created_at", "-id")
            .values("created_at")[:1]
        )
        return super().get_queryset(request).annotate(last_change_at=Subquery(last_event))

    def get_readonly_fields(self, request: HttpRequest, obj=None) -> tuple[str, ...]:
        # Everything comes from the publication source or from the phasing services.
        return tuple(field.name for field in Publication._meta.concrete_fields)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        # Deleting would take the phasing events, the audit trail, with it.
        return False

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, object] | None = None,
    ) -> HttpResponse:
        # The change form's object actions lead to the update page's forms (the template
        # admin/packages/publication/change_form.html), under the updates it needs.
        publication = self.get_object(request, object_id)
        warnings: list[str] = []
        if publication is not None and publication.is_active:
            warnings = warning_lines(needs_behind(publication, 100), 100)
        extra_context = {
            **(extra_context or {}),
            "has_change_phasing_permission": self.has_change_phasing_permission(request),
            "dependency_warnings": warnings,
        }
        return super().change_view(request, object_id, form_url, extra_context)

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
    def last_change(self, obj: PublicationRow) -> datetime | None:
        return obj.last_change_at or obj.state_changed_at

    @admin.display(description="public page")
    def public_page(self, obj: Publication) -> str:
        return format_html(
            '<a href="{}">update page</a> · <a href="{}">history</a>',
            obj.get_update_url(),
            reverse("overview:history", args=[obj.source_package.name]),
        )

    # Each action: ask for the reason, call the service per publication, report both ways.
