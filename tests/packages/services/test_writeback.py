"""Percentages reach the publication source: written back after commit, retried until taken."""

from __future__ import annotations

import pytest

from packages.models import WriteBack
from packages.services.writeback import percentages_write_back
from packages.sources.simulator import Simulator
from tests.factories import (
    PublicationFactory,
)
from tests.overview.controller.fakes import HOURS, T0, tick

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def test_write_back_gives_the_new_percentages_to_the_publication_source(crashes):
    publication = PublicationFactory(last_increase_at=T0)
    tick(crashes, T0 + 6 * HOURS)
    event = publication.events.get()
    simulator = Simulator(seed=1)
    percentages_write_back(event_ids=[event.pk], source=simulator)
    event.refresh_from_db()
    publication.refresh_from_db()
    assert simulator.writes == [
        (publication.release.codename, publication.source_package.name, publication.version, 20)
    ]
    assert event.write_back == WriteBack.APPLIED
    assert publication.source_percentage == 20
    percentages_write_back(event_ids=[event.pk], source=simulator)
    assert len(simulator.writes) == 1


def test_a_failed_write_back_is_retried_until_the_source_takes_it(crashes):
    from packages.services.writeback import percentages_reconcile

    class Down:
        name = "down"

        def set_percentage(self, **kwargs):
            raise ConnectionError("archive unreachable")

    publication = PublicationFactory(last_increase_at=T0)
    tick(crashes, T0 + 6 * HOURS)
    event = publication.events.get()
    percentages_write_back(event_ids=[event.pk], source=Down())
    event.refresh_from_db()
    assert event.write_back == WriteBack.FAILED and "archive unreachable" in event.write_back_detail
    simulator = Simulator(seed=1)
    percentages_reconcile(now=T0 + 7 * HOURS, source=simulator)
    event.refresh_from_db()
    assert event.write_back == WriteBack.APPLIED


class ArchiveDown:
    name = "down"

    def set_percentage(self, **kwargs):
        raise ConnectionError("archive unreachable")


def test_after_an_outage_the_task_retries_from_the_failure_with_a_backoff(crashes, monkeypatch):
    from packages import tasks
    from packages.services import writeback

    publication = PublicationFactory(last_increase_at=T0)
    tick(crashes, T0 + 6 * HOURS)
    event = publication.events.get()
    countdowns = []

    class Retry(Exception):
        pass

    def retry(*, countdown, **kwargs):
        countdowns.append(countdown)
        raise Retry

    source = {"now": ArchiveDown()}
    monkeypatch.setattr(writeback, "publication_source", lambda: source["now"])
    monkeypatch.setattr(tasks.write_back_percentages, "retry", retry)

    with pytest.raises(Retry):
        tasks.write_back_percentages.run([event.pk])
    assert countdowns == [30.0]  # not the five minutes of the periodic reconcile

    # The task's second try (after 30 s) finds the archive back and writes the change.
    source["now"] = Simulator(seed=1)
    tasks.write_back_percentages.push_request(retries=1)
    try:
        assert tasks.write_back_percentages.run([event.pk])[WriteBack.APPLIED] == 1
    finally:
        tasks.write_back_percentages.pop_request()
    event.refresh_from_db()
    assert event.write_back == WriteBack.APPLIED


def test_a_failing_write_back_shows_as_a_fault_until_one_goes_through(crashes):
    from packages.models import SourceSync

    publication = PublicationFactory(last_increase_at=T0)
    tick(crashes, T0 + 6 * HOURS)
    event = publication.events.get()
    percentages_write_back(event_ids=[event.pk], source=ArchiveDown(), now=T0 + 6 * HOURS)
    fault = SourceSync.objects.get(name="write-back")
    assert fault.failing_since == T0 + 6 * HOURS
    assert "archive unreachable" in fault.last_error
    percentages_write_back(
        event_ids=[event.pk], source=Simulator(seed=1), retry_failed=True, now=T0 + 7 * HOURS
    )
    fault.refresh_from_db()
    assert fault.failing_since is None
