"""The relations of an archive's binaries, read from the Packages files apt reads.

Launchpad's API does not give a binary's Depends or Breaks; the archive it publishes
does. A configured archive root (``PHASING_LAUNCHPAD_PACKAGES_ARCHIVE``, for Ubuntu
``http://archive.ubuntu.com/ubuntu``) is read with the apt-archive reader, checked
against its Release file as apt checks it. Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Sequence

from packages.domain.dependencies import Relation, relations_of_stanza
from packages.sources.apt.reader import AptArchiveReader, Suite


class AptRelations(AptArchiveReader):
    """Reads the relations of every source version of a release's phased suite."""

    def __init__(self, *, architectures: Sequence[str] = (), **kwargs) -> None:
        super().__init__(**kwargs)
        # Relations rarely differ by architecture, and each index costs megabytes.
        self.architectures = tuple(architectures)

    def _chosen(self, suite: Suite) -> Suite:
        if not self.architectures:
            return suite
        listed = {
            name: item
            for name, item in suite.listed.items()
            if "/binary-" not in name or any(f"/binary-{a}/" in name for a in self.architectures)
        }
        release = suite.release.copy()
        kept = [
            a for a in suite.release.get("Architectures", "").split() if a in self.architectures
        ]
        release["Architectures"] = " ".join(kept)
        return Suite(name=suite.name, release=release, listed=listed)

    def relations(self, release: str) -> dict[tuple[str, str], tuple[Relation, ...]]:
        """(source, version) -> the relations of its binaries, in `release`'s phased suite."""
        suite = self._chosen(self._load_suite(self._suite_name(release)))
        found: dict[tuple[str, str], set[Relation]] = {}
        for _, _, paragraph in self._paragraphs(suite):
            try:
                key = (paragraph.source or paragraph["Package"], str(paragraph.source_version))
            except ValueError:
                continue  # an unreadable version costs only its stanza
            found.setdefault(key, set()).update(relations_of_stanza(paragraph))
        return {key: tuple(sorted(relations)) for key, relations in found.items()}
