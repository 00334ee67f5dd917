"""LaunchpadSource against a local server that answers as Launchpad's web service does.

Where the shapes come from (launchpad tree, API version "devel", lazr.restful JSON):
- collections: ``{"start", "total_size" (or "total_size_link"), "entries": [...],
  "next_collection_link" (while more), "resource_type_link"}``; entries carry
  ``self_link``, ``resource_type_link``, ``http_etag`` and references as ``<field>_link``;
  what the caller may not see is ``"tag:launchpad.net:2008:redacted"``.
- source publications: lib/lp/soyuz/interfaces/publishing.py
  (ISourcePackagePublishingHistoryPublic: source_package_name/_version, component_name,
  section_name, status, pocket, distro_series, date_created/_published/_superseded,
  package_creator, package_maintainer, package_signer, creator, sponsor, packageupload;
  read op getPublishedBinaries).
- binary publications: same file (IBinaryPackagePublishingHistoryPublic:
  binary_package_name/_version, source_package_name/_version, distro_arch_series,
  phased_update_percentage, status, pocket, date_created...; devel write op changeOverride
  with new_phased_update_percentage).
- Archive.getPublishedSources: lib/lp/soyuz/interfaces/archive.py (source_name, version,
  status, distro_series, pocket, exact_match, created_since_date, component_name).
- series: lib/lp/registry/interfaces/distroseries.py (name, version, status as a
  SeriesStatus title, active, supported); people: name, display_name,
  preferred_email_address_link; email addresses: email.
- OAuth: launchpadlib/lazr.restfulclient sign with PLAINTEXT, empty consumer secret.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import unquote

import pytest

from packages.sources.base import (
    PersonRecord,
    PublicationRecord,
    PublicationSource,
    ReleaseRecord,
    SourceError,
)
from packages.sources.launchpad import REDACTED, LaunchpadSource
from tests.overview.sources.fake_http import FakeHTTPServer, Reply, SleepRecorder

NOW = datetime(2025, 6, 3, 12, 0, tzinfo=UTC)
ARCHIVE = "/devel/ubuntu/+archive/primary"
LISTING = {"ws.op": "getPublishedSources", "pocket": "Updates", "status": "Published"}


@pytest.fixture
def http_server():
    with FakeHTTPServer() as server:
        yield server


@pytest.fixture
def sleeps():
    return SleepRecorder()


# -- Launchpad-shaped bodies ----------------------------------------------------------------


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


def series_entry(base, name, version, status):
    return {
        "self_link": f"{base}/devel/ubuntu/{name}",
        "web_link": f"https://launchpad.net/ubuntu/{name}",
        "resource_type_link": f"{base}/devel/#distro_series",
        "http_etag": '"abc"',
        "name": name,
        "displayname": name.capitalize(),
        "fullseriesname": f"Ubuntu {name.capitalize()}",
        "title": f"The {name.capitalize()} series",
        "version": version,
        "status": status,
        "active": status in ("Current Stable Release", "Supported", "Active Development"),
        "supported": status in ("Current Stable Release", "Supported"),
        "distribution_link": f"{base}/devel/ubuntu",
        "datereleased": "2024-04-25T00:00:00+00:00",
    }


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


# -- releases -------------------------------------------------------------------------------


def test_it_is_a_publication_source(http_server, sleeps):
    assert isinstance(make_source(http_server, sleeps), PublicationSource)


def test_it_lists_the_series_and_only_released_maintained_ones_are_supported(http_server, sleeps):
    base = http_server.base_url
    page_two = f"{base}/devel/ubuntu/series?ws.size=2&memo=2&ws.start=2"
    http_server.get(
        "/devel/ubuntu/series",
        Reply(
            json=collection(
                [
                    series_entry(base, "resolute", "26.04", "Active Development"),
                    series_entry(base, "questing", "25.10", "Current Stable Release"),
                ],
                next_link=page_two,
                kind="distro_series",
            )
        ),
    )
    http_server.get(
        "/devel/ubuntu/series",
        Reply(
            json=collection(
                [
                    series_entry(base, "noble", "24.04", "Supported"),
                    series_entry(base, "mantic", "23.10", "Obsolete"),
                ],
                kind="distro_series",
            )
        ),
        query={"ws.start": "2"},
    )

    releases = make_source(http_server, sleeps).releases()

    assert releases == [
        ReleaseRecord("resolute", "26.04", supported=False),
        ReleaseRecord("questing", "25.10", supported=True),
        ReleaseRecord("noble", "24.04", supported=True),
        ReleaseRecord("mantic", "23.10", supported=False),
    ]


# -- publications ---------------------------------------------------------------------------


def test_it_yields_an_updates_publication_with_its_people_binaries_and_lowest_percentage(
    http_server, sleeps
):
    serve_hello(http_server)

    records = list(
        make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)
    )

    assert records == [
        PublicationRecord(
            release="noble",
            source_package="hello",
            version="2.10-3ubuntu0.1",
            date_published=datetime(2025, 6, 2, 10, 15, 30, 123456, tzinfo=UTC),
            phased_update_percentage=30,
            pocket="updates",
            previous_version="2.10-3ubuntu0.0.1",
            component="main",
            status="published",
            binaries=("hello", "hello-doc"),
            signer=PersonRecord("alice", "Alice Archive", "alice@example.com"),
            uploader=PersonRecord("bob", "Bob Uploader", ""),
            sponsor=PersonRecord("carol", "Carol Sponsor", ""),
        )
    ]
    listing = http_server.made("GET", ARCHIVE)[0]
    assert listing.param("distro_series") == http_server.url("/devel/ubuntu/noble")
    assert listing.param("pocket") == "Updates"
    assert listing.param("status") == "Published"
    assert listing.param("created_since_date") is None


def test_previous_version_ignores_deleted_proposed_and_newer_publications(http_server, sleeps):
    base = http_server.base_url
    serve_hello(
        http_server,
        history=[
            spph(base, 90, "hello", "2.10-3", pocket="Release"),
            spph(base, 96, "hello", "2.10-3ubuntu0.0.9", pocket="Updates", status="Deleted"),
            spph(base, 97, "hello", "2.10-3ubuntu0.0.8", pocket="Proposed", status="Superseded"),
            spph(base, 98, "hello", "2.10-3ubuntu0.0.7", pocket="Backports", status="Published"),
            spph(base, 102, "hello", "2.10-3ubuntu0.2", pocket="Security", status="Published"),
        ],
    )

    (record,) = make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)

    assert record.previous_version == "2.10-3"
    history = http_server.made("GET", ARCHIVE)[1]
    assert history.param("source_name") == "hello"
    assert history.param("exact_match") == "true"
    assert history.param("distro_series") == http_server.url("/devel/ubuntu/noble")


def test_a_first_update_has_no_previous_version(http_server, sleeps):
    base = http_server.base_url
    serve_hello(http_server, history=[spph(base, 101, "hello", "2.10-3ubuntu0.1")])

    (record,) = make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)

    assert record.previous_version == ""


def test_binaries_without_a_percentage_are_fully_phased(http_server, sleeps):
    base = http_server.base_url
    serve_hello(
        http_server,
        binaries=[
            bpph(base, 201, "hello", "2.10-3ubuntu0.1", arch="amd64"),
            bpph(base, 202, "hello", "2.10-3ubuntu0.1", arch="arm64"),
        ],
    )

    (record,) = make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)

    assert record.phased_update_percentage is None
    assert record.percentage == 100


def test_the_newest_pending_record_after_a_change_override_gives_the_percentage(
    http_server, sleeps
):
    base = http_server.base_url
    serve_hello(
        http_server,
        binaries=[
            bpph(
                base,
                201,
                "hello",
                "2.10-3ubuntu0.1",
                percentage=10,
                created="2025-06-02T10:00:00+00:00",
            ),
            bpph(
                base,
                301,
                "hello",
                "2.10-3ubuntu0.1",
                percentage=20,
                status="Pending",
                created="2025-06-02T16:00:00+00:00",
            ),
        ],
    )

    (record,) = make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)

    assert record.phased_update_percentage == 20


def test_an_incremental_sync_asks_only_for_publications_created_since(http_server, sleeps):
    serve_hello(http_server)
    since = datetime(2025, 6, 1, 6, 0, tzinfo=UTC)

    list(make_source(http_server, sleeps).publications(release="noble", since=since, now=NOW))

    listing = http_server.made("GET", ARCHIVE)[0]
    assert listing.param("created_since_date") == "2025-06-01T06:00:00+00:00"


def test_it_follows_next_collection_link_through_every_page(http_server, sleeps):
    base = http_server.base_url
    serve_hello(http_server)
    next_link = (
        f"{base}{ARCHIVE}?distro_series=x&pocket=Updates&status=Published"
        "&ws.op=getPublishedSources&memo=75&ws.size=75&ws.start=75"
    )
    http_server.get(
        ARCHIVE,
        Reply(
            json=collection(
                [spph(base, 101, "hello", "2.10-3ubuntu0.1")], next_link=next_link, total_size=False
            )
        ),
        query=LISTING,
    )
    http_server.get(
        ARCHIVE,
        Reply(json=collection([spph(base, 111, "hello", "2.10-3ubuntu0.1", series="noble")])),
        query={"ws.start": "75"},
    )
    http_server.get(
        f"{ARCHIVE}/+sourcepub/111",
        Reply(json=collection([bpph(base, 211, "hello", "2.10-3ubuntu0.1", percentage=50)])),
        query={"ws.op": "getPublishedBinaries"},
    )

    records = list(
        make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)
    )

    assert [r.percentage for r in records] == [30, 50]
    assert [
        r.param("ws.start") for r in http_server.made("GET", ARCHIVE) if r.param("ws.start")
    ] == ["75"]


def test_entries_missing_fields_are_skipped_and_the_rest_yielded(http_server, sleeps, caplog):
    base = http_server.base_url
    serve_hello(http_server)
    no_version = spph(base, 102, "broken", "1")
    del no_version["source_package_version"]
    never_published = spph(base, 103, "pending", "1", published=None)
    http_server.get(
        ARCHIVE,
        Reply(
            json=collection(
                [
                    no_version,
                    never_published,
                    "not an entry",
                    spph(base, 101, "hello", "2.10-3ubuntu0.1"),
                ]
            )
        ),
        query=LISTING,
    )

    records = list(
        make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)
    )

    assert [r.source_package for r in records] == ["hello"]
    assert "source_package_version" in caplog.text
    assert "date_published" in caplog.text


def test_a_publication_whose_binaries_are_unreadable_is_skipped(http_server, sleeps, caplog):
    base = http_server.base_url
    serve_hello(http_server)
    http_server.get(
        ARCHIVE,
        Reply(
            json=collection(
                [
                    spph(base, 105, "garbled", "1.0ubuntu0.1"),
                    spph(base, 101, "hello", "2.10-3ubuntu0.1"),
                ]
            )
        ),
        query=LISTING,
    )
    http_server.get(
        f"{ARCHIVE}/+sourcepub/105",
        Reply(body="<html>Launchpad is down for maintenance</html>"),
        query={"ws.op": "getPublishedBinaries"},
    )

    records = list(
        make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)
    )

    assert [r.source_package for r in records] == ["hello"]
    assert "garbled" in caplog.text


def test_a_binary_with_an_impossible_percentage_skips_its_publication(http_server, sleeps):
    base = http_server.base_url
    serve_hello(
        http_server, binaries=[bpph(base, 201, "hello", "2.10-3ubuntu0.1", percentage="ten")]
    )

    assert (
        list(make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW))
        == []
    )


def test_a_publication_without_binaries_yet_is_skipped_rather_than_called_complete(
    http_server, sleeps
):
    serve_hello(http_server, binaries=[])

    assert (
        list(make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW))
        == []
    )


def test_an_unreadable_person_still_gives_the_account_name(http_server, sleeps):
    serve_hello(http_server)
    http_server.get("/devel/~alice", Reply(status=410, body="Gone"))

    (record,) = make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)

    assert record.signer == PersonRecord("alice")


def test_each_person_is_fetched_once_per_sync(http_server, sleeps):
    base = http_server.base_url
    serve_hello(http_server)
    http_server.get(
        ARCHIVE,
        Reply(
            json=collection(
                [
                    spph(base, 101, "hello", "2.10-3ubuntu0.1"),
                    spph(base, 101, "hello", "2.10-3ubuntu0.1"),
                ]
            )
        ),
        query=LISTING,
    )

    list(make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW))

    assert len(http_server.made("GET", "/devel/~alice")) == 1


# -- robustness -----------------------------------------------------------------------------


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


# -- credentials ----------------------------------------------------------------------------


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


# -- set_percentage -------------------------------------------------------------------------


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


def test_a_refused_override_is_a_failed_write_with_launchpads_reason(http_server, sleeps):
    base = http_server.base_url
    serve_override_targets(
        http_server, [bpph(base, 201, "hello", "2.10-3ubuntu0.1", percentage=30)]
    )
    http_server.post(
        f"{ARCHIVE}/+binarypub/201",
        Reply(status=401, body="Unauthorized: the token is not authorized to WRITE_PUBLIC"),
    )

    result = make_source(http_server, sleeps, **CREDENTIALS).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=0,
    )

    assert result.status == "failed"
    assert "401" in result.detail and "WRITE_PUBLIC" in result.detail


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
