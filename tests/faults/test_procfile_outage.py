"""`make run` (the Procfile under scripts/procfile-run, honcho) through a database outage:
the web server and the worker stay up, answering 503 while it lasts; beat loses its lock,
waits and takes it again; nothing exits, and the site answers again by itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest
from django.conf import settings
from django.db import connection

from tests.faults.tcp_proxy import FORWARD, REFUSE
from tests.faults.worker import wait_for
from tests.test_deployment import ROOT, _deployment_env

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs the real broker (REDIS_URL)"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the beat lock: PostgreSQL"),
]

PORT = 8750 + int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
OUTAGE_SECONDS = 30  # the outage the issue names: beat loses its lock and retries throughout


def _status(path: str) -> int | None:
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{PORT}{path}", timeout=10).status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def test_make_run_keeps_web_and_worker_up_through_a_database_outage(database_proxy, tmp_path):
    db = connection.settings_dict
    env = {
        **_deployment_env(tmp_path, "make-run"),
        "DATABASE_URL": f"postgres://{db['USER']}@127.0.0.1:{database_proxy.port}/{db['NAME']}",
        "CELERY_TASK_DEFAULT_QUEUE": f"faults-{uuid.uuid4().hex[:8]}",
        "GUNICORN_BIND": f"127.0.0.1:{PORT}",
        "GUNICORN_WORKERS": "1",
        "CELERY_POOL": "threads",
        "DATABASE_REQUEST_TIMEOUT": "2",
        "DEBUG": "1",  # as `make run`
        "ALLOWED_HOSTS": "127.0.0.1",
    }
    log = tmp_path / "run.log"
    run = subprocess.Popen(
        [sys.executable, "scripts/procfile-run"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert wait_for(lambda: _status("/api/v1/publications/") == 200, 60), log.read_text()[
            -3000:
        ]
        assert wait_for(lambda: "beat starting" in log.read_text(), 30), log.read_text()[-3000:]

        # The outage: every connection dropped, none taken, for a while.
        database_proxy.mode = REFUSE
        database_proxy.cut()
        started = time.monotonic()
        during = _status("/api/v1/publications/")
        assert wait_for(lambda: "lost the beat lock" in log.read_text(), 15), log.read_text()[
            -3000:
        ]
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - started)))
        assert run.poll() is None, log.read_text()[-3000:]

        # The database is back; nobody does anything.
        database_proxy.mode = FORWARD
        assert wait_for(lambda: _status("/api/v1/publications/") == 200, 30)
        assert wait_for(lambda: log.read_text().count("beat starting") == 2, 40), log.read_text()[
            -3000:
        ]
        assert run.poll() is None
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGTERM)
        try:
            run.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(timeout=10)

    output = log.read_text()
    assert during == 503
    # honcho stops everything once one process exits: nothing did until it was told to.
    before_told = output.split("system | SIGTERM received")[0]
    for name in ("web", "worker", "beat"):
        assert f"system | {name} stopped" not in before_told, name
        assert f"system | {name} started" in before_told
    assert run.returncode == 0, output[-3000:]
