"""Writing percentages into a local apt archive: every index, Release hashes, atomic files, GnuPG
signatures, and real apt reading the result."""

from __future__ import annotations

import gzip
import hashlib
import lzma
import os
import random
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from debian import deb822

from packages.domain.apt_phasing import decide
from packages.sources.apt import writer as apt_writer
from packages.sources.apt.archive import AptArchiveSource
from packages.sources.apt.reader import parse_release_date
from tests.apt_archives import write_archive
from tests.apt_harness import AptHarnessError, AptRow, AptSandbox, apt_available
from tests.packages.sources.apt.fakes import (
    NOW,
    by_source,
    noble,
    record,
    standard_archive,
)

needs_apt = pytest.mark.skipif(not apt_available(), reason="apt-get is not on PATH")


needs_gpg = pytest.mark.skipif(
    shutil.which("gpg") is None or shutil.which("gpgv") is None, reason="gnupg is not installed"
)


def listed_files_match(suite_dir: Path) -> None:
    """Every file the Release lists (and that exists) has the size and hashes listed."""
    release = deb822.Release((suite_dir / "Release").read_text())
    checked = 0
    for field_name, algorithm in (("MD5Sum", "md5"), ("SHA1", "sha1"), ("SHA256", "sha256")):
        for entry in release[field_name]:
            data = (suite_dir / entry["name"]).read_bytes()
            assert int(entry["size"]) == len(data), entry["name"]
            assert hashlib.new(algorithm, data).hexdigest() == entry[field_name.lower()]
            checked += 1
    assert checked


def test_setting_a_percentage_rewrites_every_binary_in_every_index(tmp_path):
    standard_archive(tmp_path, architectures=("amd64", "arm64"))
    source = AptArchiveSource(location=str(tmp_path))
    result = source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=30,
    )
    assert result.status == "applied", result.detail
    suite_dir = tmp_path / "dists" / "noble-updates"
    for arch in ("amd64", "arm64"):
        index_dir = suite_dir / "main" / f"binary-{arch}"
        plain = (index_dir / "Packages").read_bytes()
        assert gzip.decompress((index_dir / "Packages.gz").read_bytes()) == plain
        assert lzma.decompress((index_dir / "Packages.xz").read_bytes()) == plain
        paragraphs = list(deb822.Packages.iter_paragraphs(plain.decode(), use_apt_pkg=False))
        assert {p["Package"]: p["Phased-Update-Percentage"] for p in paragraphs} == {
            "hello": "30",
            "libhello1": "30",
        }
    assert by_source(source)["hello"].percentage == 30
    # Other publications keep theirs.
    assert by_source(source)["curl"].phased_update_percentage is None


def test_after_a_write_the_release_lists_the_right_sizes_and_hashes(tmp_path):
    standard_archive(tmp_path)
    suite_dir = tmp_path / "dists" / "noble-updates"
    before = (suite_dir / "Release").read_text()
    AptArchiveSource(location=str(tmp_path)).set_percentage(
        release="noble",
        pocket="updates",
        source_package="curl",
        version="8.5.0-2ubuntu10.2",
        percentage=0,
    )
    after = (suite_dir / "Release").read_text()
    assert after != before
    listed_files_match(suite_dir)
    release = deb822.Release(after)
    assert release["Codename"] == "noble" and release["Suite"] == "noble-updates"
    assert datetime.now(UTC) - parse_release_date(release["Date"]) < timedelta(minutes=5)


def test_setting_100_percent_removes_the_field(tmp_path):
    standard_archive(tmp_path)
    source = AptArchiveSource(location=str(tmp_path))
    source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=100,
    )
    plain = (
        tmp_path / "dists" / "noble-updates" / "main" / "binary-amd64" / "Packages"
    ).read_text()
    assert "Phased-Update-Percentage" not in plain
    assert by_source(source)["hello"].phased_update_percentage is None


def test_writing_the_same_percentage_again_changes_nothing(tmp_path):
    standard_archive(tmp_path)
    source = AptArchiveSource(location=str(tmp_path))
    release = tmp_path / "dists" / "noble-updates" / "Release"
    before = release.read_bytes()
    result = source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=10,
    )
    assert result.status == "applied" and "already" in result.detail
    assert release.read_bytes() == before


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"source_package": "nonesuch"}, "no binaries"),
        ({"version": "2.10-3ubuntu0.2"}, "no binaries"),
        ({"pocket": "security"}, "updates pocket"),
        ({"percentage": 101}, "0..100"),
        ({"release": "focal"}, "does not exist"),
        ({"version": "not a version!"}, "not a Debian version"),
    ],
)
def test_a_write_that_cannot_apply_fails_and_leaves_the_archive_alone(tmp_path, kwargs, reason):
    standard_archive(tmp_path)
    suite_dir = tmp_path / "dists" / "noble-updates"
    before = {p: p.read_bytes() for p in suite_dir.rglob("*") if p.is_file()}
    arguments = {
        "release": "noble",
        "pocket": "updates",
        "source_package": "hello",
        "version": "2.10-3ubuntu0.1",
        "percentage": 20,
    }
    result = AptArchiveSource(location=str(tmp_path)).set_percentage(**(arguments | kwargs))
    assert result.status == "failed" and reason in result.detail
    assert {p: p.read_bytes() for p in suite_dir.rglob("*") if p.is_file()} == before


def test_a_write_replaces_files_atomically_and_leaves_no_temporary_files(tmp_path, monkeypatch):
    target = tmp_path / "Packages"
    target.write_bytes(b"old")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(apt_writer.os, "replace", failing_replace)
    with pytest.raises(OSError, match="."):
        apt_writer.atomic_write(target, b"new content")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Packages"]


def test_an_interrupted_write_is_reported_and_the_release_still_matches(tmp_path, monkeypatch):
    standard_archive(tmp_path)
    real_replace = os.replace
    calls = []

    def replace_then_fail(src, dst):
        calls.append(dst)
        if str(dst).endswith("Packages.xz"):
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(apt_writer.os, "replace", replace_then_fail)
    result = AptArchiveSource(location=str(tmp_path)).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=40,
    )
    assert result.status == "failed" and "disk full" in result.detail
    suite_dir = tmp_path / "dists" / "noble-updates"
    assert not [p for p in suite_dir.rglob("*.tmp")]
    # The Release was not replaced, so apt still trusts the old .xz it lists.
    monkeypatch.undo()
    assert by_source(AptArchiveSource(location=str(tmp_path)))["hello"].percentage == 10


@pytest.fixture(scope="module")
def gpg_key():
    """A throw-away signing key in a short-lived GNUPGHOME (short path: agent sockets)."""
    if shutil.which("gpg") is None or shutil.which("gpgv") is None:
        pytest.skip("gnupg is not installed")
    home = tempfile.mkdtemp(prefix="gpg")
    os.chmod(home, 0o700)
    uid = "Phasing Test Archive <archive@example.org>"
    subprocess.run(
        [
            "gpg",
            "--batch",
            "--homedir",
            home,
            "--passphrase",
            "",
            "--quick-gen-key",
            uid,
            "default",
            "default",
            "never",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    keyring = Path(home) / "archive-keyring.gpg"
    exported = subprocess.run(
        ["gpg", "--batch", "--homedir", home, "--export", uid], check=True, capture_output=True
    )
    keyring.write_bytes(exported.stdout)
    yield {"key": uid, "home": home, "keyring": keyring}
    subprocess.run(["gpgconf", "--homedir", home, "--kill", "gpg-agent"], capture_output=True)
    shutil.rmtree(home, ignore_errors=True)


def gpgv(keyring: Path, *files: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["gpgv", "--keyring", str(keyring), *map(str, files)], capture_output=True
    )


@needs_gpg
def test_a_signed_archive_is_signed_again_after_a_write(tmp_path, gpg_key):
    standard_archive(tmp_path, gpg_key=gpg_key["key"], gpg_home=gpg_key["home"])
    suite_dir = tmp_path / "dists" / "noble-updates"
    old_inrelease = (suite_dir / "InRelease").read_bytes()
    source = AptArchiveSource(
        location=str(tmp_path), gpg_key=gpg_key["key"], gpg_home=gpg_key["home"]
    )
    result = source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=60,
    )
    assert result.status == "applied", result.detail
    assert (suite_dir / "InRelease").read_bytes() != old_inrelease
    assert (
        gpgv(gpg_key["keyring"], suite_dir / "Release.gpg", suite_dir / "Release").returncode == 0
    )
    assert gpgv(gpg_key["keyring"], suite_dir / "InRelease").returncode == 0
    # The clearsigned text is the new Release.
    assert (suite_dir / "Release").read_text().strip() in (suite_dir / "InRelease").read_text()


@needs_gpg
def test_a_signature_from_another_key_does_not_verify(tmp_path, gpg_key):
    standard_archive(tmp_path, gpg_key=gpg_key["key"], gpg_home=gpg_key["home"])
    suite_dir = tmp_path / "dists" / "noble-updates"
    (suite_dir / "Release").write_text((suite_dir / "Release").read_text() + "Tampered: yes\n")
    assert (
        gpgv(gpg_key["keyring"], suite_dir / "Release.gpg", suite_dir / "Release").returncode != 0
    )


@needs_gpg
def test_a_signed_archive_is_not_rewritten_without_a_key(tmp_path, gpg_key):
    standard_archive(tmp_path, gpg_key=gpg_key["key"], gpg_home=gpg_key["home"])
    result = AptArchiveSource(location=str(tmp_path)).set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=60,
    )
    assert result.status == "failed" and "signed" in result.detail
    assert by_source(AptArchiveSource(location=str(tmp_path)))["hello"].percentage == 10


@needs_gpg
def test_a_key_gpg_does_not_have_fails_the_write_before_anything_changes(tmp_path, gpg_key):
    standard_archive(tmp_path, gpg_key=gpg_key["key"], gpg_home=gpg_key["home"])
    source = AptArchiveSource(
        location=str(tmp_path), gpg_key="nobody@example.org", gpg_home=gpg_key["home"]
    )
    result = source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=60,
    )
    assert result.status == "failed" and "signing failed" in result.detail
    assert by_source(AptArchiveSource(location=str(tmp_path)))["hello"].percentage == 10


@needs_apt
@needs_gpg
def test_real_apt_refuses_the_archive_when_another_key_signed_it(tmp_path, gpg_key):
    standard_archive(tmp_path / "archive", gpg_key=gpg_key["key"], gpg_home=gpg_key["home"])
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.use_archive(tmp_path / "archive", ["noble-updates"], signed_by=gpg_key["keyring"])
    sandbox.update()
    other = tmp_path / "other.gpg"
    other.write_bytes(b"")
    sandbox.use_archive(tmp_path / "archive", ["noble-updates"], signed_by=other)
    with pytest.raises(AptHarnessError):
        sandbox.update()


@needs_apt
def test_real_apt_upgrades_or_keeps_back_as_decided_after_each_write(tmp_path, request):
    signing = None
    if shutil.which("gpg") and shutil.which("gpgv"):
        signing = request.getfixturevalue("gpg_key")
    updates = [
        ("hello", "2.10-3", "2.10-3ubuntu0.1", ("hello", "libhello1")),
        ("curl", "8.5.0-2ubuntu10", "8.5.0-2ubuntu10.2", ("curl",)),
        ("vim", "2:9.1.0016-1ubuntu7", "2:9.1.0016-1ubuntu7.3", ("vim", "vim-common")),
    ]
    root = tmp_path / "archive"
    write_archive(
        root,
        [
            noble(
                [record(s, new, 0, b) for s, _, new, b in updates],
                release=[record(s, old, None, b) for s, old, _, b in updates],
            )
        ],
        gpg_key=signing and signing["key"],
        gpg_home=signing and signing["home"],
    )
    source = AptArchiveSource(
        location=str(root), gpg_key=signing and signing["key"], gpg_home=signing and signing["home"]
    )
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.install(
        [AptRow(b, s, old, new, None) for s, old, new, binaries in updates for b in binaries]
    )
    sandbox.use_archive(root, ["noble", "noble-updates"], signed_by=signing and signing["keyring"])
    rnd = random.Random(5)
    machine_ids = [f"{rnd.getrandbits(128):032x}" for _ in range(10)]

    kept_back = taken = 0
    for step, percentages in enumerate([(0, 0, 0), (10, 50, 90), (30, 5, 100), (100, 99, 1)]):
        for (name, _, new, _), percentage in zip(updates, percentages, strict=True):
            result = source.set_percentage(
                release="noble",
                pocket="updates",
                source_package=name,
                version=new,
                percentage=percentage,
            )
            assert result.status == "applied", result.detail
        assert {
            r.source_package: r.percentage
            for r in source.publications(release="noble", since=None, now=NOW)
        } == {name: p for (name, *_), p in zip(updates, percentages, strict=True)}
        sandbox.update()
        for machine_id in machine_ids:
            upgrades = sandbox.upgrades(machine_id)
            for (name, _, new, binaries), percentage in zip(updates, percentages, strict=True):
                included = decide(name, new, machine_id, percentage).included
                for binary in binaries:
                    assert (upgrades.get(binary) == new) is included, (
                        step,
                        name,
                        binary,
                        machine_id,
                    )
                kept_back += not included
                taken += included
    # Both outcomes happened, so apt really phased (no chroot) and the writes reached it.
    assert kept_back and taken
