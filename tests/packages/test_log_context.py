"""Production logs are JSON lines naming the publication, the tick and the source."""

from __future__ import annotations

import io
import json
import logging
import logging.config

import pytest
from django.conf import settings

from overview import tasks
from packages.log_context import log_context
from tests.factories import PublicationFactory
from tests.overview.controller.fakes import ScriptedCrashes


@pytest.fixture
def json_lines():
    """The production handler (settings.LOGGING's json formatter and context filter)
    writing to a buffer; yields a function returning the records logged so far."""
    stream = io.StringIO()
    config = settings.LOGGING
    logging.config.dictConfig(
        {
            "version": 1,
            "disable_existing_loggers": False,
            "filters": config["filters"],
            "formatters": config["formatters"],
            "handlers": {
                "buffer": {
                    "class": "logging.StreamHandler",
                    "stream": stream,
                    "formatter": "json",
                    "filters": ["context"],
                }
            },
            "loggers": {
                "phasing.test": {"handlers": ["buffer"], "level": "INFO"},
                "overview": {"handlers": ["buffer"], "level": "INFO"},
            },
        }
    )
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    logging.config.dictConfig(settings.LOGGING)


def test_production_logs_are_json_with_the_publication_tick_and_source(json_lines):
    log = logging.getLogger("phasing.test")
    log.info("outside")
    with log_context(tick="t-1", source="launchpad"):
        with log_context(publication="noble tool 1.2"):
            log.warning("inside %s", "both")
        log.info("after")

    outside, inside, after = json_lines()
    assert outside["message"] == "outside" and outside["tick"] is None
    assert inside == {
        **inside,
        "message": "inside both",
        "level": "WARNING",
        "logger": "phasing.test",
        "publication": "noble tool 1.2",
        "tick": "t-1",
        "source": "launchpad",
    }
    assert after["publication"] is None and after["tick"] == "t-1"


@pytest.mark.django_db
def test_a_tick_s_records_name_the_tick_and_the_failing_source(json_lines, monkeypatch):
    PublicationFactory()
    crashes = ScriptedCrashes()
    crashes.failure = RuntimeError("tracker down")
    monkeypatch.setattr("overview.controller.tick.configured_crash_source", lambda: crashes)

    tasks.tick.apply(task_id="tick-42")

    failure = next(r for r in json_lines() if r["message"] == "crash source scripted failed")
    assert (failure["tick"], failure["source"], failure["level"]) == (
        "tick-42",
        "scripted",
        "ERROR",
    )


def test_production_settings_choose_json(settings):
    assert settings.DEBUG is False
    assert settings.LOGGING["handlers"]["console"]["formatter"] == "json"
