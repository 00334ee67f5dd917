"""The admin site of Phasing: Django's, answering two kinds of probing the way it should.

- "View on site" (/admin/r/<content type>/<id>/) told a staff member without any group
  which crash-report ids exist (a redirect for those, 404 for the others): it now answers
  404 alike for a model the person may not view.
- An action posted with a selection that is not a list of ids answered 500: it is a 400.

Named as the default site by `PhasingAdminConfig` (INSTALLED_APPS), so `admin.site` and
`@admin.register` everywhere mean this site. Models are imported inside the methods:
this module is loaded while the apps are.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any, TypeVar, cast

from django.contrib import admin
from django.contrib.admin import helpers
from django.contrib.admin.apps import AdminConfig
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest

V = TypeVar("V", bound=Callable[..., Any])


class PhasingAdminSite(admin.AdminSite):
    def admin_view(self, view: V, cacheable: bool = False) -> V:
        # Checked after the login and CSRF checks Django wraps around it.
        def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if request.method == "POST" and not _selection_is_ids(request):
                return HttpResponseBadRequest(
                    "The selection is a list of ids.", content_type="text/plain"
                )
            return view(request, *args, **kwargs)

        return cast(V, super().admin_view(update_wrapper(checked, view), cacheable))

    def get_urls(self) -> list:
        return [
            _with_view(pattern, self.admin_view(self.view_on_site))
            if getattr(pattern, "name", None) == "view_on_site"
            else pattern
            for pattern in super().get_urls()
        ]

    def view_on_site(self, request: HttpRequest, content_type_id: str, object_id: str):
        """Django's shortcut, for models the person may view in this admin; 404 otherwise,
        whether or not the object exists."""
        from django.contrib.contenttypes import views as contenttype_views
        from django.contrib.contenttypes.models import ContentType

        try:
            model = ContentType.objects.get(pk=int(content_type_id)).model_class()
        except (ValueError, ContentType.DoesNotExist):
            raise Http404("No such content type.") from None
        model_admin = self._registry.get(model) if model is not None else None
        if model_admin is None or not model_admin.has_view_permission(request):
            raise Http404("Nothing to show here.")
        return contenttype_views.shortcut(request, content_type_id, object_id)


def _selection_is_ids(request: HttpRequest) -> bool:
    # Every model in this admin (ours, auth's, axes') has an integer primary key.
    return all(
        value.isascii() and value.isdigit()
        for value in request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
    )


def _with_view(pattern, view: Callable):
    """The same URL pattern (route and name) answered by another view."""
    from django.urls import URLPattern

    return URLPattern(pattern.pattern, view, pattern.default_args, pattern.name)


class PhasingAdminConfig(AdminConfig):
    default_site = "packages.adminsite.PhasingAdminSite"
