"""A crash source that judges the crash reports held in Phasing's own database.

Reports arrive from a feed (the simulator, or an import) through
overview.evidence.ingest.crash_reports_ingest, which keeps daily counters and
per-bucket statistics as the error tracker does; this source answers the controller's
questions from those with the error tracker's rules (overview.judges.ubuntu). Two queries
over the small aggregate tables answer any number of publications.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, date, datetime
from typing import Protocol

from django.conf import settings
from django.db import connection

from overview.evidence.sources.base import (
    CRASH,
    INSTALL_FAILURE,
    CrashAnswer,
    CrashQuery,
    CrashReportRecord,
    ProblemRecord,
)
from overview.judges import ubuntu as crashes
from overview.models import BucketVersionStat, CrashCounter
from packages.lookups import array_text
from packages.models import Release, SourcePackage, SourceSync


class ReportFeed(Protocol):
    """Where new crash reports come from for the local source: the simulated stream, or
    the reports machines sent to the intake."""

    def reports(self, *, since: datetime | None, now: datetime) -> Iterable[CrashReportRecord]: ...


def thresholds() -> crashes.Thresholds:
    return crashes.Thresholds(
        new_bucket_min_systems=settings.PHASING_NEW_BUCKET_MIN_SYSTEMS,
        rate_min_crashes_today=settings.PHASING_RATE_MIN_CRASHES_TODAY,
        rate_min_difference=settings.PHASING_RATE_MIN_DIFFERENCE,
        install_failure_min_systems=settings.PHASING_INSTALL_FAILURE_MIN_SYSTEMS
        if settings.PHASING_INSTALL_FAILURES
        else None,
    )


class LocalCrashSource:
    name = "local"
    # The reports themselves are here, so the sequential judge can count them hour by hour.
    keeps_reports = True

    def __init__(self, *, feed: ReportFeed | None = None) -> None:
        self.feed = feed
        if feed is not None:
            self.name = getattr(feed, "name", "local")

    def _stale(self, now: datetime) -> str:
        """Why the stored reports cannot be trusted as of `now` ('' when they can).

        The tables only know what the last sync brought: if it failed, or has not run for
        a while, "no new crashes" would only mean "no news", and the controller holds.
        """
        if self.feed is None:
            return ""
        status = SourceSync.objects.filter(name=f"{self.name}:crashes").first()
        if status is None or status.last_success_at is None:
            return "crash reports have never been synced"
        if now - status.last_success_at > settings.PHASING_CRASH_DATA_MAX_AGE:
            detail = f": {status.last_error}" if status.last_error else ""
            return (
                f"crash reports last synced at {status.last_success_at:%Y-%m-%d %H:%M} UTC{detail}"
            )
        return ""

    def reports(self, *, since: datetime | None, now: datetime) -> Iterator[CrashReportRecord]:
        if self.feed is None:
            return iter(())
        return iter(self.feed.reports(since=since, now=now))

    def problems(
        self, queries: Sequence[CrashQuery], *, now: datetime
    ) -> dict[CrashQuery, CrashAnswer]:
        if not queries:
            return {}
        stale = self._stale(now)
        if stale:
            return {q: CrashAnswer(error=f"crash data unavailable: {stale}") for q in queries}
        packages = {q.source_package for q in queries}
        releases = {q.release for q in queries}
        versions = {q.version for q in queries} | {q.previous_version for q in queries}
        # As arrays (packages.lookups): a tick asks for thousands of names and versions.
        scope = {
            "source_package__name__any": packages,
            "release__codename__any": releases,
            "version__any": versions,
        }

        # 1. Buckets per (release, package, version), with distinct systems.
        buckets: dict[tuple[str, str, str], list[tuple[crashes.BucketCounts, str]]] = defaultdict(
            list
        )
        rows = BucketVersionStat.objects.filter(**scope).values_list(
            "release__codename",
            "source_package__name",
            "version",
            "bucket__signature",
            "bucket__function",
            "bucket__retrace_failed",
            "bucket__problem_type",
            "reports",
            "systems",
        )
        for (
            release,
            package,
            version,
            signature,
            function,
            retrace_failed,
            problem_type,
            reports,
            systems,
        ) in rows:
            counts = crashes.BucketCounts(
                signature, reports, systems, retrace_failed, problem_type == INSTALL_FAILURE
            )
            buckets[(release, package, version)].append((counts, function))

        # 2. Today's daily counters, for the new versions. 3. The previous versions' days
        # that cassie reads: the `days` most recent crash days up to the publication day
        # (overview.judges.ubuntu.baseline_days; the days between them are those days or 0).
        today_date = now.astimezone(UTC).date()
        today = {
            (release, package, version): count
            for release, package, version, count in CrashCounter.objects.filter(
                day=today_date, **{**scope, "version__any": {q.version for q in queries}}
            ).values_list("release__codename", "source_package__name", "version", "count")
        }
        days = settings.PHASING_RATE_BASELINE_DAYS
        daily = _previous_days(queries, today_date, days=days)

        rules = thresholds()
        answers: dict[CrashQuery, CrashAnswer] = {}
        outage = getattr(self.feed, "crash_data_outage", None)
        for query in queries:
            if outage is not None and (why := outage(query, now=now)):
                answers[query] = CrashAnswer(error=f"crash data unavailable: {why}")
                continue
            new_key = (query.release, query.source_package, query.version)
            old_key = (query.release, query.source_package, query.previous_version)
            published = _published_day(query, today_date)
            functions = {c.signature: f for c, f in buckets.get(new_key, ())}
            previous_signatures = {c.signature for c, _ in buckets.get(old_key, ())}
            problems = [
                ProblemRecord(
                    kind="new_bucket",
                    signature=counts.signature,
                    function=functions[counts.signature],
                    report_count=counts.reports,
                    system_count=counts.systems,
                    bucket_type=INSTALL_FAILURE if counts.install_failure else CRASH,
                )
                for counts in crashes.new_buckets(
                    (c for c, _ in buckets.get(new_key, ())), previous_signatures, rules
                )
            ]
            judgement = crashes.crash_rate(
                today=today.get(new_key, 0),
                previous_daily=daily.get(old_key, {}),
                percentage=query.percentage,
                now=now,
                published=published,
                has_previous_version=bool(query.previous_version),
                thresholds=rules,
                days=days,
            )
            if judgement.increase:
                problems.append(
                    ProblemRecord(
                        kind="increased_rate",
                        report_count=judgement.today,
                        difference=round(judgement.difference, 2),
                        detail=_rate_words(judgement),
                    )
                )
            answers[query] = CrashAnswer(
                problems=tuple(problems),
                previous_reports=sum(
                    crashes.baseline_days(
                        daily.get(old_key, {}),
                        published=published,
                        days=days,
                    )
                ),
            )
        return answers


def _previous_days(
    queries: Sequence[CrashQuery], today: date, *, days: int
) -> dict[tuple[str, str, str], dict[date, int]]:
    """Each previous version's daily counts that baseline_days can choose: its `days` most
    recent crash days up to each publication day asked about, by (release, package,
    version). A count stays in the daily counters for good, so reading every day of an old
    version (a year of them, for a version long in the archive) would grow with time."""
    asked = sorted(
        {
            (q.release, q.source_package, q.previous_version, _published_day(q, today))
            for q in queries
            if q.previous_version
        }
    )
    daily: dict[tuple[str, str, str], dict[date, int]] = defaultdict(dict)
    if not asked:
        return daily
    rows: Iterable[tuple[str, str, str, date, int]]
    if connection.vendor == "postgresql":
        rows = _recent_crash_days_postgresql(asked, days)
    else:
        # Elsewhere (the embedded SQLite) every day up to the latest publication day asked
        # about; baseline_days chooses among them.
        last = max(published for *_, published in asked)
        rows = CrashCounter.objects.filter(
            day__lte=last,
            count__gt=0,
            release__codename__any={a[0] for a in asked},
            source_package__name__any={a[1] for a in asked},
            version__any={a[2] for a in asked},
        ).values_list("release__codename", "source_package__name", "version", "day", "count")
    for release, package, version, day, count in rows:
        daily[(release, package, version)][day] = count
    return daily


def _recent_crash_days_postgresql(
    asked: list[tuple[str, str, str, date]], days: int
) -> list[tuple[str, str, str, date, int]]:
    """Up to `days` most recent crash days of each (release, package, version) up to its
    day: an index probe each (the counters' key is release, package, version, day)."""
    quote = connection.ops.quote_name
    columns = list(zip(*asked, strict=True))
    with connection.cursor() as cursor:
        # Table names the code owns; every value is a parameter.
        cursor.execute(
            "SELECT k.release, k.package, k.version, c.day, c.count "  # noqa: S608
            "FROM unnest(%s::text[], %s::text[], %s::text[], %s::date[]) "
            "AS k(release, package, version, published) "
            f"JOIN {quote(Release._meta.db_table)} r ON r.codename = k.release "
            f"JOIN {quote(SourcePackage._meta.db_table)} s ON s.name = k.package "
            "CROSS JOIN LATERAL (SELECT day, count "
            f"FROM {quote(CrashCounter._meta.db_table)} c WHERE c.release_id = r.id "
            "AND c.source_package_id = s.id AND c.version = k.version "
            "AND c.day <= k.published AND c.count > 0 ORDER BY c.day DESC LIMIT %s) AS c",
            [
                *(array_text(list(column)) for column in columns[:3]),
                array_text([day.isoformat() for day in columns[3]]),
                days,
            ],
        )
        return list(cursor.fetchall())


def _published_day(query: CrashQuery, today: date) -> date:
    """The day phased-updater passes as ``date``: the new version's publication day (UTC)."""
    if query.date_published is None:
        return today
    return min(query.date_published.astimezone(UTC).date(), today)


def _rate_words(judgement: crashes.RateJudgement) -> str:
    if judgement.no_previous_data:
        return (
            f"increased crash rate ({judgement.today} today; the previous version had no "
            "crashes up to this version's publication: Ubuntu's rules)"
        )
    return (
        f"increased crash rate ({judgement.today} today against {judgement.baseline:.2f} "
        f"expected by now, from round(mean + stddev) of {judgement.previous_period_in_days} "
        f"days before publication × percentage = {judgement.previous_average:g} a day: "
        "Ubuntu's rules)"
    )
