"""Launchpad-shaped bodies and a fake Launchpad for the source's tests (shapes cited in test_launchpad)."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import unquote

from packages.sources.launchpad.source import REDACTED, LaunchpadSource
from tests.fake_http import FakeHTTPServer, Reply

NOW = datetime(2025, 6, 3, 12, 0, tzinfo=UTC)


ARCHIVE = "/devel/ubuntu/+archive/primary"


LISTING = {"ws.op": "getPublishedSources", "pocket": "Updates", "status": "Published"}


def collection(
    entries, *, next_link=None, total_size=True, kind="source_package_publishing_history"
):
    body = {
        "start": 0,
        "entries": entries,
        "resource_type_link": f"https://api.launchpad.net/devel/#{kind}-page-resource",
    }
    if total_size:
        body["total_size"] = len(entries)
    else:
        body["total_size_link"] = "https://api.launchpad.net/devel/...?ws.show=total_size"
    if next_link:
        body["next_collection_link"] = next_link
    return body


def spph(
    base,
    pub_id,
    name,
    version,
    *,
    pocket="Updates",
    status="Published",
    series="noble",
    published="2025-06-02T10:15:30.123456+00:00",
    signer="~alice",
    package_creator="~bob",
    creator="~sru-member",
    sponsor=None,
    component="main",
):
    def person(account):
        return f"{base}/devel/{account}" if account else None

    return {
        "self_link": f"{base}{ARCHIVE}/+sourcepub/{pub_id}",
        "resource_type_link": f"{base}/devel/#source_package_publishing_history",
        "http_etag": f'"{pub_id}-etag"',
        "display_name": f"{name} {version} in {series}",
        "source_package_name": name,
        "source_package_version": version,
        "component_name": component,
        "section_name": "admin",
        "status": status,
        "pocket": pocket,
        "distro_series_link": f"{base}/devel/ubuntu/{series}",
        "archive_link": f"{base}{ARCHIVE}",
        "copied_from_archive_link": None,
        "date_created": "2025-06-02T09:00:00.000001+00:00",
        "date_published": published,
        "date_superseded": None,
        "date_made_pending": None,
        "date_removed": None,
        "scheduled_deletion_date": None,
        "removed_by_link": None,
        "removal_comment": None,
        "package_creator_link": person(package_creator),
        "package_maintainer_link": f"{base}/devel/~ubuntu-devel-discuss-lists",
        "package_signer_link": person(signer),
        "creator_link": person(creator),
        "sponsor_link": person(sponsor),
        "packageupload_link": f"{base}/devel/ubuntu/{series}/+upload/{pub_id}",
    }


def bpph(
    base,
    pub_id,
    name,
    version,
    *,
    arch="amd64",
    percentage=None,
    status="Published",
    created="2025-06-02T10:00:00+00:00",
    series="noble",
    source=("hello", "2.10-3ubuntu0.1"),
):
    return {
        "self_link": f"{base}{ARCHIVE}/+binarypub/{pub_id}",
        "resource_type_link": f"{base}/devel/#binary_package_publishing_history",
        "http_etag": f'"{pub_id}-etag"',
        "display_name": f"{name} {version} in {series} {arch}",
        "binary_package_name": name,
        "binary_package_version": version,
        "source_package_name": source[0],
        "source_package_version": source[1],
        "distro_arch_series_link": f"{base}/devel/ubuntu/{series}/{arch}",
        "phased_update_percentage": percentage,
        "status": status,
        "pocket": "Updates",
        "component_name": "main",
        "section_name": "admin",
        "priority_name": "optional",
        "architecture_specific": True,
        "is_debug": False,
        "archive_link": f"{base}{ARCHIVE}",
        "copied_from_archive_link": None,
        "build_link": f"{base}/devel/ubuntu/+source/{source[0]}/{source[1]}/+build/{pub_id}",
        "creator_link": None,
        "date_created": created,
        "date_published": None if status == "Pending" else created,
        "date_superseded": None,
        "date_made_pending": None,
        "date_removed": None,
        "scheduled_deletion_date": None,
        "removed_by_link": None,
        "removal_comment": None,
    }


def person_entry(base, account, display, email_link):
    return {
        "self_link": f"{base}/devel/~{account}",
        "web_link": f"https://launchpad.net/~{account}",
        "resource_type_link": f"{base}/devel/#person",
        "name": account,
        "display_name": display,
        "is_team": False,
        "hide_email_addresses": email_link == REDACTED,
        "preferred_email_address_link": email_link,
    }


def serve_people(server: FakeHTTPServer) -> None:
    base = server.base_url
    server.get(
        "/devel/~alice",
        Reply(
            json=person_entry(
                base, "alice", "Alice Archive", f"{base}/devel/~alice/+email/alice@example.com"
            )
        ),
    )
    server.get(
        "/devel/~alice/+email/alice@example.com",
        Reply(
            json={
                "self_link": f"{base}/devel/~alice/+email/alice@example.com",
                "email": "alice@example.com",
                "person_link": f"{base}/devel/~alice",
            }
        ),
    )
    server.get("/devel/~bob", Reply(json=person_entry(base, "bob", "Bob Uploader", REDACTED)))
    server.get("/devel/~carol", Reply(json=person_entry(base, "carol", "Carol Sponsor", None)))
    server.get(
        "/devel/~sru-member", Reply(json=person_entry(base, "sru-member", "SRU Member", REDACTED))
    )


def serve_hello(server: FakeHTTPServer, *, binaries=None, history=None) -> None:
    """One Updates publication, hello 2.10-3ubuntu0.1, with its binaries and history."""
    base = server.base_url
    server.get(
        ARCHIVE,
        Reply(json=collection([spph(base, 101, "hello", "2.10-3ubuntu0.1", sponsor="~carol")])),
        query=LISTING,
    )
    if binaries is None:
        binaries = [
            bpph(base, 201, "hello", "2.10-3ubuntu0.1", arch="amd64", percentage=30),
            bpph(base, 202, "hello", "2.10-3ubuntu0.1", arch="arm64", percentage=None),
            bpph(base, 203, "hello-doc", "2.10-3ubuntu0.1", arch="amd64", percentage=40),
        ]
    server.get(
        f"{ARCHIVE}/+sourcepub/101",
        Reply(json=collection(binaries, kind="binary_package_publishing_history")),
        query={"ws.op": "getPublishedBinaries"},
    )
    if history is None:
        history = [
            spph(base, 90, "hello", "2.10-3", pocket="Release", status="Published"),
            spph(base, 95, "hello", "2.10-3ubuntu0.0.1", pocket="Updates", status="Superseded"),
            spph(base, 96, "hello", "2.10-3ubuntu0.0.2", pocket="Updates", status="Deleted"),
            spph(base, 97, "hello", "2.10-3ubuntu0.0.3", pocket="Proposed", status="Superseded"),
            spph(base, 101, "hello", "2.10-3ubuntu0.1", pocket="Updates", status="Published"),
            spph(base, 102, "hello", "2.10-3ubuntu0.2", pocket="Proposed", status="Published"),
        ]
    server.get(
        ARCHIVE,
        Reply(json=collection(history)),
        query={"ws.op": "getPublishedSources", "source_name": "hello"},
    )
    serve_people(server)


def make_source(server: FakeHTTPServer, sleeps, **kwargs) -> LaunchpadSource:
    kwargs.setdefault("timeout", 0.2)
    return LaunchpadSource(api_root=server.url("/devel/"), sleep=sleeps, **kwargs)


CREDENTIALS = {"consumer_key": "phasing", "token": "tok123", "token_secret": "s3cr&t"}


def oauth_params(header: str) -> dict[str, str]:
    assert header.startswith("OAuth ")
    params = {}
    for part in header[len("OAuth ") :].split(", "):
        key, _, value = part.partition("=")
        params[key] = unquote(value.strip('"'))
    return params
