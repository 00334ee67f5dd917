"""Single sign-on identities: which provider account each account here is, and the groups
it last brought (read-only: written at each sign-in by packages.sso)."""

from __future__ import annotations

from django.contrib import admin

from packages.admin.actions import ReadOnlyAdmin
from packages.models import SingleSignOnIdentity


@admin.register(SingleSignOnIdentity)
class SingleSignOnIdentityAdmin(ReadOnlyAdmin):
    list_display = ("user", "subject", "issuer", "groups", "last_sign_in_at")
    list_select_related = ("user",)
    search_fields = ("user__username", "subject")

    def has_delete_permission(self, request, obj=None) -> bool:
        # Deleting the link makes the next sign-in a new account: a superuser's decision.
        return bool(request.user.is_superuser)
