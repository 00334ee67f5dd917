"""The whole loop with real apt, real HTTP and the product's own intake and agents.

The product's apt archive is served over HTTP on 127.0.0.1 to twenty machines, each an apt
configuration of its own (APT::Machine-ID, its own state, ``Dir::Bin::ischroot`` so apt
does not take the test for a chroot). At 10 % exactly the machines apt's draw admits take
the update; the fleet agent on each reports what apt did; the machines on the new version
send crash reports as whoopsie sends them (the crash sender, over the intake's protocol);
one sync and one tick later the controller has halted the update; the write-back sets 0 %
in the archive and apt on every machine no longer offers it; an archive admin resumes it
and the machines apt admits get it again.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.core.cache import cache
from django.utils import timezone

from agent import phasing_agent, phasing_crash_sender
from overview.controller import tick as controller
from overview.evidence.crash_sync import crashes_sync
from overview.evidence.fleet_reads import fleet_counts
from overview.judges.crash_source import crash_source
from overview.models import Problem, ProblemKind
from packages.domain import apt_phasing, policy
from packages.models import PhasingEvent, PhasingState, Publication, WriteBack
from packages.services.rollouts import publication_resume
from packages.services.sync import publications_sync
from packages.services.writeback import percentages_write_back
from packages.sources.apt.archive import AptArchiveSource
from packages.sources.base import PublicationRecord
from tests.agent.test_phasing_agent import SYSTEM_PYTHON, python_apt_available
from tests.apt_archives import write_archive
from tests.apt_harness import AptRow, AptSandbox
from tests.factories import PolicyFactory, UserFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not python_apt_available(), reason="apt-get or python3-apt is missing"),
]

SOURCE, OLD, NEW = "hello", "2.10-3", "2.10-3ubuntu0.1"
MACHINES = 20


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture
def archive_server(tmp_path):
    root = tmp_path / "archive"
    root.mkdir()
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(root))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def machine_ids() -> list[str]:
    """Twenty machine ids, none with apt's draw 0 (which takes an update even at 0 %)."""
    ids = []
    n = 0
    while len(ids) < MACHINES:
        n += 1
        candidate = hashlib.md5(f"machine-{n}".encode()).hexdigest()
        if apt_phasing.decide(SOURCE, NEW, candidate, 0).draw > 0:
            ids.append(candidate)
    return ids


class Machine:
    def __init__(self, root: Path, machine_id: str, archive_url: str) -> None:
        self.id = machine_id
        self.root = root
        self.apt = AptSandbox(root / "apt")
        self.apt.use_archive(archive_url, ["noble-updates"])
        with self.apt.config_path.open("a", encoding="utf-8") as config:
            config.write(f'APT::Machine-ID "{machine_id}";\nDir::Bin::ischroot "/bin/false";\n')
        self.have(OLD)
        self.crash_dir = root / "crash"
        self.crash_dir.mkdir()
        self.product_uuid = root / "product_uuid"
        self.product_uuid.write_text(
            f"{machine_id[:8]}-{machine_id[8:12]}-{machine_id[12:16]}-{machine_id[16:20]}-"
            f"{machine_id[20:32]}".upper()
        )

    def have(self, version: str) -> None:
        self.apt.install([AptRow(SOURCE, SOURCE, version, version, None)])

    def upgrade(self) -> bool:
        """apt-get upgrade as apt decides it (simulated), then the new version installed."""
        self.apt.update()
        if self.apt.upgrades(self.id).get(SOURCE) == NEW:
            self.have(NEW)
            return True
        return False

    def offered(self) -> bool:
        self.apt.update()
        return SOURCE in self.apt.upgrades(self.id)

    def report_fleet(self, url: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
        env["APT_CONFIG"] = str(self.apt.config_path)
        subprocess.run(
            [SYSTEM_PYTHON, phasing_agent.__file__, "--url", url, "--release", "noble"],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )

    def crash(self, url: str, times: int) -> None:
        for n in range(times):
            (self.crash_dir / f"_usr_bin_hello.{n}.crash").write_text(
                "ProblemType: Crash\nArchitecture: amd64\n"
                f"Date: Thu Dec  3 11:0{n}:00 2026\nDistroRelease: Ubuntu 24.04\n"
                f"Package: {SOURCE} {NEW}\nSourcePackage: {SOURCE}\n"
                "ExecutablePath: /usr/bin/hello\nSignal: 11\n"
                f"ProcStatus:\n Name:\thello\n Pid:\t{1000 + n}\n"
                "StacktraceTop:\n greet () from /usr/lib/libhello.so\n main ()\n"
            )
        subprocess.run(
            [
                SYSTEM_PYTHON,
                phasing_crash_sender.__file__,
                "--url",
                url,
                "--crash-dir",
                str(self.crash_dir),
                "--system-uuid-file",
                str(self.product_uuid),
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )


def each(machines: list[Machine], work) -> list:
    """Run apt on the machines a few at a time, as a fleet does (each its own apt)."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(work, machines))


def write_back(archive: AptArchiveSource, publication: Publication) -> None:
    pending = list(
        PhasingEvent.objects.filter(
            publication=publication, write_back=WriteBack.PENDING
        ).values_list("pk", flat=True)
    )
    percentages_write_back(event_ids=pending, source=archive)


def test_the_whole_loop_halts_on_crashes_from_the_machines_apt_admitted_and_resumes(
    archive_server, live_server, tmp_path, settings
):
    cache.clear()
    settings.PHASING_CRASH_SOURCE = "intake"
    root, archive_url = archive_server
    now = timezone.now()
    record = PublicationRecord(
        release="noble",
        source_package=SOURCE,
        version=NEW,
        date_published=now - timedelta(minutes=5),
        phased_update_percentage=10,
        previous_version=OLD,
    )
    # The release pocket holds the version it replaces: Ubuntu's rule compares with it.
    released = dataclasses.replace(
        record, version=OLD, previous_version="", phased_update_percentage=None
    )
    write_archive(
        root,
        [{"codename": "noble", "version": "24.04", "updates": [record], "release": [released]}],
        now=now,
    )
    archive = AptArchiveSource(location=str(root))
    publications_sync(archive, now=now)
    update = Publication.objects.get()
    # Ubuntu's rules judge the rate: the previous version has no crash history here, on
    # which the sequential test would rest (it says "insufficient evidence" without one).
    PolicyFactory(judge=policy.UBUNTU)
    machines = [Machine(tmp_path / m, m, archive_url) for m in machine_ids()]

    # 1. At 10 %: exactly the machines apt's draw admits take it.
    admitted = {
        m.id for m, took in zip(machines, each(machines, Machine.upgrade), strict=True) if took
    }
    expected = {m.id for m in machines if apt_phasing.decide(SOURCE, NEW, m.id, 10).included}
    assert admitted == expected
    assert len(admitted) >= 2, "pick machine ids of which apt admits at least two at 10 %"

    # 2. The fleet agent on every machine: measured uptake.
    each(machines, lambda machine: machine.report_fleet(live_server.url))
    counts = fleet_counts([update.pk], now=timezone.now())[update.pk]
    assert (counts.machines, counts.on_new_version, counts.held_back) == (
        MACHINES,
        len(admitted),
        MACHINES - len(admitted),
    )

    # 3. The machines on the new version crash, and report it as whoopsie does.
    for machine in machines:
        if machine.id in admitted:
            machine.crash(live_server.url, times=2)
    source = crash_source()
    assert crashes_sync(source)["inserted"] == 2 * len(admitted)
    controller.tick(crash_source=source)
    update.refresh_from_db()
    assert update.state == PhasingState.HALTED
    assert update.phased_update_percentage == 0
    assert Problem.objects.filter(
        publication=update, active=True, kind=ProblemKind.INCREASED_RATE
    ).exists()

    # 4. The write-back sets 0 % in the archive; apt offers it to no machine, not even to
    # those that took it and went back to the previous version.
    write_back(archive, update)
    for machine in machines:
        if machine.id in admitted:
            machine.have(OLD)
    assert not any(each(machines, Machine.offered))

    # 5. An archive admin resumes it; the machines apt admits get it again.
    publication_resume(
        publication=update, actor=UserFactory(username="admin"), reason="fixed in the retracer"
    )
    write_back(archive, update)
    again = {
        m.id for m, took in zip(machines, each(machines, Machine.upgrade), strict=True) if took
    }
    assert again == admitted
