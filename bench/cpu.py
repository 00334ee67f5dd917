"""CPU time per page view of this code and of the baseline, each in one process.

Requests per second under wrk move with whatever else the machine runs; the CPU a view
costs its own process moves far less, so the speedups are also given by that measure.
(PostgreSQL's own work is not in it: a few milliseconds a page, see `sql`.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.env import product_env

VIEWS = 30

_SCRIPT = r"""
import json, sys, time
import django
django.setup()
from django.test import Client
client = Client(SERVER_NAME="127.0.0.1")
figures = {}
for name, url in json.loads(sys.argv[1]).items():
    assert client.get(url).status_code == 200, url
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(int(sys.argv[2])):
        client.get(url)
    figures[name] = {
        "cpu_ms": round((time.process_time() - cpu) * 1000 / int(sys.argv[2]), 1),
        "wall_ms": round((time.perf_counter() - wall) * 1000 / int(sys.argv[2]), 1),
    }
print(json.dumps(figures))
"""


def measure(root: Path, urls: dict[str, str]) -> dict:
    env = {**os.environ, **product_env(), "PHASING_PAGE_CACHE_SECONDS": "0"}
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(urls), str(VIEWS)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        return {"error": out.stderr[-2000:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(
    root: Path,
    baseline: Path | None,
    urls: dict[str, str],
    *,
    baseline_urls: dict[str, str] | None = None,
) -> dict:
    """CPU per view of `urls` here, and of `baseline_urls` (the pages it has) there."""
    figures = {"ours": measure(root, urls)}
    if baseline is not None:
        figures["baseline"] = measure(baseline, baseline_urls or urls)
        figures["speedup"] = {
            name: round(figures["baseline"][name]["cpu_ms"] / row["cpu_ms"], 1)
            for name, row in figures["ours"].items()
            if name in figures["baseline"] and row.get("cpu_ms")
        }
    return figures
