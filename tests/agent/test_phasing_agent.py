"""The fleet agent reports apt's own answer: held back exactly where apt-get keeps the
update back, with Debian's apt and python3-apt of this machine (the system Python)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agent import phasing_agent
from tests.apt_harness import AptRow, AptSandbox, apt_available, build_flat_repo

SYSTEM_PYTHON = "/usr/bin/python3"
AGENT = Path(phasing_agent.__file__)


def python_apt_available() -> bool:
    if not (apt_available() and os.path.exists(SYSTEM_PYTHON)):
        return False
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import apt_pkg"], capture_output=True)
    return probe.returncode == 0


needs_python_apt = pytest.mark.skipif(
    not python_apt_available(), reason="apt-get or Debian's python3-apt is missing"
)
ROWS = [
    AptRow("tool", "tool", "1.2-1", "1.2-1ubuntu0.1", 30),
    AptRow("libtool1", "tool", "1.2-1", "1.2-1ubuntu0.1", 30),
    AptRow("plain", "plain", "1.0", "1.1", None),
]


def machine(root: Path, repo: Path, machine_id: str) -> AptSandbox:
    sandbox = AptSandbox(root)
    sandbox.install(ROWS)
    sandbox.use_archive(repo, ["stable-updates"])
    with sandbox.config_path.open("a", encoding="utf-8") as config:
        # apt skips phasing in a chroot (it asks ischroot): not one here.
        config.write(f'APT::Machine-ID "{machine_id}";\nDir::Bin::ischroot "/bin/false";\n')
    sandbox.update()
    return sandbox


def agent_batch(sandbox: AptSandbox) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    env["APT_CONFIG"] = str(sandbox.config_path)
    output = subprocess.run(
        [
            SYSTEM_PYTHON,
            str(AGENT),
            "--url",
            "http://127.0.0.1:9",
            "--release",
            "noble",
            "--dry-run",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return json.loads(output)


@needs_python_apt
def test_it_reports_held_back_exactly_where_apt_keeps_the_update_back(tmp_path):
    repo = build_flat_repo(tmp_path / "repo", ROWS)
    ids = [f"{n:032x}" for n in range(1, 9)]
    seen = set()
    for machine_id in ids:
        sandbox = machine(tmp_path / machine_id, repo, machine_id)
        batch = agent_batch(sandbox)
        takes = "tool" in sandbox.upgrades(machine_id)
        assert batch["machine"] == phasing_agent.machine_hash(machine_id)
        assert machine_id not in json.dumps(batch)
        assert [p["package"] for p in batch["packages"]] == ["libtool1", "tool"]
        for fact in batch["packages"]:
            assert fact == {
                "package": fact["package"],
                "source": "tool",
                "source_version": "1.2-1ubuntu0.1",
                "candidate": "1.2-1ubuntu0.1",
                "installed": "1.2-1",
                "held_back": not takes,
            }
        seen.add(takes)
    # At 30 % some of eight machines take it and some do not (apt's draw).
    assert seen == {True, False}


def test_help_reads_like_a_man_page():
    with pytest.raises(SystemExit) as done:
        phasing_agent.main(["--help"])
    assert done.value.code == 0


def test_the_machine_hash_is_a_sha256_and_never_the_id():
    assert phasing_agent.machine_hash("abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
