"""A reader fetching the suite while write-backs rewrite it, as apt does (Release first,
then each index it lists, by hash): every read matches the Release it came with."""

from __future__ import annotations

import threading

from packages.sources.apt.archive import AptArchiveSource
from packages.sources.base import SourceError
from tests.packages.sources.apt.fakes import standard_archive

WRITES = 30


def test_a_reader_never_sees_an_index_that_does_not_match_its_release(tmp_path):
    standard_archive(tmp_path, architectures=("amd64", "arm64"))
    writer = AptArchiveSource(location=str(tmp_path))
    reader = AptArchiveSource(location=str(tmp_path))
    done = threading.Event()
    reads, mismatches = 0, []

    def read_all() -> None:
        nonlocal reads
        while not done.is_set():
            try:
                suite = reader._load_suite("noble-updates")
                for component, arch in suite.index_dirs:
                    reader._read_index(suite, component, arch)
                reads += 1
            except SourceError as error:
                mismatches.append(str(error))

    # The first write publishes by hash; from then on readers fetch indexes by hash.
    assert (
        writer.set_percentage(
            release="noble",
            pocket="updates",
            source_package="hello",
            version="2.10-3ubuntu0.1",
            percentage=1,
        ).status
        == "applied"
    )
    thread = threading.Thread(target=read_all)
    thread.start()
    try:
        for n in range(WRITES):
            result = writer.set_percentage(
                release="noble",
                pocket="updates",
                source_package="hello",
                version="2.10-3ubuntu0.1",
                percentage=2 + n,
            )
            assert result.status == "applied", result.detail
    finally:
        done.set()
        thread.join()

    assert reads > 0
    assert mismatches == []
