"""What machines sent is forgotten after the retention."""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from overview.evidence.intake_retention import intake_purge
from overview.models import FleetReport, ReceivedCrash
from overview.tasks import purge_intake
from tests.factories import PublicationFactory

pytestmark = pytest.mark.django_db


def received(at, n: int) -> ReceivedCrash:
    return ReceivedCrash.objects.create(
        oops_id=uuid.uuid4(), system_id="a" * 128, received_at=at, replay_key=f"{n:064x}"
    )


def test_reports_older_than_the_retention_are_purged_and_newer_ones_kept(settings):
    settings.PHASING_INTAKE_RETENTION_DAYS = 30
    now = timezone.now()
    old, recent = received(now - timedelta(days=31), 1), received(now - timedelta(days=29), 2)
    publication = PublicationFactory()
    for n, age in enumerate((31, 29)):
        at = now - timedelta(days=age)
        FleetReport.objects.create(
            machine=hashlib.sha256(str(n).encode()).hexdigest(),
            publication=publication,
            reported_at=at,
            day=at.date(),
        )

    assert intake_purge(now=now) == {"received_crashes": 1, "fleet_reports": 1}

    assert list(ReceivedCrash.objects.values_list("pk", flat=True)) == [recent.pk]
    assert not ReceivedCrash.objects.filter(pk=old.pk).exists()
    assert FleetReport.objects.get().reported_at == now - timedelta(days=29)
    assert purge_intake() == {"received_crashes": 0, "fleet_reports": 0}
