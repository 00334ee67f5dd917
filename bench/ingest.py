"""Crash report ingest into PostgreSQL, reports per second, on a throwaway copy of the bench DB.

The reports are the simulator's for the 12 hours after the seeded end (new to the
database), drawn once and kept in a pickle so that drawing them is never timed. They
are ingested by crash_reports_ingest, committing batch by batch as in production, into
a copy of the bench database made with CREATE DATABASE ... TEMPLATE, dropped afterwards.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

from bench.env import DB_NAME, ROOT, product_env, psql

COPY = f"{DB_NAME}_ingest"
HOURS = 12
CACHE = Path(os.environ.get("BENCH_CACHE", "/tmp/phasing-bench")) / "ingest-records.pickle"


def records():
    from bench.seed import SeedPlan, _simulator
    from overview.evidence.sources.simulator import SimulatedCrashFeed

    plan = SeedPlan()
    key = (plan, HOURS)
    if CACHE.exists():
        with CACHE.open("rb") as f:
            cached_key, cached = pickle.load(f)
        if cached_key == key:
            return cached
    end = plan.end_at
    drawn = list(
        SimulatedCrashFeed(_simulator(plan)).reports(since=end, now=end + timedelta(hours=HOURS))
    )
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with CACHE.open("wb") as f:
        pickle.dump((key, drawn), f)
    return drawn


def measure() -> dict:
    from overview.evidence.ingest import crash_reports_ingest

    drawn = records()
    started = time.perf_counter()
    summary = crash_reports_ingest(drawn)
    took = time.perf_counter() - started
    from bench import intake

    return {
        "reports": summary.inserted,
        "duplicates": summary.duplicates,
        "seconds": round(took, 2),
        "reports_per_s": round(summary.inserted / took),
        # The same reports posted to the whoopsie-compatible intake, then synced.
        "intake": intake.measure(drawn),
    }


def run(*, timeout: int = 600) -> dict:
    subprocess.run(  # drawn before copying, so the copy is not held open meanwhile
        [
            sys.executable,
            "-c",
            "import bench.ingest as i; from bench.env import setup_django; "
            "setup_django(); i.records()",
        ],
        cwd=ROOT,
        env={**os.environ, **product_env()},
        check=True,
        timeout=timeout,
    )
    psql(f"DROP DATABASE IF EXISTS {COPY}")
    started = time.perf_counter()
    psql(f"CREATE DATABASE {COPY} TEMPLATE {DB_NAME}")
    copied = time.perf_counter() - started
    try:
        out = subprocess.run(
            [sys.executable, "-m", "bench.ingest"],
            cwd=ROOT,
            env={**os.environ, **product_env(COPY)},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if out.returncode != 0:
            return {"error": out.stderr[-2000:]}
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["copy_seconds"] = round(copied, 1)
        return result
    finally:
        psql(f"DROP DATABASE IF EXISTS {COPY}")


if __name__ == "__main__":
    from bench.env import setup_django

    setup_django(os.environ["DATABASE_URL"].rsplit("/", 1)[1])
    print(json.dumps(measure()))
