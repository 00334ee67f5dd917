"""Pages under load (gunicorn + wrk) beside the static baseline, and SQL per page."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench.env import ROOT, STATIC_ROOT, cache_clear, peak_rss_mib, product_env

PORT = int(os.environ.get("BENCH_PORT", "8765"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "2"))
DURATION = int(os.environ.get("BENCH_SECONDS", "10"))
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "4"))
STATIC_PATH = "/static/bench/overview.html"
HOT_PACKAGE = "firefox-esr"


# The code measured beside this one in the same run, as "before" (BENCH_BASELINE: a commit,
# or "" to skip): the main branch before the pages were made fast and the cache exact.
BASELINE = os.environ.get("BENCH_BASELINE", "6c131dd")
BASELINE_TREE = Path("/tmp/phasing-bench/baseline")
BASELINE_PAGES = ("overview", "overview_100", "history", "api_publications")
# The pages whose CPU per view is measured (bench.cpu); the baseline has only some of them.
CPU_PAGES = ("overview", "overview_100", "history", "update", "api_publications")


def _update_path() -> str:
    """The page of the hot package's newest update in phasing (its events, chart, group)."""
    from packages.models import Publication

    publication = (
        Publication.objects.filter(
            source_package__name=HOT_PACKAGE, phased_update_percentage__lt=100
        )
        .exclude(state="superseded")
        .order_by("-date_published", "-pk")
        .first()
    ) or Publication.objects.filter(source_package__name=HOT_PACKAGE).order_by("-pk").first()
    assert publication is not None, f"the bench database has no {HOT_PACKAGE}"
    return f"/updates/{publication.pk}/"


def pages() -> dict[str, str]:
    return {
        "overview": "/",
        "overview_100": "/?per_page=100",
        "overview_filtered": "/?release=resolute&state=phasing&percentage_max=90",
        "history": f"/source/{HOT_PACKAGE}/",
        "update": _update_path(),
        "api_publications": "/api/v1/publications/",
    }


# --- SQL per page ------------------------------------------------------------------------


def _keep_active(n: int) -> int:
    """Inside the caller's transaction: leave only the first n publications active."""
    from packages.models import ACTIVE_STATES, Publication

    active = list(
        Publication.objects.filter(state__in=ACTIVE_STATES)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    Publication.objects.filter(pk__in=active[n:]).update(state="superseded")
    return min(n, len(active))


def sql_per_page(sizes=(10, 1000, 2000)) -> dict:
    """Queries per page at each number of publications in phasing; slowest query's plan."""
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from packages.models import ACTIVE_STATES, Publication

    client = Client(SERVER_NAME="127.0.0.1")
    result: dict = {"sizes": {}, "slowest": {}}
    for size in sizes:
        with transaction.atomic():
            actual = _keep_active(size)
            row = {"active_publications": actual}
            urls = pages()
            # A filter that matches rows at every size, so the page does the same work.
            first = (
                Publication.objects.filter(state__in=ACTIVE_STATES)
                .select_related("release")
                .order_by("pk")
                .first()
            )
            urls["overview_filtered"] = f"/?release={first.release.codename}&state={first.state}"
            row["filtered_url"] = urls["overview_filtered"]
            for name, url in urls.items():
                client.get(url)  # warm caches of the process, not of the page
                with CaptureQueriesContext(connection) as queries:
                    response = client.get(url)
                assert response.status_code == 200, (name, response.status_code)
                slowest = max(queries.captured_queries, key=lambda q: float(q["time"]))
                row[name] = {
                    "queries": len(queries),
                    "slowest_ms": round(float(slowest["time"]) * 1000, 1),
                }
                if size == sizes[-1]:
                    with connection.cursor() as cursor:
                        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + slowest["sql"])
                        plan = "\n".join(r[0] for r in cursor.fetchall())
                    result["slowest"][name] = {"sql": slowest["sql"], "plan": plan}
            result["sizes"][str(size)] = row
            transaction.set_rollback(True)
    return result


def save_static_overview() -> int:
    """The overview page as it is now, as a static file under STATIC_ROOT."""
    from django.test import Client

    response = Client(SERVER_NAME="127.0.0.1").get("/")
    target = STATIC_ROOT / STATIC_PATH.removeprefix("/static/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(response.content)
    return len(response.content)


# --- Load -----------------------------------------------------------------------------------


def collectstatic(env: dict[str, str]) -> None:
    if STATIC_ROOT.exists():
        shutil.rmtree(STATIC_ROOT)
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )


class Gunicorn:
    def __init__(
        self, env: dict[str, str], settings: str = "phasing_site.settings", root: Path = ROOT
    ) -> None:
        self.env = {**env, "DJANGO_SETTINGS_MODULE": settings}
        self.root = root
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Gunicorn:
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.process = subprocess.Popen(
            [
                str(gunicorn),
                "phasing_site.wsgi",
                "--bind",
                f"127.0.0.1:{PORT}",
                "--workers",
                str(WORKERS),
                "--log-level",
                "warning",
            ],
            cwd=self.root,
            env={**os.environ, **self.env},
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{PORT}{STATIC_PATH}", timeout=2):
                    return self
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("gunicorn did not start")

    def workers(self) -> list[int]:
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in children.read_text().split()]

    def __exit__(self, *exc) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return round(float(number) * _UNITS[unit], 2)


def wrk(url: str, *, seconds: int = DURATION) -> dict:
    out = subprocess.run(
        ["wrk", "-t2", f"-c{CONNECTIONS}", f"-d{seconds}s", "--latency", "--timeout", "5s", url],
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        check=True,
    ).stdout
    latency = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)\s*$", out, re.M))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)$", out, re.M)
    if "99" not in latency:  # not one request finished in time: say so, do not crash
        print(f"wrk {url}: no request finished\n{out}", file=sys.stderr)
        latency = {"50": f"{seconds}s", "99": f"{seconds}s"}
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": _ms(latency["50"]),
        "p99_ms": _ms(latency["99"]),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "non_2xx": int(non_2xx.group(1)) if non_2xx else 0,
        "socket_errors": errors.group(1) if errors else "",
    }


def baseline_tree() -> Path | None:
    """A checkout of BASELINE to serve the same pages from, or None when it is not set."""
    if not BASELINE:
        return None
    if BASELINE_TREE.exists():
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(BASELINE_TREE)], cwd=ROOT, check=False
        )
    subprocess.run(["git", "worktree", "prune"], cwd=ROOT, check=True)
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(BASELINE_TREE), BASELINE],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return BASELINE_TREE


def under_load() -> dict:
    """Each page, then the static copy of the overview, under the same load, same server.

    Twice: as the product is configured by default (every request rendered), and with
    the anonymous page cache on (bench.settings), each beside its own static baseline.
    """
    env = product_env()
    results: dict = {"workers": WORKERS, "connections": CONNECTIONS, "seconds": DURATION}
    rss = []
    base = f"http://127.0.0.1:{PORT}"
    runs = [
        ("phasing_site.settings", "", pages(), ROOT),
        (
            "bench.settings",
            "_cached",
            {k: v for k, v in pages().items() if k in ("overview", "overview_filtered")},
            ROOT,
        ),
    ]
    baseline = baseline_tree()
    if baseline is not None:
        results["baseline_commit"] = BASELINE
        runs.append(
            (
                "phasing_site.settings",
                "_baseline",
                {k: v for k, v in pages().items() if k in BASELINE_PAGES},
                baseline,
            )
        )
    for settings, suffix, targets, root in runs:
        cache_clear()
        with Gunicorn({**env, "PHASING_PAGE_CACHE_SECONDS": "0"}, settings, root) as server:
            for name, path in {"static_overview": STATIC_PATH, **targets}.items():
                wrk(base + path, seconds=3)  # warm up: connections, caches, first query plans
                results[name + suffix] = wrk(base + path)
            rss.extend(peak_rss_mib(p) for p in server.workers())
        static = results["static_overview" + suffix]["rps"]
        for name in targets:
            row = results[name + suffix]
            row["ratio_to_static"] = round(row["rps"] / static, 3)
            if suffix == "_baseline":
                # How many times faster this code serves the page than the baseline did.
                results[name]["speedup"] = round(results[name]["rps"] / row["rps"], 1)
    results["worker_peak_rss_mib"] = round(max(rss), 1)
    from bench import cpu

    urls = pages()
    results["cpu_per_view"] = cpu.compare(
        ROOT,
        baseline,
        {k: urls[k] for k in CPU_PAGES},
        baseline_urls={k: urls[k] for k in BASELINE_PAGES},
    )
    return results
