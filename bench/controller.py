"""One controller tick at 200, 2,000 and 20,000 publications in phasing; each in its own process.

Run as `python -m bench.controller N`: prints one JSON line. The tick runs at six hours
after the seeded end (every update in phasing is due a step), inside a transaction that
is rolled back, so the bench database is left as it was.
"""

from __future__ import annotations

import json
import re
import resource
import subprocess
import sys
import time
from datetime import timedelta

from bench.env import ROOT, product_env


def _set_active(n: int) -> int:
    """Make exactly n Updates publications active: trim, or wake superseded ones."""
    from packages.models import ACTIVE_STATES, Pocket, Publication

    active = list(
        Publication.objects.filter(state__in=ACTIVE_STATES, pocket=Pocket.UPDATES)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if len(active) > n:
        Publication.objects.filter(pk__in=active[n:]).update(state="superseded")
        return n
    wake = list(
        Publication.objects.filter(state="superseded", pocket=Pocket.UPDATES)
        .order_by("-date_published", "-pk")
        .values_list("pk", flat=True)[: n - len(active)]
    )
    # As if these had not been superseded yet: phasing, due their next step.
    Publication.objects.filter(pk__in=wake).update(
        state="phasing", status="published", hold_reason="", phased_update_percentage=30
    )
    return len(active) + len(wake)


def _writes(captured: list[dict]) -> dict[str, int]:
    """How many times each INSERT, UPDATE or DELETE statement ran: a write split in batches
    repeats the same statement (the same table and columns)."""
    counts: dict[str, int] = {}
    for query in captured:
        if re.match(r"\s*(INSERT INTO|UPDATE|DELETE FROM)\s", query["sql"]):
            key = query["sql"][:160]
            counts[key] = counts.get(key, 0) + 1
    return counts


def measure(n: int) -> dict:
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from bench.seed import SeedPlan, _simulator
    from overview.controller import tick as controller
    from overview.evidence.sources.simulator import SimulatedCrashFeed
    from overview.judges.local import LocalCrashSource
    from packages.models import SourceSync

    plan = SeedPlan()
    source = LocalCrashSource(feed=SimulatedCrashFeed(_simulator(plan)))
    now = plan.end_at + timedelta(hours=6)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with transaction.atomic():
        actual = _set_active(n)
        # As if the crash sync had just run: the local source refuses stale crash data.
        SourceSync.objects.update_or_create(
            name="simulator:crashes",
            defaults={"kind": "crashes", "last_attempt_at": now, "last_success_at": now},
        )
        runs = []
        for capture in (False, True):
            savepoint = transaction.savepoint()
            started = time.perf_counter()
            if capture:
                with CaptureQueriesContext(connection) as queries:
                    decisions = controller.tick(now=now, crash_source=source)
            else:
                decisions = controller.tick(now=now, crash_source=source)
            runs.append(time.perf_counter() - started)
            transaction.savepoint_rollback(savepoint)
        transaction.set_rollback(True)
    actions: dict[str, int] = {}
    for decision in decisions:
        actions[decision.action] = actions.get(decision.action, 0) + 1
    return {
        "publications": actual,
        "wall_s": round(runs[0], 3),
        "queries": len(queries),
        # Writes in batches would repeat a statement per batch: at most one of each here.
        "most_statements_per_write": max(_writes(queries.captured_queries).values(), default=0),
        "decisions": actions,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_before_tick_mib": round(rss_before, 1),
    }


def run(sizes=(200, 2000, 20000), *, timeout: int = 600) -> dict:
    results = {}
    for n in sizes:
        out = subprocess.run(
            [sys.executable, "-m", "bench.controller", str(n)],
            cwd=ROOT,
            env={**__import__("os").environ, **product_env()},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if out.returncode != 0:
            results[str(n)] = {"error": out.stderr[-2000:]}
            continue
        results[str(n)] = json.loads(out.stdout.strip().splitlines()[-1])
    return results


if __name__ == "__main__":
    from bench.env import setup_django

    setup_django()
    print(json.dumps(measure(int(sys.argv[1]))))
