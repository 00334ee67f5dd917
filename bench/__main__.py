"""`make bench`: seed (or reuse) the bench database, measure, print the table, write JSON.

    python -m bench                 everything
    python -m bench --only pages    one part: pages, sql, controller, ingest
    python -m bench --reseed        drop the cached bench database and seed it again
    python -m bench --scale 10      ten times today's archive (20,000 updates in phasing),
                                    in a database of its own (phasing_bench_x10)
    python -m bench --as-is         measure the bench database as a stopped seeding left it
                                    (said in the figures, with its sizes): never seeds

Benchmarks, not tests: nothing here fails on a slow figure; it reports it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from bench import env

PARTS = ("sql", "pages", "controller", "ingest")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ensure_wrk() -> None:
    if shutil.which("wrk"):
        return
    if os.geteuid() != 0:
        raise SystemExit("wrk is missing: apt-get install -y wrk")
    _log("installing wrk from Debian")
    subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, timeout=300)


def measured_as_is() -> dict:
    """The bench database as it is, however far its seeding got (a seeding stopped by hand:
    the figures say so, beside its sizes)."""
    env.setup_django()
    from bench import seed

    mark = seed.seeded_plan()
    _log(f"measuring {env.DB_NAME} as it is ({'seeded' if mark else 'not completely seeded'})")
    return {"as_is": True, "completely_seeded": mark is not None, **(mark or {})}


def ensure_database(*, reseed: bool) -> dict:
    """The seeded bench database, reused when a previous run seeded it with the same plan."""
    from dataclasses import asdict

    from bench.seed import SeedPlan

    plan = SeedPlan()
    if reseed and env.database_exists(env.DB_NAME):
        env.psql(f"DROP DATABASE {env.DB_NAME}")
    created = not env.database_exists(env.DB_NAME)
    if created:
        env.psql(f"CREATE DATABASE {env.DB_NAME}")
    env.setup_django()
    from django.core.management import call_command

    from bench import seed

    call_command("migrate", "--noinput", verbosity=0)
    mark = seed.seeded_plan()
    if mark and mark.get("plan") == json.loads(json.dumps(asdict(plan))):
        _log(f"reusing the seeded database {env.DB_NAME} (seeded in {mark['seconds']} s)")
        return {"reused": True, **mark}
    if not created:
        # Half-seeded or seeded with another plan: start again from nothing.
        from django.db import connection

        connection.close()
        env.psql(f"DROP DATABASE {env.DB_NAME}")
        env.psql(f"CREATE DATABASE {env.DB_NAME}")
        call_command("migrate", "--noinput", verbosity=0)
    _log(f"seeding {env.DB_NAME}: {plan}")
    took = seed.seed(plan, log=_log)
    return {"reused": False, **seed.seeded_plan(), "reports_ingested": took["reports"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--only", choices=PARTS, action="append")
    parser.add_argument("--reseed", action="store_true")
    parser.add_argument(
        "--as-is", action="store_true", help="measure the database as it is, never seed it"
    )
    parser.add_argument(
        "--scale", type=int, default=env.SCALE, help="N times today's archive (default 1)"
    )
    args = parser.parse_args(argv)
    if args.scale != env.SCALE:  # the scale names the database: start again with it set
        os.environ["BENCH_SCALE"] = str(args.scale)
        os.execv(sys.executable, [sys.executable, "-m", "bench", *(argv or sys.argv[1:])])
    parts = args.only or list(PARTS)
    started = time.perf_counter()
    ensure_wrk()

    seeding = measured_as_is() if args.as_is else ensure_database(reseed=args.reseed)
    # Fresh statistics and visibility maps every run, so plans do not depend on history.
    env.psql("VACUUM ANALYZE", db=env.DB_NAME)
    from django.db import connection

    from bench import controller, ingest, pages, report, seed

    pages.collectstatic(env.product_env())  # the pages need the manifest, as in production
    figures: dict = {"data": seed.sizes(), "seeding": seeding}
    _log(f"data: {figures['data']}")
    if "sql" in parts:
        _log("SQL per page at 10, 1,000 and 2,000 publications")
        figures["sql"] = pages.sql_per_page()
    if "pages" in parts:
        _log("pages under load, beside the static overview")
        figures["static_overview_bytes"] = pages.save_static_overview()
        connection.close()
        figures["pages"] = pages.under_load()
    if "controller" in parts:
        sizes = controller.sizes(env.SCALE)
        _log(f"controller ticks at {', '.join(f'{n:,}' for n in sizes)} publications")
        connection.close()
        figures["controller"] = controller.run(sizes)
        figures["controller_plot"] = str(controller.plot(figures["controller"]))
    if "ingest" in parts:
        _log("crash report ingest")
        connection.close()
        figures["ingest"] = ingest.run()
    figures["targets"] = report.verdicts(figures)
    figures["bench_seconds"] = round(time.perf_counter() - started, 1)
    path = report.write(figures)
    print(report.table(figures))
    print(f"\n{figures['bench_seconds']} s; figures in {path.relative_to(env.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
