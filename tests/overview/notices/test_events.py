"""What the controller announces: crash data that went missing, once, as one notice."""

from __future__ import annotations

import pytest

from overview.models import WebhookDelivery
from overview.sources.base import CrashAnswer
from tests.factories import PublicationFactory
from tests.overview.controller_fakes import HOURS, T0, tick
from tests.overview.notices.conftest import drain

pytestmark = pytest.mark.django_db


def test_crash_data_going_missing_is_one_notice_for_the_tick_and_not_repeated(
    crashes, receiver, endpoint, queued, django_capture_on_commit_callbacks
):
    publications = [PublicationFactory(last_increase_at=T0) for _ in range(2)]
    for publication in publications:
        crashes.answers[publication.source_package.name] = CrashAnswer(
            error="crash data unavailable: timeout"
        )
    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + 6 * HOURS)
    drain(queued)
    [payload] = receiver.verified
    assert payload["type"] == "crash_data.stale"
    assert {u["id"] for u in payload["data"]["updates"]} == {p.pk for p in publications}
    assert "timeout" in payload["data"]["summary"]

    with django_capture_on_commit_callbacks(execute=True):
        tick(crashes, T0 + 7 * HOURS)  # still missing: nothing new to say
    assert WebhookDelivery.objects.count() == 1


def test_a_dry_run_tick_announces_nothing(
    crashes, endpoint, queued, django_capture_on_commit_callbacks
):
    from overview import controller

    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(error="down")
    with django_capture_on_commit_callbacks(execute=True):
        controller.tick(now=T0 + 6 * HOURS, dry_run=True, crash_source=crashes)
    assert WebhookDelivery.objects.count() == 0
