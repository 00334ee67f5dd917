"""The deployment of docs/deploy.md, on the real broker: two Celery workers and one beat,
started with the Procfile's commands (the ones the guide's systemd units run), tick and
sync over the simulator. No step, event or email happens twice, and a worker killed in
the middle of a tick leaves nothing half done.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashReportRecord
from overview.models import Notification, PeriodicRun
from packages.domain.policy import MIN_INTERVAL
from packages.models import EventKind, PhasingEvent, PhasingState, Publication
from tests.factories import PersonFactory, PolicyFactory, PublicationFactory, ReleaseFactory

ROOT = Path(__file__).resolve().parent.parent
PHASING = 150
REGRESSED = 3

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs the real broker (REDIS_URL)"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="several machines: PostgreSQL"),
]


def procfile_command(name: str) -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {name} in the Procfile")


def _deployment_env(tmp_path: Path, application_name: str) -> dict[str, str]:
    db = connection.settings_dict
    # Not the test run's settings, nor what a Celery worker started in this process
    # leaves in the environment (CELERY_LOG_LEVEL...).
    env = {
        k: v
        for k, v in os.environ.items()
        if k != "DJANGO_SETTINGS_MODULE" and not k.startswith("CELERY_")
    }
    return {
        **env,
        "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
        "DEBUG": "0",
        "SECRET_KEY": "deployment-test-secret-key-0123456789abcdef0123456789",
        "DATABASE_URL": (
            f"postgres://{db['USER']}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
            f"?application_name={application_name}"
        ),
        "REDIS_URL": settings.REDIS_URL,
        "PHASING_VAR_DIR": str(tmp_path),
        "PHASING_TICK_INTERVAL": "2",
        "PHASING_SYNC_INTERVAL": "3",
        "PHASING_PUBLICATION_SOURCE": "simulator",
        "PHASING_SIMULATOR_PACKAGES": "5",
        "PHASING_CRASH_SOURCE": "local",
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(tmp_path / "mail"),
        "LOG_FORMAT": "plain",
        "CELERY_CONCURRENCY": "1",
    }


class Deployment:
    """Two workers and one beat as separate process groups, each with its own log."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.processes: dict[str, subprocess.Popen] = {}
        self.queue = f"deployment-test-{uuid.uuid4().hex[:8]}"

    def start(self, name: str, command: str, **extra: str) -> None:
        env = {**_deployment_env(self.tmp_path, name), "CELERY_TASK_DEFAULT_QUEUE": self.queue}
        self.processes[name] = subprocess.Popen(
            ["sh", "-c", command],
            cwd=ROOT,
            env={**env, **extra},
            stdout=(self.tmp_path / f"{name}.log").open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self, name: str) -> None:
        os.killpg(self.processes[name].pid, signal.SIGKILL)
        self.processes[name].wait(timeout=10)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)

    def log(self, name: str) -> str:
        return (self.tmp_path / f"{name}.log").read_text()


def assert_each_step_once(publications: list[Publication], *, ends_as_said: bool = True) -> None:
    """No step twice, nothing half done: every publication's events chain from one to the
    next, no step is taken twice, and (`ends_as_said`) it is where its last event says."""
    for publication in Publication.objects.filter(pk__in=[p.pk for p in publications]):
        events = list(publication.events.order_by("created_at", "id"))
        for before, after in zip(events, events[1:], strict=False):
            assert after.old_percentage == before.new_percentage, (publication, before, after)
        steps = Counter((e.kind, e.old_percentage, e.new_percentage) for e in events)
        assert max(steps.values()) == 1, (publication, steps)
        if ends_as_said:
            assert events[-1].new_percentage == publication.phased_update_percentage


def _archive() -> list[Publication]:
    """Updates in phasing, a few of them regressed, on the shortest interval a policy may
    have (a minute; `_always_due` makes them due at every tick)."""
    PolicyFactory(step=2, interval=MIN_INTERVAL)
    release = ReleaseFactory(codename="testing", version="99.04")
    long_ago = timezone.now() - timedelta(days=1)
    publications = [
        PublicationFactory(
            release=release,
            source_package__name=f"deployed-{n:03d}",
            version="2.0-1",
            previous_version="1.0-1",
            signer=PersonFactory(),
            uploader=PersonFactory(),
            date_published=long_ago,
            last_increase_at=long_ago,
        )
        for n in range(PHASING)
    ]
    crash_reports_ingest(
        CrashReportRecord(
            external_id=f"crash-{n}-{system}",
            signature=f"/usr/bin/deployed-{n:03d}:11:crash_here",
            release="testing",
            source_package=f"deployed-{n:03d}",
            version="2.0-1",
            architecture="amd64",
            reported_at=timezone.now() - timedelta(minutes=30),
            system_id=f"system-{system}",
            stack_trace="#0 crash_here ()",
            function="crash_here",
        )
        for n in range(REGRESSED)
        for system in range(5)
    )
    return publications


@contextlib.contextmanager
def _always_due() -> Iterator[None]:
    """Time runs fast for the controller: every update in phasing is made due a step again
    and again, from a connection of its own, as if each tick came an interval later."""
    stop = threading.Event()

    def rewind() -> None:
        try:
            while not stop.wait(0.2):
                try:
                    Publication.objects.filter(state=PhasingState.PHASING).update(
                        last_increase_at=timezone.now() - timedelta(days=1)
                    )
                except DatabaseError:  # a deadlock with a tick's row locks: try again
                    continue
        finally:
            connection.close()

    thread = threading.Thread(target=rewind, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)


def _a_write_in_flight(worker: str) -> bool:
    with connection.cursor() as cursor:
        # A transaction that took a transaction id has locked or written rows.
        cursor.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s "
            "AND backend_xid IS NOT NULL",
            [worker],
        )
        return cursor.fetchone() is not None


def _wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_two_workers_and_one_beat_step_halt_and_email_once_even_when_a_worker_dies(tmp_path):
    publications = _archive()
    deployment = Deployment(tmp_path)
    worker, beat = procfile_command("worker"), procfile_command("beat")
    with _always_due():
        deployment.start("worker-1", worker, CELERY_WORKER_NAME="worker-1")
        deployment.start("worker-2", worker, CELERY_WORKER_NAME="worker-2")
        deployment.start("beat", beat)
        try:
            # Let both workers take tasks, then kill one in the middle of a task's transaction.
            assert _wait_for(
                lambda: PhasingEvent.objects.filter(kind=EventKind.ADVANCED).count() >= 2 * PHASING,
                60,
            ), deployment.log("worker-1")[-2000:] + deployment.log("beat")[-2000:]
            # A second beat, started by mistake on another machine, does not start.
            second = subprocess.run(
                shlex.split(beat.replace('"${LOG_LEVEL:-INFO}"', "INFO")) + ["--no-wait"],
                cwd=ROOT,
                env=_deployment_env(tmp_path, "beat-2"),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert second.returncode != 0 and "another beat holds the lock" in second.stderr
            victim = next(
                (
                    w
                    for w in ("worker-1", "worker-2")
                    if _wait_for(lambda w=w: _a_write_in_flight(w), 10)
                ),
                None,
            )
            assert victim is not None, "no task was seen in the middle of its transaction"
            deployment.kill(victim)
            killed_at = timezone.now()
            # The other worker goes on: two more steps for everyone after the kill.
            assert _wait_for(
                lambda: (
                    PhasingEvent.objects.filter(created_at__gt=killed_at, kind=EventKind.ADVANCED)
                    .values("publication")
                    .distinct()
                    .count()
                    >= PHASING - REGRESSED
                ),
                60,
            )
        finally:
            deployment.stop()

    # Both workers took tasks; beat ran once, as a single scheduler; the sync ran too.
    for name in ("worker-1", "worker-2"):
        assert "succeeded in" in deployment.log(name)
    assert deployment.log("beat").count("beat starting") == 1
    assert PeriodicRun.objects.get(name="tick").last_success_at is not None
    assert PeriodicRun.objects.get(name="sync:publications").last_success_at is not None

    # No step twice, nothing half done.
    assert_each_step_once(publications)

    # Each regressed update halted once, and its signer and uploader were emailed once each.
    halted = Publication.objects.filter(state=PhasingState.HALTED, release__codename="testing")
    assert halted.count() == REGRESSED
    assert PhasingEvent.objects.filter(kind=EventKind.HALTED).count() == REGRESSED
    assert Notification.objects.filter(sent_at__isnull=False).count() == 2 * REGRESSED
    subjects = [
        line
        for mail in (tmp_path / "mail").iterdir()
        for line in mail.read_text().splitlines()
        if line.startswith("Subject: [phasing]")
    ]
    assert len(subjects) == 2 * REGRESSED and len(set(subjects)) == REGRESSED


RELEASES = ("alpha", "beta", "gamma", "delta")


def _releases_in_phasing() -> None:
    """Four releases; in each, updates due a step, one not due yet, one paused, and one
    whose new version crashes on five machines (a new bucket: a halt)."""
    now = timezone.now()
    for n, codename in enumerate(RELEASES):
        release = ReleaseFactory(codename=codename, version=f"9{n}.04")
        for name, fields in (
            *((f"due{k}", {"last_increase_at": now - timedelta(hours=7)}) for k in range(3)),
            ("recent", {"last_increase_at": now - timedelta(minutes=10)}),
            (
                "paused",
                {"state": PhasingState.PAUSED, "last_increase_at": now - timedelta(hours=7)},
            ),
            ("crashing", {"last_increase_at": now - timedelta(hours=7)}),
        ):
            PublicationFactory(
                release=release,
                source_package__name=f"{name}-{codename}",
                version="2.0-1",
                previous_version="1.0-1",
                signer=PersonFactory(),
                date_published=now - timedelta(days=2),
                **fields,
            )
        crash_reports_ingest(
            CrashReportRecord(
                external_id=f"crash-{codename}-{system}",
                signature=f"/usr/bin/crashing-{codename}:11:crash_here",
                release=codename,
                source_package=f"crashing-{codename}",
                version="2.0-1",
                architecture="amd64",
                reported_at=now - timedelta(minutes=30),
                system_id=f"system-{system}",
                stack_trace="#0 crash_here ()",
                function="crash_here",
            )
            for system in range(5)
        )


def test_a_tick_split_per_release_on_two_workers_decides_as_one_whole_tick(tmp_path, settings):
    """PHASING_TICK_PER_RELEASE: the beat's tick sends one task per release, two workers
    take them at once, and every update ends where one whole tick would have put it."""
    from overview import tasks
    from overview.controller import tick as controller
    from overview.controller.rule import Action

    settings.PHASING_CRASH_SOURCE = "local"
    _releases_in_phasing()
    # What one whole tick decides (rolled back: nothing written).
    whole = {d.publication_id: d for d in controller.tick(dry_run=True)}
    assert {d.action for d in whole.values()} == {Action.ADVANCE, Action.HOLD, Action.HALT}

    deployment = Deployment(tmp_path)
    worker = procfile_command("worker")
    for name in ("worker-1", "worker-2"):
        deployment.start(name, worker, CELERY_WORKER_NAME=name, PHASING_TICK_PER_RELEASE="1")
    try:
        # Both listen before the tick is sent, so that neither can take every release alone.
        assert _wait_for(
            lambda: all(" ready." in deployment.log(w) for w in ("worker-1", "worker-2")), 60
        ), deployment.log("worker-1")[-2000:] + deployment.log("worker-2")[-2000:]
        tasks.tick.apply_async(queue=deployment.queue)

        def ticked() -> list[str]:
            return [
                line
                for name in ("worker-1", "worker-2")
                for line in deployment.log(name).splitlines()
                if "overview.tasks.tick_release[" in line and "succeeded in" in line
            ]

        assert _wait_for(lambda: len(ticked()) >= len(RELEASES), 90), (
            deployment.log("worker-1")[-2000:] + deployment.log("worker-2")[-2000:]
        )
    finally:
        deployment.stop()

    # One task per release, and both workers took some.
    assert len(ticked()) == len(RELEASES)
    for name in ("worker-1", "worker-2"):
        assert "overview.tasks.tick_release[" in deployment.log(name), name
    for publication in Publication.objects.all():
        decided = whole[publication.pk]
        halted = decided.action == Action.HALT
        assert (
            publication.phased_update_percentage,
            publication.hold_reason,
            publication.state == PhasingState.HALTED,
        ) == (0 if halted else decided.new_percentage, decided.hold_reason, halted), decided
        steps = PhasingEvent.objects.filter(publication=publication).count()
        assert steps == (0 if decided.action == Action.HOLD else 1), decided


def test_the_guide_s_units_run_the_procfile_lines_the_guide_names():
    guide = (ROOT / "docs" / "deploy.md").read_text()
    for name, unit in (
        ("web", "phasing-web.service"),
        ("worker", "phasing-worker@.service"),
        ("beat", "phasing-beat.service"),
    ):
        text = (ROOT / "deploy" / "systemd" / unit).read_text()
        assert f"ExecStart=/srv/phasing/.venv/bin/python scripts/procfile-run {name}\n" in text
        assert f"`{unit.replace('@.', '@N.')}`" in guide
        shown = procfile_command(name).split(" --")[0]
        assert f"`{shown}" in guide, shown
