"""The embedded default under real use: a sync and a tick at once on one SQLite file.

The main run is on PostgreSQL, so this drives separate processes on the embedded default
(no DATABASE_URL): one holds the write lock as a sync does while it stores a batch, and
commits while the real `phasing_tick` is at work beside it. With SQLite's defaults that
tick failed with "database is locked"; configured for concurrent use (WAL, a longer busy
timeout, IMMEDIATE transactions) it waits its turn and decides.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SEED = """
import django; django.setup()
from datetime import timedelta
from django.utils import timezone
from packages.models import Publication, Release, SourcePackage, SourceSync
now = timezone.now()
release = Release.objects.create(codename="noble", version="24.04")
for n in range(20):
    Publication.objects.create(
        source_package=SourcePackage.objects.create(name=f"package{n}"), release=release,
        version="1.0-1ubuntu0.1", date_published=now - timedelta(days=1),
        last_increase_at=now - timedelta(hours=7), phased_update_percentage=10,
    )
SourceSync.objects.create(name="local:crashes", kind="crashes", last_success_at=now)
"""

# A sync storing a batch: it holds the write lock while the tick starts and wants to write.
SYNC = """
import sys, time, django; django.setup()
from pathlib import Path
from django.db import transaction
from packages.models import SourceSync
with transaction.atomic():
    SourceSync.objects.filter(name="local:crashes").update(last_error="")
    print("holding", flush=True)
    started = Path(sys.argv[1])
    for _ in range(200):  # until the tick process has started its work
        if started.exists():
            break
        time.sleep(0.05)
    # A long batch (a slow disk, a big feed): longer than SQLite's default 5 s busy wait.
    time.sleep(8)
print("committed", flush=True)
"""


JOURNAL_MODE = """
import django; django.setup()
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("PRAGMA journal_mode")
    print(cursor.fetchone()[0])
"""


def embedded(tmp_path: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SECRET_KEY", "DEBUG"}
    }
    env.update(
        PHASING_VAR_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="phasing_site.settings",
        PHASING_CRASH_SOURCE="local",
        PYTHONPATH=str(ROOT),
    )
    return env


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, check=False
    )


def test_a_sync_and_a_tick_at_once_on_the_embedded_sqlite_both_finish(tmp_path):
    env = embedded(tmp_path)
    migrate = run([sys.executable, "manage.py", "migrate", "-v0"], env)
    assert migrate.returncode == 0, migrate.stderr
    seed = run([sys.executable, "-c", SEED], env)
    assert seed.returncode == 0, seed.stderr

    started = tmp_path / "tick-started"
    sync = subprocess.Popen(
        [sys.executable, "-c", SYNC, str(started)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert sync.stdout is not None and sync.stdout.readline().strip() == "holding"
    started.touch()
    tick = run([sys.executable, "manage.py", "phasing_tick"], env)
    sync_out, sync_err = sync.communicate(timeout=120)

    assert "locked" not in tick.stderr + sync_err
    assert sync.returncode == 0, sync_err
    assert tick.returncode == 0, tick.stderr
    assert tick.stdout.count("advance 10→20") == 20
    journal = run([sys.executable, "-c", JOURNAL_MODE], env)
    assert journal.stdout.strip() == "wal"
