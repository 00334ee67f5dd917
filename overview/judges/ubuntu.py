"""When crash data says an update regressed: the error tracker's rules, in plain Python.

Both rules follow errors.ubuntu.com (ubuntu/error-tracker, src/errors/cassie.py):

New bucket (`get_package_new_buckets`): a bucket with reports for the new version and
none for the previous version, whose retrace did not fail, reported by more than two
distinct systems for the new version. Fewer systems are too often one broken machine.

Install failures (apport's ``ProblemType: Package``, "package X failed to install/upgrade")
are bucketed by the tracker like crashes, under their ``DuplicateSignature``
``package:<binary>:<version>:<error>``. A new one counts like a new crash bucket, with its
own minimum of systems (no retrace: there is no stack), or not at all when switched off.

Increased rate (`get_package_crash_rate`, as phased-updater asks it): today's crashes of
the new version against the previous version's days. The baseline period is the previous
version's 15 most recent days with crashes up to the new version's publication day, every
calendar day from the oldest of them to the day before publication counted, a day without
crashes as 0 (so the period can be longer than 15 days, and the previous version's days
after publication are not in it). The baseline is round(mean + population standard
deviation), scaled by the phased percentage and by the whole minutes of the UTC day
elapsed (today is not over). No crashes today: no rise. A previous version without any
crash day: any crash today is a rise, before the "fewer than 3 crashes today" rule.
Otherwise the rise counts when today's count exceeds the scaled baseline by more than 1.
An update without a previous version is never rate-checked (phased-updater,
``crash_rate_increase``). Thresholds are settings; docs/judges.md has the details.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta


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
    previous_average: float  # round(mean + stddev) × percentage: cassie's previous_average
    previous_period_in_days: int
    # The previous version had no crash day up to publication: any crash today is a rise.
    no_previous_data: bool = False


def fraction_of_day(now: datetime) -> float:
    """The share of the UTC day elapsed, in whole minutes as cassie counts it
    ((hour × 60 + minute) / 1440): seconds do not count."""
    now = now.astimezone(UTC)
    return (now.hour * 60 + now.minute) / (24 * 60)


def baseline_days(
    previous_daily: Mapping[date, int], *, published: date, days: int = 15
) -> list[int]:
    """The previous version's daily counts cassie averages: its `days` most recent days
    with crashes up to the publication day, then every calendar day from the oldest of
    them up to the day before publication, a day without crashes as 0."""
    crash_days = sorted((d for d, n in previous_daily.items() if n > 0 and d <= published))
    chosen = crash_days[-days:]
    if not chosen:
        return []
    span = (published - chosen[0]).days  # the publication day itself is left out
    return [previous_daily.get(chosen[0] + timedelta(days=k), 0) for k in range(span)]


def crash_rate(
    *,
    today: int,
    previous_daily: Mapping[date, int],
    percentage: int | None,
    now: datetime,
    published: date | None = None,
    has_previous_version: bool = True,
    thresholds: Thresholds = Thresholds(),
    days: int = 15,
) -> RateJudgement:
    """Judge today's count against the previous version's days (day → count, any days:
    the ones cassie reads are chosen here). `published` is the new version's publication
    day (UTC; today when unknown)."""
    published = published or now.astimezone(UTC).date()
    if not has_previous_version or today <= 0:
        return RateJudgement(False, today, 0.0, 0.0, 0.0, 0)
    counts = baseline_days(previous_daily, published=published, days=days)
    has_data = any(n > 0 and d <= published for d, n in previous_daily.items())
    if not has_data:
        # cassie: "no previous version data so the diff is today's amount"
        return RateJudgement(True, today, 0.0, float(today), 0.0, 0, no_previous_data=True)
    period = len(counts)
    if today < thresholds.rate_min_crashes_today:
        return RateJudgement(False, today, 0.0, 0.0, 0.0, period)
    # A crash day only on the publication day leaves no day to average: cassie's
    # numpy.average([]) fails there; here the baseline is 0.
    average = statistics.fmean(counts) if counts else 0.0
    spread = statistics.pstdev(counts) if counts else 0.0
    standard = float(round(average + spread))
    # cassie's `if pup:` tests the request's string: "0" is true, so 0% scales by 0.
    if percentage is not None:
        standard = standard * int(percentage) / 100
    baseline = standard * fraction_of_day(now)
    difference = today - baseline
    return RateJudgement(
        difference > thresholds.rate_min_difference, today, baseline, difference, standard, period
    )
