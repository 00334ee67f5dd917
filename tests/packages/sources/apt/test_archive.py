"""The apt archive source, read from disk and over HTTP, written back and read by real apt."""

from __future__ import annotations

import gzip
import logging
import socket
import threading
from datetime import timedelta
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from packages.sources.apt.archive import AptArchiveSource
from packages.sources.base import PublicationSource, SourceError
from tests.apt_archives import write_archive
from tests.packages.sources.apt.fakes import (
    DATE,
    NOW,
    by_source,
    hand_archive,
    record,
    standard_archive,
)


def test_it_is_a_publication_source_that_can_write_a_local_archive(tmp_path):
    source = AptArchiveSource(location=str(standard_archive(tmp_path)))
    assert isinstance(source, PublicationSource)
    assert source.can_write is True


def test_it_lists_the_releases_that_have_an_updates_suite(tmp_path):
    source = AptArchiveSource(location=str(standard_archive(tmp_path)))
    assert [(r.codename, r.version) for r in source.releases()] == [
        ("jammy", "22.04"),
        ("noble", "24.04"),
    ]


def test_configured_suites_name_the_releases(tmp_path):
    write_archive(
        tmp_path, [{"codename": "noble", "version": "24.04", "updates": [record("a", "1")]}]
    )
    (tmp_path / "dists" / "noble-updates").rename(tmp_path / "dists" / "noble-phasing")
    source = AptArchiveSource(location=str(tmp_path), suites={"noble": "noble-phasing"})
    assert [r.codename for r in source.releases()] == ["noble"]
    assert [
        r.source_package for r in source.publications(release="noble", since=None, now=NOW)
    ] == ["a"]


def test_each_source_version_is_one_publication_with_its_binaries_and_percentage(tmp_path):
    records = by_source(AptArchiveSource(location=str(standard_archive(tmp_path))))
    hello, curl = records["hello"], records["curl"]
    assert (hello.version, hello.phased_update_percentage, hello.percentage) == (
        "2.10-3ubuntu0.1",
        10,
        10,
    )
    assert hello.binaries == ("hello", "libhello1")
    assert (hello.pocket, hello.component, hello.status) == ("updates", "main", "published")
    assert curl.phased_update_percentage is None and curl.percentage == 100
    assert curl.component == "universe"


def test_the_previous_version_is_the_highest_lower_one_in_the_release_pocket(tmp_path):
    records = by_source(AptArchiveSource(location=str(standard_archive(tmp_path))))
    assert records["hello"].previous_version == "2.10-3"
    assert records["curl"].previous_version == "8.5.0-2ubuntu10"


def test_without_a_release_pocket_there_is_no_previous_version(tmp_path):
    source = AptArchiveSource(location=str(standard_archive(tmp_path)))
    [bash] = source.publications(release="jammy", since=None, now=NOW)
    assert (bash.source_package, bash.previous_version, bash.percentage) == ("bash", "", 50)


def test_the_date_published_is_the_release_date_in_utc(tmp_path):
    records = by_source(AptArchiveSource(location=str(standard_archive(tmp_path))))
    assert records["hello"].date_published == DATE
    assert records["hello"].date_published.tzinfo is not None


def test_nothing_is_new_since_a_date_after_the_release_date(tmp_path):
    source = AptArchiveSource(location=str(standard_archive(tmp_path)))
    assert (
        list(source.publications(release="noble", since=DATE + timedelta(minutes=1), now=NOW)) == []
    )
    assert (
        len(list(source.publications(release="noble", since=DATE - timedelta(days=1), now=NOW)))
        == 2
    )


@pytest.mark.parametrize("variant", ["Packages", "Packages.gz", "Packages.xz"])
def test_it_reads_plain_gzip_and_xz_indexes(tmp_path, variant):
    standard_archive(tmp_path, variants=(variant,))
    index_dir = tmp_path / "dists" / "noble-updates" / "main" / "binary-amd64"
    assert sorted(p.name for p in index_dir.iterdir()) == [variant]
    records = by_source(AptArchiveSource(location=str(tmp_path)))
    assert records["hello"].percentage == 10
    assert records["curl"].binaries == ("curl", "libcurl4")


def test_it_reads_the_xz_index_before_the_others(tmp_path):
    standard_archive(tmp_path)
    index_dir = tmp_path / "dists" / "noble-updates" / "main" / "binary-amd64"
    # Would fail the checksum if read: proves the .xz was read instead.
    (index_dir / "Packages").write_text("garbage")
    (index_dir / "Packages.gz").write_bytes(b"garbage")
    assert by_source(AptArchiveSource(location=str(tmp_path)))["hello"].percentage == 10


def test_a_binary_built_from_another_source_version_is_grouped_with_that_source(tmp_path):
    hand_archive(
        tmp_path,
        "Package: glibc-tools\nSource: glibc (2.39-0ubuntu8.3)\nVersion: 2.39-0ubuntu8.3+b1\n"
        "Architecture: amd64\nPhased-Update-Percentage: 20\n\n"
        "Package: libc6\nSource: glibc\nVersion: 2.39-0ubuntu8.3\nArchitecture: amd64\n"
        "Phased-Update-Percentage: 20\n\n"
        "Package: tzdata\nVersion: 2024a-3ubuntu1.1\nArchitecture: all\n",
    )
    records = list(
        AptArchiveSource(location=str(tmp_path)).publications(release="noble", since=None, now=NOW)
    )
    assert sorted(
        (r.source_package, r.version, r.binaries, r.phased_update_percentage) for r in records
    ) == [
        ("glibc", "2.39-0ubuntu8.3", ("glibc-tools", "libc6"), 20),
        ("tzdata", "2024a-3ubuntu1.1", ("tzdata",), None),
    ]


@pytest.mark.parametrize(
    ("value", "read", "warned"),
    [
        ("ten", 100, False),
        ("-1", 100, True),
        ("101", 100, True),
        ("5.5", 5, False),
        ("", 100, False),
        ("50x", 50, False),
        (" 7", 7, False),
        ("0", 0, False),
    ],
)
def test_an_odd_percentage_is_read_as_apt_reads_it_and_never_drops_the_source(
    tmp_path, caplog, value, read, warned
):
    """apt reads the field with strtoull (apt-pkg/tagfile.cc 803-822): leading digits
    count, no digits is 100; above 100 it warns and keeps 100 (deb/deblistparser.cc
    322-327). test_apt_archive_as_apt checks the same values against the real apt."""
    hand_archive(
        tmp_path,
        f"Package: odd\nVersion: 1.0-1\nArchitecture: amd64\nPhased-Update-Percentage: {value}\n\n"
        "Package: fine\nVersion: 2.0-1\nArchitecture: amd64\nPhased-Update-Percentage: 40\n",
    )
    with caplog.at_level(logging.WARNING, logger="packages.sources.apt.archive"):
        records = list(
            AptArchiveSource(location=str(tmp_path)).publications(
                release="noble", since=None, now=NOW
            )
        )
    assert [(r.source_package, r.percentage) for r in records] == [("odd", read), ("fine", 40)]
    assert ("Ignoring invalid Phased-Update-Percentage" in caplog.text) is warned


def test_an_index_that_does_not_match_the_release_checksums_is_an_error(tmp_path):
    standard_archive(tmp_path, variants=("Packages.gz",))
    index = tmp_path / "dists" / "noble-updates" / "main" / "binary-amd64" / "Packages.gz"
    content = gzip.decompress(index.read_bytes()).replace(
        b"Phased-Update-Percentage: 10", b"Phased-Update-Percentage: 90"
    )
    index.write_bytes(gzip.compress(content))
    with pytest.raises(SourceError, match="Release file"):
        list(
            AptArchiveSource(location=str(tmp_path)).publications(
                release="noble", since=None, now=NOW
            )
        )


def test_a_missing_updates_suite_is_an_error(tmp_path):
    standard_archive(tmp_path)
    with pytest.raises(SourceError, match="does not exist"):
        list(
            AptArchiveSource(location=str(tmp_path)).publications(
                release="focal", since=None, now=NOW
            )
        )


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@pytest.fixture
def http_archive(tmp_path):
    root = standard_archive(tmp_path / "archive")
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_it_reads_an_archive_over_http(http_archive):
    _, url = http_archive
    source = AptArchiveSource(location=url + "/", timeout=5)
    assert [r.codename for r in source.releases()] == ["jammy", "noble"]
    records = by_source(source)
    assert records["hello"].percentage == 10
    assert records["hello"].previous_version == "2.10-3"


def test_an_archive_over_http_is_read_only(http_archive):
    root, url = http_archive
    source = AptArchiveSource(location=url, timeout=5)
    assert source.can_write is False
    before = (root / "dists" / "noble-updates" / "Release").read_bytes()
    result = source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=50,
    )
    assert result.status == "dry_run" and "read-only" in result.detail
    assert (root / "dists" / "noble-updates" / "Release").read_bytes() == before


def test_a_bad_http_status_is_a_source_error(http_archive):
    _, url = http_archive
    with pytest.raises(SourceError, match="404"):
        list(
            AptArchiveSource(location=url, timeout=5).publications(
                release="focal", since=None, now=NOW
            )
        )


def test_an_unreachable_archive_is_a_source_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SourceError, match="cannot fetch"):
        AptArchiveSource(location=f"http://127.0.0.1:{port}", timeout=2).releases()
