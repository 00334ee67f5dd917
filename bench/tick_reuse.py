"""One tick judging every update, against ticks reusing kept judgements, on a generated world.

    DATABASE_URL=postgres://.../scratch python -m bench.tick_reuse --updates 300

Cheaper than seeding the bench database: N updates in phasing in one release (each with a
previous version), crash reports of both versions over the last day through the real
ingest, then dry-run ticks (nothing written): every update judged; judgements kept, nothing
changed; 10% and 100% of the updates with changed evidence (their kept judgements left
out, as a changed input's digest would leave them). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from datetime import UTC, datetime, timedelta

from bench.env import peak_rss_mib, peak_rss_reset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--per-hour", type=float, default=2.0)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the world a previous run generated (same --updates), so that this "
        "process's peak memory is the ticks' own, not the generation's",
    )
    parser.add_argument(
        "--plot",
        nargs="+",
        metavar=("PNG", "JSON"),
        help="draw tick time and peak memory against updates in phasing from the JSON lines "
        "of earlier runs (files) into PNG, and stop",
    )
    args = parser.parse_args(argv)
    if args.plot:
        from pathlib import Path

        runs = [
            json.loads(line)
            for name in args.plot[1:]
            for line in Path(name).read_text().splitlines()
            if line.startswith("{")
        ]
        plot(runs, Path(args.plot[0]))
        return 0
    import django

    django.setup()
    from django.conf import settings
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection, transaction

    from bench.ingest_rate import _backend_cpu, _backend_pid

    call_command("migrate", "--noinput", verbosity=0)
    from overview.controller import tick as controller
    from overview.judges import pipeline as judging
    from overview.judges import reuse
    from overview.judges.local import LocalCrashSource
    from overview.models import CrashReport
    from packages.models import Publication, SourceSync

    now = datetime.now(UTC).replace(minute=5, second=0, microsecond=0)
    kept = args.reuse and Publication.objects.count() == args.updates
    if kept:
        # The world's clock: its newest reports came an hour and a half before its `now`.
        newest = CrashReport.objects.order_by("-reported_at").values_list("reported_at", flat=True)
        now = newest[0] + timedelta(hours=1, minutes=30)
    else:
        generated_world(args, now)
    SourceSync.objects.update_or_create(
        name="local:crashes",
        defaults={"kind": "crashes", "last_attempt_at": now, "last_success_at": now},
    )
    source = LocalCrashSource()
    recall, judge = reuse.recall, judging._judge
    runs = [0]

    def counted(*a, **k):
        runs[0] += 1
        return judge(*a, **k)

    def tick(share_changed: float | None, *, dry_run: bool = True) -> dict:
        runs[0] = 0

        def partial(keys):
            found = recall(keys)
            kept = sorted(found.items())
            return dict(kept[round(share_changed * len(kept)) :]) if share_changed else found

        settings.PHASING_JUDGEMENT_REUSE = share_changed is not None
        reuse.recall, judging._judge = partial, counted
        try:
            peak_rss_reset()
            started = time.perf_counter()
            cpu = time.process_time() + _backend_cpu(backend)
            controller.tick(now=now, dry_run=dry_run, crash_source=source)
            took = time.perf_counter() - started
            cpu = time.process_time() + _backend_cpu(backend) - cpu
        finally:
            reuse.recall, judging._judge = recall, judge
        # CPU of this process and its PostgreSQL backend: what the tick costs on a machine
        # shared with other work, where the wall clock says little.
        return {
            "wall_s": round(took, 3),
            "cpu_s": round(cpu, 2),
            "judged": runs[0],
            "peak_rss_mib": peak_rss_mib(),
        }

    backend = _backend_pid(connection)

    cache.clear()
    figures = {"updates": args.updates, "reports": CrashReport.objects.count()}
    figures["every update judged"] = tick(None)
    figures["kept, first tick"] = tick(0.0)  # judges all and keeps them
    figures["kept, 0% changed"] = tick(0.0)
    figures["kept, 10% changed"] = tick(0.1)
    figures["kept, 100% changed"] = tick(1.0)
    # A dry run writes what it decided and takes it back, so each tick above finds the
    # world as no tick left it (no assessments, every due step still due) and writes it all
    # again. A tick five minutes after the last one finds what that one wrote: one tick is
    # kept (inside a transaction taken back at the end, so the world stays for --reuse).
    with transaction.atomic():
        figures["settled, the tick kept"] = tick(0.0, dry_run=False)
        # Its steps changed the updates' percentages: the next tick judges them again.
        figures["settled, after its steps"] = tick(0.0)
        figures["settled, 0% changed"] = tick(0.0)
        figures["settled, 10% changed"] = tick(0.1)
        figures["settled, 100% changed"] = tick(1.0)
        transaction.set_rollback(True)
    figures["peak_rss_mib"] = max(
        f["peak_rss_mib"] for f in figures.values() if isinstance(f, dict)
    )
    print(json.dumps(figures))
    return 0


def plot(runs: list[dict], path) -> None:
    """Tick time (log) and peak memory against updates in phasing: one point per run, the
    last run of each size kept (a --reuse run, whose peak is the ticks' own)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_size = {run["updates"]: run for run in runs}
    sizes = sorted(by_size)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for key, style in (
        ("every update judged", "o-"),
        ("kept, 100% changed", "d-."),
        ("kept, 10% changed", "s--"),
        ("kept, 0% changed", "^:"),
    ):
        # CPU seconds where measured (the process and its backend): the wall clock of a
        # shared machine says more about the load than about the tick.
        measure = "cpu_s" if all("cpu_s" in by_size[n][key] for n in sizes) else "wall_s"
        left.plot(sizes, [by_size[n][key][measure] for n in sizes], style, label=key)
    left.set(
        xlabel="updates in phasing",
        ylabel="tick, CPU s" if measure == "cpu_s" else "tick (s)",
        xscale="log",
        yscale="log",
    )
    left.legend(fontsize=8)
    right.plot(sizes, [by_size[n]["peak_rss_mib"] for n in sizes], "o-")
    right.set(xlabel="updates in phasing", ylabel="peak memory (MiB)", xscale="log")
    fig.suptitle("One controller tick against updates in phasing (bench.tick_reuse)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def generated_world(args: argparse.Namespace, now: datetime) -> None:
    """N updates in phasing in one release and a day of crash reports of both versions."""
    from overview.evidence.sources.base import CrashReportRecord
    from packages.models import Publication, Release, SourcePackage

    release, _ = Release.objects.get_or_create(codename="noble", defaults={"version": "24.04"})
    Publication.objects.all().delete()
    rng = random.Random(1)
    records = []
    for n in range(args.updates):
        if records and n % CHUNK == 0:
            _ingest(records, now)
            records = []
        package, _ = SourcePackage.objects.get_or_create(name=f"tick{n}")
        Publication.objects.create(
            source_package=package,
            release=release,
            version="2.0-1ubuntu0.2",
            previous_version="2.0-1ubuntu0.1",
            binaries=[f"tick{n}"],
            date_published=now - timedelta(hours=30),
            last_increase_at=now - timedelta(hours=30),
            phased_update_percentage=rng.choice((10, 30, 50)),
        )
        for h in range(24):
            at = now - timedelta(hours=24 - h, minutes=30)
            for version in ("2.0-1ubuntu0.1", "2.0-1ubuntu0.2"):
                for k in range(rng.randint(0, int(2 * args.per_hour))):
                    records.append(
                        CrashReportRecord(
                            external_id=f"t{n}-{version}-{h}-{k}",
                            signature=f"/usr/bin/tick{n}:11:crash",
                            release="noble",
                            source_package=f"tick{n}",
                            version=version,
                            architecture="amd64",
                            reported_at=at,
                            system_id=f"{n}/{version}/{h}/{k}",
                            stack_trace="#0 crash ()",
                        )
                    )
    _ingest(records, now)


# Updates whose reports are ingested together: a backend that ingests a 20,000-update world
# in one session grew past the machine's memory (killed by the OOM killer at 18 GB).
CHUNK = 1000


def _ingest(records: list, now: datetime) -> None:
    from django.db import connection

    from overview.evidence.ingest import crash_reports_ingest

    crash_reports_ingest(records, now=now)
    connection.close()  # a fresh backend for the next chunk


if __name__ == "__main__":
    raise SystemExit(main())
