"""LaunchpadSource against a small stateful Launchpad (fake_launchpad): what a real sync
and a real write meet. Each docstring names the launchpad or lazr file the behaviour
follows (lgp171188/launchpad@eafda459, lazr.restful 4.0.0)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from packages.domain import changelog
from packages.sources.base import BinaryPercentage, Watch
from tests.packages.sources.launchpad.fake_launchpad import DDEB_REFUSAL, FakeLaunchpad
from tests.packages.sources.launchpad.fakes import ARCHIVE, CREDENTIALS, make_source

HELLO = ("hello", "2.10-3ubuntu0.1")


@pytest.fixture
def launchpad(http_server) -> FakeLaunchpad:
    return FakeLaunchpad(http_server)


def records(source, launchpad, *, since=None, watch=None):
    return list(source.publications(release="noble", since=since, now=launchpad.now, watch=watch))


def write(source, percentage, *, version=HELLO[1]):
    return source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version=version,
        percentage=percentage,
    )


def test_collections_are_asked_in_batches_of_300_the_most_launchpad_serves(
    http_server, sleeps, launchpad
):
    """Launchpad serves 50 entries a batch by default and answers a ws.size above 300 with
    400 'Maximum for "ws.size" parameter is 300.' (lazr.batchnavigator _batchnavigator.py
    217-221, config max_batch_size 300): 120 updates take one request, not three."""
    for n in range(120):
        launchpad.publish(f"pkg{n:03d}", "1.0-1ubuntu0.1", binaries=(("amd64", 10),))

    found = records(make_source(http_server, sleeps), launchpad)

    assert len(found) == 120
    listings = [
        r
        for r in http_server.made("GET", ARCHIVE)
        if r.param("ws.op") == "getPublishedSources"
        and r.param("pocket") == "Updates"
        and r.param("status") == "Published"
    ]
    assert [r.param("ws.size") for r in listings] == ["300"]
    # Every collection asked in the largest batch (changesFileUrl answers one value).
    collections = [
        r for r in http_server.requests if r.param("ws.op") not in (None, "changesFileUrl")
    ]
    assert collections and all(r.param("ws.size") == "300" for r in collections)


def test_a_devel_listing_with_total_size_link_is_read_to_its_last_page(
    http_server, sleeps, launchpad
):
    """In devel a named operation's page has total_size_link, and only the last page has
    total_size (lazr.restful _resource.py 653-720; launchpad configuration.py 30-32):
    nothing may wait for a total_size on the first page."""
    for n in range(650):
        launchpad.publish(f"pkg{n:03d}", "1.0-1ubuntu0.1", binaries=(("amd64", 10),))

    # The listing is the point here, not the 650 uploads' .changes files; a page of 300
    # entries may take the fake server longer than the fakes' short timeout on a busy
    # machine, and a retried page would be read twice.
    source = make_source(http_server, sleeps, read_changes=False, timeout=10)
    found = records(source, launchpad)

    assert len(found) == 650
    pages = [r for r in http_server.made("GET", ARCHIVE) if r.param("status") == "Published"]
    assert [r.param("ws.start") for r in pages] == [None, "300", "600"]


def test_a_percentage_changed_elsewhere_days_later_is_seen_by_the_incremental_sync(
    http_server, sleeps, launchpad
):
    """changeOverride adds a binary publication and leaves the source publication's
    date_created alone (lib/lp/soyuz/model/publishing.py 1266-1289), so asking for source
    publications created since the last sync never sees it; the binary publications
    created since, newest first (order_by_date, interfaces/archive.py 752-759), do."""
    source = launchpad.publish(*HELLO, binaries=(("amd64", 10), ("arm64", 10)))
    last_sync = launchpad.now + timedelta(days=3)
    launchpad.now = last_sync + timedelta(minutes=30)
    for binary in launchpad.current(source):
        launchpad.change_override(binary, 0, by="someone-else")

    (record,) = records(make_source(http_server, sleeps), launchpad, since=last_sync)

    assert record.percentage == 0
    changed = [
        r for r in http_server.made("GET", ARCHIVE) if r.param("ws.op") == "getPublishedBinaries"
    ]
    assert changed[0].param("order_by_date") == "true"
    assert changed[0].param("pocket") == "Updates"
    assert changed[0].param("created_since_date") == last_sync.isoformat()


def test_a_deleted_update_that_is_watched_comes_back_as_deleted(http_server, sleeps, launchpad):
    """A deletion flips statuses and adds no record (model/publishing.py 2398-2421), so the
    Deleted binary publications since the oldest watched update are asked for."""
    source = launchpad.publish(*HELLO, binaries=(("amd64", 20),))
    launchpad.now += timedelta(days=5)
    launchpad.delete(source)
    watch = Watch(active={HELLO: source.published})

    (record,) = records(
        make_source(http_server, sleeps), launchpad, since=launchpad.now, watch=watch
    )

    assert (record.source_package, record.version, record.status) == (*HELLO, "deleted")


def test_a_version_we_wrote_is_read_back_even_when_nothing_changed_at_launchpad(
    http_server, sleeps, launchpad
):
    """Writing the percentage a binary already has changes nothing (model/publishing.py
    1211-1217): only reading it again tells whether the write took."""
    launchpad.publish(*HELLO, binaries=(("amd64", 30),))
    since = launchpad.now + timedelta(days=1)

    (record,) = records(
        make_source(http_server, sleeps),
        launchpad,
        since=since,
        watch=Watch(written=frozenset({HELLO})),
    )

    assert record.percentage == 30


def test_debug_symbols_are_never_written_and_follow_their_deb(http_server, sleeps, launchpad):
    """changeOverride on a ddeb is a 400 'Cannot override ddeb publications directly...'
    (model/publishing.py 1179-1183) and the deb's override is applied to its ddeb by
    Launchpad (1242-1264); getPublishedBinaries lists ddebs with is_debug (devel)."""
    source = launchpad.publish(*HELLO, binaries=(("amd64", 10), ("arm64", 10)), ddebs=True)

    result = write(make_source(http_server, sleeps, **CREDENTIALS), 20)

    assert result.status == "applied", result.detail
    posted = {r.path.rsplit("/", 1)[1] for r in http_server.made("POST")}
    debs = {str(b.id) for b in launchpad.binaries if b.source is source and not b.is_debug}
    assert posted <= debs and len(posted) == 2
    assert {b.name: b.percentage for b in launchpad.current(source) if b.status == "Pending"} == {
        "hello": 20,
        "hello-dbgsym": 20,
    }
    (record,) = records(make_source(http_server, sleeps), launchpad)
    assert record.binaries == ("hello",)
    assert DDEB_REFUSAL not in result.detail


@pytest.mark.parametrize(
    ("token", "team"),
    [("read-only", {"phasing-bot"}), ("tok123", set())],
    ids=["read-only token", "not in the archive owner's team"],
)
def test_without_permission_a_write_is_denied_not_failed(
    http_server, sleeps, launchpad, token, team
):
    """launchpad.Edit on a publication is launchpad.Append on its archive (soyuz/
    security.py 556-563), a write permission a read-only token never has (webapp/
    authorization.py 66-91); both refusals are 401 (xx-binary-package-publishing.rst
    345-356)."""
    launchpad.tokens["read-only"] = ("phasing-bot", False)
    launchpad.team = team
    launchpad.publish(*HELLO, binaries=(("amd64", 10),))

    result = write(make_source(http_server, sleeps, **{**CREDENTIALS, "token": token}), 20)

    assert result.status == "denied"
    assert result.detail.startswith("no permission to change phasing: Launchpad answered HTTP 401")
    assert sleeps.calls == []  # not retried as an outage


def test_a_suite_launchpad_will_not_modify_is_denied(http_server, sleeps, launchpad):
    """Overrides in a development series' -updates are refused with a 400 "Cannot change
    overrides in suite '<suite>'" (model/publishing.py 1234-1240, model/archive.py
    1696-1733)."""
    launchpad.series["noble"] = ("24.04", "Active Development")
    launchpad.publish(*HELLO, binaries=(("amd64", 10),))

    result = write(make_source(http_server, sleeps, **CREDENTIALS), 20)

    assert result.status == "denied"
    assert "Cannot change overrides in suite 'noble-updates'" in result.detail


def test_checking_the_permission_changes_nothing_at_launchpad(http_server, sleeps, launchpad):
    """The permission is checked before changeOverride runs, and the same value returns
    before any record is made (model/publishing.py 1211-1217): a harmless probe."""
    launchpad.publish(*HELLO, binaries=(("amd64", 30),))
    before = len(launchpad.binaries)

    allowed = make_source(http_server, sleeps, **CREDENTIALS).check_write()
    launchpad.team = set()
    refused = make_source(http_server, sleeps, **CREDENTIALS).check_write()

    assert allowed.status == "applied", allowed.detail
    assert refused.status == "denied"
    assert len(launchpad.binaries) == before
    assert {p.form["new_phased_update_percentage"] for p in http_server.made("POST")} == {"30"}
    assert make_source(http_server, sleeps).check_write().status == "dry_run"


def test_each_binary_and_architecture_keeps_its_own_percentage(http_server, sleeps, launchpad):
    """phased_update_percentage is per binary publication, one per architecture
    (interfaces/publishing.py 756-793), and apt reads it per binary."""
    source = launchpad.publish(
        *HELLO, names=("hello", "libhello1"), binaries=(("amd64", 40), ("arm64", 40))
    )
    (lib_arm64,) = [
        b for b in launchpad.current(source) if (b.name, b.arch) == ("libhello1", "arm64")
    ]
    launchpad.change_override(lib_arm64, 10, by="someone-else")

    (record,) = records(make_source(http_server, sleeps), launchpad)

    assert record.binary_percentages == (
        BinaryPercentage("hello", "amd64", 40),
        BinaryPercentage("hello", "arm64", 40),
        BinaryPercentage("libhello1", "amd64", 40),
        BinaryPercentage("libhello1", "arm64", 10),
    )
    assert record.percentage == 10


def test_a_version_also_published_in_security_is_marked(http_server, sleeps, launchpad):
    """apt never phases a version reached through a -security suite (apt-pkg/pkgcache.cc
    1067-1086; for the candidate itself since apt 2.7.11 and 2.4.12, LP #2051181)."""
    launchpad.publish(*HELLO, binaries=(("amd64", 10),))
    launchpad.publish(*HELLO, pocket="Security", binaries=(("amd64", None),))
    launchpad.publish("curl", "8.5.0-2ubuntu10.1", binaries=(("amd64", 10),))

    found = {r.source_package: r for r in records(make_source(http_server, sleeps), launchpad)}

    assert found["hello"].in_security is True
    assert found["curl"].in_security is False


def test_the_sponsor_is_the_signer_of_someone_elses_upload(http_server, sleeps, launchpad):
    """package_signer is who signed the upload, package_creator its Changed-By
    (interfaces/publishing.py 411-437, archiveuploader/dscfile.py 767); Launchpad's
    sponsor is only for sponsored copies (scripts/packagecopier.py 726-732)."""
    launchpad.publish(*HELLO, signer="alice", package_creator="bob", sponsor="carol")
    launchpad.publish("curl", "8.5.0-2ubuntu10.1", signer="alice", package_creator="alice")

    found = {r.source_package: r for r in records(make_source(http_server, sleeps), launchpad)}

    assert (found["hello"].signer.account_name, found["hello"].uploader.account_name) == (
        "alice",
        "bob",
    )
    assert found["hello"].sponsor.account_name == "alice"
    assert found["curl"].sponsor is None


def test_the_bugs_a_phasing_upload_closes_are_read_from_its_changes_file(
    http_server, sleeps, launchpad
):
    changes = (
        "Format: 1.8\nSource: hello\nVersion: 2.10-3ubuntu0.1\n"
        "Launchpad-Bugs-Fixed: 2066054 2061924\nChanges:\n"
        " hello (2.10-3ubuntu0.1) noble; urgency=medium\n .\n   * Fix it (LP: #2066054)\n"
    )
    launchpad.publish("hello", "2.10-3ubuntu0.1", binaries=(("amd64", 10),), changes=changes)
    launchpad.publish("done", "1.0-1ubuntu0.1", binaries=(("amd64", None),), changes=changes)

    found = {r.source_package: r for r in records(make_source(http_server, sleeps), launchpad)}

    assert changelog.closed_bugs(found["hello"].changelog) == (2066054, 2061924)
    # A fully phased upload is settled: its .changes is not asked for.
    assert found["done"].changelog == ""
    files = [r for r in http_server.requests if r.path.endswith("_source.changes")]
    assert [r.path.rsplit("/", 1)[-1] for r in files] == ["hello_2.10-3ubuntu0.1_source.changes"]
    assert all("Authorization" not in r.headers for r in files)


def test_a_changes_file_that_cannot_be_read_costs_only_the_bugs(http_server, sleeps, launchpad):
    launchpad.publish("hello", "2.10-3ubuntu0.1", binaries=(("amd64", 10),))

    [found] = records(make_source(http_server, sleeps), launchpad)

    assert found.source_package == "hello" and found.changelog == ""


def test_an_update_the_sync_already_knows_in_phasing_is_not_asked_for_its_changes_again(
    http_server, sleeps, launchpad
):
    launchpad.publish("hello", "2.10-3ubuntu0.1", binaries=(("amd64", 10),), changes="(LP: #1)")
    watch = Watch(active={("hello", "2.10-3ubuntu0.1"): launchpad.now})

    [found] = records(make_source(http_server, sleeps), launchpad, watch=watch)

    assert found.changelog == ""
    assert not [r for r in http_server.requests if r.param("ws.op") == "changesFileUrl"]
