"""One proxy, one lockout for all no more: logins are locked by username and the real
client address, which X-Forwarded-For gives only when a trusted proxy sent it."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from packages.client_address import client_address
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"
PASSWORD = "correct horse battery staple"


def _address(settings, remote, forwarded=None, trusted=()):
    settings.PHASING_TRUSTED_PROXIES = list(trusted)
    extra = {"REMOTE_ADDR": remote}
    if forwarded is not None:
        extra["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_address(RequestFactory().get("/", **extra))


def test_without_a_trusted_proxy_the_header_is_never_believed(settings):
    assert _address(settings, "203.0.113.9", "198.51.100.1") == "203.0.113.9"


def test_from_a_trusted_proxy_the_rightmost_untrusted_address_is_the_client(settings):
    assert _address(settings, PROXY, "198.51.100.1", [PROXY]) == "198.51.100.1"
    # A client that writes the header itself only adds to the left of the real address.
    assert _address(settings, PROXY, "1.2.3.4, 198.51.100.1", [PROXY]) == "198.51.100.1"
    # Two proxies of ours in a row (a network), then the client.
    assert _address(settings, PROXY, "198.51.100.1, 10.0.0.7", ["10.0.0.0/24"]) == "198.51.100.1"
    # An unreadable hop: nothing to its left is believed.
    assert _address(settings, PROXY, "198.51.100.1, junk", [PROXY]) == PROXY


def _login(client, username, password, forwarded):
    return client.post(
        reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=forwarded,
    )


def test_behind_the_trusted_proxy_a_guesser_locks_only_themselves(settings):
    settings.PHASING_TRUSTED_PROXIES = [PROXY]
    UserFactory(username="admin", password=PASSWORD)
    attacker = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(attacker, "admin", f"guess{n}", "203.0.113.66")

    assert _login(attacker, "admin", PASSWORD, "203.0.113.66").status_code == 429
    # The admin, behind the same proxy but from their own address, still signs in.
    assert _login(Client(), "admin", PASSWORD, "198.51.100.7").status_code == 302


def test_rotating_the_header_without_a_trusted_proxy_gains_nothing(settings):
    settings.PHASING_TRUSTED_PROXIES = []
    UserFactory(username="admin", password=PASSWORD)
    attacker = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(attacker, "admin", f"guess{n}", f"203.0.113.{n}")

    assert _login(attacker, "admin", f"guess{n}", "192.0.2.200").status_code == 429
