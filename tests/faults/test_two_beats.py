"""Two beats (phasing_beat on two machines, for failover) through a database blip: the
one holding the lock loses its connection, stops scheduling, and once the database is
back exactly one beat schedules again, by itself. The overview never says two beats run,
says the ticks stopped if they did, and nothing is stepped, halted or emailed twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from overview.beat_lock import BEAT_LOCK
from overview.models import Notification
from packages.models import EventKind, PhasingEvent, PhasingState, Publication, SourceSync
from tests.faults.tcp_proxy import FORWARD, REFUSE
from tests.faults.worker import overview_faults, wait_for, workers
from tests.test_deployment import REGRESSED, _always_due, _archive, assert_each_step_once

pytestmark = [
    pytest.mark.celery_worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs the real broker (REDIS_URL)"),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the beat lock: PostgreSQL"),
]


def _lock_holders() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND ((classid::bigint << 32) | objid::bigint) = %s",
            [BEAT_LOCK],
        )
        return cursor.fetchone()[0]


def _last_tick():
    return (
        SourceSync.objects.filter(kind="beat")
        .order_by("-last_attempt_at")
        .values_list("last_attempt_at", flat=True)
        .first()
    )


def test_two_beats_through_a_database_blip_schedule_as_one_and_resume_by_themselves(
    database_proxy, tmp_path, anonymous, settings
):
    settings.PHASING_TICK_INTERVAL = timedelta(seconds=1)  # what the overview reads here
    publications = _archive()
    db = connection.settings_dict
    through_proxy = (
        f"postgres://{db['USER']}@127.0.0.1:{database_proxy.port}/{db['NAME']}"
        "?application_name=beat-1"
    )
    seen_two = []
    with (
        _always_due(),
        workers(tmp_path, PHASING_TICK_INTERVAL="1", PHASING_SYNC_INTERVAL="3600") as running,
    ):
        running.start("worker-1")
        running.start("beat-1", "beat", DATABASE_URL=through_proxy)
        assert wait_for(lambda: "beat starting" in running.log("beat-1"), 30), running.logs()
        running.start("beat-2", "beat")
        assert wait_for(lambda: "another beat runs" in running.log("beat-2"), 30), running.logs()
        assert wait_for(lambda: _last_tick() is not None, 30), running.logs()

        # The blip: beat-1's connections dropped, and no new one for a while.
        database_proxy.mode = REFUSE
        database_proxy.cut()
        assert wait_for(lambda: "lost the beat lock" in running.log("beat-1"), 15), running.logs()
        # Either the other beat took over, or the overview says the ticks stopped.
        assert wait_for(
            lambda: (
                "beat starting" in running.log("beat-2")
                or "the controller" in overview_faults(anonymous)
            ),
            15,
        ), running.logs()
        seen_two.append("beats are running" in overview_faults(anonymous))

        # The database is back; nobody does anything.
        database_proxy.mode = FORWARD
        back_at = timezone.now()
        assert wait_for(lambda: (_last_tick() or back_at) > back_at, 30), running.logs()
        assert wait_for(lambda: overview_faults(anonymous) == "", 15), overview_faults(anonymous)
        # A tick queued before the blip may run first; the beat that waited looks again
        # every 30 s, so exactly one holds the lock within that, never two.
        assert wait_for(lambda: _lock_holders() == 1, 45), running.logs()
        starts = running.log("beat-1").count("beat starting") + running.log("beat-2").count(
            "beat starting"
        )
        took_over = "beat starting" in running.log("beat-2")

    # A beat restarted after the blip is the same beat on the overview: one row per beat
    # that ran, so a restart never reads as a second beat.
    assert SourceSync.objects.filter(kind="beat").count() == (2 if took_over else 1)

    assert seen_two == [False]
    assert starts == 2  # the first beat, then one beat after the blip: never both
    # No step twice, nothing half done; each regressed update halted and emailed once.
    assert_each_step_once(publications, ends_as_said=False)
    assert Publication.objects.filter(state=PhasingState.HALTED).count() == REGRESSED
    assert PhasingEvent.objects.filter(kind=EventKind.HALTED).count() == REGRESSED
    assert Notification.objects.filter(sent_at__isnull=False).count() == 2 * REGRESSED
