"""A healthy `make run` logs what happens once, at its level: no kombu warning on every
connection to the filesystem broker, one line per 4xx, a task's printed email as INFO."""

from __future__ import annotations

import logging

from kombu import Connection

from phasing_site.celery import app
from tests.test_settings import load


def test_the_embedded_broker_url_names_a_host_so_kombu_does_not_warn(tmp_path, caplog):
    import json

    broker = json.loads(load(tmp_path, DEBUG="1").stdout)["broker"]

    with caplog.at_level(logging.WARNING, logger="kombu"):
        Connection(broker).clone()

    assert "No hostname was supplied" not in caplog.text


def test_djangos_own_console_handler_is_gone_so_a_4xx_is_printed_once():
    # In DEBUG Django's default "console" handler on the "django" logger printed each
    # "Not Found" beside the root's handler: two lines per 4xx.
    assert logging.getLogger("django").handlers == []
    assert logging.getLogger("django").propagate
    assert logging.getLogger("django.request").getEffectiveLevel() <= logging.WARNING


def test_what_a_task_prints_is_logged_as_info_not_warning():
    assert app.conf.worker_redirect_stdouts_level == "INFO"
