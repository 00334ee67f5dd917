"""The sign-in and sign-out views of single sign-on; 404 when it is not configured."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from packages.services.faults import service_failed
from packages.sso import discovery
from packages.sso.backends import PROVIDER_DOWN, SSO_SERVICE

log = logging.getLogger(__name__)


def _enabled() -> None:
    if not settings.PHASING_OIDC_ENABLED:
        raise Http404("single sign-on is not configured")


class SignInView(OIDCAuthenticationRequestView):
    """Send the browser to the provider (state, nonce and PKCE kept in the session)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # The endpoint is looked up in get(): a provider that is down is a message, not a 500.
        super(OIDCAuthenticationRequestView, self).__init__(*args, **kwargs)
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID

    def get(self, request: HttpRequest) -> HttpResponse:
        _enabled()
        try:
            self.OIDC_OP_AUTH_ENDPOINT = discovery.provider().authorization_endpoint
        except discovery.DiscoveryError as exc:
            log.warning("single sign-on unavailable: %s", exc)
            service_failed(SSO_SERVICE, now=timezone.now(), error=PROVIDER_DOWN)
            return HttpResponseRedirect(f"{reverse('login')}?sso=unavailable")
        return super().get(request)


class CallbackView(OIDCAuthenticationCallbackView):
    """The provider's answer; a person signed in this way stays so for a limited time, so
    rights removed at the provider go at the next sign-in."""

    def get(self, request: HttpRequest) -> HttpResponse:
        _enabled()
        return super().get(request)

    def login_success(self) -> HttpResponse:
        answer = super().login_success()
        self.request.session.set_expiry(settings.PHASING_OIDC_SESSION_SECONDS)
        return answer

    @property
    def failure_url(self) -> str:
        return f"{reverse('login')}?sso=refused"


def provider_logout_url(request: HttpRequest) -> str:
    """Where the browser goes after signing out here: the provider's end-session endpoint
    (RP-initiated logout), or the site when the provider has none."""
    home = request.build_absolute_uri(settings.LOGOUT_REDIRECT_URL_PATH)
    try:
        end_session = discovery.provider().end_session_endpoint
    except discovery.DiscoveryError:
        return home
    if not end_session:
        return home
    query = {"client_id": settings.OIDC_RP_CLIENT_ID, "post_logout_redirect_uri": home}
    id_token = request.session.get("oidc_id_token")
    if id_token:
        query["id_token_hint"] = id_token
    return f"{end_session}?{urlencode(query)}"


def sign_out(request: HttpRequest) -> HttpResponse:
    """POST: sign out here, then at the provider when the sign-in came from it."""
    if request.method != "POST":
        return HttpResponse(status=405, headers={"Allow": "POST"})
    through_provider = bool(request.session.get("oidc_id_token"))
    target = provider_logout_url(request) if through_provider else reverse("overview:index")
    auth.logout(request)
    return HttpResponseRedirect(target)


class LoginPageView(auth_views.LoginView):
    """The login page, with the provider's button when single sign-on is configured."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(
            sso_enabled=settings.PHASING_OIDC_ENABLED,
            sso_provider=settings.PHASING_OIDC_PROVIDER_NAME,
            sso_outcome=self.request.GET.get("sso", ""),
            password_login=settings.PHASING_PASSWORD_LOGIN,
        )
        return context
