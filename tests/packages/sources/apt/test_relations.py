"""The binaries' relations, read from the Packages files apt reads: the apt archive's own,
and for Launchpad the configured archive's (served here by a local HTTP server)."""

from __future__ import annotations

import threading
from functools import partial
from http.server import ThreadingHTTPServer

import pytest

from packages.domain.dependencies import Relation
from packages.sources.apt.archive import AptArchiveSource
from packages.sources.apt.relations import AptRelations
from tests.packages.sources.apt.fakes import NOW, hand_archive
from tests.packages.sources.apt.test_archive import QuietHandler
from tests.packages.sources.launchpad.fakes import make_source, serve_hello

NOBLE_UPDATES = (
    "Package: gnome-shell\nSource: gnome-shell\nVersion: 46.0-0ubuntu6~24.04.4\n"
    "Architecture: amd64\nPhased-Update-Percentage: 30\n"
    "Depends: libc6 (>= 2.34), libmutter-14-0 (>= 46.2), gnome-shell-common "
    "(= 46.0-0ubuntu6~24.04.4), evolution-data-server (>= 3.33.1) | gnome-settings-daemon\n"
    "Breaks: gdm3 (<< 3.24.0)\n\n"
    "Package: gnome-shell-common\nSource: gnome-shell\nVersion: 46.0-0ubuntu6~24.04.4\n"
    "Architecture: all\nPhased-Update-Percentage: 30\n\n"
    "Package: hello\nVersion: 2.10-3ubuntu0.1\nArchitecture: amd64\n"
    "Pre-Depends: libc6 (>= 2.38)\nConflicts: hello-traditional\n"
)
SHELL_RELATIONS = (
    Relation("breaks", "gnome-shell", "gdm3", "<<", "3.24.0"),
    Relation("depends", "gnome-shell", "gnome-shell-common", "=", "46.0-0ubuntu6~24.04.4"),
    Relation("depends", "gnome-shell", "libc6", ">=", "2.34"),
    Relation("depends", "gnome-shell", "libmutter-14-0", ">=", "46.2"),
)


@pytest.fixture
def served(tmp_path):
    root = hand_archive(tmp_path / "archive", NOBLE_UPDATES)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_apt_archive_gives_each_source_version_its_binaries_relations(tmp_path):
    hand_archive(tmp_path, NOBLE_UPDATES)

    records = {
        r.source_package: r
        for r in AptArchiveSource(location=str(tmp_path)).publications(
            release="noble", since=None, now=NOW
        )
    }

    assert records["gnome-shell"].relations == SHELL_RELATIONS
    assert records["hello"].relations == (Relation("pre-depends", "hello", "libc6", ">=", "2.38"),)


def test_the_relations_of_a_release_are_read_over_http_as_apt_reads_them(served):
    relations = AptRelations(location=served, architectures=["amd64"], timeout=5).relations("noble")

    assert relations[("gnome-shell", "46.0-0ubuntu6~24.04.4")] == SHELL_RELATIONS


def test_launchpad_publications_carry_the_relations_of_the_configured_archive(
    http_server, sleeps, served
):
    serve_hello(http_server)
    archive = AptRelations(location=served, timeout=5)

    records = list(
        make_source(http_server, sleeps, packages_archive=archive).publications(
            release="noble", since=None, now=NOW
        )
    )

    # The archive lists hello 2.10-3ubuntu0.1 with only a Pre-Depends on libc6.
    assert records[0].relations == (Relation("pre-depends", "hello", "libc6", ">=", "2.38"),)


def test_launchpad_publications_still_sync_when_the_archive_cannot_be_read(
    http_server, sleeps, caplog
):
    serve_hello(http_server)
    archive = AptRelations(location="http://127.0.0.1:9/", timeout=0.5)

    records = list(
        make_source(http_server, sleeps, packages_archive=archive).publications(
            release="noble", since=None, now=NOW
        )
    )

    assert records[0].source_package == "hello" and records[0].relations is None
    assert "cannot read the relations of noble" in caplog.text
