"""The local crash source asks the rate question as phased-updater asks the error tracker:
the previous version's days up to the new version's publication day, no rate check without
a previous version, -proposed and install failures left out."""

from __future__ import annotations

from datetime import timedelta

import pytest

from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashQuery, CrashReportRecord
from overview.judges.local import LocalCrashSource
from tests.factories import PublicationFactory, SourcePackageFactory
from tests.overview.controller.fakes import HOURS, T0

pytestmark = [pytest.mark.django_db]

DAY = timedelta(days=1)
NOW = T0 + 12 * HOURS


def reports(publication, version, at, count, tag, **extra):
    return [
        CrashReportRecord(
            external_id=f"{tag}-{version}-{at:%Y%m%d%H}-{n}",
            signature=extra.pop("signature", "/usr/bin/tool:11:known_crash"),
            release=publication.release.codename,
            source_package=publication.source_package.name,
            version=version,
            architecture="amd64",
            reported_at=at,
            system_id=f"system-{n}",
            stack_trace="#0 known_crash ()",
            function="known_crash",
            **extra,
        )
        for n in range(count)
    ]


def query(publication, *, previous="1.0-1", percentage=50):
    return CrashQuery(
        release=publication.release.codename,
        source_package=publication.source_package.name,
        version=publication.version,
        previous_version=previous,
        percentage=percentage,
        date_published=publication.date_published,
    )


def rate_problems(publication, **kw):
    q = query(publication, **kw)
    answer = LocalCrashSource().problems([q], now=NOW)[q]
    assert not answer.error
    return [p for p in answer.problems if p.kind == "increased_rate"]


@pytest.fixture
def publication():
    return PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        version="1.1-1",
        previous_version="1.0-1",
        date_published=T0 - 3 * DAY,
    )


def test_the_previous_versions_crashes_after_publication_do_not_raise_the_baseline(publication):
    records = []
    for day in range(4, 8):  # before publication: 1 a day
        records += reports(publication, "1.0-1", T0 - day * DAY + 6 * HOURS, 1, "before")
    for day in range(0, 3):  # after publication: 400 a day, which would hide any rise
        records += reports(publication, "1.0-1", T0 - day * DAY + 6 * HOURS, 400, "after")
    records += reports(publication, "1.1-1", T0 + 6 * HOURS, 4, "today")
    crash_reports_ingest(records, now=NOW)

    # round(1 + 0) × 50% × half a day = 0.25; 4 today is a rise of 3.75.
    [problem] = rate_problems(publication)
    assert problem.difference == 3.75
    assert "of 4 days before publication" in problem.detail


def test_a_previous_version_without_crashes_before_publication_makes_one_crash_a_rise(
    publication,
):
    records = reports(publication, "1.0-1", T0 - DAY, 50, "after")
    records += reports(publication, "1.1-1", T0 + 6 * HOURS, 1, "today")
    crash_reports_ingest(records, now=NOW)

    [problem] = rate_problems(publication)
    assert problem.report_count == 1 and problem.difference == 1


def test_an_update_without_a_previous_version_has_no_rate_problem(publication):
    crash_reports_ingest(reports(publication, "1.1-1", T0 + 6 * HOURS, 30, "today"), now=NOW)

    assert rate_problems(publication, previous="") == []


def test_proposed_reports_and_install_failures_do_not_count_today(publication):
    records = reports(publication, "1.0-1", T0 - 5 * DAY, 1, "old")
    records += reports(publication, "1.1-1", T0 + 6 * HOURS, 5, "proposed", from_proposed=True)
    records += reports(
        publication,
        "1.1-1",
        T0 + 6 * HOURS,
        5,
        "install",
        problem_type="Package",
        signature="package:tool:1.1-1:subprocess installed post-installation script returned 1",
    )
    crash_reports_ingest(records, now=NOW)

    assert rate_problems(publication) == []


def test_a_failed_retrace_counts_in_the_rate_as_the_trackers_counters_count_it(publication):
    # daisy/submit.py counts every Crash report on arrival (errortracker/oopses.py),
    # before any retrace: a failed retrace is still a crash of that version.
    records = reports(publication, "1.0-1", T0 - 5 * DAY, 1, "old")
    records += reports(publication, "1.1-1", T0 + 6 * HOURS, 4, "today", retrace_failed=True)
    crash_reports_ingest(records, now=NOW)

    [problem] = rate_problems(publication)
    assert problem.report_count == 4


def test_the_baseline_is_the_15_most_recent_crash_days_however_long_the_history(publication):
    # A crash every third day for 120 days before publication, and 9 today (50%).
    records = []
    for day in range(3, 123, 3):
        records += reports(publication, "1.0-1", T0 - 3 * DAY - day * DAY + HOURS, 1, "old")
    records += reports(publication, "1.1-1", T0 + 6 * HOURS, 9, "today")
    crash_reports_ingest(records, now=NOW)

    [problem] = rate_problems(publication)
    # The 15 most recent crash days are 3, 6, …, 45 days before publication: the span is 45
    # days from the oldest of them to the day before publication, not the 120 of history.
    assert "of 45 days before publication" in problem.detail


def test_each_update_of_one_tick_has_its_own_publication_days_baseline(publication):
    other = PublicationFactory(
        source_package=SourcePackageFactory(name="other"),
        release=publication.release,
        version="2.1-1",
        previous_version="2.0-1",
        date_published=T0 - 10 * DAY,
    )
    records = []
    for day in range(1, 31):  # both previous versions crash once a day, for 30 days
        records += reports(publication, "1.0-1", T0 - day * DAY + HOURS, 1, "a")
        records += reports(other, "2.0-1", T0 - day * DAY + HOURS, 1, "b")
    records += reports(publication, "1.1-1", T0 + 6 * HOURS, 9, "today")
    records += reports(other, "2.1-1", T0 + 6 * HOURS, 9, "today")
    crash_reports_ingest(records, now=NOW)

    queries = [query(publication), query(other, previous="2.0-1")]
    answers = LocalCrashSource().problems(queries, now=NOW)

    # Each the 15 crash days up to its own publication day (3 and 10 days ago), the
    # publication day the newest of them and left out of the span: 14 days of 1 each.
    details = [answers[q].problems[0].detail for q in queries]
    assert all("of 14 days before publication" in detail for detail in details)
    assert [answers[q].previous_reports for q in queries] == [14, 14]
