"""Real Celery workers for the fault suite: the Procfile's command in a process group of
its own (so SIGKILL takes the pool with it), on a queue of the test's own, against the
test's database; and the test's own tasks routed to that queue."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from django.db import connection

from tests.test_deployment import ROOT, _deployment_env, procfile_command


class Workers:
    """Workers (and beats) started with the Procfile's commands; `kill` is SIGKILL."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.tmp_path = tmp_path
        self.queue = f"faults-{uuid.uuid4().hex[:8]}"
        self.env = env
        self.processes: dict[str, subprocess.Popen] = {}

    def start(self, name: str, process: str = "worker", *, wrap: str = "", **env: str) -> None:
        command = procfile_command(process)
        if wrap:
            command = wrap.format(command=command)
        self.processes[name] = subprocess.Popen(
            ["sh", "-c", command],
            cwd=ROOT,
            env={
                **_deployment_env(self.tmp_path, name),
                "CELERY_TASK_DEFAULT_QUEUE": self.queue,
                "CELERY_WORKER_NAME": name,
                **self.env,
                **env,
            },
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
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)

    def log(self, name: str) -> str:
        return (self.tmp_path / f"{name}.log").read_text()

    def logs(self) -> str:
        return "\n".join(f"--- {name}\n{self.log(name)[-3000:]}" for name in self.processes)


@contextlib.contextmanager
def workers(tmp_path: Path, **env: str) -> Iterator[Workers]:
    running = Workers(tmp_path, **env)
    try:
        with tasks_routed_to(running.queue):
            yield running
    finally:
        running.stop()


@contextlib.contextmanager
def tasks_routed_to(queue: str) -> Iterator[None]:
    """Every task this test process queues (a commit's write-back, a tick it sends) goes
    to the fault suite's workers, not to the queue other tests share."""
    from phasing_site.celery import app

    def use(routes) -> None:
        app.conf.task_routes = routes
        app.amqp.flush_routes()  # kept from task_routes at first use
        app.amqp.__dict__.pop("router", None)  # made once from those

    previous = app.conf.task_routes
    use({"*": {"queue": queue}})
    try:
        yield
    finally:
        use(previous)


def wait_for(predicate: Callable[[], object], seconds: float, every: float = 0.05) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False


def sent_until(
    send: Callable[[], object], predicate: Callable[[], object], seconds: float, again: float = 4
) -> bool:
    """Send (as beat does), and send again every `again` seconds until the predicate holds:
    the Redis transport can lose a message handed out as a consumer dies or starts, and
    beat's next send is what makes that good in a deployment."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        send()
        if wait_for(predicate, min(again, deadline - time.monotonic())):
            return True
    return False


def write_in_flight(application_name: str) -> bool:
    """A transaction of that process has taken a transaction id: it locked or wrote rows."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_stat_activity WHERE application_name = %s "
            "AND backend_xid IS NOT NULL",
            [application_name],
        )
        return cursor.fetchone() is not None


def tick_in_flight(application_name: str) -> bool:
    """That process is inside a tick's transaction: it holds the rows of the updates it
    decides (SELECT ... FOR UPDATE) and has written or locked them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE a.application_name = %s AND a.backend_xid IS NOT NULL "
            "AND l.relation = 'packages_publication'::regclass AND l.mode = 'RowShareLock'",
            [application_name],
        )
        return cursor.fetchone() is not None


def overview_faults(client) -> str:
    """The overview's fault banner, empty when nothing is failing."""
    html = client.get("/").content.decode()
    if 'class="faults"' not in html:
        return ""
    return html[
        html.index('class="faults"') : html.index("</section>", html.index('class="faults"'))
    ]
