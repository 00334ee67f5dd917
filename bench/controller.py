"""One controller tick at 200, 2,000 and 20,000 publications in phasing; each in its own process.

Run as `python -m bench.controller N`: prints one JSON line. The tick runs at six hours
after the seeded end (every update in phasing is due a step), inside a transaction that
is rolled back, so the bench database is left as it was.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from bench.env import (
    ROOT,
    SCALE,
    cache_clear,
    peak_rss_mib,
    peak_rss_reset,
    product_env,
    rss_mib,
)

RESULTS = ROOT / "bench" / "results"


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


def crash_source():
    """The seeded world's plan, and the crash source the measured ticks ask."""
    from bench.seed import SeedPlan, _simulator
    from overview.evidence.sources.simulator import SimulatedCrashFeed
    from overview.judges.local import LocalCrashSource

    plan = SeedPlan()
    return plan, LocalCrashSource(feed=SimulatedCrashFeed(_simulator(plan)))


def active_and_synced(n: int, now) -> int:
    """Exactly n updates in phasing, with crash data as if the crash sync had just run at
    `now` (the local source refuses stale crash data)."""
    from packages.models import SourceSync

    actual = _set_active(n)
    SourceSync.objects.update_or_create(
        name="simulator:crashes",
        defaults={"kind": "crashes", "last_attempt_at": now, "last_success_at": now},
    )
    return actual


def measure(n: int) -> dict:
    from django.conf import settings
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from overview.controller import tick as controller

    plan, source = crash_source()
    now = plan.end_at + timedelta(hours=6)
    with transaction.atomic():
        actual = active_and_synced(n, now)
        runs, peaks = [], []
        reuse_on = settings.PHASING_JUDGEMENT_REUSE
        settings.PHASING_JUDGEMENT_REUSE = False  # the cold tick judges every update
        rss_before = rss_mib()
        for capture in (False, True):
            savepoint = transaction.savepoint()
            peak_rss_reset()
            started = time.perf_counter()
            if capture:
                with CaptureQueriesContext(connection) as queries:
                    decisions = controller.tick(now=now, crash_source=source)
            else:
                decisions = controller.tick(now=now, crash_source=source)
            runs.append(time.perf_counter() - started)
            peaks.append(peak_rss_mib())
            transaction.savepoint_rollback(savepoint)
        settings.PHASING_JUDGEMENT_REUSE = True
        reused = _ticks_reusing(controller, source, now, changed=(0.0, 0.1, 1.0))
        settings.PHASING_JUDGEMENT_REUSE = reuse_on
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
        # The peak of the cold tick itself (not of the one that captures its queries).
        "peak_rss_mib": peaks[0],
        "rss_before_tick_mib": rss_before,
        # The tick again with the judgements kept by a first one, when a share of the
        # updates has new evidence: seconds and the sequential judge's runs.
        "reusing": reused,
    }


def _ticks_reusing(controller, source, now, *, changed) -> dict[str, dict]:
    """Ticks that keep judgements, in a settled world as the beat leaves it: a first tick
    takes every due step and keeps every judgement; a second, one beat later, judges again
    the updates whose percentage those steps changed. One beat later again, ticks in which
    a share of the updates has changed: their kept judgements left out (as a changed
    input's digest would leave them) and each due a step (its last increase a day ago), so
    the tick judges and writes that share. Nothing else is due: an update steps once an
    interval (hours), not at every beat (minutes)."""
    from django.conf import settings
    from django.db import transaction

    from overview.judges import pipeline as judging
    from overview.judges import reuse
    from packages.models import ACTIVE_STATES, Publication

    beat = settings.PHASING_TICK_INTERVAL

    cache_clear()
    settled = transaction.savepoint()
    controller.tick(now=now, crash_source=source)
    controller.tick(now=now + beat, crash_source=source)
    later = now + 2 * beat
    active = sorted(
        Publication.objects.filter(state__in=ACTIVE_STATES).values_list("pk", flat=True)
    )
    recall, judge = reuse.recall, judging._judge
    figures = {}
    for share in changed:
        runs = [0]
        moved = set(active[: round(share * len(active))])

        def partial(keys, moved=moved):
            return {pk: j for pk, j in recall(keys).items() if pk not in moved}

        def counted(*args, runs=runs, **kwargs):
            runs[0] += 1
            return judge(*args, **kwargs)

        savepoint = transaction.savepoint()
        Publication.objects.filter(pk__in=moved).update(last_increase_at=later - timedelta(days=1))
        reuse.recall, judging._judge = partial, counted
        try:
            peak_rss_reset()
            started = time.perf_counter()
            decisions = controller.tick(now=later, crash_source=source)
            took = time.perf_counter() - started
            peak = peak_rss_mib()
            transaction.savepoint_rollback(savepoint)
        finally:
            reuse.recall, judging._judge = recall, judge
        figures[f"{round(share * 100)}%_changed"] = {
            "changed": len(moved),
            "wall_s": round(took, 3),
            "judged": runs[0],
            "stepped": sum(d.action == "advance" for d in decisions),
            "peak_rss_mib": peak,
        }
    transaction.savepoint_rollback(settled)
    return figures


def sizes(scale: int) -> list[int]:
    """Updates in phasing the tick is measured at: today's steps, and the scale's own."""
    return sorted({200, 2000, 20000, 2000 * scale})


def plot(results: dict) -> Path:
    """Tick time and peak memory against updates in phasing, as a PNG beside the JSON."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(
        (r["publications"], r) for r in results.values() if isinstance(r, dict) and "wall_s" in r
    )
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    xs = [n for n, _ in rows]
    left.plot(xs, [r["wall_s"] for _, r in rows], "o-", label="every update judged")
    for key, style in (("10%_changed", "s--"), ("0%_changed", "^:")):
        ys = [r.get("reusing", {}).get(key, {}).get("wall_s") for _, r in rows]
        if any(y is not None for y in ys):
            left.plot(xs, ys, style, label=f"judgements kept, {key.replace('_', ' ')}")
    left.set(xlabel="updates in phasing", ylabel="tick (s)", xscale="log", yscale="log")
    left.legend(fontsize=8)
    right.plot(xs, [r["peak_rss_mib"] for _, r in rows], "o-")
    right.set(xlabel="updates in phasing", ylabel="peak memory (MiB)", xscale="log")
    fig.suptitle("One controller tick against updates in phasing")
    fig.tight_layout()
    path = RESULTS / f"tick-scale-{SCALE}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def run(sizes=(200, 2000, 20000), *, timeout: int = 1800) -> dict:
    results = {}
    for n in sizes:
        results[str(n)] = _measured("bench.controller", str(n), timeout)
    largest = str(max(sizes))
    if SCALE == 1 and "error" not in results.get(largest, {"error": ""}):
        # The same settled ticks split per release over two processes (bench.tick_split),
        # on copies of the database: at scale 1 only, where a copy takes seconds.
        results[largest]["split"] = _measured("bench.tick_split", largest, timeout)
    return results


def _measured(module: str, n: str, timeout: int) -> dict:
    try:
        out = subprocess.run(
            [sys.executable, "-m", module, n],
            cwd=ROOT,
            env={**__import__("os").environ, **product_env()},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:  # one size's figures lost, never the others'
        return {"error": f"{module} {n} took more than {timeout} s"}
    if out.returncode != 0:
        return {"error": out.stderr[-2000:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    from bench.env import setup_django

    setup_django()
    print(json.dumps(measure(int(sys.argv[1]))))
