"""The publication side of the one small interface between Phasing and its sources.

A publication source lists a release's Updates publications and takes percentages back.
The simulator, Launchpad and an apt archive implement it; the sync and the write-back only
ever see the records below. The crash side (overview.sources.base) shares SourceError.
Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable


class SourceError(Exception):
    """A source could not answer (network, status, malformed data). Message is for people."""


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
    sponsor: PersonRecord | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.release, self.pocket, self.source_package, self.version)

    @property
    def percentage(self) -> int:
        return 100 if self.phased_update_percentage is None else self.phased_update_percentage


@dataclass(frozen=True)
class WriteResult:
    status: str  # "applied", "dry_run" or "failed", as packages.models.WriteBack
    detail: str = ""


@runtime_checkable
class PublicationSource(Protocol):
    name: str

    @property
    def can_write(self) -> bool: ...

    def releases(self) -> list[ReleaseRecord]: ...

    def publications(
        self, *, release: str, since: datetime | None, now: datetime
    ) -> Iterator[PublicationRecord]:
        """Updates-pocket publications of a release (since a date, for incremental sync)."""
        ...

    def set_percentage(
        self, *, release: str, pocket: str, source_package: str, version: str, percentage: int
    ) -> WriteResult: ...
