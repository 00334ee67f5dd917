"""Writing a percentage to Launchpad: changeOverride on every binary of the version."""

from __future__ import annotations

import pytest

from tests.fake_http import FakeHTTPServer, Reply
from tests.packages.sources.launchpad.fakes import (
    ARCHIVE,
    CREDENTIALS,
    bpph,
    collection,
    make_source,
    oauth_params,
    spph,
)


def serve_override_targets(server: FakeHTTPServer, binaries) -> None:
    base = server.base_url
    server.get(
        ARCHIVE,
        Reply(json=collection([spph(base, 101, "hello", "2.10-3ubuntu0.1")])),
        query={
            "ws.op": "getPublishedSources",
            "source_name": "hello",
            "version": "2.10-3ubuntu0.1",
        },
    )
    server.get(
        f"{ARCHIVE}/+sourcepub/101",
        Reply(json=collection(binaries)),
        query={"ws.op": "getPublishedBinaries"},
    )
    for binary in binaries:
        path = binary["self_link"][len(base) :]
        server.post(path, Reply(json={**binary, "status": "Pending"}))


def test_without_credentials_setting_a_percentage_is_a_dry_run_that_sends_nothing(
    http_server, sleeps
):
    result = make_source(http_server, sleeps).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=40,
    )

    assert result.status == "dry_run"
    assert result.detail.startswith("Launchpad credentials not configured:")
    assert "40%" in result.detail
    assert http_server.requests == []


def test_setting_a_percentage_changes_the_override_of_every_binary_of_the_version(
    http_server, sleeps
):
    base = http_server.base_url
    serve_override_targets(
        http_server,
        [
            bpph(base, 201, "hello", "2.10-3ubuntu0.1", arch="amd64", percentage=30),
            bpph(base, 202, "hello", "2.10-3ubuntu0.1", arch="arm64", percentage=30),
            bpph(base, 203, "hello-doc", "2.10-3ubuntu0.1", arch="amd64", percentage=30),
        ],
    )

    result = make_source(http_server, sleeps, **CREDENTIALS).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=40,
    )

    assert result.status == "applied", result.detail
    posts = http_server.made("POST")
    assert sorted(p.path for p in posts) == [
        f"{ARCHIVE}/+binarypub/201",
        f"{ARCHIVE}/+binarypub/202",
        f"{ARCHIVE}/+binarypub/203",
    ]
    assert all(
        p.form == {"ws.op": "changeOverride", "new_phased_update_percentage": "40"} for p in posts
    )
    assert all(p.headers["Content-Type"] == "application/x-www-form-urlencoded" for p in posts)
    assert all(oauth_params(p.headers["Authorization"])["oauth_token"] == "tok123" for p in posts)
    lookup = http_server.made("GET", ARCHIVE)[0]
    assert lookup.param("exact_match") == "true"
    assert lookup.param("pocket") == "Updates"
    assert lookup.param("status") == "Published"
    assert lookup.param("distro_series") == http_server.url("/devel/ubuntu/noble")


def test_setting_100_percent_is_sent_and_binaries_already_there_are_left_alone(http_server, sleeps):
    base = http_server.base_url
    serve_override_targets(
        http_server,
        [
            bpph(base, 201, "hello", "2.10-3ubuntu0.1", arch="amd64", percentage=90),
            bpph(base, 202, "hello", "2.10-3ubuntu0.1", arch="arm64", percentage=None),
        ],
    )

    result = make_source(http_server, sleeps, **CREDENTIALS).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=100,
    )

    assert result.status == "applied"
    (post,) = http_server.made("POST")
    assert post.path == f"{ARCHIVE}/+binarypub/201"
    assert post.form["new_phased_update_percentage"] == "100"
    assert "1 already at 100%" in result.detail


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_override_is_a_denied_write_with_launchpads_reason(http_server, sleeps, status):
    """A token without write access gets 401 from Launchpad (lib/lp/services/webapp/
    authorization.py 66-91): no permission, which retrying will not change."""
    base = http_server.base_url
    serve_override_targets(
        http_server, [bpph(base, 201, "hello", "2.10-3ubuntu0.1", percentage=30)]
    )
    http_server.post(
        f"{ARCHIVE}/+binarypub/201",
        Reply(status=status, body="Unauthorized: the token is not authorized to WRITE_PUBLIC"),
    )

    result = make_source(http_server, sleeps, **CREDENTIALS).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=0,
    )

    assert result.status == "denied"
    assert result.detail.startswith("no permission to change phasing: ")
    assert str(status) in result.detail
    assert sleeps.calls == []


def test_an_override_is_retried_after_a_server_error(http_server, sleeps):
    base = http_server.base_url
    serve_override_targets(
        http_server, [bpph(base, 201, "hello", "2.10-3ubuntu0.1", percentage=30)]
    )
    http_server.post(
        f"{ARCHIVE}/+binarypub/201",
        Reply(status=503, body="down"),
        Reply(json=bpph(base, 301, "hello", "2.10-3ubuntu0.1", percentage=0, status="Pending")),
    )

    result = make_source(http_server, sleeps, **CREDENTIALS).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=0,
    )

    assert result.status == "applied"
    assert len(http_server.made("POST")) == 2
    assert sleeps.calls == [0.5]


def test_setting_a_percentage_of_a_version_launchpad_does_not_have_fails(http_server, sleeps):
    http_server.get(ARCHIVE, Reply(json=collection([])), query={"ws.op": "getPublishedSources"})

    result = make_source(http_server, sleeps, **CREDENTIALS).set_percentage(
        release="noble", pocket="updates", source_package="hello", version="9.9", percentage=20
    )

    assert result.status == "failed"
    assert "no published binaries of hello 9.9 in noble-updates" in result.detail
    assert http_server.made("POST") == []


def test_an_impossible_percentage_is_refused_before_asking_launchpad(http_server, sleeps):
    result = make_source(http_server, sleeps, **CREDENTIALS).set_percentage(
        release="noble", pocket="updates", source_package="hello", version="1", percentage=101
    )

    assert result.status == "failed"
    assert http_server.requests == []
