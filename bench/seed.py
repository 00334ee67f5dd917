"""Seed the bench database at archive scale, through the product's own services.

`seed_demo` replays the past hour by hour and pulls every crash report through the
simulator in one process; at archive scale that takes well over the bench's budget
(measured: about 1,000 reports/s, so over 20 minutes for the reports alone). This
seeder replays the same way (publications_sync, crash_reports_ingest, controller.tick,
the demo triager's overrides, write-back), with two differences:

- the simulator's crash reports are drawn by worker processes, one share of the
  packages each, running ahead of the replay; the main process ingests them window by
  window in time order, so every tick sees only the crashes reported before it;
- ticks come every 6 hours (the default policy's interval), not every hour;
- it gathers the planner's statistics itself after the first sync and every simulated
  day, as autovacuum would (this machine's PostgreSQL runs without it: with the statistics
  of an empty table, one ingest statement at scale 10 took 10 s a batch instead of 0.25).

One package ("firefox-esr", from a fast-moving simulated archive of its own) gets about
50 versions, for the publishing-history page.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta

from bench.env import SCALE

HOUR = timedelta(hours=1)
SEED_MARK = "bench:seed"
HOT_PACKAGE = "firefox-esr"


@dataclass(frozen=True)
class SeedPlan:
    seed: int = 1
    publications: int = field(default_factory=lambda: 2000 * SCALE)  # in phasing at once
    replay_days: int = 6
    baseline_days: int = 8  # crash reports before the replay starts
    step_hours: int = 6
    mean_days: float = 40.0
    end: str = "2026-11-20T00:00:00+00:00"  # fixed, so every bench run sees the same world
    workers: int = 2

    @property
    def end_at(self) -> datetime:
        return datetime.fromisoformat(self.end)

    @property
    def packages(self) -> int:
        from overview.management.commands.seed_demo import packages_for

        return packages_for(self.publications, releases=6, mean_days=self.mean_days)


def _simulator(plan: SeedPlan):
    from packages.sources.simulator import Simulator

    return Simulator(
        seed=plan.seed, packages=plan.packages, mean_days_between_updates=plan.mean_days
    )


def _windows(plan: SeedPlan) -> list[tuple[datetime, datetime]]:
    start = plan.end_at - timedelta(days=plan.replay_days)
    first = start - timedelta(days=plan.baseline_days)
    step = timedelta(hours=plan.step_hours)
    windows = [
        (first + i * step, first + (i + 1) * step)
        for i in range(plan.baseline_days * 24 // plan.step_hours)
    ]
    moment = start
    while moment < plan.end_at:
        windows.append((moment, moment + step))
        moment += step
    return windows


def _draw_reports(plan: SeedPlan, share: int, windows, queue) -> None:
    """Worker: the crash reports of every `plan.workers`-th package, window by window.

    Follows SimulatedCrashFeed.reports over a share of the packages, so the union of the shares
    is exactly what the simulator reports for the window.
    """
    from overview.evidence.sources.simulator import SimulatedCrashFeed

    simulator = _simulator(plan)
    feed = SimulatedCrashFeed(simulator)
    mine = simulator.packages[share :: plan.workers]
    for since, now in windows:
        first_hour = since.replace(minute=0, second=0, microsecond=0) + HOUR
        batch = []
        for release in simulator.release_records:
            for package in mine:
                timeline = simulator.timeline(release, package, until=now)
                for position, upload in enumerate(timeline):
                    following = timeline[position + 1] if position + 1 < len(timeline) else None
                    batch.extend(feed._upload_reports(upload, following, first_hour, now))
        queue.put(batch)
    queue.put(None)


class DrawnReports:
    """The simulator's reports for one window, drawn by the workers, as a crash feed."""

    name = "simulator"

    def __init__(self, reports: list) -> None:
        self._reports = reports

    def reports(self, *, since, now):
        return iter(self._reports)


class HotPackageSource:
    """One release's updates of a fast-moving package, renamed: ~50 versions in the window."""

    name = "simulator"
    can_write = True
    tracks_percentage = False

    def __init__(self, plan: SeedPlan) -> None:
        from packages.sources.simulator import Simulator

        self.simulator = Simulator(seed=plan.seed + 1000, packages=1, mean_days_between_updates=1.6)

    def releases(self):
        return self.simulator.releases()[2:3]  # noble

    def publications(self, *, release: str, since, now, watch=None):
        from dataclasses import replace

        for record in self.simulator.publications(
            release=release, since=since, now=now, watch=watch
        ):
            yield replace(record, source_package=HOT_PACKAGE)


def _analyze() -> None:
    """The planner's statistics of every table, as autovacuum would gather them."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _written_back(pending: list[int]) -> None:
    """What percentages_write_back leaves after the simulated archive took every write.

    The simulator accepts any percentage, so the outcome is known; the service's
    per-publication round trips (about 80 events/s measured) would add ten minutes to
    seeding, so the bench records the same outcome in two statements.
    """
    from django.db.models import F

    from packages.models import PhasingEvent, Publication, WriteBack

    events = PhasingEvent.objects.filter(pk__in=pending, write_back=WriteBack.PENDING)
    touched = set(events.values_list("publication_id", flat=True))
    events.update(write_back=WriteBack.APPLIED, write_back_detail="recorded by the simulator")
    Publication.objects.filter(pk__in=touched).update(
        source_percentage=F("phased_update_percentage")
    )
    pending.clear()


def seed(plan: SeedPlan, *, log=print) -> dict:
    """Fill the (migrated, empty) database; returns what it took."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db.models import Q
    from django.test.utils import override_settings

    from overview.controller import tick as controller
    from overview.evidence.crash_sync import crashes_sync
    from overview.evidence.sources.simulator import SimulatedCrashFeed
    from overview.judges.local import LocalCrashSource
    from overview.management.commands.seed_demo import Command as SeedDemo
    from packages.models import SourceSync
    from packages.roles import ARCHIVE_ADMINS, TRIAGERS
    from packages.services import write_back_deferred
    from packages.services.sync import publications_sync

    started = time.perf_counter()
    call_command("demo_accounts", "--force", verbosity=0)  # a throwaway bench database
    simulator = _simulator(plan)
    hot = HotPackageSource(plan)
    feed = SimulatedCrashFeed(simulator)
    crashes = LocalCrashSource(feed=feed)
    windows = _windows(plan)
    replay_start = plan.end_at - timedelta(days=plan.replay_days)
    context = multiprocessing.get_context("fork")
    queues = [context.Queue(maxsize=4) for _ in range(plan.workers)]
    workers = [
        context.Process(
            target=_draw_reports, args=(plan, share, windows, queues[share]), daemon=True
        )
        for share in range(plan.workers)
    ]
    for worker in workers:
        worker.start()
    triager = get_user_model().objects.filter(groups__name=TRIAGERS).first()
    admin = (
        get_user_model()
        .objects.filter(Q(groups__name=ARCHIVE_ADMINS) | Q(is_superuser=True))
        .first()
    )
    demo = SeedDemo()
    timings = {"sync": 0.0, "ingest": 0.0, "tick": 0.0, "wait_for_reports": 0.0}
    reports = ticks = 0
    with (
        override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"),
        write_back_deferred() as pending,
    ):
        t = time.perf_counter()
        publications_sync(simulator, now=replay_start)
        publications_sync(hot, now=replay_start)
        _analyze()
        timings["sync"] += time.perf_counter() - t
        for index, (since, moment) in enumerate(windows):
            t = time.perf_counter()
            batch = [record for queue in queues for record in queue.get()]
            timings["wait_for_reports"] += time.perf_counter() - t
            if moment > replay_start:
                t = time.perf_counter()
                window = since - HOUR
                publications_sync(simulator, now=moment, since=window)
                publications_sync(hot, now=moment, since=window)
                timings["sync"] += time.perf_counter() - t
            t = time.perf_counter()
            reports += crashes_sync(
                LocalCrashSource(feed=DrawnReports(batch)), since=since, now=moment
            )["inserted"]
            timings["ingest"] += time.perf_counter() - t
            if moment > replay_start:
                t = time.perf_counter()
                decisions = controller.tick(now=moment, crash_source=crashes)
                timings["tick"] += time.perf_counter() - t
                ticks += 1
                _written_back(pending)
                halts = [d for d in decisions if d.action == "halt"]
                if halts and triager and admin:
                    demo._triage_false_alarms(feed, halts, triager, admin, moment)
            if index % (24 // plan.step_hours) == 0:
                _analyze()
            if index % 8 == 0 or index == len(windows) - 1:
                log(
                    f"  seeded to {moment:%Y-%m-%d %H:%M}: {reports} reports, {ticks} ticks, "
                    f"{time.perf_counter() - started:.0f} s"
                )
        _written_back(pending)
    for worker in workers:
        worker.join(timeout=30)
    took = time.perf_counter() - started
    SourceSync.objects.update_or_create(
        name=SEED_MARK,
        defaults={
            "kind": "bench",
            "last_attempt_at": plan.end_at,
            "last_success_at": plan.end_at,
            "last_summary": {
                "plan": asdict(plan),
                "seconds": round(took, 1),
                "timings": {k: round(v, 1) for k, v in timings.items()},
                "ticks": ticks,
            },
        },
    )
    return {"seconds": took, "timings": timings, "reports": reports, "ticks": ticks}


def seeded_plan() -> dict | None:
    """The plan the database was seeded with, or None when it was not (completely)."""
    from packages.models import SourceSync

    mark = SourceSync.objects.filter(name=SEED_MARK).first()
    return mark.last_summary if mark else None


def sizes() -> dict[str, int]:
    from overview.models import BucketVersionStat, CrashReport, ErrorBucket, Problem
    from packages.models import ACTIVE_STATES, PhasingEvent, Publication, Release

    return {
        "releases": Release.objects.count(),
        "publications": Publication.objects.count(),
        "active_publications": Publication.objects.filter(state__in=ACTIVE_STATES).count(),
        "phasing_events": PhasingEvent.objects.count(),
        "error_buckets": ErrorBucket.objects.count(),
        "problems": Problem.objects.count(),
        "bucket_version_stats": BucketVersionStat.objects.count(),
        "crash_reports": CrashReport.objects.count(),
    }


if __name__ == "__main__":  # python -m bench.seed: seed the bench database by hand
    from bench.env import setup_django

    setup_django()
    print(seed(SeedPlan()), file=sys.stderr)
    print(sizes())
