"""Links in emails and feed ids point at the site: in development, where `make run` serves."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROBE = "import django; from django.conf import settings as s; django.setup(); print(s.PHASING_SITE_URL)"


def site_url(tmp_path, **env: str) -> str:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "HOST", "PORT", "PHASING_SITE_URL"}
    }
    clean.update(
        {"DJANGO_SETTINGS_MODULE": "phasing_site.settings", "PHASING_VAR_DIR": str(tmp_path)}, **env
    )
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "http://127.0.0.1:8000"),
        ({"PORT": "8123"}, "http://127.0.0.1:8123"),
        ({"HOST": "localhost", "PORT": "9000"}, "http://localhost:9000"),
        ({"HOST": "0.0.0.0", "PORT": "8001"}, "http://127.0.0.1:8001"),
        ({"HOST": "::1", "PORT": "8001"}, "http://[::1]:8001"),
        ({"PORT": "8123", "PHASING_SITE_URL": "https://p.example"}, "https://p.example"),
    ],
)
def test_in_development_the_site_url_follows_host_and_port_unless_set(tmp_path, env, expected):
    assert site_url(tmp_path, DEBUG="1", **env) == expected


def test_in_production_port_alone_never_makes_the_site_url(tmp_path):
    url = site_url(tmp_path, DEBUG="0", SECRET_KEY="x" * 50, PORT="8123", ALLOWED_HOSTS="p.example")
    assert url == "http://127.0.0.1:8000"


def test_make_run_passes_its_host_and_port_to_the_processes():
    makefile = (ROOT / "Makefile").read_text()
    assert "run: export HOST := $(HOST)" in makefile
    assert "run: export PORT := $(PORT)" in makefile
