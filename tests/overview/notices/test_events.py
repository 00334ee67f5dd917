"""What the controller announces: crash data that went missing, once, as one notice."""

from __future__ import annotations

import pytest

from overview.evidence.sources.base import CrashAnswer
from overview.models import WebhookDelivery
from tests.factories import PublicationFactory
from tests.overview.controller.fakes import HOURS, T0, tick
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
    from overview.controller import tick as controller

    publication = PublicationFactory(last_increase_at=T0)
    crashes.answers[publication.source_package.name] = CrashAnswer(error="down")
    with django_capture_on_commit_callbacks(execute=True):
        controller.tick(now=T0 + 6 * HOURS, dry_run=True, crash_source=crashes)
    assert WebhookDelivery.objects.count() == 0


def test_every_notice_matches_the_schema_in_the_openapi_document(
    receiver, endpoint, queued, archive_admin_user, django_capture_on_commit_callbacks, client
):
    from overview.notices import delivery
    from overview.notices.schema import WebhookNotice, notice_schema
    from packages.services import releases, rollouts

    publication = PublicationFactory()
    with django_capture_on_commit_callbacks(execute=True):
        rollouts.publication_halt(publication=publication, reason="bad", actor=archive_admin_user)
    with django_capture_on_commit_callbacks(execute=True):
        releases.release_freeze(release=publication.release, actor=archive_admin_user, reason="x")
    delivery.sample_event_send(endpoint)
    drain(queued)
    for sent in WebhookDelivery.objects.all():
        delivery.delivery_attempt(delivery_id=sent.pk)
    document = client.get("/api/v1/openapi.json").json()
    schema = document["webhooks"]["notice"]["post"]["requestBody"]["content"]["application/json"]
    assert {p["type"] for p in receiver.verified} == {"update.halted", "release.frozen", "test"}
    assert schema["schema"] == notice_schema()
    for payload in receiver.verified:
        WebhookNotice.model_validate(payload)  # extra keys are refused too
