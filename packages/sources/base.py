"""The publication side of the one small interface between Phasing and its sources.

A publication source lists a release's Updates publications and takes percentages back.
The simulator, Launchpad and an apt archive implement it; the sync and the write-back only
ever see the records below. The crash side (overview.evidence.sources.base) shares SourceError.
Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from packages.domain.dependencies import Relation


class SourceError(Exception):
    """A source could not answer (network, status, malformed data). Message is for people."""


# A write the source refuses for want of permission: a state to show and fix, not an
# outage to retry (WriteResult.status, packages.models.WriteBack.DENIED).
DENIED = "denied"
NO_PERMISSION = "no permission to change phasing"


@dataclass(frozen=True)
class ReleaseRecord:
    codename: str
    version: str
    supported: bool = True


@dataclass(frozen=True)
class PersonRecord:
    account_name: str
    name: str = ""
    email: str = ""


@dataclass(frozen=True)
class BinaryPercentage:
    """One binary on one architecture, with its percentage as the source stores it.

    Launchpad keeps a percentage per binary publication, that is per binary and
    architecture, and apt reads it per binary: they can disagree.
    """

    binary: str
    architecture: str
    percentage: int | None  # None: no percentage, 100%

    @property
    def value(self) -> int:
        return 100 if self.percentage is None else self.percentage


@dataclass(frozen=True)
class PublicationRecord:
    release: str  # codename
    source_package: str
    version: str
    date_published: datetime
    # None means 100%: Launchpad's and apt's meaning of an absent percentage.
    phased_update_percentage: int | None
    pocket: str = "updates"
    previous_version: str = ""
    component: str = "main"
    status: str = "published"  # published, superseded, deleted
    date_superseded: datetime | None = None
    binaries: tuple[str, ...] = ()
    signer: PersonRecord | None = None
    uploader: PersonRecord | None = None
    # The sponsor of an upload: its signer, when the signer is not the uploader.
    sponsor: PersonRecord | None = None
    # Each binary's own percentage; ``phased_update_percentage`` is the lowest of them.
    binary_percentages: tuple[BinaryPercentage, ...] = ()
    # The same version is also published in a -security suite: apt never phases it.
    in_security: bool = False
    # The versioned relations of its binaries (packages.domain.dependencies); None: the source
    # does not read them, so what is stored stays.
    relations: tuple[Relation, ...] | None = None
    # The upload's changelog entry or .changes text, when the source has it: the bugs it
    # closes are read from it (packages.domain.changelog).
    changelog: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.release, self.pocket, self.source_package, self.version)

    @property
    def percentage(self) -> int:
        return 100 if self.phased_update_percentage is None else self.phased_update_percentage


@dataclass(frozen=True)
class WriteResult:
    status: str  # "applied", "dry_run", "denied" or "failed", as packages.models.WriteBack
    detail: str = ""


def sponsor_of(signer: PersonRecord | None, uploader: PersonRecord | None) -> PersonRecord | None:
    """The sponsor of an upload is its signer when someone else made the changes."""
    if signer is None or uploader is None or signer.account_name == uploader.account_name:
        return None
    return signer


@dataclass(frozen=True)
class Watch:
    """What the sync asks a source to read again, whether or not it changed since ``since``."""

    # (source package, version) -> date published, of the updates still in phasing, paused
    # or halted: a source that cannot list removals otherwise looks for theirs.
    active: Mapping[tuple[str, str], datetime] = field(default_factory=dict)
    # Versions whose percentage was written since they were last read: read them back.
    written: frozenset[tuple[str, str]] = frozenset()


@runtime_checkable
class PublicationSource(Protocol):
    name: str

    @property
    def can_write(self) -> bool: ...

    def releases(self) -> list[ReleaseRecord]: ...

    def publications(
        self, *, release: str, since: datetime | None, now: datetime, watch: Watch | None = None
    ) -> Iterator[PublicationRecord]:
        """Updates-pocket publications of a release (since a date, for incremental sync),
        and those ``watch`` names, whatever changed."""
        ...

    def set_percentage(
        self, *, release: str, pocket: str, source_package: str, version: str, percentage: int
    ) -> WriteResult: ...

    def check_write(self) -> WriteResult:
        """Whether a write would be taken, changing nothing: "applied" yes, "dry_run"
        read-only by configuration, "denied" no permission, "failed" cannot tell."""
        ...
