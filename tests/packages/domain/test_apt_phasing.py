"""The phasing draw must be exactly apt's.

apt_vectors.json holds draws read off the real apt-get (apt 2.6.1, Debian bookworm,
amd64): for each source version, 101 binaries of that source are offered at 0%, 1%, ...
100%; a machine's draw is the lowest percentage whose binary apt-get -s upgrade takes,
and every binary from there up must be taken too. Regenerate with
``.venv/bin/python -m tests.packages.domain.test_apt_phasing`` on a machine with apt.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from packages.domain.apt_phasing import (
    Draw,
    decide,
    is_included,
    machine_id_for_apt,
    phased_draw,
)
from tests.apt_harness import AptRow, AptSandbox, apt_available, apt_upgrades, build_flat_repo

VECTORS_PATH = Path(__file__).with_name("apt_vectors.json")

needs_apt = pytest.mark.skipif(not apt_available(), reason="apt-get is not on PATH")

# Source versions of the shapes Ubuntu and Debian publish: epochs, tildes, backports,
# binNMU-style source/binary splits, long kernel versions.
VECTOR_SOURCES = [
    ("bash", "5.2.15-2ubuntu1.1", None),
    ("openssl", "3.0.2-0ubuntu1.15", None),
    ("linux-meta", "5.15.0.91.88", None),
    ("ubuntu-drivers-common", "1:0.9.6.2~0.22.04.6", None),
    ("glibc", "2.35-0ubuntu3.6", "2.35-0ubuntu3.6+b1"),
    ("firefox", "1:1snap1-0ubuntu2", None),
    ("systemd", "249.11-0ubuntu3.12", None),
    ("python3.10", "3.10.12-1~22.04.3", None),
    ("libreoffice", "1:7.3.7-0ubuntu0.22.04.4", None),
    ("g", "1", None),
    (
        "network-manager-applet",
        "1.24.0-1ubuntu3~ubuntu22.04.1",
        "1.24.0-1ubuntu3~ubuntu22.04.1build1",
    ),
    ("zlib", "1:1.2.11.dfsg-2ubuntu9.2", None),
]


def _vector_machine_ids() -> list[str]:
    rnd = random.Random(20240611)
    ids = ["0" * 32, "f" * 32, "0123456789abcdef0123456789abcdef"]
    ids += [f"{rnd.getrandbits(128):032x}" for _ in range(37)]
    return ids


def read_draws_from_apt(workdir: Path, sources, machine_ids) -> list[dict]:
    """Each (source version, machine id)'s draw, as the real apt-get reveals it."""
    rows = []
    for source, source_version, binary_version in sources:
        for percentage in range(101):
            rows.append(
                AptRow(
                    package=f"{source}-p{percentage}",
                    source=source,
                    old_version="0.0.1",
                    new_version=binary_version or source_version,
                    percentage=percentage,
                    source_version=source_version,
                )
            )
    taken = apt_upgrades(workdir, rows, machine_ids)
    vectors = []
    for machine_id in machine_ids:
        for source, source_version, _ in sources:
            taken_at = sorted(p for p in range(101) if f"{source}-p{p}" in taken[machine_id])
            draw = taken_at[0]
            # apt must take the update at every percentage from the draw up.
            assert taken_at == list(range(draw, 101)), (source, machine_id, taken_at)
            vectors.append(
                {
                    "source": source,
                    "version": source_version,
                    "machine_id": machine_id,
                    "draw": draw,
                }
            )
    return vectors


def load_vectors() -> list[dict]:
    return json.loads(VECTORS_PATH.read_text(encoding="utf-8"))["vectors"]


def test_the_committed_vectors_cover_many_sources_and_machines():
    vectors = load_vectors()
    assert len(vectors) == len(VECTOR_SOURCES) * len(_vector_machine_ids())
    assert {v["draw"] for v in vectors} >= {0, 100}


def test_every_draw_read_off_real_apt_is_reproduced():
    mismatches = [
        v
        for v in load_vectors()
        if phased_draw(v["source"], v["version"], v["machine_id"]) != v["draw"]
    ]
    assert mismatches == []


def test_a_machine_takes_the_update_exactly_from_its_draw_upwards():
    for v in load_vectors()[:60]:
        for percentage in range(101):
            decision = decide(v["source"], v["version"], v["machine_id"], percentage)
            assert decision.included is (percentage >= v["draw"])
            assert decision.included_from_percentage == v["draw"]


def test_it_keeps_back_the_update_when_the_draw_is_above_the_percentage():
    assert is_included(51, 50) is False
    assert is_included(50, 50) is True
    assert is_included(0, 0) is True
    assert is_included(100, 100) is True


def test_decide_reports_the_draw_and_whether_the_machine_is_in_the_phase():
    machine_id = "0123456789abcdef0123456789abcdef"
    draw = phased_draw("bash", "5.2.15-2ubuntu1.1", machine_id)
    assert decide("bash", "5.2.15-2ubuntu1.1", machine_id, draw) == Draw(
        draw=draw, included=True, included_from_percentage=draw
    )
    if draw > 0:
        assert decide("bash", "5.2.15-2ubuntu1.1", machine_id, draw - 1).included is False


def test_about_one_machine_in_a_hundred_still_takes_an_update_at_zero_percent():
    rnd = random.Random(7)
    ids = [f"{rnd.getrandbits(128):032x}" for _ in range(20000)]
    at_zero = sum(decide("openssl", "3.0.2-0ubuntu1.15", i, 0).included for i in ids)
    assert 100 <= at_zero <= 300  # expected 20000/101, about 198


def test_the_draw_depends_on_source_name_version_and_machine():
    machine_id = "0" * 32
    draws = {
        phased_draw(name, version, machine_id)
        for name in ("bash", "openssl", "systemd", "glibc", "zlib")
        for version in ("1.0-1", "1.0-2", "1.1-1")
    }
    assert len(draws) > 5


@needs_apt
def test_real_apt_keeps_back_or_upgrades_exactly_as_decided(tmp_path):
    rnd = random.Random(99)
    sources = [
        ("hello", "2.10-3ubuntu0.1"),
        ("curl", "7.81.0-1ubuntu1.16"),
        ("vim", "2:9.0.1378-2"),
    ]
    percentages = [0, 1, 10, 33, 50, 90, 99, 100]
    rows = [
        AptRow(
            package=f"{source}-bin{i}",
            source=source,
            old_version="0.1",
            new_version=version,
            percentage=percentage,
        )
        for source, version in sources
        for i, percentage in enumerate(percentages)
    ]
    machine_ids = [f"{rnd.getrandbits(128):032x}" for _ in range(15)]
    taken = apt_upgrades(tmp_path, rows, machine_ids)

    kept_back = 0
    for machine_id in machine_ids:
        for row in rows:
            expected = decide(row.source, row.new_version, machine_id, row.percentage).included
            assert (row.package in taken[machine_id]) is expected, (row, machine_id)
            kept_back += not expected
    # The comparison only means something if apt really phased (not a chroot).
    assert kept_back > 0


@needs_apt
def test_real_apt_takes_an_update_without_a_percentage_everywhere(tmp_path):
    rows = [AptRow("hello", "hello", "1.0", "1.1", None), AptRow("world", "world", "1.0", "1.1", 0)]
    repo = build_flat_repo(tmp_path / "repo", rows)
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.install(rows)
    sandbox.use_archive(repo, ["stable-updates"])
    sandbox.update()
    machine_ids = [f"{i:032x}" for i in range(12)]
    sandbox.check_phasing_active("world", machine_ids)
    for machine_id in machine_ids:
        taken = sandbox.upgrades(machine_id)
        assert taken.get("hello") == "1.1"
        assert ("world" in taken) is decide("world", "1.1", machine_id, 0).included


def test_a_machine_id_is_used_exactly_as_apt_uses_it():
    """APT::Machine-ID is taken verbatim, /etc/machine-id's first line loses only its line
    end (apt-pkg/aptconfiguration.cc 596-623, apt-pkg/contrib/fileutl.cc 2817-2822)."""
    assert (
        machine_id_for_apt("3d1219c7c4c5404aaa1f6d2a48adfda4\n")
        == "3d1219c7c4c5404aaa1f6d2a48adfda4"
    )
    assert (
        machine_id_for_apt("3D1219C7C4C5404AAA1F6D2A48ADFDA4\r\n")
        == "3D1219C7C4C5404AAA1F6D2A48ADFDA4"
    )
    assert (
        machine_id_for_apt("c0ffee00-1234-4abc-9def-0123456789ab")
        == "c0ffee00-1234-4abc-9def-0123456789ab"
    )
    assert machine_id_for_apt(" fleet one \nsecond line") == " fleet one "
    upper, lower = "3D1219C7C4C5404AAA1F6D2A48ADFDA4", "3d1219c7c4c5404aaa1f6d2a48adfda4"
    versions = [f"5.2-{n}" for n in range(20)]
    assert [phased_draw("bash", v, upper) for v in versions] != [
        phased_draw("bash", v, lower) for v in versions
    ]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "does not phase at all"),
        ("\n", "does not phase at all"),
        ("a\tb", "control"),
        ("nul\x00id", "control"),
        ("x" * 201, "at most 200"),
    ],
)
def test_what_apt_could_not_use_is_refused_with_a_clear_message(text, words):
    with pytest.raises(ValueError, match=words):
        machine_id_for_apt(text)


@needs_apt
def test_real_apt_draws_on_upper_case_dashed_and_spaced_machine_ids_verbatim(tmp_path):
    rows = [
        AptRow(f"hello-p{p}", "hello", "0.1", "2.10-3ubuntu0.1", p) for p in (0, 20, 40, 60, 80, 99)
    ]
    machine_ids = [
        "3D1219C7C4C5404AAA1F6D2A48ADFDA4",
        "3d1219c7c4c5404aaa1f6d2a48adfda4",
        "C0FFEE00-1234-4ABC-9DEF-0123456789AB",
        "c0ffee00-1234-4abc-9def-0123456789ab",
        "fleet one",
        "Ünïcode-fleet",
    ]

    taken = apt_upgrades(tmp_path, rows, machine_ids)

    for machine_id in machine_ids:
        expected = {
            r.package
            for r in rows
            if decide("hello", r.new_version, machine_id, r.percentage).included
        }
        assert taken[machine_id] == expected, machine_id


@needs_apt
def test_the_client_rules_the_machine_page_states_are_what_real_apt_does(tmp_path):
    """Always-Include wins over Never-Include, and Update-Manager:: counts only where the
    APT::Get:: option is unset (apt-pkg/depcache.cc 2576-2582); apt before 2.7.11 says
    "kept back" (apt-private/private-output.cc, 2.4.13 493-501)."""
    rows = [AptRow("world", "world", "1.0", "1.1", 0)]
    repo = build_flat_repo(tmp_path / "repo", rows)
    sandbox = AptSandbox(tmp_path / "apt")
    sandbox.install(rows)
    sandbox.use_archive(repo, ["stable-updates"])
    sandbox.update()
    machines = [f"{i:032x}" for i in range(12)]
    sandbox.check_phasing_active("world", machines)
    kept = [m for m in machines if not decide("world", "1.1", m, 0).included]

    def taken(*options):
        return {m for m in machines if "world" in sandbox.upgrades(m, *options)}

    always, never = (
        "APT::Get::Always-Include-Phased-Updates=true",
        "APT::Get::Never-Include-Phased-Updates=true",
    )
    assert taken(always, never) == set(machines)
    assert taken("Update-Manager::Always-Include-Phased-Updates=true") == set(machines)
    assert taken(
        "APT::Get::Always-Include-Phased-Updates=false",
        "Update-Manager::Always-Include-Phased-Updates=true",
    ) == set(machines) - set(kept)
    output = sandbox.run("apt-get", "-s", "-o", f"APT::Machine-ID={kept[0]}", "upgrade")
    version = sandbox.run("apt-get", "--version").split()[1]
    if tuple(int(p) for p in version.split(".")[:2]) < (2, 7):
        assert "The following packages have been kept back:" in output
    else:
        assert "deferred due to phasing" in output


def _regenerate() -> None:
    with tempfile.TemporaryDirectory() as workdir:
        vectors = read_draws_from_apt(Path(workdir), VECTOR_SOURCES, _vector_machine_ids())
    apt_version = subprocess.run(
        ["apt-get", "--version"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]
    note = (
        f"Draws read off the real apt-get ({apt_version}): for each source version, 101 "
        "binaries of that source offered at 0..100% in a throw-away archive "
        "(tests/apt_harness.py); the draw is the lowest percentage apt-get -s upgrade takes "
        "for that APT::Machine-ID. Regenerate: .venv/bin/python -m tests.packages.domain.test_apt_phasing"
    )
    lines = ",\n".join("  " + json.dumps(v) for v in vectors)
    VECTORS_PATH.write_text(
        f'{{\n "note": {json.dumps(note)},\n "vectors": [\n{lines}\n ]\n}}\n', encoding="utf-8"
    )
    print(f"wrote {len(vectors)} vectors to {VECTORS_PATH}", file=sys.stderr)


if __name__ == "__main__":
    _regenerate()
