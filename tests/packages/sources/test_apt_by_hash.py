"""Write-backs publish with Acquire-By-Hash: a reader holding the Release from before a
write still reads the indexes that Release vouches for."""

from __future__ import annotations

from debian import deb822

from packages.sources.apt.archive import AptArchiveSource
from packages.sources.apt.writer import file_hashes
from tests.packages.sources.apt.fakes import by_source, standard_archive


def _set(source, percentage):
    return source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=percentage,
    )


def test_a_write_back_publishes_every_listed_index_by_hash(tmp_path):
    standard_archive(tmp_path)
    source = AptArchiveSource(location=str(tmp_path))

    assert _set(source, 30).status == "applied"

    suite_dir = tmp_path / "dists" / "noble-updates"
    release = deb822.Release((suite_dir / "Release").read_text())
    assert release["Acquire-By-Hash"] == "yes"
    for entry in release["SHA256"]:
        path = suite_dir / entry["name"]
        if path.is_file():
            data = path.read_bytes()
            copy = path.parent / "by-hash" / "SHA256" / entry["sha256"]
            assert copy.read_bytes() == data, entry["name"]
            assert file_hashes(data, ("SHA256",))["SHA256"] == entry["sha256"]


def test_a_reader_with_the_release_from_before_a_write_reads_what_it_vouches_for(tmp_path):
    standard_archive(tmp_path)
    source = AptArchiveSource(location=str(tmp_path))
    assert _set(source, 30).status == "applied"  # the archive now publishes by hash
    reader = AptArchiveSource(location=str(tmp_path))
    before = reader._load_suite("noble-updates")  # a reader fetched this Release ...

    assert _set(source, 60).status == "applied"  # ... then a write-back replaced the indexes

    # It still reads the indexes of its own Release, whole and matching, not a mix.
    found = reader._read_index(before, "main", "amd64")
    assert found is not None and b"Phased-Update-Percentage: 30" in found[1]
    assert by_source(source)["hello"].percentage == 60


def test_a_suite_torn_without_a_journal_is_rebuilt_by_the_next_write_back(tmp_path):
    import shutil

    import pytest

    from packages.sources.base import SourceError
    from tests.packages.sources.apt.fakes import NOW

    standard_archive(tmp_path)
    index_dir = tmp_path / "dists" / "noble-updates" / "main" / "binary-amd64"
    old = {p.name: p.read_bytes() for p in index_dir.iterdir() if p.is_file()}
    source = AptArchiveSource(location=str(tmp_path))
    assert _set(source, 30).status == "applied"
    # A Release newer than its Packages files, however it happened (old indexes put back,
    # no by-hash copies, no journal): unreadable.
    shutil.rmtree(index_dir / "by-hash")
    for name, data in old.items():
        (index_dir / name).write_bytes(data)
    with pytest.raises(SourceError, match="does not match|bytes but the Release"):
        list(source.publications(release="noble", since=None, now=NOW))

    # The halt's write-back (the product's own percentage) rebuilds it and lands.
    assert _set(source, 0).status == "applied"

    assert by_source(source)["hello"].percentage == 0
    assert by_source(source)["curl"].phased_update_percentage is None
