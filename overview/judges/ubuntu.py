"""When crash data says an update regressed: the error tracker's rules, in plain Python.

Both rules follow errors.ubuntu.com (ubuntu/error-tracker, src/errors/cassie.py):

New bucket (`get_package_new_buckets`): a bucket with reports for the new version and
none for the previous version, whose retrace did not fail, reported by more than two
distinct systems for the new version. Fewer systems are too often one broken machine.

Install failures (apport's ``ProblemType: Package``, "package X failed to install/upgrade")
are bucketed by the tracker like crashes, under their ``DuplicateSignature``
``package:<binary>:<version>:<error>``. A new one counts like a new crash bucket, with its
own minimum of systems (no retrace: there is no stack), or not at all when switched off.

Increased rate (`get_package_crash_rate`): compare today's crashes of the new version
with the previous version's daily counts over up to 15 days. The baseline is
round(mean + one standard deviation), scaled by the phased percentage (only that share
of machines runs the new version) and by the fraction of the UTC day elapsed (today is
not over). With fewer than 3 crashes today there is nothing to judge; the rise counts
when today's count exceeds the scaled baseline by more than 1. Thresholds are settings.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class BucketCounts:
    signature: str
    reports: int
    systems: int
    retrace_failed: bool = False
    install_failure: bool = False


@dataclass(frozen=True)
class Thresholds:
    new_bucket_min_systems: int = 3
    # None: switched off, a new install failure is never a problem.
    install_failure_min_systems: int | None = 3
    rate_min_crashes_today: int = 3
    rate_min_difference: float = 1.0


def new_buckets(
    new_version: Iterable[BucketCounts],
    previous_version_signatures: set[str],
    thresholds: Thresholds = Thresholds(),
) -> list[BucketCounts]:
    return [
        bucket
        for bucket in new_version
        if bucket.signature not in previous_version_signatures and _counts(bucket, thresholds)
    ]


def _counts(bucket: BucketCounts, thresholds: Thresholds) -> bool:
    if bucket.install_failure:
        least = thresholds.install_failure_min_systems
        return least is not None and bucket.systems >= least
    return not bucket.retrace_failed and bucket.systems >= thresholds.new_bucket_min_systems


@dataclass(frozen=True)
class RateJudgement:
    increase: bool
    today: int
    baseline: float  # expected crashes by now at this percentage
    difference: float
    previous_average: float
    previous_period_in_days: int


def fraction_of_day(now: datetime) -> float:
    now = now.astimezone(UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return (now - midnight).total_seconds() / 86400


def crash_rate(
    *,
    today: int,
    previous_daily: Mapping[object, int],
    percentage: int,
    now: datetime,
    thresholds: Thresholds = Thresholds(),
) -> RateJudgement:
    """Judge today's count against the previous version's days (day → count)."""
    counts = list(previous_daily.values())
    days = len(counts)
    average = statistics.fmean(counts) if counts else 0.0
    if today < thresholds.rate_min_crashes_today:
        return RateJudgement(False, today, 0.0, 0.0, average, days)
    spread = statistics.pstdev(counts) if len(counts) > 1 else 0.0
    baseline = round(average + spread) * percentage / 100 * fraction_of_day(now)
    difference = today - baseline
    return RateJudgement(
        difference > thresholds.rate_min_difference, today, baseline, difference, average, days
    )
