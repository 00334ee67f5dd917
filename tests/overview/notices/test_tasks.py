"""The notices' tasks, run by a real Celery worker on the configured broker (Redis in CI)."""

from __future__ import annotations

import logging
import time

import pytest
from celery.contrib.testing.worker import start_worker

from overview.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from packages.services import rollouts
from phasing_site.celery import app
from tests.factories import PublicationFactory
from tests.overview.notices.conftest import SECRET, Receiver

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, *, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)  # polling another thread's work, not waiting for time to pass
    return False


@pytest.fixture
def worker():
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


def test_a_halt_is_delivered_signed_by_the_worker_after_commit(
    worker, http_server, settings, archive_admin_user
):
    settings.PHASING_WEBHOOKS_ALLOW_PRIVATE = True
    receiver = Receiver()
    http_server.post("/hooks", receiver)
    WebhookEndpoint.objects.create(name="team", url=http_server.url("/hooks"), secret=SECRET)
    publication = PublicationFactory()

    rollouts.publication_halt(publication=publication, reason="segfault", actor=archive_admin_user)

    assert wait_for(lambda: receiver.verified), "the worker delivered nothing"
    assert receiver.verified[0]["data"]["update"]["id"] == publication.pk
    assert wait_for(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count() == 1
    )


def test_the_beat_sweeps_deliveries_with_a_registered_task(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["webhook-deliveries"]
    assert entry["task"] in app.tasks and entry["schedule"] == 60.0
