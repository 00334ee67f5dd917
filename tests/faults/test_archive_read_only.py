"""An apt archive the worker cannot write (a read-only file system): the halt is kept in
the database, the overview says the write-back is failing and why, and once the archive
is writable again the worker's own retry writes it, once, without anyone asking."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from packages.models import EventKind, PhasingEvent, Publication, WriteBack
from packages.services.rollouts import publication_halt
from packages.services.sync import publications_sync
from packages.sources.apt.archive import AptArchiveSource
from tests.factories import UserFactory
from tests.faults.worker import overview_faults, wait_for, workers
from tests.packages.sources.apt.fakes import by_source, standard_archive

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs the real broker (REDIS_URL)"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="a worker process: PostgreSQL"),
    pytest.mark.skipif(os.geteuid() != 0, reason="a read-only mount of the worker's own"),
]


class ReadOnlyArchive:
    """The archive mounted read-only in the worker's own mount namespace (root writes
    through file modes, so a mode is no fault); nothing changes for any other process."""

    def __init__(self, root: Path, tmp_path: Path) -> None:
        self.root = root
        self.pid_file = tmp_path / "namespace.pid"

    def wrap(self) -> str:
        a = self.root
        return (
            "exec unshare --mount --propagation private sh -c "
            f"'echo $$ > {self.pid_file} && mount --bind {a} {a} && "
            f"mount -o remount,ro,bind {a} {a} && exec {{command}}'"
        )

    def lift(self) -> None:
        pid = self.pid_file.read_text().strip()
        subprocess.run(
            ["nsenter", "-t", pid, "-m", "mount", "-o", "remount,rw,bind", str(self.root)],
            check=True,
        )


def test_a_halt_the_read_only_archive_refused_is_shown_then_written_once_it_is_writable(
    tmp_path, anonymous
):
    root = standard_archive(tmp_path / "archive")
    publications_sync(AptArchiveSource(location=str(root)), now=timezone.now())
    hello = Publication.objects.get(source_package__name="hello")
    read_only = ReadOnlyArchive(root, tmp_path)
    events_before = PhasingEvent.objects.count()

    with workers(
        tmp_path,
        PHASING_PUBLICATION_SOURCE="apt",
        PHASING_APT_ARCHIVE=str(root),
        PHASING_RETRY_BACKOFF="1",
    ) as running:
        running.start("worker-1", wrap=read_only.wrap())
        assert wait_for(lambda: "ready" in running.log("worker-1"), 30), running.logs()

        publication_halt(publication=hello, actor=UserFactory(), reason="crashes on start")
        [halt] = PhasingEvent.objects.filter(publication=hello, kind=EventKind.HALTED)

        # While it lasts: the archive still says 10 %, and the overview says why.
        assert wait_for(lambda: "read-only file system" in overview_faults(anonymous), 20), (
            running.logs()
        )
        banner = overview_faults(anonymous)
        assert "writing percentages back to the archive" in banner
        halt.refresh_from_db()
        assert halt.write_back == WriteBack.FAILED
        assert by_source(AptArchiveSource(location=str(root)))["hello"].percentage == 10

        # The fault ends; nobody does anything.
        read_only.lift()
        assert wait_for(
            lambda: PhasingEvent.objects.filter(pk=halt.pk, write_back=WriteBack.APPLIED).exists(),
            30,
        ), running.logs()
        retries = running.log("worker-1").count("Retry in")

    # Written once, whole, and nothing doubled or left failing.
    assert by_source(AptArchiveSource(location=str(root)))["hello"].percentage == 0
    assert PhasingEvent.objects.count() == events_before + 1  # the halt, once
    hello.refresh_from_db()
    assert (hello.phased_update_percentage, hello.written_percentage) == (0, 0)
    assert retries >= 1
    assert overview_faults(anonymous) == ""
