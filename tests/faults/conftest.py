"""The fault suite: the product against a database and a broker that refuse or hang
(through a TCP proxy the test controls), counting what is lost or doubled afterwards."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.db import connection
from kombu import pools as kombu_pools

from tests.faults.tcp_proxy import tcp_proxy


@pytest.fixture
def database_proxy():
    db = settings.DATABASES["default"]
    if connection.vendor != "postgresql":
        pytest.skip("the database faults are PostgreSQL's")
    with tcp_proxy(db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432)) as proxy:
        yield proxy


@pytest.fixture
def broker_proxy():
    from phasing_site.celery import app

    url = urlsplit(app.conf.broker_url)
    if url.scheme != "redis":
        pytest.skip("the broker faults are Redis's")
    with tcp_proxy(url.hostname or "127.0.0.1", url.port or 6379) as proxy:
        previous = app.conf.broker_url
        app.conf.broker_url = url._replace(netloc=f"127.0.0.1:{proxy.port}").geturl()
        _forget_connections(app)
        try:
            yield proxy
        finally:
            app.conf.broker_url = previous
            _forget_connections(app)


def _forget_connections(app) -> None:
    """Celery keeps its broker connections in pools made at first use: drop them, so the
    next task is sent through the URL set now."""
    pool = app._pool
    if pool is not None:
        pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None
    # kombu keeps producer and connection pools per broker URL in a registry of its own:
    # a closed one left there would fail every later task sent in this process.
    kombu_pools.reset()
