from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path

from overview.api import api
from overview.monitoring import views as monitoring
from packages.admin.forms import LoginForm


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    # Feed readers and old browsers ask for /favicon.ico without reading the page's <link>.
    return HttpResponseRedirect(static("img/favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=LoginForm),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", api.urls),
    path("healthz", monitoring.healthz, name="healthz"),
    path("metrics", monitoring.metrics, name="metrics"),
    path("", include("packages.urls")),
    path("", include("overview.triage.urls")),
    path("", include("overview.urls")),
]

# JSON under /api/v1/, pages elsewhere; a database that does not answer is a 503.
handler400 = "overview.errors.bad_request"
handler403 = "overview.errors.permission_denied"
handler404 = "overview.errors.not_found"
handler500 = "overview.errors.server_error"
