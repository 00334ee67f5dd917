"""A database or broker that refuses or hangs: pages answer 503 within seconds, and a
committed admin change answers as committed even when its write-back cannot be queued."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import OperationalError, close_old_connections, connection
from django.utils import timezone

from overview.tasks import tick
from packages.models import PhasingEvent, WriteBack
from packages.services.writeback import percentages_reconcile
from tests.faults.tcp_proxy import FORWARD, HANG, REFUSE
from tests.faults.worker import overview_faults
from tests.packages.admin.admin_actions import apply_action


def _through(proxy) -> dict:
    return {**connection.settings_dict, "HOST": "127.0.0.1", "PORT": str(proxy.port)}


@pytest.mark.django_db
@pytest.mark.parametrize("mode", [REFUSE, HANG])
def test_a_database_that_refuses_or_hangs_is_given_up_within_the_connect_timeout(
    database_proxy, mode, settings
):
    from django.db.backends.postgresql.base import DatabaseWrapper

    database_proxy.mode = mode
    wrapper = DatabaseWrapper(_through(database_proxy), alias="faulty")
    limit = settings.DATABASES["default"]["OPTIONS"]["connect_timeout"]

    started = time.monotonic()
    with pytest.raises(OperationalError):
        wrapper.ensure_connection()

    assert time.monotonic() - started < limit + 2
    assert "statement_timeout" in settings.DATABASES["default"]["OPTIONS"]["options"]


@pytest.mark.django_db(transaction=True)
def test_pages_answer_503_within_seconds_while_the_database_hangs(database_proxy, anonymous):
    anonymous.raise_request_exception = False
    original = connection.settings_dict
    database_proxy.mode = HANG
    connection.close()
    connection.settings_dict = _through(database_proxy)
    try:
        started = time.monotonic()
        page = anonymous.get("/")
        api = anonymous.get("/api/v1/publications/")
        elapsed = time.monotonic() - started
    finally:
        connection.close()
        connection.settings_dict = original

    assert (page.status_code, api.status_code) == (503, 503)
    assert api.json()["detail"]
    assert elapsed < 2 * (original["OPTIONS"]["connect_timeout"] + 2)


@pytest.mark.django_db(transaction=True)
def test_a_committed_change_answers_as_committed_while_the_broker_hangs(
    broker_proxy, archive_admin, publication, anonymous
):
    broker_proxy.mode = HANG

    started = time.monotonic()
    response = apply_action(
        archive_admin, "set_percentage", [publication], percentage=40, reason="faster"
    )
    elapsed = time.monotonic() - started

    assert response.status_code == 200
    assert elapsed < 15
    publication.refresh_from_db()
    assert publication.phased_update_percentage == 40
    # One event, its write-back left pending for the reconcile: nothing lost or doubled.
    [event] = PhasingEvent.objects.filter(publication=publication)
    assert event.write_back == WriteBack.PENDING
    # The overview says work is not reaching the workers, while it lasts.
    assert "queueing work for the workers (the broker)" in overview_faults(anonymous)

    # The broker is back: beat's reconcile writes it back, once; its next tick clears it.
    broker_proxy.mode = FORWARD
    later = timezone.now() + timedelta(minutes=3)
    assert percentages_reconcile(now=later) == {
        "applied": 1,
        "dry_run": 0,
        "failed": 0,
        "denied": 0,
    }
    tick.apply()
    assert "the broker" not in overview_faults(anonymous)
    [event] = PhasingEvent.objects.filter(publication=publication)
    assert event.write_back == WriteBack.APPLIED


@pytest.mark.django_db(transaction=True)
def test_a_database_that_stops_answering_on_an_open_connection_gives_a_503_within_seconds(
    database_proxy, anonymous, settings
):
    # statement_timeout is the server's: one that stops answering never enforces it, and
    # the page would wait until gunicorn killed it.
    settings.DATABASE_REQUEST_TIMEOUT = 2
    anonymous.raise_request_exception = False
    original = connection.settings_dict
    connection.close()
    connection.settings_dict = _through(database_proxy)
    try:
        assert anonymous.get("/api/v1/publications/").status_code == 200  # connected
        database_proxy.mode = HANG
        started = time.monotonic()
        page = anonymous.get("/")
        api = anonymous.get("/api/v1/publications/")
        elapsed = time.monotonic() - started
        database_proxy.mode = FORWARD
        # What the web server does after each request (the test client does not): a
        # connection that failed is dropped, and the next request connects again.
        close_old_connections()
        after = anonymous.get("/api/v1/publications/")
        page_after = anonymous.get("/")
    finally:
        connection.close()
        connection.settings_dict = original

    assert (page.status_code, api.status_code) == (503, 503)
    assert "The database is not answering" in page.content.decode()  # while it lasts
    assert elapsed < 2 * (2 + 1)
    assert (after.status_code, page_after.status_code) == (200, 200)


@pytest.mark.django_db(transaction=True)
def test_a_task_s_query_on_a_database_that_stops_answering_ends_at_the_client_s_deadline(
    database_proxy,
):
    from django.db import connections

    wrapper = connections.create_connection("default")
    wrapper.settings_dict = _through(database_proxy)
    wrapper.client_timeout = 1
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT 1")
        database_proxy.mode = HANG
        started = time.monotonic()
        with pytest.raises(OperationalError), wrapper.cursor() as cursor:
            cursor.execute("SELECT 1")
        assert time.monotonic() - started < 1 + 1
    finally:
        wrapper.close()
