"""The production-like environment the benchmarks run in, and the bench database."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# `--scale N` (BENCH_SCALE): N times today's archive (2,000 updates in phasing a scale,
# reports in proportion), seeded into a database of its own.
SCALE = int(os.environ.get("BENCH_SCALE", "1"))
DB_NAME = os.environ.get("BENCH_DB", "phasing_bench" if SCALE == 1 else f"phasing_bench_x{SCALE}")
PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
STATIC_ROOT = Path(os.environ.get("BENCH_STATIC_ROOT", "/tmp/phasing-bench/static"))


def product_env(db: str = DB_NAME) -> dict[str, str]:
    """Environment of the production setup: DEBUG off, PostgreSQL, Redis, collected static."""
    return {
        "DJANGO_SETTINGS_MODULE": "phasing_site.settings",
        "DEBUG": "0",
        "SECRET_KEY": "bench-only-secret-key-0123456789abcdef0123456789abcdef",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "DATABASE_URL": f"{PG}/{db}",
        "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/9"),
        "STATIC_ROOT": str(STATIC_ROOT),
        "PHASING_VAR_DIR": "/tmp/phasing-bench/var",
        "CELERY_TASK_ALWAYS_EAGER": "0",
        # Measured rendered; the cached run turns the page cache on (bench/settings.py).
        "PHASING_PAGE_CACHE": "0",
    }


def setup_django(db: str = DB_NAME) -> None:
    os.environ.update(product_env(db))
    import django

    django.setup()


def psql(sql: str, db: str = "postgres") -> str:
    out = subprocess.run(
        ["psql", f"{PG}/{db}", "-Atqc", sql], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def database_exists(name: str) -> bool:
    return psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'") == "1"


def _status_mib(field: str, pid: int | str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def peak_rss_mib(pid: int | str = "self") -> float:
    """A process's peak resident memory since it started or since `peak_rss_reset`.

    Not getrusage's ru_maxrss: Linux keeps that across fork and exec, so a measuring
    process started by the bench reports the bench's own peak (hundreds of MiB after the
    pages run) if it used less."""
    return _status_mib("VmHWM", pid)


def rss_mib(pid: int | str = "self") -> float:
    return _status_mib("VmRSS", pid)


def peak_rss_reset() -> None:
    """Start this process's peak memory again from what it holds now (Linux 4.0+)."""
    Path("/proc/self/clear_refs").write_text("5")


def cache_clear() -> None:
    """Empty the cache the product uses. On Redis the keys are freed in the background
    (FLUSHDB ASYNC): after a seeding at scale 10 the tick's kept judgements fill it, and
    freeing them in the foreground outlasts the product's half-second socket timeout."""
    from django.core.cache import cache

    client = getattr(cache, "_cache", None)
    if client is not None and hasattr(client, "get_client"):
        client.get_client(None, write=True).flushdb(asynchronous=True)
    else:
        cache.clear()
