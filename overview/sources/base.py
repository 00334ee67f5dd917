"""The one small interface between the controller and where state comes from.

A publication source lists a release's Updates publications and takes percentages back;
a crash source answers, for (release, package, version, previous version), which
problems the error tracker sees. The simulator, Launchpad, an error tracker and an apt
archive implement these; the controller and the sync only ever see the records below.
Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable


class SourceError(Exception):
    """A source could not answer (network, status, malformed data). Message is for people."""


class CrashDataUnavailable(SourceError):
    """Crash data for a publication could not be fetched: the controller must hold it."""


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


@dataclass(frozen=True)
class CrashQuery:
    release: str
    source_package: str
    version: str
    previous_version: str
    percentage: int
    # The error tracker measures the previous version's baseline up to this day.
    date_published: datetime | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class ProblemRecord:
    kind: str  # "new_bucket" or "increased_rate", as overview.models.ProblemKind
    signature: str = ""  # the bucket's identity; empty for an increased rate
    function: str = ""
    web_link: str = ""
    report_count: int = 0
    system_count: int = 0
    difference: float | None = None
    retrace_failed: bool = False


@dataclass(frozen=True)
class CrashAnswer:
    """Problems for one query, or why there are none to give."""

    problems: tuple[ProblemRecord, ...] = ()
    error: str = ""  # non-empty: crash data unavailable, hold the publication
    # How many reports of the previous version the comparison rests on (None: unknown).
    previous_reports: int | None = None


@dataclass(frozen=True)
class CrashReportRecord:
    external_id: str
    signature: str
    release: str
    source_package: str
    version: str
    architecture: str
    reported_at: datetime
    system_id: str
    stack_trace: str
    function: str = ""
    web_link: str = ""
    environment: dict = field(default_factory=dict)
    package_versions: dict = field(default_factory=dict)
    from_proposed: bool = False
    automated_testing: bool = False
    retrace_failed: bool = False


@runtime_checkable
class CrashSource(Protocol):
    name: str

    def problems(self, queries: Sequence[CrashQuery], *, now: datetime) -> dict[CrashQuery, CrashAnswer]:
        """One answer per query; a failure for one query is that query's error, not an exception."""
        ...

    def reports(self, *, since: datetime | None, now: datetime) -> Iterator[CrashReportRecord]:
        """Crash reports to keep locally (may be none: a tracker can keep them to itself)."""
        ...
