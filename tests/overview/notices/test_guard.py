"""The address guard: only http(s), never the product's own host, never a private,
loopback or link-local address unless allowed, connecting to the address checked."""

from __future__ import annotations

import pytest

from overview.notices import guard


def resolver_of(*addresses: str):
    calls: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> list[str]:
        calls.append((host, port))
        return list(addresses)

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


@pytest.mark.parametrize(
    "url",
    ["ftp://hooks.example.org/", "file:///etc/passwd", "gopher://x/", "hooks.example.org/x", ""],
)
def test_only_http_and_https_are_allowed(url):
    with pytest.raises(guard.RefusedTarget):
        guard.target_resolve(url, resolver=resolver_of("93.184.216.34"))


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.1",
        "169.254.169.254",  # the cloud's metadata service
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
    ],
)
def test_a_name_that_resolves_to_a_private_loopback_or_link_local_address_is_refused(address):
    with pytest.raises(guard.RefusedTarget, match="private, loopback or link-local"):
        guard.target_resolve("https://hooks.example.org/x", resolver=resolver_of(address))


def test_a_name_that_mixes_a_public_and_a_private_address_is_refused():
    with pytest.raises(guard.RefusedTarget):
        guard.target_resolve(
            "https://hooks.example.org/", resolver=resolver_of("93.184.216.34", "10.0.0.1")
        )


def test_a_public_address_is_resolved_once_and_is_the_one_connected_to():
    resolve = resolver_of("93.184.216.34")
    target = guard.target_resolve("https://Hooks.Example.org:8443/in?x=1", resolver=resolve)
    assert resolve.calls == [("hooks.example.org", 8443)]
    assert target.address == "93.184.216.34"
    assert (target.path, target.host_header) == ("/in?x=1", "hooks.example.org:8443")


def test_the_setting_lets_a_private_address_through(settings):
    settings.PHASING_WEBHOOKS_ALLOW_PRIVATE = True
    target = guard.target_resolve("http://receiver.lan/", resolver=resolver_of("10.0.0.5"))
    assert target.address == "10.0.0.5"


def test_the_products_own_host_is_refused_even_when_private_addresses_are_allowed(settings):
    settings.PHASING_WEBHOOKS_ALLOW_PRIVATE = True
    settings.PHASING_SITE_URL = "https://phasing.example.org/"
    with pytest.raises(guard.RefusedTarget, match="own host"):
        guard.target_resolve(
            "https://phasing.example.org/api/", resolver=resolver_of("93.184.216.34")
        )


def test_a_url_with_credentials_or_a_bad_port_is_refused():
    with pytest.raises(guard.RefusedTarget):
        guard.url_check("https://user:pw@hooks.example.org/")
    with pytest.raises(guard.RefusedTarget):
        guard.url_check("https://hooks.example.org:99999/")


def test_a_name_that_does_not_resolve_is_refused():
    def fails(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(guard.RefusedTarget, match="does not resolve"):
        guard.target_resolve("https://nowhere.invalid/", resolver=fails)
