"""deploy/gunicorn.conf.py: two demos (two var folders, two ports) never share gunicorn's
control socket."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

CONF = Path(__file__).resolve().parent.parent / "deploy" / "gunicorn.conf.py"


def conf(monkeypatch, **env: str) -> dict:
    for name in ("PHASING_VAR_DIR", "GUNICORN_BIND", "GUNICORN_CONTROL_SOCKET", "PORT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


def test_each_demo_has_its_own_control_socket_in_its_var_folder(monkeypatch):
    one = conf(monkeypatch, PHASING_VAR_DIR="/srv/a/var", GUNICORN_BIND="127.0.0.1:8000")
    two = conf(monkeypatch, PHASING_VAR_DIR="/srv/b/var", GUNICORN_BIND="127.0.0.1:8000")
    three = conf(monkeypatch, PHASING_VAR_DIR="/srv/a/var", GUNICORN_BIND="127.0.0.1:8001")

    assert one["control_socket"] == "/srv/a/var/gunicorn-8000.ctl"
    assert len({one["control_socket"], two["control_socket"], three["control_socket"]}) == 3
    assert not one["control_socket_disable"]


def test_the_control_socket_can_be_named_and_a_path_too_long_turns_it_off(monkeypatch):
    named = conf(monkeypatch, GUNICORN_CONTROL_SOCKET="/run/phasing/gunicorn.ctl")
    assert named["control_socket"] == "/run/phasing/gunicorn.ctl"

    deep = conf(monkeypatch, PHASING_VAR_DIR="/tmp/" + "d" * 120)
    assert deep["control_socket_disable"]


@pytest.mark.parametrize("bind", ["127.0.0.1:8123", "[::1]:8123"])
def test_the_socket_is_named_by_the_port_it_serves(monkeypatch, bind):
    assert conf(monkeypatch, PHASING_VAR_DIR="/v", GUNICORN_BIND=bind)["control_socket"] == (
        "/v/gunicorn-8123.ctl"
    )
