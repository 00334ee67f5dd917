"""/metrics in Prometheus' text format, computed from the database at each scrape.

Read from the database, not counted in memory: the figures are the same whichever web
process answers, and jobs that ran in a Celery worker are seen. Only aggregate counts
and timings: no package, bucket or report is named, so nothing restricted can leak.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import Count, Q
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from overview.models import Notification, PeriodicRun, Problem
from overview.monitoring.health import broker_queue_length, crash_data_ages
from packages.models import EventKind, PhasingEvent, PhasingState, Pocket, Publication, WriteBack


class PhasingCollector(Collector):
    def __init__(self, *, now: datetime) -> None:
        self.now = now

    def collect(self) -> Iterator[Metric]:
        yield from self._updates()
        yield from self._halts()
        yield from self._jobs()
        yield from self._sources()
        yield from self._queue()

    def _updates(self) -> Iterator[Metric]:
        updates = GaugeMetricFamily(
            "phasing_updates",
            "Publications in the Updates pocket, by release and phasing state.",
            labels=["release", "state"],
        )
        halted = GaugeMetricFamily(
            "phasing_halted_updates",
            "Updates halted now, by release and why: problems (the controller) or pulled "
            "(a person).",
            labels=["release", "reason"],
        )
        held = GaugeMetricFamily(
            "phasing_held_updates",
            "Updates in phasing that the controller holds now, by release and why "
            "(judge_failed: the policy's judge failed for the update; crash_data_unavailable, "
            "controller_error, waiting, ...).",
            labels=["release", "reason"],
        )
        rows = (
            Publication.objects.filter(pocket=Pocket.UPDATES)
            .values_list("release__codename", "state", "hold_reason")
            .annotate(n=Count("id"))
            .order_by()
        )
        by_state: dict[tuple[str, str], int] = {}
        for release, state, hold_reason, n in rows:
            by_state[(release, state)] = by_state.get((release, state), 0) + n
            if state == PhasingState.HALTED:
                halted.add_metric([release, hold_reason or "problems"], n)
            elif state == PhasingState.PHASING and hold_reason:
                held.add_metric([release, hold_reason], n)
        for (release, state), n in sorted(by_state.items()):
            updates.add_metric([release, state], n)
        yield updates
        yield halted
        yield held

    def _halts(self) -> Iterator[Metric]:
        halts = CounterMetricFamily(
            "phasing_halts",
            "Halts recorded since the start, by who halted: the controller or a person.",
            labels=["by"],
        )
        counts = PhasingEvent.objects.filter(kind=EventKind.HALTED).aggregate(
            controller=Count("id", filter=Q(actor_name="controller")),
            person=Count("id", filter=~Q(actor_name="controller")),
        )
        for by, n in counts.items():
            halts.add_metric([by], n)
        yield halts
        kinds = GaugeMetricFamily(
            "phasing_halt_problems",
            "Active problems of the updates halted now, by kind and whether an override "
            "covers them.",
            labels=["kind", "overridden"],
        )
        rows = (
            Problem.objects.filter(active=True, publication__state=PhasingState.HALTED)
            .with_covering_override()
            .values_list("kind", "covering_override_id")  # type: ignore[misc]  # an annotation
        )
        problem_counts: dict[tuple[str, str], int] = {}
        for kind, covering in rows:
            key = (kind, "true" if covering else "false")
            problem_counts[key] = problem_counts.get(key, 0) + 1
        for (kind, overridden), n in sorted(problem_counts.items()):
            kinds.add_metric([kind, overridden], n)
        yield kinds

    def _jobs(self) -> Iterator[Metric]:
        duration = GaugeMetricFamily(
            "phasing_job_duration_seconds",
            "How long the last run of each periodic job took (tick, sync:publications, "
            "sync:crashes).",
            labels=["job"],
        )
        success = GaugeMetricFamily(
            "phasing_job_last_success_timestamp_seconds",
            "When each periodic job last finished without error (Unix time).",
            labels=["job"],
        )
        failed = GaugeMetricFamily(
            "phasing_job_last_run_failed",
            "1 when the last run of the job raised an error.",
            labels=["job"],
        )
        for run in PeriodicRun.objects.order_by("name"):
            if run.last_duration_seconds is not None:
                duration.add_metric([run.name], run.last_duration_seconds)
            if run.last_success_at is not None:
                success.add_metric([run.name], run.last_success_at.timestamp())
            failed.add_metric([run.name], 1 if run.last_error else 0)
        yield from (duration, success, failed)

    def _sources(self) -> Iterator[Metric]:
        age = GaugeMetricFamily(
            "phasing_crash_data_age_seconds",
            "Seconds since each crash source last synced successfully (absent: never).",
            labels=["source"],
        )
        for source, seconds in crash_data_ages(self.now).items():
            if seconds is not None:
                age.add_metric([source], seconds)
        yield age
        write_backs = GaugeMetricFamily(
            "phasing_write_back_events",
            "Phasing events whose percentage is still to be written to the publication "
            "source (pending) or whose write failed (failed).",
            labels=["status"],
        )
        counts = PhasingEvent.objects.aggregate(
            pending=Count("id", filter=Q(write_back=WriteBack.PENDING)),
            failed=Count("id", filter=Q(write_back=WriteBack.FAILED)),
        )
        for status, n in counts.items():
            write_backs.add_metric([status], n)
        yield write_backs
        emails = GaugeMetricFamily(
            "phasing_emails_pending",
            "Halt emails not sent yet, and of those how many failed at least once.",
            labels=["status"],
        )
        unsent = Notification.objects.filter(sent_at__isnull=True).aggregate(
            pending=Count("id"), failed=Count("id", filter=~Q(error=""))
        )
        for status, n in unsent.items():
            emails.add_metric([status], n)
        yield emails

    def _queue(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("phasing_broker_up", "1 when the Celery broker answered.")
        length = GaugeMetricFamily(
            "phasing_queue_length", "Tasks waiting in the Celery queue for a worker."
        )
        try:
            waiting = broker_queue_length()
        except Exception:
            up.add_metric([], 0)
        else:
            up.add_metric([], 1)
            length.add_metric([], waiting)
        yield up
        yield length
