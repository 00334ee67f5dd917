from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path, re_path

from overview.api import api, whoopsie
from overview.monitoring import views as monitoring
from packages.admin.forms import LoginForm
from packages.sso.views import LoginPageView


def favicon(request: HttpRequest) -> HttpResponseRedirect:
    # Feed readers and old browsers ask for /favicon.ico without reading the page's <link>.
    return HttpResponseRedirect(static("img/favicon.svg"))


urlpatterns = [
    path("favicon.ico", favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path(
        "accounts/login/",
        LoginPageView.as_view(authentication_form=LoginForm),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Single sign-on over OpenID Connect (404 unless PHASING_OIDC_ISSUER is set).
    path("oidc/", include("packages.sso.urls")),
    path("api/v1/", api.urls),
    path("healthz", monitoring.healthz, name="healthz"),
    path("metrics", monitoring.metrics, name="metrics"),
    # whoopsie posts to CRASH_DB_URL/<SHA-512 of the machine>: a long single segment no
    # page has; the view answers a malformed id with a 400.
    re_path(r"^(?P<system_id>[^/]{100,200})$", whoopsie.submit, name="whoopsie-submit"),
    path("", include("overview.triage.urls")),
    path("", include("overview.urls")),
]

# JSON under /api/v1/, pages elsewhere; a database that does not answer is a 503.
handler400 = "overview.pages.errors.bad_request"
handler403 = "overview.pages.errors.permission_denied"
handler404 = "overview.pages.errors.not_found"
handler500 = "overview.pages.errors.server_error"
