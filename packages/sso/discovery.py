"""The identity provider's endpoints, read from its discovery document and kept a while.

Read when first needed (a sign-in), never at start-up: a provider that is down stops
single sign-on, not the site. The document must name the configured issuer (OpenID
Connect Discovery 1.0, section 4.3), so a document served elsewhere is refused.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import requests
from django.conf import settings

# How long a discovery document is kept: the provider's keys and endpoints rarely move.
KEPT_SECONDS = 3600


class DiscoveryError(Exception):
    """The provider did not give a usable discovery document."""


@dataclass(frozen=True)
class Provider:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_uri: str
    end_session_endpoint: str = ""


_lock = threading.Lock()
_kept: dict[str, tuple[float, Provider]] = {}


def _issuer() -> str:
    return str(settings.PHASING_OIDC_ISSUER).rstrip("/")


def discovery_url(issuer: str) -> str:
    return issuer + "/.well-known/openid-configuration"


def provider(*, clock=time.monotonic) -> Provider:
    """The configured provider, from its discovery document (kept KEPT_SECONDS)."""
    issuer = _issuer()
    if not issuer:
        raise DiscoveryError("single sign-on is not configured (PHASING_OIDC_ISSUER)")
    with _lock:
        kept = _kept.get(issuer)
        if kept is not None and clock() - kept[0] < KEPT_SECONDS:
            return kept[1]
    try:
        answer = requests.get(discovery_url(issuer), timeout=settings.OIDC_TIMEOUT)
        answer.raise_for_status()
        document = answer.json()
    except (requests.RequestException, ValueError) as exc:
        raise DiscoveryError(f"the provider's discovery document: {exc}") from exc
    if not isinstance(document, dict) or str(document.get("issuer", "")).rstrip("/") != issuer:
        raise DiscoveryError(
            f"the discovery document names issuer {document.get('issuer')!r}, not {issuer!r}"
            if isinstance(document, dict)
            else "the discovery document is not a JSON object"
        )
    try:
        found = Provider(
            issuer=str(document["issuer"]),
            authorization_endpoint=str(document["authorization_endpoint"]),
            token_endpoint=str(document["token_endpoint"]),
            userinfo_endpoint=str(document["userinfo_endpoint"]),
            jwks_uri=str(document["jwks_uri"]),
            end_session_endpoint=str(document.get("end_session_endpoint") or ""),
        )
    except KeyError as exc:
        raise DiscoveryError(f"the discovery document has no {exc.args[0]}") from None
    with _lock:
        _kept[issuer] = (clock(), found)
    return found


def forget() -> None:
    """Read the document again at the next sign-in (tests, a provider that moved)."""
    with _lock:
        _kept.clear()
