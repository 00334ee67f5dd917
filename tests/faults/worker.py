"""Real Celery workers for the fault suite: the Procfile's command in a process group of
its own (so SIGKILL takes the pool with it), on a queue of the test's own, against the
test's database; and the test's own tasks routed to that queue."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from django.db import connection

from tests.test_deployment import Deployment, procfile_command


class Workers(Deployment):
    """Workers (and beats) started with the Procfile's commands; `kill` is SIGKILL."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        super().__init__(tmp_path)
        self.queue = f"faults-{uuid.uuid4().hex[:8]}"
        self.env = env

    def start(self, name: str, process: str = "worker", *, wrap: str = "", **env: str) -> None:
        command = procfile_command(process)
        if wrap:
            command = wrap.format(command=command)
        super().start(name, command, CELERY_WORKER_NAME=name, **{**self.env, **env})

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
