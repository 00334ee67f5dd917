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
- OAuth: launchpadlib/lazr.restfulclient sign with PLAINTEXT, empty consumer secret."""

from __future__ import annotations

from datetime import UTC, datetime

from packages.sources.base import (
    BinaryPercentage,
    PersonRecord,
    PublicationRecord,
    PublicationSource,
    ReleaseRecord,
)
from tests.fake_http import Reply
from tests.packages.sources.launchpad.fakes import (
    ARCHIVE,
    LISTING,
    NOW,
    bpph,
    collection,
    make_source,
    serve_hello,
    spph,
)


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


def test_it_yields_an_updates_publication_with_its_people_and_each_binarys_percentage(
    http_server, sleeps
):
    """Launchpad's own ``sponsor_link`` names who asked for a sponsored copy
    (lib/lp/soyuz/scripts/packagecopier.py 726-732); the sponsor of the upload is its
    signer, because the signer (alice) is not the uploader (bob, the Changed-By)."""
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
            sponsor=PersonRecord("alice", "Alice Archive", "alice@example.com"),
            binary_percentages=(
                BinaryPercentage("hello", "amd64", 30),
                BinaryPercentage("hello", "arm64", None),
                BinaryPercentage("hello-doc", "amd64", 40),
            ),
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


def test_previous_version_is_the_newest_superseded_updates_or_published_release_one(
    http_server, sleeps
):
    """As phased-updater's package_previous_version: a version only ever in Security, or
    a Release publication no longer published, is not the previous version."""
    base = http_server.base_url
    serve_hello(
        http_server,
        history=[
            spph(base, 90, "hello", "2.10-3", pocket="Release", status="Superseded"),
            spph(base, 93, "hello", "2.10-3ubuntu0.0.1", pocket="Updates", status="Superseded"),
            spph(base, 99, "hello", "2.10-3ubuntu0.0.5", pocket="Security", status="Published"),
            spph(base, 101, "hello", "2.10-3ubuntu0.1", pocket="Updates", status="Published"),
        ],
    )

    (record,) = make_source(http_server, sleeps).publications(release="noble", since=None, now=NOW)

    assert record.previous_version == "2.10-3ubuntu0.0.1"


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
