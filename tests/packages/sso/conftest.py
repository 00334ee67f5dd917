"""A real OpenID Connect provider in a second process (tests/oidc_provider), and a browser
that signs in through it: the code flow with PKCE, over HTTP, as a person would."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwcrypto import jwk

from packages.sso import discovery

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_private_key() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


@dataclass
class IdentityProvider:
    base_url: str
    private_key: str

    @property
    def issuer(self) -> str:
        return self.base_url + "/o"

    @property
    def kid(self) -> str:
        return jwk.JWK.from_pem(self.private_key.encode()).thumbprint()

    def user(self, username: str, *, password: str = "pw", claims: dict | None = None) -> None:
        """Make (or change) an account at the provider, with these extra claims."""
        answer = requests.post(
            f"{self.base_url}/test/users/{username}",
            json={"password": password, "claims": claims or {}},
            timeout=10,
        )
        answer.raise_for_status()


@pytest.fixture(scope="session")
def identity_provider(tmp_path_factory):
    port = _free_port()
    private_key = new_private_key()
    env = {
        **os.environ,
        "OIDC_TEST_DB": str(tmp_path_factory.mktemp("idp") / "idp.sqlite3"),
        "OIDC_TEST_PRIVATE_KEY": private_key,
        "OIDC_TEST_REDIRECT_URI": "http://testserver/oidc/callback/",
        "OIDC_TEST_LOGOUT_REDIRECT_URI": "http://testserver/",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.oidc_provider.serve", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    provider = IdentityProvider(f"http://127.0.0.1:{port}", private_key)
    deadline = time.monotonic() + 60
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the identity provider stopped: {process.stderr.read().decode()}")
        try:
            if requests.get(discovery.discovery_url(provider.issuer), timeout=1).ok:
                break
        except requests.ConnectionError:
            pass
        if time.monotonic() > deadline:
            process.terminate()
            raise RuntimeError("the identity provider did not start in 60 s")
        time.sleep(0.2)  # waiting for another process to listen, not for time to pass
    yield provider
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def sso(settings, identity_provider, db) -> IdentityProvider:
    """Phasing configured for the provider, as the environment would configure it."""
    settings.PHASING_OIDC_ISSUER = identity_provider.issuer
    settings.PHASING_OIDC_ENABLED = True
    settings.PHASING_OIDC_PROVIDER_NAME = "Test ID"
    settings.OIDC_RP_CLIENT_ID = "phasing"
    settings.OIDC_RP_CLIENT_SECRET = "phasing-secret"
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "packages.sso.backends.SingleSignOnBackend",
    ]
    discovery.forget()
    yield identity_provider
    discovery.forget()


class Browser:
    """A person's browser: Phasing through Django's test client, the provider over HTTP."""

    def __init__(self, client) -> None:
        self.client = client
        self.at_provider = requests.Session()

    def sign_in(self, username: str, password: str = "pw"):
        start = self.client.get("/oidc/authenticate/")
        assert start.status_code == 302, start
        authorize = start["Location"]
        to_login = self.at_provider.get(authorize, allow_redirects=False)
        if to_login.status_code == 302 and "/accounts/login/" in to_login.headers["Location"]:
            login_url = urljoin(authorize, to_login.headers["Location"])
            self.at_provider.get(login_url)
            signed_in = self.at_provider.post(
                login_url,
                data={
                    "username": username,
                    "password": password,
                    "csrfmiddlewaretoken": self.at_provider.cookies["idp_csrftoken"],
                },
                headers={"Referer": login_url},
                allow_redirects=False,
            )
            assert signed_in.status_code == 302, signed_in.text[:500]
            back = self.at_provider.get(
                urljoin(login_url, signed_in.headers["Location"]), allow_redirects=False
            )
        else:
            back = to_login
        assert back.status_code == 302, back.text[:500]
        callback = urlsplit(back.headers["Location"])
        assert callback.netloc == "testserver", back.headers["Location"]
        return self.client.get(f"{callback.path}?{callback.query}")


@pytest.fixture
def browser(client) -> Browser:
    return Browser(client)
