"""Names from a Release file never lead a read or a write outside the archive."""

from __future__ import annotations

import re
import shutil

import pytest

from packages.sources.apt import names as apt_names
from packages.sources.apt.archive import AptArchiveSource
from packages.sources.base import SourceError
from tests.packages.sources.apt.fakes import NOW, standard_archive


@pytest.mark.parametrize("name", ["main", "non-free-firmware", "updates/main", "contrib"])
def test_debian_component_names_are_accepted(name):
    assert apt_names.component_name(name, where="Release") == name


@pytest.mark.parametrize("name", ["../../other", "..", "main/../..", "/etc", "a/b/c", "", "ma in"])
def test_a_component_that_is_not_a_debian_name_is_refused(name):
    with pytest.raises(SourceError, match="not a Debian component name"):
        apt_names.component_name(name, where="Release")


@pytest.mark.parametrize("name", ["amd64", "arm64", "kfreebsd-amd64", "all"])
def test_debian_architecture_names_are_accepted(name):
    assert apt_names.architecture_name(name, where="Release") == name


@pytest.mark.parametrize("name", ["../x", "AMD64", "amd64/..", ""])
def test_an_architecture_that_is_not_a_debian_name_is_refused(name):
    with pytest.raises(SourceError):
        apt_names.architecture_name(name, where="Release")


@pytest.mark.parametrize("name", ["../../../etc/passwd", "/etc/passwd", "main/../../x", ""])
def test_a_listed_file_outside_the_suite_is_refused(name):
    with pytest.raises(SourceError, match="not a file of the suite"):
        apt_names.listed_name(name, where="Release")


def test_a_path_through_a_symbolic_link_out_of_the_root_is_refused(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "escape").symlink_to(tmp_path)
    assert (
        apt_names.inside(tmp_path / "root", "dists/x") == (tmp_path / "root").resolve() / "dists/x"
    )
    with pytest.raises(SourceError, match="leads outside the archive"):
        apt_names.inside(tmp_path / "root", "escape/other")


def _hostile(tmp_path, field: str, value: str):
    """An archive whose noble-updates Release names ``value`` in ``field``, and another
    archive beside it that the name points at."""
    archive = standard_archive(tmp_path / "archive")
    release = archive / "dists" / "noble-updates" / "Release"
    text = release.read_text()
    text = re.sub(rf"^{field}: .*$", f"{field}: {value}", text, count=1, flags=re.M)
    release.write_text(text)
    other = tmp_path / "other" / "binary-amd64"
    other.mkdir(parents=True)
    shutil.copy(archive / "dists" / "noble-updates" / "main" / "binary-amd64" / "Packages", other)
    return archive, other / "Packages"


def test_a_hostile_component_is_refused_and_another_archive_is_never_rewritten(tmp_path, caplog):
    archive, victim = _hostile(tmp_path, "Components", "main ../../../other")
    before = victim.read_bytes()
    source = AptArchiveSource(location=str(archive))

    with pytest.raises(SourceError, match="'../../../other' is not a Debian component name"):
        list(source.publications(release="noble", since=None, now=NOW))
    result = source.set_percentage(
        release="noble",
        pocket="updates",
        source_package="hello",
        version="2.10-3ubuntu0.1",
        percentage=30,
    )

    assert result.status == "failed"
    assert "not a Debian component name" in result.detail
    assert victim.read_bytes() == before
    assert any("not a Debian component name" in r.getMessage() for r in caplog.records)


def test_a_hostile_architecture_is_refused(tmp_path):
    archive, _ = _hostile(tmp_path, "Architectures", "amd64 ../../../../other")
    source = AptArchiveSource(location=str(archive))
    with pytest.raises(SourceError, match="not a Debian architecture name"):
        list(source.publications(release="noble", since=None, now=NOW))


def test_a_hostile_suite_name_in_the_configuration_is_refused(tmp_path):
    archive = standard_archive(tmp_path / "archive")
    source = AptArchiveSource(location=str(archive), suites={"noble": "../../etc"})
    with pytest.raises(SourceError, match="not a Debian suite name"):
        source.releases()
