"""`make run`'s processes (the Procfile under scripts/procfile-run): Ctrl-C or SIGTERM
stops the web server, the worker and beat cleanly, and the run exits 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PORT = 8700 + int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)

pytestmark = pytest.mark.celery_worker


def _embedded_env(tmp_path: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    }
    bin_dir = str(Path(sys.executable).parent)
    return {
        **env,
        "DEBUG": "1",
        "PHASING_VAR_DIR": str(tmp_path),
        "PATH": f"{bin_dir}:{env.get('PATH', '')}",
        "GUNICORN_BIND": f"127.0.0.1:{PORT}",
        "GUNICORN_WORKERS": "1",
        "CELERY_POOL": "threads",
        "LOG_FORMAT": "plain",
    }


def _wait_until_serving(url: str, process: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:  # answered (503 until crash data is synced)
            return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("the web server did not answer")


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_web_worker_and_beat_and_exits_0(tmp_path, stop):
    env = _embedded_env(tmp_path)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    run = subprocess.Popen(
        [sys.executable, "scripts/procfile-run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_until_serving(f"http://127.0.0.1:{PORT}/healthz", run)
        if stop == "ctrl-c":
            os.killpg(run.pid, signal.SIGINT)  # what a terminal sends its foreground group
        else:
            run.send_signal(signal.SIGTERM)  # what a service manager sends the main process
        output, _ = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)

    assert run.returncode == 0, output[-3000:]
    for name in ("web", "worker", "beat"):
        assert f"{name} stopped" in output
    assert "SIGKILL" not in output
    assert "Segmentation fault" not in output and "Traceback" not in output
