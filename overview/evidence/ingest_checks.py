"""The checks a crash report passes before it is stored, in pure Python: a bad record is
refused with why (logged and skipped by the ingest, the batch kept); a link that is not
http(s) is dropped and the report kept."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from overview.evidence.retention import too_old
from overview.evidence.sources.base import CrashReportRecord
from packages.domain import inputs

log = logging.getLogger(__name__)


# (why not, JSON texts): why a record is refused, else "" and its environment and
# package versions as JSON, as it is stored.
_Checked = tuple[str, tuple[str, str] | None]


def _valid(
    record: CrashReportRecord,
    releases: dict[str, int],
    *,
    now: datetime,
    names: dict[object, str] | None = None,
) -> _Checked:
    """Why a record cannot be kept ("" when it can), each field as its column stores it,
    and its environment and package versions as JSON (written once, for the check and
    the store).

    The function name and the system id are cut to their columns, as before (a longer
    hash still names the same system); anything else that does not fit is refused.
    `names`: the answers for package names and versions already checked in this ingest
    (a feed repeats a few thousand of them in every report, and parsing a Debian version
    cost more than the rest of a record's checks).
    """
    names = {} if names is None else names
    if not isinstance(record, CrashReportRecord):
        return "not a crash report record", None
    if record.release not in releases:
        return f"unknown release {record.release!r:.60}", None

    def remembered(check: Callable[[object], str], value: object) -> str:
        if type(value) is not str:
            return check(value)
        key = (check, value)
        if key not in names:
            names[key] = check(value)
        return names[key]

    text = inputs.text_problem
    for field_name, problem in (
        ("external_id", lambda: text(record.external_id, max_length=100, required=True)),
        ("signature", lambda: text(record.signature, max_length=1000, required=True)),
        ("source_package", lambda: remembered(inputs.source_name_problem, record.source_package)),
        ("version", lambda: remembered(inputs.version_problem, record.version)),
        ("system_id", lambda: text(record.system_id, required=True)),
        ("architecture", lambda: text(record.architecture, max_length=20)),
        ("reported_at", lambda: inputs.moment_problem(record.reported_at, now=now)),
        ("stack_trace", lambda: text(record.stack_trace)),
        ("function", lambda: text(record.function)),
        ("web_link", lambda: text(record.web_link, max_length=1000)),
    ):
        if why := problem():
            return f"{field_name} {why}", None
    environment_problem, environment = inputs.json_text(record.environment)
    if environment_problem:
        return f"environment {environment_problem}", None
    versions_problem, package_versions = inputs.json_text(record.package_versions)
    if versions_problem:
        return f"package_versions {versions_problem}", None
    if why := text(record.problem_type, max_length=40):
        return f"problem_type {why}", None
    return "", (environment, package_versions)


def _safe_link(record: CrashReportRecord) -> CrashReportRecord:
    """A link that is not http(s) is dropped, not followed: the report itself is kept."""
    if record.web_link and not inputs.is_safe_link(record.web_link):
        log.warning(
            "crash report %r: dropped a link that is not http(s): %r",
            record.external_id,
            record.web_link[:100],
        )
        return replace(record, web_link="")
    return record


@dataclass
class CheckedBatch:
    """A batch as its check left it: the records to store (with their JSON texts, by id
    of the record) and the ones refused, with why."""

    size: int
    kept: list[CrashReportRecord]
    texts: dict[int, tuple[str, str] | None]
    refused: list[tuple[str, str]]


def checked_batch(
    batch: list, releases: dict[str, int], *, now: datetime, names: dict[object, str]
) -> CheckedBatch:
    """Pure Python, no database: safe to run beside the store of the previous batch."""
    checked = CheckedBatch(size=len(batch), kept=[], texts={}, refused=[])
    for record in batch:
        why, json_texts = _valid(record, releases, now=now, names=names)
        if not why and too_old(record.reported_at, now=now):
            why = "older than the crash reports kept (PHASING_CRASH_REPORT_RETENTION_DAYS)"
        if why:
            checked.refused.append((f"{getattr(record, 'external_id', '?')!r:.120}", why))
            continue
        record = _safe_link(record)
        checked.kept.append(record)
        checked.texts[id(record)] = json_texts
    return checked


__all__ = ["CheckedBatch", "checked_batch"]
