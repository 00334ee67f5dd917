"""The judges and the public pages read the counters the ingest keeps, never the crash
reports themselves: per version and day (CrashCounter), per bucket and version
(BucketVersionStat, BucketSystem), per version and hour (HourlyCrashCount) and per binary
version and hour (VersionSighting). So a tick and a page cost the same whether a thousand or
ten times as many reports are stored, and the same after the purge forgets them.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from overview.controller import tick as controller
from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashReportRecord
from overview.judges.local import LocalCrashSource
from overview.models import ErrorBucket
from tests.overview.judges.test_pipeline import NEW, OLD, T0, update

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _reports(count: int, *, seed: int) -> list[CrashReportRecord]:
    """Reports of both versions over the last day, in two buckets, from many machines."""
    rng = random.Random(seed)
    return [
        CrashReportRecord(
            external_id=f"{seed}-{n}",
            signature=f"/usr/bin/tool:11:crash_{n % 2}",
            release="noble",
            source_package="tool",
            version=rng.choice([NEW, OLD]),
            architecture="amd64",
            reported_at=T0 - timedelta(minutes=rng.randrange(1, 24 * 60)),
            system_id=f"machine-{rng.randrange(count)}",
            stack_trace="#0 crash ()",
            package_versions={"libc6": "2.39"},
        )
        for n in range(count)
    ]


def _work(client, publication) -> list[str]:
    """A tick (the judges and the controller) and the public pages that show crash
    figures: the SQL they ran."""
    bucket = ErrorBucket.objects.order_by("pk").first()
    with CaptureQueriesContext(connection) as queries:
        controller.tick(now=T0, crash_source=LocalCrashSource(), dry_run=True)
        for url in ("/", f"/updates/{publication.pk}/", f"/problems/{bucket.pk}/"):
            assert client.get(url).status_code == 200, url
    return [q["sql"] for q in queries.captured_queries]


def test_a_tick_and_the_public_pages_read_counters_never_reports_and_cost_the_same_at_10x(
    client,
):
    publication = update(percentage=50)
    crash_reports_ingest(_reports(100, seed=1), now=T0)
    few = _work(client, publication)
    crash_reports_ingest(_reports(1000, seed=2), now=T0)
    many = _work(client, publication)

    assert not [sql for sql in few + many if "overview_crashreport" in sql]
    assert len(many) == len(few)
