"""The settled tick at N updates in phasing, split per release over two processes, as a
deployment with PHASING_TICK_PER_RELEASE=1 runs it: the beat's tick sends one task per
release, in release order, and the Procfile's worker (two processes unless
CELERY_CONCURRENCY says more) takes them as each process comes free (docs/scaling.md, "The
tick split per release, on several workers").

Run as `python -m bench.tick_split N`: prints one JSON line. The measured ticks commit, as
the workers' do, so they run on copies of the bench database (CREATE DATABASE ... TEMPLATE):
one settled as bench.controller's settled ticks start (every due step taken, the
judgements kept), and one copy of that for each run, dropped after. For each share of
changed updates, the same ticks in one process and then in two, each on a fresh copy, so the
two figures differ only in the processes. The processes are started (spawned, with their
own connections, as workers are) and ready before the clock starts; it stops when the last
release is decided. The judged and stepped counts are summed over the processes.
"""

from __future__ import annotations

import json
import multiprocessing
import queue
import sys
import time
import traceback
from collections import Counter
from datetime import timedelta

from bench.controller import active_and_synced, crash_source
from bench.env import DB_NAME, cache_clear, peak_rss_mib, peak_rss_reset, psql

WORKERS = 2
SETTLED = f"{DB_NAME}_split_settled"
RUN = f"{DB_NAME}_split_run"
WAIT = 900  # seconds a process may take to start or to tick its releases


def _drop(name: str) -> None:
    psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _copy(name: str, template: str) -> None:
    from django.db import connection

    connection.close()  # a template must have no connection open
    _drop(name)
    psql(f"CREATE DATABASE {name} TEMPLATE {template}")


def _use(name: str) -> None:
    """Point Django's connection at another database (as its test runner does)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name


def _worker(db, moved, later, warm, releases, go, results) -> None:
    """One worker process: warm (a dry run of the smallest release, as a worker has run
    ticks before), ready, then the releases it takes from the queue as it comes free, with
    the changed updates' judgements left out of the cache's answer (as a changed input's
    digest would leave them)."""
    try:
        from bench.env import setup_django

        setup_django(db)
        from overview.controller import tick as controller
        from overview.judges import pipeline as judging
        from overview.judges import reuse

        _, source = crash_source()
        recall, judge = reuse.recall, judging._judge
        runs = [0]

        def partial(keys):
            return {pk: j for pk, j in recall(keys).items() if pk not in moved}

        def counted(*args, **kwargs):
            runs[0] += 1
            return judge(*args, **kwargs)

        reuse.recall, judging._judge = partial, counted
        controller.tick(now=later, crash_source=source, releases=[warm], dry_run=True)
        runs[0] = 0
        results.put({"ready": True})
        go.wait(WAIT)
        peak_rss_reset()
        decisions, taken = [], 0
        # Blocking gets until this process's end mark: a queue's get_nowait fails while
        # another process is reading, which would leave one process every release.
        while (release := releases.get(timeout=WAIT)) is not None:
            decisions += controller.tick(now=later, crash_source=source, releases=[release])
            taken += 1
        results.put(
            {
                "judged": runs[0],
                "stepped": sum(d.action == "advance" for d in decisions),
                "releases": taken,
                "updates": len(decisions),
                "peak_rss_mib": peak_rss_mib(),
            }
        )
    except Exception:
        results.put({"error": traceback.format_exc()[-2000:]})


def _ticked(processes: int, moved: set[int], later, order: list[int], warm: int) -> dict:
    """The releases in `order` ticked by `processes` processes on the run's copy."""
    context = multiprocessing.get_context("spawn")
    releases, results, go = context.Queue(), context.Queue(), context.Event()
    workers = [
        context.Process(target=_worker, args=(RUN, moved, later, warm, releases, go, results))
        for _ in range(processes)
    ]
    try:
        for process in workers:
            process.start()
        ready = [results.get(timeout=WAIT) for _ in workers]
        failed = [r["error"] for r in ready if "error" in r]
        if failed:
            return {"error": failed[0]}
        for release in [*order, *[None] * processes]:  # then an end mark for each
            releases.put(release)
        started = time.perf_counter()
        go.set()
        figures = [results.get(timeout=WAIT) for _ in workers]
        took = time.perf_counter() - started
    except queue.Empty:
        return {"error": f"a process gave no answer within {WAIT} s"}
    finally:
        for process in workers:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
    failed = [f["error"] for f in figures if "error" in f]
    if failed:
        return {"error": failed[0]}
    return {
        "wall_s": round(took, 3),
        "judged": sum(f["judged"] for f in figures),
        "stepped": sum(f["stepped"] for f in figures),
        "peak_rss_mib": max(f["peak_rss_mib"] for f in figures),
        "releases_per_process": [f["releases"] for f in figures],
        "updates_per_process": [f["updates"] for f in figures],
    }


def _settle(n: int, source, now) -> None:
    """The settled copy: n updates in phasing, two ticks a beat apart committed."""
    from django.conf import settings

    from overview.controller import tick as controller

    _copy(SETTLED, DB_NAME)
    _use(SETTLED)
    active_and_synced(n, now)
    settings.PHASING_JUDGEMENT_REUSE = True
    cache_clear()
    controller.tick(now=now, crash_source=source)
    controller.tick(now=now + settings.PHASING_TICK_INTERVAL, crash_source=source)
    _use(DB_NAME)


def _share_ticked(share: float, later) -> dict:
    """One share changed: its ticks in one process, then in WORKERS, each on a fresh copy."""
    from overview.controller.tick import _in_phasing, releases_in_phasing
    from packages.models import Publication

    _use(SETTLED)
    active = sorted(_in_phasing().values_list("pk", flat=True))
    moved = set(active[: round(share * len(active))])
    changed = Publication.objects.filter(pk__any=moved)
    # As the beat sends them: one task per release, in release order.
    order = releases_in_phasing()
    sizes = Counter(_in_phasing().values_list("release_id", flat=True))
    warm = min(order, key=lambda release: sizes[release])
    runs = {}
    for processes in (1, WORKERS):
        _copy(RUN, SETTLED)
        _use(RUN)
        changed.update(last_increase_at=later - timedelta(days=1))
        _use(DB_NAME)
        runs[processes] = _ticked(processes, moved, later, order, warm)
        _drop(RUN)
    if "error" in runs[WORKERS] or "error" in runs[1]:
        return {"changed": len(moved), "error": (runs[WORKERS] | runs[1])["error"]}
    return {
        "changed": len(moved),
        **runs[WORKERS],
        "one_process_wall_s": runs[1]["wall_s"],
        "one_process_peak_rss_mib": runs[1]["peak_rss_mib"],
    }


def measure(n: int, changed=(0.0, 0.1, 1.0)) -> dict:
    from django.conf import settings

    plan, source = crash_source()
    now = plan.end_at + timedelta(hours=6)
    later = now + 2 * settings.PHASING_TICK_INTERVAL
    try:
        _settle(n, source, now)
        return {f"{round(share * 100)}%_changed": _share_ticked(share, later) for share in changed}
    finally:
        _use(DB_NAME)
        _drop(RUN)
        _drop(SETTLED)


if __name__ == "__main__":
    from bench.env import setup_django

    setup_django()
    print(json.dumps(measure(int(sys.argv[1]))))
