"""The Celery tasks, run by a real worker on the configured broker (Redis in CI)."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

import pytest
from celery.contrib.testing.worker import start_worker
from django.utils import timezone

from overview import tasks
from overview.evidence.sources.simulator import SimulatedCrashFeed
from packages.models import PhasingEvent, PhasingState, SourceSync, WriteBack
from packages.sources import simulated_archive
from phasing_site.celery import app
from tests.factories import PublicationFactory

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, *, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


@pytest.fixture
def worker(settings, monkeypatch):
    settings.PHASING_SIMULATOR_PACKAGES = 5
    # The simulator's rare tracker outages would make the outcome a matter of chance.
    monkeypatch.setattr(SimulatedCrashFeed, "crash_data_outage", lambda self, query, now: "")
    simulated_archive.cache_clear()
    # The worker sets up Celery's logging (root level and handlers); give them back after,
    # so the tests that read logs still see them.
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        with start_worker(
            app, pool="threads", concurrency=2, perform_ping_check=False, shutdown_timeout=20
        ):
            yield
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers
        simulated_archive.cache_clear()


def fresh_crash_sync() -> None:
    SourceSync.objects.create(
        name="simulator:crashes", kind="crashes", last_success_at=timezone.now()
    )


def test_a_tick_sent_to_the_worker_advances_the_update_and_writes_it_back(worker):
    fresh_crash_sync()
    publication = PublicationFactory(last_increase_at=timezone.now() - timedelta(hours=7))
    tasks.tick.delay()

    def advanced() -> bool:
        publication.refresh_from_db()
        return publication.phased_update_percentage == 20

    assert wait_for(advanced), "the worker did not run the tick"
    event = PhasingEvent.objects.get(publication=publication)
    assert wait_for(lambda: PhasingEvent.objects.get(pk=event.pk).write_back == WriteBack.APPLIED)
    assert publication.state == PhasingState.PHASING


def test_a_tick_run_twice_by_the_worker_steps_once(worker):
    fresh_crash_sync()
    publication = PublicationFactory(last_increase_at=timezone.now() - timedelta(hours=7))
    tasks.tick.delay()
    tasks.tick.delay()
    assert wait_for(lambda: PhasingEvent.objects.filter(publication=publication).count() >= 1)
    time.sleep(2)  # give the second tick time to do something wrong
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 20
    assert PhasingEvent.objects.filter(publication=publication).count() == 1
