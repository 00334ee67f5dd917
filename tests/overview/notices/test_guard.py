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


def test_the_request_goes_to_the_checked_address_with_the_hosts_name(http_server):
    """A second lookup could answer another address (DNS rebinding): none is made."""
    from tests.fake_http import Reply

    http_server.post("/in", Reply(status=204))
    port = int(http_server.base_url.rsplit(":", 1)[1])
    target = guard.Target("http", "hooks.invalid", port, "/in", "127.0.0.1")
    answer = guard.send(target, method="POST", body=b"{}", headers={}, timeout=2)
    assert answer.status == 204
    [request] = http_server.made("POST", "/in")
    assert request.headers["Host"] == f"hooks.invalid:{port}"


@pytest.fixture
def tls_receiver(tmp_path):
    """An HTTPS receiver on 127.0.0.1 whose certificate names hooks.test only."""
    import datetime
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hooks.test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("hooks.test")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    (tmp_path / "cert.pem").write_bytes(cert_pem)
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            seen.append(self.headers["Host"])
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    trust = ssl.create_default_context(cadata=cert_pem.decode())
    yield server.server_address[1], trust, seen
    server.shutdown()
    server.server_close()


# OpenSSL checks the certificate's dates against the machine's clock, not the frozen one.
@pytest.mark.real_clock
def test_tls_to_the_checked_address_checks_the_certificate_against_the_hosts_name(tls_receiver):
    import ssl

    port, trust, seen = tls_receiver
    good = guard.Target("https", "hooks.test", port, "/", "127.0.0.1")
    assert (
        guard.send(good, method="POST", body=b"{}", headers={}, timeout=2, tls=trust).status == 204
    )
    assert seen == [f"hooks.test:{port}"]
    other = guard.Target("https", "other.test", port, "/", "127.0.0.1")
    with pytest.raises(ssl.SSLCertVerificationError):
        guard.send(other, method="POST", body=b"{}", headers={}, timeout=2, tls=trust)
    with pytest.raises(ssl.SSLCertVerificationError):  # not trusted by the system's authorities
        guard.send(good, method="POST", body=b"{}", headers={}, timeout=2)
