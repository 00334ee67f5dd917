"""Launchpad's transport against a local server: retries, backoff, errors, links, OAuth."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from packages.sources.base import (
    SourceError,
)
from tests.fake_http import Reply
from tests.packages.sources.launchpad.fakes import (
    ARCHIVE,
    CREDENTIALS,
    LISTING,
    NOW,
    collection,
    make_source,
    oauth_params,
    serve_hello,
    spph,
)


def test_a_server_error_is_retried_with_exponential_backoff(http_server, sleeps):
    serve_hello(http_server)
    base = http_server.base_url
    http_server.get(
        ARCHIVE,
        Reply(status=500, body="Internal Server Error"),
        Reply(status=503, body="Service Unavailable"),
        Reply(json=collection([spph(base, 101, "hello", "2.10-3ubuntu0.1")])),
        query=LISTING,
    )

    records = list(
        make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)
    )

    assert len(records) == 1
    assert sleeps.calls == [0.5, 1.0]


def test_too_many_requests_waits_as_long_as_retry_after_says(http_server, sleeps):
    serve_hello(http_server)
    base = http_server.base_url
    http_server.get(
        ARCHIVE,
        Reply(status=429, body="slow down", headers={"Retry-After": "7"}),
        Reply(json=collection([spph(base, 101, "hello", "2.10-3ubuntu0.1")])),
        query=LISTING,
    )

    records = list(
        make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)
    )

    assert len(records) == 1
    assert sleeps.calls == [7.0]


def test_it_gives_up_with_a_source_error_after_the_last_retry(http_server, sleeps):
    http_server.get(ARCHIVE, Reply(status=502, body="Bad Gateway"), query=LISTING)

    with pytest.raises(SourceError, match=r"HTTP 502 after 4 attempts"):
        list(make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW))

    assert len(http_server.made("GET", ARCHIVE)) == 4
    assert sleeps.calls == [0.5, 1.0, 2.0]


def test_a_request_that_outlasts_the_timeout_is_retried_then_reported(http_server, sleeps):
    http_server.get("/devel/ubuntu/series", Reply(json=collection([]), delay=0.6))

    with pytest.raises(SourceError, match=r"no answer within 0.2 s after 2 attempts"):
        make_source(http_server, sleeps, max_retries=1).releases()

    assert sleeps.calls == [0.5]


def test_a_client_error_fails_at_once_with_a_clear_message(http_server, sleeps):
    http_server.get(
        ARCHIVE,
        Reply(status=400, body="distro_series: No such object 'nobel'."),
        query=LISTING,
    )

    with pytest.raises(SourceError, match=r"HTTP 400 .*No such object 'nobel'"):
        list(make_source(http_server, sleeps).publications(release="nobel", since=None, now=NOW))

    assert len(http_server.made("GET", ARCHIVE)) == 1
    assert sleeps.calls == []


def test_a_listing_that_is_not_json_is_a_source_error(http_server, sleeps):
    http_server.get(ARCHIVE, Reply(body="<html>oops</html>"), query=LISTING)

    with pytest.raises(SourceError, match="not JSON"):
        list(make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW))


def test_a_listing_that_is_not_a_collection_is_a_source_error(http_server, sleeps):
    http_server.get(ARCHIVE, Reply(json={"total_size": 3}), query=LISTING)

    with pytest.raises(SourceError, match="not a collection"):
        list(make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW))


def test_it_never_follows_a_link_off_the_api_host(http_server, sleeps):
    base = http_server.base_url
    serve_hello(http_server)
    http_server.get(
        ARCHIVE,
        Reply(
            json=collection(
                [spph(base, 101, "hello", "2.10-3ubuntu0.1")],
                next_link="http://elsewhere.invalid/devel/ubuntu/+archive/primary?ws.start=75",
            )
        ),
        query=LISTING,
    )
    source = make_source(http_server, sleeps, **CREDENTIALS)
    records = source.publications(release="noble", since=None, now=NOW)

    assert next(records).source_package == "hello"
    with pytest.raises(SourceError, match="outside its API"):
        next(records)


def test_without_credentials_it_reads_anonymously_and_cannot_write(http_server, sleeps):
    serve_hello(http_server)
    source = make_source(http_server, sleeps)

    list(source.publications(release="noble", since=None, now=NOW))

    assert source.can_write is False
    assert http_server.requests
    assert all("Authorization" not in r.headers for r in http_server.requests)


def test_with_credentials_every_request_is_signed_with_plaintext_oauth(http_server, sleeps):
    serve_hello(http_server)
    source = make_source(http_server, sleeps, **CREDENTIALS)

    list(source.publications(release="noble", since=None, now=NOW))

    assert source.can_write is True
    headers = [r.headers.get("Authorization") for r in http_server.requests]
    assert all(headers)
    first = oauth_params(headers[0])
    assert first["realm"] == "https://api.launchpad.net/"
    assert first["oauth_consumer_key"] == "phasing"
    assert first["oauth_token"] == "tok123"
    assert first["oauth_signature_method"] == "PLAINTEXT"
    # Empty consumer secret, then the token secret, each percent-encoded (RFC 5849 3.4.4).
    assert unquote(first["oauth_signature"]) == "&s3cr&t"
    assert first["oauth_version"] == "1.0"
    assert first["oauth_timestamp"].isdigit()
    nonces = {oauth_params(h)["oauth_nonce"] for h in headers}
    assert len(nonces) == len(headers)
