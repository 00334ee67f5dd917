"""The outbox: every email the product wrote (the halt emails), sent, failed or waiting,
newest first, with its body. Read-only; archive admins and superusers only."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from overview.models import Notification
from packages.admin.actions import ReadOnlyAdmin
from packages.permissions import can_change_phasing


class DeliveryFilter(admin.SimpleListFilter):
    title = "delivery"
    parameter_name = "delivery"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("sent", "Sent"), ("failed", "Failed, to be retried"), ("waiting", "Waiting")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "sent":
            return queryset.filter(sent_at__isnull=False)
        if self.value() == "failed":
            return queryset.filter(sent_at__isnull=True).exclude(error="")
        if self.value() == "waiting":
            return queryset.filter(sent_at__isnull=True, error="")
        return queryset


class OutboxAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "to", "subject", "delivery", "attempts")
    list_display_links = ("subject",)
    list_filter = (DeliveryFilter,)
    search_fields = ("subject", "person__name", "person__email", "publication__version")
    list_select_related = ("person",)
    ordering = ("-created_at", "-id")
    date_hierarchy = "created_at"
    fields = (
        "to",
        "roles",
        "subject",
        "delivery",
        "created_at",
        "sent_at",
        "attempts",
        "error",
        "publication",
        "event",
        "email_body",
    )

    def get_readonly_fields(self, request: HttpRequest, obj: object = None) -> tuple[str, ...]:
        return self.fields

    # Who was told of which halt, and why, is for the people who act on rollouts: archive
    # admins (packages.permissions) and superusers, whatever model permissions say.
    def has_module_permission(self, request: HttpRequest) -> bool:
        return can_change_phasing(request.user)

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return can_change_phasing(request.user)

    @admin.display(description="to", ordering="person__name")
    def to(self, obj: Notification) -> str:
        person = obj.person
        return f"{person.name} <{person.email}>" if person.name else person.email

    @admin.display(description="delivery", ordering="sent_at")
    def delivery(self, obj: Notification) -> str:
        if obj.sent_at is not None:
            return "sent"
        if obj.error:
            return f"failed ({obj.attempts} attempts): {obj.error}"
        return "waiting"

    @admin.display(description="body")
    def email_body(self, obj: Notification) -> str:
        return format_html('<pre class="email-body">{}</pre>', obj.body or "(not rendered yet)")
