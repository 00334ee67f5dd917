"""Small apt archives on disk for the apt-archive source's tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from packages.sources.apt.writer import file_hashes, format_release_date, release_text
from packages.sources.base import PublicationRecord
from tests.apt_archives import write_archive

DATE = datetime(2024, 6, 3, 12, 30, tzinfo=UTC)


NOW = DATE + timedelta(hours=1)


def record(source, version, percentage=None, binaries=(), component="main"):
    return PublicationRecord(
        release="noble",
        source_package=source,
        version=version,
        date_published=DATE,
        phased_update_percentage=percentage,
        binaries=binaries,
        component=component,
    )


def noble(updates, release=None, **extra):
    entry = {"codename": "noble", "version": "24.04", "date": DATE, "updates": updates}
    if release is not None:
        entry["release"] = release
    entry.update(extra)
    return entry


def standard_archive(root: Path, **options) -> Path:
    return write_archive(
        root,
        [
            noble(
                [
                    record("hello", "2.10-3ubuntu0.1", 10, ("hello", "libhello1")),
                    record("curl", "8.5.0-2ubuntu10.2", None, ("curl", "libcurl4"), "universe"),
                ],
                release=[
                    record("hello", "2.10-3", binaries=("hello", "libhello1")),
                    record("hello", "2.9-1"),
                    record(
                        "curl",
                        "8.5.0-2ubuntu10",
                        binaries=("curl", "libcurl4"),
                        component="universe",
                    ),
                ],
            ),
            {
                "codename": "jammy",
                "version": "22.04",
                "date": DATE,
                "updates": [record("bash", "5.1-6ubuntu1.1", 50)],
            },
        ],
        **options,
    )


def by_source(source):
    return {r.source_package: r for r in source.publications(release="noble", since=None, now=NOW)}


def hand_archive(root: Path, packages: str, *, suite="noble-updates", date=DATE) -> Path:
    """An archive whose one Packages index is exactly ``packages``."""
    suite_dir = root / "dists" / suite
    index = suite_dir / "main" / "binary-amd64" / "Packages"
    index.parent.mkdir(parents=True, exist_ok=True)
    data = packages.encode("utf-8")
    index.write_bytes(data)
    fields = [
        ("Suite", suite),
        ("Codename", suite.removesuffix("-updates")),
        ("Version", "24.04"),
        ("Date", format_release_date(date)),
        ("Architectures", "amd64"),
        ("Components", "main"),
    ]
    entries = {"main/binary-amd64/Packages": (len(data), file_hashes(data, ("MD5Sum", "SHA256")))}
    (suite_dir / "Release").write_text(release_text(fields, entries, ("MD5Sum", "SHA256")))
    return root
