"""Authentication backends: single sign-on over OpenID Connect, and the password rule.

The ID token is checked in full here (mozilla-django-oidc checks the signature and the
nonce only): signature against the provider's published keys, issuer, audience, expiry,
issue time and nonce. A refused sign-in is logged and answered as a failed login; it
never stops anyone else's.
"""

from __future__ import annotations

import logging
from typing import Any

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AbstractBaseUser, User
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from packages.models import SingleSignOnIdentity
from packages.services.faults import service_failed, service_recovered
from packages.sso import discovery
from packages.sso.roles import BadGroupsClaim, provider_groups, roles_apply, roles_of

log = logging.getLogger(__name__)

SSO_SERVICE = "single sign-on"
PROVIDER_DOWN = "the identity provider does not answer; local accounts still log in"
# Clock difference tolerated between the provider and this site.
LEEWAY_SECONDS = 60


class SignInRefused(SuspiciousOperation):
    """An answer of the provider that does not let anyone in."""


class SingleSignOnBackend(OIDCAuthenticationBackend):
    """The code flow (with PKCE) through the provider found by discovery."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Nothing is fetched here: Django makes a backend for every request of a signed-in
        # person (get_user), and a provider that is down must not stop the pages.
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.OIDC_RP_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.OIDC_RP_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.OIDC_RP_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None

    @property
    def OIDC_OP_TOKEN_ENDPOINT(self) -> str:  # noqa: N802  (the library's name)
        return discovery.provider().token_endpoint

    @property
    def OIDC_OP_USER_ENDPOINT(self) -> str:  # noqa: N802
        return discovery.provider().userinfo_endpoint

    @property
    def OIDC_OP_JWKS_ENDPOINT(self) -> str:  # noqa: N802
        return discovery.provider().jwks_uri

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> User | None:
        try:
            user = super().authenticate(request, **kwargs)
        except (discovery.DiscoveryError, requests.RequestException) as exc:
            # The provider is down or unreachable: a fault of the service, shown with the
            # others (in words that name no host), not a refusal of this person.
            log.warning("single sign-on: the provider does not answer: %s", exc)
            service_failed(SSO_SERVICE, now=timezone.now(), error=PROVIDER_DOWN)
            return None
        except (SuspiciousOperation, jwt.PyJWTError, KeyError, ValueError) as exc:
            log.warning("single sign-on refused: %s", exc)
            service_recovered(SSO_SERVICE, now=timezone.now())  # it answered
            return None
        if kwargs.get("code_verifier") is not None or kwargs.get("nonce") is not None:
            service_recovered(SSO_SERVICE, now=timezone.now())
        return user

    def get_user(self, user_id: Any) -> User | None:
        """The signed-in person of a session, unless their account was deactivated since."""
        user = super().get_user(user_id)
        return user if user is not None and self.user_can_authenticate(user) else None

    def verify_token(self, token: str, **kwargs: Any) -> dict[str, Any]:
        """The ID token, checked: signature, issuer, audience, expiry, issue time, nonce."""
        try:
            key = self.retrieve_matching_jwk(token)
            payload = jwt.decode(
                token,
                key,
                algorithms=[self.OIDC_RP_SIGN_ALGO],
                audience=self.OIDC_RP_CLIENT_ID,
                issuer=discovery.provider().issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["iss", "aud", "exp", "iat", "sub"]},
            )
        except (jwt.PyJWTError, KeyError) as exc:
            raise SignInRefused(f"the ID token is refused: {type(exc).__name__}: {exc}") from exc
        audiences = payload["aud"] if isinstance(payload["aud"], list) else [payload["aud"]]
        if len(audiences) > 1 and payload.get("azp") != self.OIDC_RP_CLIENT_ID:
            raise SignInRefused("the ID token was issued to another client (azp)")
        if payload.get("nonce") != kwargs.get("nonce"):
            raise SignInRefused("the ID token's nonce is not the one this sign-in sent")
        return payload

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        """The ID token's claims with the userinfo endpoint's; both about the same subject."""
        info = super().get_userinfo(access_token, id_token, payload)
        if not isinstance(info, dict) or info.get("sub") != payload["sub"]:
            raise SignInRefused("the userinfo answer is about another subject")
        return {**payload, **info, "iss": payload["iss"], "sub": payload["sub"]}

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        try:
            provider_groups(claims)
        except BadGroupsClaim as exc:
            log.warning("single sign-on refused for %s: %s", claims.get("sub"), exc)
            return False
        return True

    def filter_users_by_claims(self, claims: dict[str, Any]) -> Any:
        return self.UserModel.objects.filter(
            sso_identity__issuer=claims["iss"], sso_identity__subject=claims["sub"]
        )

    def _username(self, claims: dict[str, Any]) -> str:
        base = str(claims.get("preferred_username") or claims.get("email") or claims["sub"])[:100]
        taken = self.UserModel.objects.filter(username=base).exists()
        return f"{base}~{str(claims['sub'])[:40]}" if taken else base

    def create_user(self, claims: dict[str, Any]) -> User:
        with transaction.atomic():
            user = self.UserModel.objects.create_user(
                self._username(claims), email=str(claims.get("email") or "")
            )
            SingleSignOnIdentity.objects.create(
                user=user, issuer=claims["iss"], subject=claims["sub"]
            )
            return self.update_user(user, claims)

    def update_user(self, user: User, claims: dict[str, Any]) -> User:
        """Rights follow the provider's groups at each sign-in."""
        groups = provider_groups(claims)
        if groups is None:
            log.warning(
                "single sign-on: no %r claim for %s: signed in without privileged groups",
                settings.PHASING_OIDC_GROUPS_CLAIM,
                user.get_username(),
            )
        with transaction.atomic():
            roles_apply(user, roles_of(groups))
            SingleSignOnIdentity.objects.filter(user=user).update(
                groups=groups or [], last_sign_in_at=timezone.now()
            )
            email = str(claims.get("email") or "")
            if email and user.email != email:
                user.email = email
                user.save(update_fields=["email"])
        return user


def password_login_allowed(user: AbstractBaseUser) -> bool:
    """Everyone, unless PHASING_PASSWORD_LOGIN is off: then only the break-glass accounts
    (superusers, and the user names in PHASING_BREAK_GLASS_USERS)."""
    if settings.PHASING_PASSWORD_LOGIN:
        return True
    return bool(getattr(user, "is_superuser", False)) or (
        user.get_username() in settings.PHASING_BREAK_GLASS_USERS
    )


class PasswordBackend(ModelBackend):
    """Django's own accounts, and the rule that can keep all but break-glass admins out."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None and not password_login_allowed(user):
            log.warning("password login refused for %s: single sign-on only", username)
            return None
        return user
