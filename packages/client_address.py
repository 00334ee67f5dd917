"""The address a request really came from, for the login lockout (django-axes).

Behind a reverse proxy every request comes from the proxy's address, so locking by it
locks everyone out together. The client's address is then in ``X-Forwarded-For``, which
anyone can also write: it is believed only when the request comes from a proxy named in
PHASING_TRUSTED_PROXIES, and then only as far as that chain of trusted proxies reaches.
nginx appends the address it saw to the right, so the answer is the rightmost address
that is not one of our proxies; whatever a client wrote to the left of it is ignored.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from django.conf import settings
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(values: Iterable[str]) -> list[Network]:
    """Addresses or networks (10.0.0.5, 10.0.0.0/8, ::1); a bad one raises ValueError."""
    return [ipaddress.ip_network(value.strip(), strict=False) for value in values if value.strip()]


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, networks: list[Network]
) -> bool:
    return any(address in network for network in networks)


def client_address(request: HttpRequest) -> str:
    """REMOTE_ADDR, or, from a trusted proxy, the last address before our proxies."""
    remote = request.META.get("REMOTE_ADDR", "")
    networks = trusted_networks(settings.PHASING_TRUSTED_PROXIES)
    peer = _address(remote)
    if peer is None or not _trusted(peer, networks):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed([part for part in forwarded.split(",") if part.strip()]):
        address = _address(hop)
        if address is None:
            return str(peer)  # a hop we cannot read: believe nothing further left
        if not _trusted(address, networks):
            return str(address)
        peer = address
    return str(peer)
