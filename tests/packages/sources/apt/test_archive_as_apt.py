"""The apt archive source reads and writes archives as apt (Debian/apt@6b128124, apt 3.1.12;
tag 2.4.13 for jammy) reads them, checked against the real apt-get of this machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from packages.domain.apt_phasing import decide
from packages.sources import publication_source
from packages.sources.apt.archive import AptArchiveSource
from tests.apt_archives import write_archive
from tests.apt_harness import AptRow, AptSandbox, apt_available
from tests.packages.sources.apt.fakes import NOW, by_source, hand_archive, noble, record

needs_apt = pytest.mark.skipif(not apt_available(), reason="apt-get is not on PATH")
ODD_VALUES = {
    "p50x": "50x",
    "pabc": "abc",
    "p101": "101",
    "pneg": "-1",
    "pfrac": "5.5",
    "pspace": " 7",
    "pzero": "0",
    "pempty": "",
}
HELLO = {
    "release": "noble",
    "pocket": "updates",
    "source_package": "hello",
    "version": "2.10-3ubuntu0.1",
}


@needs_apt
def test_each_odd_percentage_is_read_exactly_as_the_real_apt_reads_it(tmp_path):
    """Phased-Update-Percentage goes through strtoull (apt-pkg/tagfile.cc 803-822) and a
    value above 100 is ignored with a warning (apt-pkg/deb/deblistparser.cc 322-327):
    our reading of each odd value equals apt-cache policy's "(phased N%)"."""
    stanzas = "\n".join(
        f"Package: {name}\nVersion: 1.1\nArchitecture: amd64\nFilename: pool/{name}.deb\n"
        f"Size: 1\nPhased-Update-Percentage: {value}\n"
        for name, value in ODD_VALUES.items()
    )
    hand_archive(tmp_path / "repo", stanzas)
    ours = {
        r.source_package: r.percentage
        for r in AptArchiveSource(location=str(tmp_path / "repo")).publications(
            release="noble", since=None, now=NOW
        )
    }
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.install([AptRow(name, name, "1.0", "1.1", None) for name in ODD_VALUES])
    sandbox.use_archive(tmp_path / "repo", ["noble-updates"])
    output = sandbox.update(warnings_ok=True)

    assert sandbox.phased_percentages(ODD_VALUES) == ours
    assert ours == {
        "p50x": 50,
        "pabc": 100,
        "p101": 100,
        "pneg": 100,
        "pfrac": 5,
        "pspace": 7,
        "pzero": 0,
        "pempty": 100,
    }
    assert output.count("W: Ignoring invalid Phased-Update-Percentage value") == 2


def test_one_unreadable_stanza_costs_only_itself(tmp_path):
    """A binary whose version cannot be read is skipped alone; its source stays."""
    hand_archive(
        tmp_path,
        "Package: hello\nVersion: 2.10-3ubuntu0.1\nArchitecture: amd64\nPhased-Update-Percentage: 30\n\n"
        "Package: hello-doc\nSource: hello (2.10 3ubuntu0.1)\nVersion: 2.10\nArchitecture: all\n\n"
        "Package: libhello1\nSource: hello\nVersion: 2.10-3ubuntu0.1\nArchitecture: amd64\nPhased-Update-Percentage: 30\n",  # noqa: E501
    )

    (hello,) = AptArchiveSource(location=str(tmp_path)).publications(
        release="noble", since=None, now=NOW
    )

    assert (hello.source_package, hello.binaries, hello.percentage) == (
        "hello",
        ("hello", "libhello1"),
        30,
    )


def test_the_previous_version_is_the_one_just_below_in_any_pocket(tmp_path):
    """The version an update replaces may be a security update: apt upgrades from whatever
    is installed, from any suite (pkgcache.cc 1067-1086 walks every older version)."""
    write_archive(
        tmp_path,
        [
            noble(
                [record("hello", "2.10-3ubuntu0.2", 10)],
                release=[record("hello", "2.10-3")],
                security=[record("hello", "2.10-3ubuntu0.1")],
            )
        ],
    )

    assert (
        by_source(AptArchiveSource(location=str(tmp_path)))["hello"].previous_version
        == "2.10-3ubuntu0.1"
    )


def test_a_version_also_in_a_security_suite_is_marked(tmp_path):
    """IsSecurityUpdate looks for a suite ending in -security (apt-pkg/pkgcache.cc 1067-1086)."""
    write_archive(
        tmp_path,
        [
            noble(
                [record("hello", "2.10-3ubuntu0.1", 10), record("curl", "8.5.0-2ubuntu10.1", 10)],
                security=[record("hello", "2.10-3ubuntu0.1")],
            )
        ],
    )

    found = by_source(AptArchiveSource(location=str(tmp_path)))

    assert (found["hello"].in_security, found["curl"].in_security) == (True, False)


@needs_apt
def test_a_ppa_style_suite_is_phased_read_and_written(tmp_path):
    """apt phases every origin that carries the field, not only <codename>-updates: a
    PPA's suite is the codename itself."""
    write_archive(tmp_path / "ppa", [noble([record("hello", "2.10-3ubuntu0.1", 0)])])
    (tmp_path / "ppa" / "dists" / "noble-updates").rename(tmp_path / "ppa" / "dists" / "noble")
    source = AptArchiveSource(location=str(tmp_path / "ppa"), suites={"noble": "noble"})

    assert source.set_percentage(**HELLO, percentage=40).status == "applied"
    assert by_source(source)["hello"].percentage == 40
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.install([AptRow("hello", "hello", "2.10-3", "2.10-3ubuntu0.1", None)])
    sandbox.use_archive(tmp_path / "ppa", ["noble"])
    sandbox.update()
    assert sandbox.phased_percentages(["hello"]) == {"hello": 40}


def test_the_settings_name_each_phased_suite_and_where_previous_versions_are(settings, tmp_path):
    write_archive(
        tmp_path,
        [
            noble(
                [record("hello", "2.10-3ubuntu0.2", 10)],
                security=[record("hello", "2.10-3ubuntu0.1")],
            )
        ],
    )
    (tmp_path / "dists" / "noble-updates").rename(tmp_path / "dists" / "vendor-noble")
    settings.PHASING_APT_ARCHIVE = str(tmp_path)
    settings.PHASING_APT_SUITES = {"noble": "vendor-noble"}
    settings.PHASING_APT_PREVIOUS_SUITES = ["{codename}-security"]

    source = publication_source("apt")

    assert [r.codename for r in source.releases()] == ["noble"]
    assert by_source(source)["hello"].previous_version == "2.10-3ubuntu0.1"


@needs_apt
def test_a_halt_is_written_as_an_explicit_zero_that_apt_keeps_back(tmp_path):
    """apt reads an absent field as 100% (deblistparser.cc 322), so a halt must write 0.
    Launchpad's PPA writer drops a 0 (archivepublisher/indices.py 47-50); its primary
    archive keeps it (model/ftparchive.py 595-605); ours always writes it."""
    write_archive(tmp_path / "archive", [noble([record("hello", "2.10-3ubuntu0.1", 60)])])
    source = AptArchiveSource(location=str(tmp_path / "archive"))

    assert source.set_percentage(**HELLO, percentage=0).status == "applied"

    index = tmp_path / "archive" / "dists" / "noble-updates" / "main" / "binary-amd64" / "Packages"
    assert "Phased-Update-Percentage: 0\n" in index.read_text()
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.install([AptRow("hello", "hello", "2.10-3", "2.10-3ubuntu0.1", None)])
    sandbox.use_archive(tmp_path / "archive", ["noble-updates"])
    sandbox.update()
    assert sandbox.phased_percentages(["hello"]) == {"hello": 0}


def suite_files(suite_dir: Path) -> dict[str, bytes]:
    """The suite's files by name; the content-addressed by-hash copies, which a write adds
    before it changes anything and which no Release lists by name, are left out."""
    return {
        str(p.relative_to(suite_dir)): p.read_bytes()
        for p in sorted(suite_dir.rglob("*"))
        if p.is_file() and "by-hash" not in p.parts
    }


def test_a_write_that_fails_at_the_release_leaves_the_suite_exactly_as_it_was(
    tmp_path, monkeypatch
):
    """The fault: the indexes are in place and the Release cannot be (a read-only Release,
    a full disk). Before, the suite then failed its own hashes for every later reader."""
    write_archive(tmp_path, [noble([record("hello", "2.10-3ubuntu0.1", 10)])])
    suite_dir = tmp_path / "dists" / "noble-updates"
    before = suite_files(suite_dir)
    real_replace = os.replace

    def release_is_read_only(src, dst):
        if Path(dst).name == "Release":
            raise PermissionError(13, "Permission denied", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", release_is_read_only)
    result = AptArchiveSource(location=str(tmp_path)).set_percentage(**HELLO, percentage=0)
    monkeypatch.undo()

    assert result.status == "failed" and "Permission denied" in result.detail
    assert suite_files(suite_dir) == before
    assert by_source(AptArchiveSource(location=str(tmp_path)))["hello"].percentage == 10


KILLED_WRITER = """
import os, sys
from pathlib import Path
from packages.sources import publication_source
from packages.sources.apt.archive import AptArchiveSource
real = os.replace
def die_at_release(src, dst):
    if Path(dst).name == "Release":
        os._exit(137)  # killed: nothing runs after this
    real(src, dst)
os.replace = die_at_release
AptArchiveSource(location=sys.argv[1]).set_percentage(
    release="noble", pocket="updates", source_package="hello", version="2.10-3ubuntu0.1", percentage=0)
"""


def test_a_writer_killed_between_the_indexes_and_the_release_is_undone_by_the_next_reader(tmp_path):
    """A process killed with the new indexes in place and the old Release: the next read
    of the suite puts the old files back, so syncs and write-backs go on."""
    write_archive(tmp_path, [noble([record("hello", "2.10-3ubuntu0.1", 10)])])
    suite_dir = tmp_path / "dists" / "noble-updates"
    before = suite_files(suite_dir)

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(tmp_path)],
        cwd=Path(__file__).parents[4],
        timeout=60,
    )

    assert killed.returncode == 137
    assert suite_files(suite_dir) != before  # half-written, as the fault leaves it
    source = AptArchiveSource(location=str(tmp_path))
    assert by_source(source)["hello"].percentage == 10
    assert suite_files(suite_dir) == before
    assert source.set_percentage(**HELLO, percentage=0).status == "applied"
    assert by_source(source)["hello"].percentage == 0


@needs_apt
def test_apt_before_2_7_11_keeps_back_a_security_update_that_carries_a_percentage(tmp_path):
    """LP #2051181 was apt's: IsSecurityUpdate skipped the candidate itself until 2.7.11
    (2.4.12 on 22.04; debian/changelog 1201-1209). This machine's apt shows it: the
    version is in noble-security yet phased at 0% in noble-updates is kept back."""
    write_archive(
        tmp_path / "archive",
        [
            noble(
                [record("hello", "2.10-3ubuntu0.1", 0)],
                security=[record("hello", "2.10-3ubuntu0.1")],
            )
        ],
    )
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.install([AptRow("hello", "hello", "2.10-3", "2.10-3ubuntu0.1", None)])
    sandbox.use_archive(tmp_path / "archive", ["noble-updates", "noble-security"])
    sandbox.update()
    machines = [f"{n:032x}" for n in range(12)]
    apt_version = subprocess.run(
        ["apt-get", "--version"], capture_output=True, text=True
    ).stdout.split()[1]
    if tuple(int(p) for p in apt_version.split(".")[:2]) >= (2, 7):
        pytest.skip(f"apt {apt_version} has the fix")

    taken = [m for m in machines if "hello" in sandbox.upgrades(m)]

    assert taken == [m for m in machines if decide("hello", "2.10-3ubuntu0.1", m, 0).included]
    assert len(taken) < len(machines)
