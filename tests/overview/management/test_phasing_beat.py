"""phasing_beat stopped while beat is still starting: the stop waits until beat's schedule
is open, then beat saves it once and exits cleanly (no second open inside the first)."""

from __future__ import annotations

import os
import shelve
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# Beat in this process, with its schedule's opening slowed into a stop: the first open
# sends this process SIGTERM (as honcho or a Ctrl-C would, a moment after start) and says
# when it opened and when it was stopped.
BEAT_STOPPED_WHILE_OPENING = """
import os, signal, sys
import django
said = open(sys.argv[1], "a", buffering=1)
django.setup()
from celery import beat
from django.core.management import call_command

opened = beat.PersistentScheduler._open_schedule
def open_and_be_stopped(self):
    said.write("opening\\n")
    if not getattr(beat, "_stopped_once", False):
        beat._stopped_once = True
        os.kill(os.getpid(), signal.SIGTERM)
    store = opened(self)
    said.write("opened\\n")
    return store
beat.PersistentScheduler._open_schedule = open_and_be_stopped
try:
    call_command("phasing_beat", "--loglevel", "WARNING")
except SystemExit as stop:
    said.write("exited\\n")
"""


@pytest.mark.embedded
def test_a_stop_while_beat_opens_its_schedule_is_handled_once_it_is_open(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL")
    }
    env |= {"PHASING_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "phasing_site.settings"}

    run = subprocess.run(
        [sys.executable, "-c", BEAT_STOPPED_WHILE_OPENING, tmp_path / "said"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    said = (tmp_path / "said").read_text().split()
    assert said == ["opening", "opened", "exited"], run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    with shelve.open(str(tmp_path / "celerybeat-schedule"), flag="r") as schedule:  # noqa: S301 (ours)
        assert "tick" in str(schedule["entries"])  # saved, with the controller's entries
