"""Whole apt archives laid out from publication records, for the tests that read them as apt
and the product's apt source do."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from packages.sources.apt.writer import (
    WRITTEN_HASHES,
    atomic_write,
    compressed_variants,
    file_hashes,
    format_release_date,
    packages_stanza,
    release_text,
    sign_release,
)
from packages.sources.base import PublicationRecord


def _write_suite(
    suite_dir: Path,
    *,
    suite: str,
    codename: str,
    version: str,
    date: datetime,
    records: Sequence[PublicationRecord],
    components: Sequence[str],
    architectures: Sequence[str],
    variants: Sequence[str],
    gpg_key: str | None,
    gpg_home: str | None,
) -> None:
    entries: dict[str, tuple[int, Mapping[str, str]]] = {}
    for component in components:
        for architecture in architectures:
            stanzas = [
                packages_stanza(
                    package=binary,
                    source=record.source_package,
                    version=record.version,
                    architecture=architecture,
                    component=component,
                    percentage=record.phased_update_percentage,
                )
                for record in records
                if record.component == component
                for binary in (record.binaries or (record.source_package,))
            ]
            content = "\n".join(stanzas).encode("utf-8")
            for name, data in compressed_variants(content).items():
                if name not in variants:
                    continue
                relative = f"{component}/binary-{architecture}/{name}"
                atomic_write(suite_dir / relative, data)
                entries[relative] = (len(data), file_hashes(data, WRITTEN_HASHES))
    fields = [
        ("Origin", "Phasing"),
        ("Label", "Phasing"),
        ("Suite", suite),
        ("Codename", codename),
        ("Version", version),
        ("Date", format_release_date(date)),
        ("Architectures", " ".join(architectures)),
        ("Components", " ".join(components)),
        ("Description", f"Phasing test archive for {suite}"),
    ]
    release = release_text(fields, entries).encode("utf-8")
    signatures = sign_release(release, gpg_key=gpg_key, gpg_home=gpg_home) if gpg_key else {}
    atomic_write(suite_dir / "Release", release)
    for name, data in signatures.items():
        atomic_write(suite_dir / name, data)


def write_archive(
    root: Path | str,
    releases: Sequence[Mapping],
    *,
    architectures: Sequence[str] = ("amd64",),
    variants: Sequence[str] = ("Packages", "Packages.gz", "Packages.xz"),
    gpg_key: str | None = None,
    gpg_home: str | None = None,
    now: datetime | None = None,
) -> Path:
    """Lay out an apt archive under ``root`` from publication records.

    Each entry of ``releases`` is a mapping with ``codename``, ``version``, ``updates``
    (PublicationRecords for ``dists/<codename>-updates``) and optionally ``release``
    (records for the release pocket ``dists/<codename>``), ``security`` (for
    ``dists/<codename>-security``), ``date`` (the Release Date,
    default ``now``) and ``components`` (default: those the records use, else main).
    Binaries default to one named after the source; binary versions equal source versions.
    """
    root = Path(root)
    now = now or datetime.now(UTC)
    for entry in releases:
        codename = entry["codename"]
        pockets = {f"{codename}-updates": entry.get("updates", ())}
        if entry.get("release") is not None:
            pockets[codename] = entry["release"]
        if entry.get("security") is not None:
            pockets[f"{codename}-security"] = entry["security"]
        for suite, records in pockets.items():
            components = entry.get("components") or sorted(
                {r.component for r in records} or {"main"}
            )
            _write_suite(
                root / "dists" / suite,
                suite=suite,
                codename=codename,
                version=entry.get("version", ""),
                date=entry.get("date") or now,
                records=list(records),
                components=components,
                architectures=architectures,
                variants=variants,
                gpg_key=gpg_key,
                gpg_home=gpg_home,
            )
    return root
