"""The reports machines posted to the whoopsie-compatible intake, as a crash feed.

overview.judges.local.LocalCrashSource judges them as it judges the simulator's: the
crash sync hands them to the ingest (the same buckets, counters and "last fresh data"),
and a sync that did not run lately holds the updates. A report's DistroRelease
("Ubuntu 24.04") names a release by its version; a report of a release the archive does
not have is logged and skipped by the ingest.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from overview.evidence.sources.base import CrashReportRecord
from overview.models import ReceivedCrash
from packages.models import Release


def release_codenames() -> dict[str, str]:
    """{"Ubuntu 24.04": "noble", "24.04": "noble", "noble": "noble"}: how a report may
    name a release, the distribution's name aside."""
    names: dict[str, str] = {}
    for codename, version in Release.objects.values_list("codename", "version"):
        names[codename] = codename
        if version:
            names[version] = codename
    return names


def _codename(distro_release: str, names: dict[str, str]) -> str:
    words = distro_release.split()
    for word in reversed(words):
        if word in names:
            return names[word]
    return distro_release


class IntakeFeed:
    """Crash reports received by the intake since a moment, oldest first."""

    name = "intake"

    def reports(self, *, since: datetime | None, now: datetime) -> Iterator[CrashReportRecord]:
        names = release_codenames()
        received = ReceivedCrash.objects.filter(received_at__lte=now).order_by("received_at", "id")
        if since is not None:
            received = received.filter(received_at__gte=since)
        for crash in received.iterator(chunk_size=5000):
            yield record_of(crash, names)


def record_of(crash: ReceivedCrash, names: dict[str, str]) -> CrashReportRecord:
    fields = crash.fields if isinstance(crash.fields, dict) else {}
    package, _, version = str(fields.get("Package", "")).partition(" ")
    dependencies = fields.get("Dependencies")
    versions = dict(dependencies) if isinstance(dependencies, dict) else {}
    if package and version:
        versions[package] = version
    return CrashReportRecord(
        external_id=f"intake:{crash.oops_id}",
        signature=str(fields.get("Signature", "")),
        release=_codename(str(fields.get("DistroRelease", "")), names),
        source_package=str(fields.get("SourcePackage", "")) or package,
        version=version,
        architecture=str(fields.get("Architecture", "")),
        reported_at=crash.received_at,
        system_id=crash.system_id,
        stack_trace="",
        environment={
            k: fields[k] for k in ("ExecutablePath", "Date", "ProblemType") if fields.get(k)
        },
        package_versions=versions,
        problem_type=str(fields.get("ProblemType", "")) or "Crash",
    )
