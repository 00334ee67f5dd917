"""The admin of webhook endpoints (archive admins add and edit them, send a test event,
enable one again) and of their deliveries (read-only: status, answer time, attempts)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import path, reverse

from overview.models import EndpointFormat, NoticeType, WebhookDelivery, WebhookEndpoint
from overview.notices import delivery, guard
from packages.admin.actions import ReadOnlyAdmin

EVENT_CHOICES = [(value, label) for value, label in NoticeType.choices if value != NoticeType.TEST]


class WebhookEndpointForm(forms.ModelForm):
    url = forms.URLField(
        max_length=500,
        assume_scheme="https",
        help_text="The receiver's URL; for Matrix, the homeserver (https://matrix.example.org).",
    )
    events = forms.MultipleChoiceField(
        choices=EVENT_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every event.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = (
            "name",
            "format",
            "url",
            "secret",
            "events",
            "matrix_room",
            "matrix_access_token",
            "enabled",
        )
        widgets = {"matrix_access_token": forms.PasswordInput(render_value=True)}

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        try:
            guard.url_check(url)
        except guard.RefusedTarget as exc:
            raise forms.ValidationError(str(exc)) from None
        return url

    def clean_secret(self) -> str:
        secret = self.cleaned_data["secret"].strip()
        from standardwebhooks.webhooks import Webhook

        try:
            Webhook(secret)
        except Exception:
            raise forms.ValidationError(
                'a Standard Webhooks secret: "whsec_" and base64 (leave the one made for you)'
            ) from None
        return secret

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("format") == EndpointFormat.MATRIX and not (
            data.get("matrix_room") and data.get("matrix_access_token")
        ):
            raise forms.ValidationError("a Matrix endpoint needs the room id and an access token")
        return data


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    form = WebhookEndpointForm
    list_display = (
        "name",
        "format",
        "url",
        "enabled",
        "consecutive_failures",
        "disabled_at",
        "disabled_reason",
    )
    list_filter = ("enabled", "format")
    search_fields = ("name", "url")
    readonly_fields = ("consecutive_failures", "disabled_at", "disabled_reason", "created_at")
    actions = ("send_test_event", "enable_again")

    def get_urls(self) -> list:
        return [
            path(
                "<int:pk>/send-test/",
                self.admin_site.admin_view(self.send_test_view),
                name="overview_webhookendpoint_send_test",
            ),
            *super().get_urls(),
        ]

    def send_test_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The change page's "Send a test event" button."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        endpoint = get_object_or_404(WebhookEndpoint, pk=pk)
        if not self.has_change_permission(request, endpoint):
            raise PermissionDenied
        delivery.sample_event_send(endpoint)
        self.message_user(
            request,
            f"A test event is on its way to {endpoint}; its delivery shows under Webhook "
            "deliveries.",
            messages.SUCCESS,
        )
        return HttpResponseRedirect(
            reverse("admin:overview_webhookendpoint_change", args=[endpoint.pk])
        )

    @admin.action(description="Send a test event", permissions=["change"])
    def send_test_event(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        sent = [delivery.sample_event_send(endpoint) for endpoint in queryset]
        self.message_user(
            request,
            f"A test event is on its way to {len(sent)} endpoint(s); its delivery shows "
            "under Webhook deliveries.",
            messages.SUCCESS,
        )

    @admin.action(
        description="Enable again (the failures count starts over)", permissions=["change"]
    )
    def enable_again(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            delivery.endpoint_enable(endpoint)
        self.message_user(request, f"Enabled: {queryset.count()} endpoint(s).", messages.SUCCESS)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "endpoint",
        "notice_type",
        "status",
        "attempts",
        "response_status",
        "response_ms",
        "next_attempt_at",
        "error",
    )
    list_filter = ("status", "notice_type", "endpoint")
    list_select_related = ("endpoint",)
    date_hierarchy = "created_at"
