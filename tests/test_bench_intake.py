"""The bench's intake figure measures the intake's real path: posts read and kept, then
synced into the evidence."""

from __future__ import annotations

import pytest
from django.utils import timezone

from bench import intake
from overview.evidence.sources.base import CrashReportRecord
from overview.models import CrashReport, ReceivedCrash
from tests.factories import ReleaseFactory

pytestmark = pytest.mark.django_db


def test_the_bench_posts_as_whoopsie_and_syncs_every_report():
    ReleaseFactory(codename="noble", version="24.04")
    now = timezone.now()
    records = [
        CrashReportRecord(
            external_id=f"r{n}",
            signature=f"/usr/bin/tool:11:f{n % 3}",
            release="noble",
            source_package="tool",
            version="1.2-1ubuntu0.1",
            architecture="amd64",
            reported_at=now,
            system_id=f"{n:064x}",
            stack_trace="",
        )
        for n in range(30)
    ]
    figures = intake.measure(records, count=25)
    assert (figures["posted"], figures["kept"], figures["refused"], figures["synced"]) == (
        25,
        25,
        0,
        25,
    )
    assert ReceivedCrash.objects.count() == CrashReport.objects.count() == 25
