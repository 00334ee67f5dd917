"""The dependents' crash counts on the embedded SQLite default: the recount's plan."""

from __future__ import annotations

import pytest
from django.db import connection

from overview.evidence.counters import judging_counts_recount
from overview.evidence.ingest import crash_reports_ingest
from packages.models import Release, SourcePackage
from packages.services.sync import publications_sync
from tests.overview.evidence.test_ingest import crash, glibc_update
from tests.packages.services.sync_fakes import T0, ListSource, record

pytestmark = [pytest.mark.django_db, pytest.mark.embedded]


def _recount_plan() -> list[str]:
    """SQLite's plan for the statement that recounts the dependents' crashes of an hour."""
    recounts: list[str] = []

    def keep(execute, sql, params, many, context):
        if 'INSERT INTO "overview_dependentcrashcount"' in sql:
            recounts.append(sql)
        return execute(sql, params, many, context)

    apport = SourcePackage.objects.get(name="apport")
    noble = Release.objects.get(codename="noble")
    with connection.execute_wrapper(keep):
        judging_counts_recount([(noble.pk, apport.pk, "2.0-1ubuntu0.1", T0.replace(minute=0))])
    assert len(recounts) == 1
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + recounts[0])
        return [row[3] for row in cursor.fetchall()]


def test_the_sqlite_recount_reads_the_reports_of_its_hours_not_every_report_of_the_release():
    """The recount starts from the hours it is asked for, reads their reports by release
    and time, and finds each listed library by one index probe. Started from the updates'
    binaries instead, it read every report of the release once per binary: a backtest of
    300 updates slowed hour after hour as the reports piled up."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's own statement")
    publications_sync(ListSource([record(binaries=("apport",)), glibc_update()]), now=T0)
    crash_reports_ingest([crash(1, package_versions={"libc6": "2.40"})])

    plan = _recount_plan()

    assert plan[0] == "SCAN k"
    reports = next(step for step in plan if step.startswith("SEARCH r "))
    assert "release_id=? AND reported_at>? AND reported_at<?" in reports
    assert any(step.startswith("SEARCH lib USING INDEX") for step in plan)
