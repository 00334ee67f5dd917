"""The settled tick at N updates in phasing, split per release over two processes, as a
deployment with PHASING_TICK_PER_RELEASE=1 runs it: the beat's tick sends one task per
release and the Procfile's worker (two processes unless CELERY_CONCURRENCY says more) takes
two at once (docs/scaling.md, "The tick split per release, on several workers").

Run as `python -m bench.tick_split N`: prints one JSON line. The measured ticks commit, as
the workers' do, so they run on copies of the bench database (CREATE DATABASE ... TEMPLATE):
one settled as bench.controller's settled ticks start (every due step taken, the
judgements kept), and one copy of that for each share of changed updates, each dropped
after. Each process is forked with the settled state in memory and ticks its releases, as a
worker takes its tasks; the figure is the wall time from the first release's start to the
last one's end, and the judged and stepped counts are summed over both.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from datetime import timedelta

from bench.env import DB_NAME, cache_clear, peak_rss_mib, peak_rss_reset, psql

WORKERS = 2
SETTLED = f"{DB_NAME}_split_settled"
RUN = f"{DB_NAME}_split_run"


def _copy(name: str, template: str) -> None:
    from django.db import connection

    connection.close()  # a template must have no connection open
    psql(f"DROP DATABASE IF EXISTS {name}")
    psql(f"CREATE DATABASE {name} TEMPLATE {template}")


def _use(name: str) -> None:
    """Point Django's connection at another database (as its test runner does)."""
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name


def _shares(sizes: dict[int, int], workers: int) -> list[list[int]]:
    """Releases dealt to the workers, largest first to the least loaded (as a queue of
    tasks taken by whichever worker is free ends up, near enough)."""
    loads, groups = [0] * workers, [[] for _ in range(workers)]
    for release, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        least = loads.index(min(loads))
        groups[least].append(release)
        loads[least] += size
    return [group for group in groups if group]


def _worker(releases, moved, later, source, results) -> None:
    """One worker process: its releases' ticks, with the changed updates' judgements left
    out of the cache's answer (as a changed input's digest would leave them)."""
    from overview.controller import tick as controller
    from overview.judges import pipeline as judging
    from overview.judges import reuse

    recall, judge = reuse.recall, judging._judge
    runs = [0]

    def partial(keys):
        return {pk: j for pk, j in recall(keys).items() if pk not in moved}

    def counted(*args, **kwargs):
        runs[0] += 1
        return judge(*args, **kwargs)

    reuse.recall, judging._judge = partial, counted
    peak_rss_reset()
    decisions = []
    for release in releases:
        decisions += controller.tick(now=later, crash_source=source, releases=[release])
    stepped = sum(d.action == "advance" for d in decisions)
    results.put({"judged": runs[0], "stepped": stepped, "peak_rss_mib": peak_rss_mib()})


def _settle(n: int, source, now) -> None:
    """The settled copy: n updates in phasing, two ticks a beat apart committed."""
    from django.conf import settings

    from bench.controller import _set_active
    from overview.controller import tick as controller
    from packages.models import SourceSync

    _copy(SETTLED, DB_NAME)
    _use(SETTLED)
    _set_active(n)
    SourceSync.objects.update_or_create(
        name="simulator:crashes",
        defaults={"kind": "crashes", "last_attempt_at": now, "last_success_at": now},
    )
    settings.PHASING_JUDGEMENT_REUSE = True
    cache_clear()
    controller.tick(now=now, crash_source=source)
    controller.tick(now=now + settings.PHASING_TICK_INTERVAL, crash_source=source)
    _use(DB_NAME)


def _split_tick(share: float, source, later) -> dict:
    from django.db import connection
    from django.db.models import Count

    from overview.controller.tick import _in_phasing
    from packages.models import Publication

    _copy(RUN, SETTLED)
    _use(RUN)
    active = sorted(_in_phasing().values_list("pk", flat=True))
    moved = set(active[: round(share * len(active))])
    Publication.objects.filter(pk__in=moved).update(last_increase_at=later - timedelta(days=1))
    sizes = dict(
        _in_phasing()
        .order_by()
        .values_list("release_id")
        .annotate(n=Count("id"))
        .values_list("release_id", "n")
    )
    groups = _shares(sizes, WORKERS)
    connection.close()  # each process opens its own
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [
        context.Process(target=_worker, args=(group, moved, later, source, results))
        for group in groups
    ]
    started = time.perf_counter()
    for process in workers:
        process.start()
    figures = [results.get() for _ in workers]
    for process in workers:
        process.join()
    took = time.perf_counter() - started
    _use(DB_NAME)
    psql(f"DROP DATABASE IF EXISTS {RUN}")
    return {
        "changed": len(moved),
        "wall_s": round(took, 3),
        "judged": sum(f["judged"] for f in figures),
        "stepped": sum(f["stepped"] for f in figures),
        "peak_rss_mib": max(f["peak_rss_mib"] for f in figures),
        "releases_per_worker": [len(group) for group in groups],
        "updates_per_worker": [sum(sizes[r] for r in group) for group in groups],
    }


def measure(n: int, changed=(0.0, 0.1, 1.0)) -> dict:
    from django.conf import settings

    from bench.seed import SeedPlan, _simulator
    from overview.evidence.sources.simulator import SimulatedCrashFeed
    from overview.judges.local import LocalCrashSource

    plan = SeedPlan()
    source = LocalCrashSource(feed=SimulatedCrashFeed(_simulator(plan)))
    now = plan.end_at + timedelta(hours=6)
    later = now + 2 * settings.PHASING_TICK_INTERVAL
    try:
        _settle(n, source, now)
        return {
            f"{round(share * 100)}%_changed": _split_tick(share, source, later) for share in changed
        }
    finally:
        _use(DB_NAME)
        psql(f"DROP DATABASE IF EXISTS {RUN}")
        psql(f"DROP DATABASE IF EXISTS {SETTLED}")


if __name__ == "__main__":
    from bench.env import setup_django

    setup_django()
    print(json.dumps(measure(int(sys.argv[1]))))
