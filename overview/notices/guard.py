"""Outbound requests to endpoints people typed in, without server-side request forgery.

Only http(s); never the product's own host; the name is resolved once, every address it
resolves to must be public (not loopback, private, link-local, shared or reserved) unless
PHASING_WEBHOOKS_ALLOW_PRIVATE says otherwise, and the request connects to the address
that was checked, so a second lookup cannot answer differently (DNS rebinding). Every
request has a timeout; a redirect is an answer like any other, never followed.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

DEFAULT_PORTS = {"http": 80, "https": 443}
# What is kept of an answer's body: enough for an error message.
ANSWER_KEPT = 2000

Resolver = Callable[[str, int], list[str]]


class RefusedTarget(ValueError):
    """A URL that may not be called: its scheme, its host or an address it resolves to."""


@dataclass(frozen=True)
class Target:
    scheme: str
    hostname: str
    port: int
    path: str  # with its query
    address: str  # the checked address the request connects to

    @property
    def host_header(self) -> str:
        name = f"[{self.hostname}]" if ":" in self.hostname else self.hostname
        return name if self.port == DEFAULT_PORTS[self.scheme] else f"{name}:{self.port}"


@dataclass(frozen=True)
class Answer:
    status: int
    milliseconds: int
    body: str
    location: str = ""


def _resolve(hostname: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(hostname, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def address_allowed(address: str, *, allow_private: bool) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified or ip.is_multicast:
        return False
    return allow_private or ip.is_global


def _own_host() -> tuple[str, int] | None:
    site = urlsplit(settings.PHASING_SITE_URL)
    if site.scheme not in DEFAULT_PORTS or not site.hostname:
        return None
    return site.hostname.lower(), site.port or DEFAULT_PORTS[site.scheme]


def url_check(url: str) -> tuple[str, str, int, str]:
    """What can be said of a URL without resolving it: (scheme, host, port, path)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise RefusedTarget(f"not a URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise RefusedTarget(f"only http and https are allowed, not {scheme or 'no scheme'!r}")
    if not parts.hostname:
        raise RefusedTarget("the URL has no host")
    if parts.username or parts.password:
        raise RefusedTarget("a URL with a user name or password is not allowed")
    hostname = parts.hostname.lower().rstrip(".")
    port = port or DEFAULT_PORTS[scheme]
    if (hostname, port) == _own_host():
        raise RefusedTarget("the product's own host is not a webhook receiver")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return scheme, hostname, port, path


def target_resolve(url: str, *, resolver: Resolver | None = None) -> Target:
    """Check `url` and resolve its host once; raise RefusedTarget if it may not be called."""
    scheme, hostname, port, path = url_check(url)
    allow_private = settings.PHASING_WEBHOOKS_ALLOW_PRIVATE
    try:
        addresses = (resolver or _resolve)(hostname, port)
    except (OSError, UnicodeError) as exc:
        raise RefusedTarget(f"{hostname} does not resolve: {exc}") from None
    if not addresses:
        raise RefusedTarget(f"{hostname} does not resolve")
    # Every address is checked, not only the first: a name may mix a public and a private one.
    for address in addresses:
        if not address_allowed(address, allow_private=allow_private):
            raise RefusedTarget(
                f"{hostname} resolves to {address}, a private, loopback or link-local address"
            )
    return Target(scheme, hostname, port, path, addresses[0])


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """TLS to the checked address, with the certificate checked against the host's name."""

    def __init__(self, target: Target, timeout: float, tls: ssl.SSLContext | None) -> None:
        self._tls = tls or ssl.create_default_context()
        super().__init__(target.address, target.port, timeout=timeout, context=self._tls)
        self._server_name = target.hostname

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self._server_name)


def send(
    target: Target,
    *,
    method: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout: float,
    clock: Callable[[], float] = time.monotonic,
    tls: ssl.SSLContext | None = None,
) -> Answer:
    """One request to the checked address; raises OSError (timeouts too) when it fails.
    `tls` replaces the system's trusted certificates (a test's own authority)."""
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = _PinnedHTTPSConnection(target, timeout, tls)
    else:
        connection = http.client.HTTPConnection(target.address, target.port, timeout=timeout)
    started = clock()
    try:
        connection.request(
            method, target.path, body=body, headers={**headers, "Host": target.host_header}
        )
        response = connection.getresponse()
        text = response.read(ANSWER_KEPT).decode("utf-8", "replace")
        return Answer(
            status=response.status,
            milliseconds=round((clock() - started) * 1000),
            body=text,
            location=response.getheader("Location") or "",
        )
    finally:
        connection.close()
