"""The crash side of the one small interface between the controller and its sources.

A crash source answers, for (release, package, version, previous version), which
problems the error tracker sees, and may hand over crash reports to keep. The simulator's
crash feed, Phasing's own reports and the error tracker implement it; the controller only
ever sees the records below. Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol, runtime_checkable

from packages.domain import inputs

PROBLEM_KINDS = ("new_bucket", "increased_rate")  # as overview.models.ProblemKind
# What a bucket holds, as overview.models.ProblemType: crashes, or package install failures.
CRASH, INSTALL_FAILURE = "crash", "package"


def bucket_type(problem_type: str, signature: str = "") -> str:
    """apport's ``ProblemType`` of a report ("Crash", "Package", "KernelOops"...) as the kind
    of bucket it lands in. An install failure is ``ProblemType: Package``; its bucket is its
    ``DuplicateSignature``, ``package:<binary>:<version>:<error>`` (apport's package hook,
    bucketed as is by the error tracker's daisy/submit.py), which is how a bucket known only
    by its signature is recognised."""
    if problem_type == "Package" or (not problem_type and signature.startswith("package:")):
        return INSTALL_FAILURE
    return CRASH


@dataclass(frozen=True)
class CrashQuery:
    release: str
    source_package: str
    version: str
    previous_version: str
    # The share of machines running the update: its percentage, or for a halted update the
    # percentage it had before the halt (the machines that took it keep it).
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
    # The test and the figures behind it, in words (shown on the pages and in the email).
    detail: str = ""
    # CRASH or INSTALL_FAILURE: the kind of bucket of a new-bucket problem.
    bucket_type: str = CRASH


@dataclass(frozen=True)
class CrashAnswer:
    """Problems for one query, or why there are none to give."""

    problems: tuple[ProblemRecord, ...] = ()
    error: str = ""  # non-empty: crash data unavailable, hold the publication
    # How many reports of the previous version the comparison rests on (None: unknown).
    previous_reports: int | None = None
    # Non-empty: the tracker does not know this source version (a 404), which lasts. The
    # policy holds the update, or judges ``problems`` found in the reports held locally.
    unknown_version: str = ""


UNAVAILABLE = "crash data unavailable"


def unavailable(why: object) -> CrashAnswer:
    """An answer that holds the update, saying "crash data unavailable" once, however many
    layers (source, client, controller) said it before."""
    text = str(why).strip()
    while text.lower().startswith(UNAVAILABLE):
        text = text[len(UNAVAILABLE) :].lstrip(" :").strip()
    return CrashAnswer(error=f"{UNAVAILABLE}: {text}" if text else UNAVAILABLE)


def checked(answer: CrashAnswer) -> CrashAnswer:
    """An answer whose problems can be stored, or one that holds the update and says why.

    A link that is not http(s) is dropped, not the problem: a problem is never ignored.
    """
    if answer.error:
        return unavailable(answer.error)
    problems = []
    for record in answer.problems:
        why = inputs.first_problem(
            {
                "kind": "" if record.kind in PROBLEM_KINDS else f"{record.kind!r:.40} is unknown",
                "bucket_type": ""
                if record.bucket_type in (CRASH, INSTALL_FAILURE)
                else f"{record.bucket_type!r:.40} is unknown",
                "signature": inputs.text_problem(record.signature, max_length=1000),
                "function": inputs.text_problem(record.function),
                "report_count": inputs.count_problem(record.report_count),
                "system_count": inputs.count_problem(record.system_count),
            }
        )
        if why:
            return unavailable(f"the source answered a problem it cannot describe: {why}")
        if inputs.link_problem(record.web_link):
            record = replace(record, web_link="")
        problems.append(record)
    return replace(answer, problems=tuple(problems))


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
    # apport's ProblemType: "Crash", or "Package" for a package that failed to install.
    problem_type: str = "Crash"


@runtime_checkable
class CrashSource(Protocol):
    name: str

    def problems(
        self, queries: Sequence[CrashQuery], *, now: datetime
    ) -> dict[CrashQuery, CrashAnswer]:
        """One answer per query; a failure for one query is that query's error, not an exception."""
        ...

    def reports(self, *, since: datetime | None, now: datetime) -> Iterator[CrashReportRecord]:
        """Crash reports to keep locally (may be none: a tracker can keep them to itself)."""
        ...


def install_failure_buckets(
    records: Sequence[CrashReportRecord], buckets: dict[str, int]
) -> set[int]:
    """The buckets of these records that hold package install failures, not crashes."""
    return {
        buckets[r.signature]
        for r in records
        if bucket_type(r.problem_type, r.signature) == INSTALL_FAILURE
    }
