"""A crash source that judges the crash reports held in Phasing's own database.

Reports arrive from a feed (the simulator, or an import) through
overview.services.crashes.crash_reports_ingest; this source answers the controller's
questions from them with the error tracker's rules (overview.crashes), as of the
moment asked about, so a replay of the past sees only the reports of its past.
Three queries answer any number of publications.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Sum

from overview import crashes
from overview.models import CrashCounter, CrashReport
from overview.sources.base import CrashAnswer, CrashQuery, CrashReportRecord, ProblemRecord


def thresholds() -> crashes.Thresholds:
    return crashes.Thresholds(
        new_bucket_min_systems=settings.PHASING_NEW_BUCKET_MIN_SYSTEMS,
        rate_min_crashes_today=settings.PHASING_RATE_MIN_CRASHES_TODAY,
        rate_min_difference=settings.PHASING_RATE_MIN_DIFFERENCE,
    )


class LocalCrashSource:
    name = "local"

    def __init__(self, *, feed=None) -> None:
        self.feed = feed
        if feed is not None:
            self.name = getattr(feed, "name", "local")

    def reports(self, *, since: datetime | None, now: datetime) -> Iterator[CrashReportRecord]:
        if self.feed is None:
            return iter(())
        return self.feed.reports(since=since, now=now)

    def problems(
        self, queries: Sequence[CrashQuery], *, now: datetime
    ) -> dict[CrashQuery, CrashAnswer]:
        if not queries:
            return {}
        packages = {q.source_package for q in queries}
        versions = {q.version for q in queries} | {q.previous_version for q in queries}
        releases = {q.release for q in queries}
        reports = CrashReport.objects.filter(
            source_package__name__in=packages,
            version__in=versions,
            release__codename__in=releases,
            reported_at__lte=now,
            automated_testing=False,
        )
        if settings.PHASING_EXCLUDE_PROPOSED:
            reports = reports.filter(from_proposed=False)

        # 1. Buckets per (release, package, version), with distinct systems.
        buckets: dict[tuple[str, str, str], list[tuple[crashes.BucketCounts, str]]] = defaultdict(
            list
        )
        rows = reports.values(
            "release__codename",
            "source_package__name",
            "version",
            "bucket__signature",
            "bucket__function",
            "bucket__retrace_failed",
        ).annotate(reports=Count("id"), systems=Count("system_id", distinct=True))
        for row in rows:
            key = (row["release__codename"], row["source_package__name"], row["version"])
            counts = crashes.BucketCounts(
                row["bucket__signature"],
                row["reports"],
                row["systems"],
                row["bucket__retrace_failed"],
            )
            buckets[key].append((counts, row["bucket__function"]))

        # 2. Today's crashes of each version, counted up to `now`.
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        today: dict[tuple[str, str, str], int] = {
            (r["release__codename"], r["source_package__name"], r["version"]): r["n"]
            for r in reports.filter(reported_at__gte=midnight)
            .values("release__codename", "source_package__name", "version")
            .annotate(n=Count("id"))
        }

        # 3. Daily counters of the previous versions over the baseline period.
        first_day = midnight.date() - timedelta(days=settings.PHASING_RATE_BASELINE_DAYS)
        daily: dict[tuple[str, str, str], dict] = defaultdict(dict)
        for row in (
            CrashCounter.objects.filter(
                source_package__name__in=packages,
                version__in={q.previous_version for q in queries},
                release__codename__in=releases,
                day__gte=first_day,
                day__lt=midnight.date(),
            )
            .values("release__codename", "source_package__name", "version", "day")
            .annotate(n=Sum("count"))
        ):
            key = (row["release__codename"], row["source_package__name"], row["version"])
            daily[key][row["day"]] = row["n"]

        rules = thresholds()
        answers: dict[CrashQuery, CrashAnswer] = {}
        outage = getattr(self.feed, "crash_data_outage", None)
        for query in queries:
            if outage is not None and (why := outage(query, now=now)):
                answers[query] = CrashAnswer(error=f"crash data unavailable: {why}")
                continue
            new_key = (query.release, query.source_package, query.version)
            old_key = (query.release, query.source_package, query.previous_version)
            functions = {c.signature: f for c, f in buckets.get(new_key, ())}
            previous_signatures = {c.signature for c, _ in buckets.get(old_key, ())}
            problems = [
                ProblemRecord(
                    kind="new_bucket",
                    signature=counts.signature,
                    function=functions[counts.signature],
                    report_count=counts.reports,
                    system_count=counts.systems,
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
                thresholds=rules,
            )
            if judgement.increase:
                problems.append(
                    ProblemRecord(
                        kind="increased_rate",
                        report_count=judgement.today,
                        difference=round(judgement.difference, 2),
                    )
                )
            answers[query] = CrashAnswer(
                problems=tuple(problems),
                previous_reports=sum(daily.get(old_key, {}).values()),
            )
        return answers
