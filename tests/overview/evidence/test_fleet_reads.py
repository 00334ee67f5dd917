"""The fleet agents' reports as measured uptake: counts per update, and sightings the
sequential judge's exposure estimate takes in."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from overview.judges import exposure
from overview.judges import pipeline as judging
from overview.models import FleetReport
from packages.models import EventKind, PhasingEvent, PhasingState
from tests.factories import PublicationFactory, SourcePackageFactory

pytestmark = pytest.mark.django_db


def test_reported_machines_add_to_the_sightings_hour_by_hour():
    seen = exposure.Sightings(percentages=[10, 10, 10], new=[1, 0, 0], old=[2, 2, 2])
    both = exposure.with_reported(seen, [0, 3], [0, 27, 5, 99])
    assert (both.new, both.old) == ([1, 3, 0], [2, 29, 7])
    assert both.percentages == seen.percentages


def report(publication, n: int, *, on_new: bool, at):
    FleetReport.objects.create(
        machine=hashlib.sha256(str(n).encode()).hexdigest(),
        publication=publication,
        installed_version=publication.version if on_new else publication.previous_version,
        held_back=not on_new,
        on_new_version=on_new,
        reported_at=at,
        day=at.date(),
    )


def test_the_judge_measures_uptake_from_the_fleet_when_it_has_reports():
    now = timezone.now()
    update = PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        version="1.2-1ubuntu0.1",
        previous_version="1.2-1",
        date_published=now - timedelta(hours=12),
    )
    PhasingEvent.objects.create(
        publication=update,
        created_at=update.date_published,
        kind=EventKind.PUBLISHED,
        old_percentage=0,
        new_percentage=10,
        old_state=PhasingState.PHASING,
        new_state=PhasingState.PHASING,
    )
    before = judging.publications_judge([update], now=now)[update.pk]
    assert before.uptake.sightings == 0

    for n in range(200):
        report(update, n, on_new=n < 20, at=now - timedelta(hours=1))
    after = judging.publications_judge([update], now=now)[update.pk]
    assert after.uptake.sightings == 200
    assert after.uptake.measured
    assert after.uptake != before.uptake
