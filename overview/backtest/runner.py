"""The backtest: the product's own controller, hour by hour, over scenarios with known truth.

In a scratch database of its own (an in-memory one on the embedded SQLite default, a
temporary one on PostgreSQL), each judge in turn: the updates are published at the
scenario's start with fifteen days of the previous version's crash history behind them;
every hour the simulated machines (overview.backtest.world) crash at the percentage the
controller set, their reports go through the real ingest, and the real tick decides, with
the policy's judge set to the one under test. Nobody resumes a halted update. No server,
no broker: write-backs are recorded, emails stay in memory.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections
from django.test.utils import override_settings, setup_databases, teardown_databases

from overview.backtest.archive import archive_setup
from overview.backtest.scenarios import Scenario, Update
from overview.backtest.world import UpdateWorld
from overview.controller import rule
from overview.controller import tick as controller
from overview.evidence.ingest import crash_reports_ingest
from overview.judges.local import LocalCrashSource
from overview.models import (
    Assessment,
    FleetReport,
    Problem,
    ProblemKind,
)
from packages.models import (
    PhasingEvent,
    Publication,
)
from packages.services.writeback import percentages_mark_applied, write_back_deferred

HOUR = timedelta(hours=1)


@dataclass
class Outcome:
    """One update under one judge: the backtest's output line."""

    id: str
    judge: str
    halted: bool
    halted_at_hour: int | None
    halt_reason: str | None
    percentage_at_halt: int | None
    final_percentage: int
    final_state: str
    hours_to_100: int | None
    machine_hours_on_new_version: float
    crashes_on_new_version: int
    verdict: str
    # What the summary counts for a halted update (machines keep a version they installed).
    machine_hours_before_halt: float | None = None

    def line(self) -> dict[str, object]:
        fields = dict(self.__dict__)
        fields["machine_hours_on_new_version"] = round(self.machine_hours_on_new_version, 1)
        if self.machine_hours_before_halt is not None:
            fields["machine_hours_before_halt"] = round(self.machine_hours_before_halt, 1)
        # (None when it never halted: then every machine-hour on it counts.)
        return fields


@contextlib.contextmanager
def scratch_database() -> Iterator[None]:
    """A database of the backtest's own, made and dropped around it."""
    test_settings = settings.DATABASES["default"].setdefault("TEST", {})
    if connection.vendor != "sqlite":
        test_settings["NAME"] = f"phasing_backtest_{os.getpid()}"
    state = setup_databases(verbosity=0, interactive=False, aliases={"default": {}})
    try:
        yield
    finally:
        teardown_databases(state, verbosity=0)


def run(
    scenario: Scenario,
    *,
    judges: Sequence[str],
    seed: int,
    progress: Callable[[int], None] | None = None,
    uptake_estimate_factor: float = 1.0,
    jobs: int = 1,
    world: str = "tidy",
) -> list[Outcome]:
    """Every update under every judge; `progress` is told of each simulated hour. With
    `jobs` above 1 the judges run side by side, each in a process and database of its own
    (they share nothing but the scenario), so two judges take the time of one."""
    if jobs > 1 and len(judges) > 1:
        return _run_side_by_side(
            scenario, judges, seed, progress, uptake_estimate_factor, jobs, world
        )
    outcomes: list[Outcome] = []
    with scratch_database():
        for judge in judges:
            call_command("flush", interactive=False, verbosity=0)
            with override_settings(
                EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
                PHASING_UPTAKE_ESTIMATE_FACTOR=uptake_estimate_factor,
            ):
                outcomes.extend(_run_judge(scenario, judge, seed, progress, world))
    return outcomes


def run_here(
    scenario: Scenario, *, judge: str, seed: int = 1, world: str = "tidy"
) -> list[Outcome]:
    """One judge over the scenario in the current database, which must hold nothing the
    scenario makes (a test's database): how a test or another tool embeds the backtest."""
    with override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"):
        return _run_judge(scenario, judge, seed, None, world)


def _run_side_by_side(
    scenario: Scenario,
    judges: Sequence[str],
    seed: int,
    progress: Callable[[int], None] | None,
    uptake_estimate_factor: float,
    jobs: int,
    world: str,
) -> list[Outcome]:
    # Forked children must not share the parent's database connection.
    connections.close_all()
    context = multiprocessing.get_context("fork")
    with context.Manager() as manager, ProcessPoolExecutor(jobs, mp_context=context) as pool:
        hours = manager.Queue()
        futures = [
            pool.submit(_run_child, scenario, judge, seed, uptake_estimate_factor, hours, world)
            for judge in judges
        ]
        while not all(future.done() for future in futures) or not hours.empty():
            try:
                hours.get(timeout=0.5)
            except queue.Empty:
                continue
            if progress:
                progress(1)
        # In the judges' order; a child's failure is raised here.
        return [outcome for future in futures for outcome in future.result()]


def _run_child(
    scenario: Scenario,
    judge: str,
    seed: int,
    uptake_estimate_factor: float,
    hours: queue.Queue,
    world: str,
) -> list[Outcome]:
    return run(
        scenario,
        judges=[judge],
        seed=seed,
        progress=hours.put,
        uptake_estimate_factor=uptake_estimate_factor,
        world=world,
    )


def _run_judge(
    scenario: Scenario,
    judge: str,
    seed: int,
    progress: Callable[[int], None] | None,
    world_name: str = "tidy",
) -> list[Outcome]:
    spec = scenario.world_spec(world_name)
    publications = archive_setup(scenario, judge, seed, spec)
    worlds = {
        pk: UpdateWorld(update, seed=seed, spec=spec, start=scenario.start)
        for pk, update in publications.items()
    }
    halts: dict[int, tuple[int, int, float]] = {}  # pk → (hour, percentage, machine-hours)
    source = LocalCrashSource()
    for hour in range(scenario.hours):
        percentages = dict(
            Publication.objects.filter(pk__in=publications).values_list(
                "pk", "phased_update_percentage"
            )
        )
        reports = []
        _fleet_reports(worlds, percentages, hour, scenario.start + hour * HOUR)
        for pk, world in worlds.items():
            reports.extend(world.hour(hour, scenario.start, percentages[pk]))
        # The scenario's clock: its reports are as old as its hours, whatever today is.
        crash_reports_ingest(reports, now=scenario.start + (hour + 1) * HOUR)
        with write_back_deferred() as pending:
            decisions = controller.tick(now=scenario.start + (hour + 1) * HOUR, crash_source=source)
        percentages_mark_applied(event_ids=pending, detail="backtest")
        for decision in decisions:
            if decision.action == rule.Action.HALT and decision.publication_id not in halts:
                world = worlds[decision.publication_id]
                halts[decision.publication_id] = (
                    hour + 1,
                    decision.old_percentage,
                    world.truth.machine_hours_on_new,
                )
        if progress:
            progress(1)
    return _outcomes(publications, worlds, halts, judge)


def _fleet_reports(
    worlds: dict[int, UpdateWorld], percentages: dict[int, int], hour: int, start: datetime
) -> None:
    """What the fleet agents report in this hour (world factor fleet_agents_per_hour), as
    the intake stores it: a machine's latest report per update."""
    rows = {
        (pk, machine): FleetReport(
            machine=machine,
            publication_id=pk,
            installed_version=world.update.version if on_new else world.update.previous_version,
            on_new_version=on_new,
            reported_at=start + HOUR / 2,
            day=start.date(),
        )
        for pk, world in worlds.items()
        for machine, on_new in world.fleet(hour, percentages[pk])
    }
    if rows:
        FleetReport.objects.bulk_create(
            list(rows.values()),
            update_conflicts=True,
            unique_fields=["publication", "machine"],
            update_fields=["installed_version", "on_new_version", "reported_at", "day"],
        )


def _outcomes(
    publications: dict[int, Update],
    worlds: dict[int, UpdateWorld],
    halts: dict[int, tuple[int, int, float]],
    judge: str,
) -> list[Outcome]:
    finals = {p.pk: p for p in Publication.objects.filter(pk__in=publications)}
    verdicts = dict(
        Assessment.objects.filter(publication__in=publications).values_list(
            "publication", "verdict"
        )
    )
    # What halted it: the problems found by the hour of the halt, not those seen after.
    kinds: dict[int, set[str]] = {}
    for publication_id, kind, found in Problem.objects.filter(publication__in=halts).values_list(
        "publication_id", "kind", "detected_at"
    ):
        publication = finals[publication_id]
        if found <= publication.date_published + halts[publication_id][0] * HOUR:
            kinds.setdefault(publication_id, set()).add(kind)
    # The first event at 100% (a watched update's completion comes later, at 100% too).
    completed = dict(
        PhasingEvent.objects.filter(publication__in=publications, new_percentage__gte=100)
        .order_by("-created_at")
        .values_list("publication_id", "created_at")
    )
    outcomes = []
    for pk, update in publications.items():
        final, world = finals[pk], worlds[pk]
        halt = halts.get(pk)
        reason = None
        if halt is not None:
            reason = _halt_reason(kinds.get(pk, set()))
        reached = completed.get(pk)
        outcomes.append(
            Outcome(
                id=update.id,
                judge=judge,
                halted=halt is not None,
                halted_at_hour=halt[0] if halt else None,
                halt_reason=reason,
                percentage_at_halt=halt[1] if halt else None,
                final_percentage=final.phased_update_percentage,
                final_state=final.state,
                hours_to_100=int((reached - final.date_published) / HOUR) if reached else None,
                machine_hours_on_new_version=world.truth.machine_hours_on_new,
                crashes_on_new_version=world.truth.crashes_on_new,
                verdict=verdicts.get(pk, "insufficient"),
                machine_hours_before_halt=halt[2] if halt else None,
            )
        )
    return outcomes


def _halt_reason(kinds: set[str]) -> str:
    """What halted an update, the first of its problems' kinds in this order."""
    if ProblemKind.NEW_BUCKET in kinds:
        return "new-bucket"
    if ProblemKind.DEPENDENTS in kinds and ProblemKind.INCREASED_RATE not in kinds:
        return "dependents"
    return "increased-rate"
