"""scripts/procfile-run: `make run` seeds the demo beside the running site."""

from __future__ import annotations

import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROCESSES = runpy.run_path(str(ROOT / "scripts" / "procfile-run"))["processes"]


def test_the_demo_seed_runs_beside_the_procfiles_processes_in_make_run(monkeypatch):
    monkeypatch.chdir(ROOT)

    plain = PROCESSES([], {})
    demo = PROCESSES([], {"PHASING_DEMO_SEED": "1"})

    assert set(plain) == {"web", "worker", "beat"}
    assert set(demo) == {"web", "worker", "beat", "seed"}
    # It idles when done: honcho stops every process when one exits.
    assert demo["seed"].startswith("python manage.py seed_demo --if-empty;")
    assert demo["seed"].endswith("exec sleep infinity")
    assert set(PROCESSES(["web"], {"PHASING_DEMO_SEED": "1"})) == {"web"}
