"""Problem (bucket) pages: public aggregates only, never a crash report's content."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from packages.models import PhasingState
from tests.factories import (
    NOW,
    CrashReportFactory,
    ErrorBucketFactory,
    OverrideFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def bucket():
    package = SourcePackageFactory(name="libpng1.6")
    bucket = ErrorBucketFactory(
        signature="/usr/bin/eog:11:png_read_row:libpng16.so.16",
        function="png_read_row",
        source_package=package,
        first_seen=NOW - timedelta(days=3),
        last_seen=NOW,
    )
    noble = ReleaseFactory(codename="noble", version="24.04")
    for n in range(3):
        CrashReportFactory(
            bucket=bucket,
            source_package=package,
            release=noble,
            version="1.6.43-5ubuntu0.1",
            system_id=f"{n % 2:064x}",
            stack_trace="#0 png_read_row SECRET-FRAME",
            environment={"HOME": "/home/SECRET-USER"},
            package_versions={"libc6": "SECRET-VERSIONS"},
            reported_at=NOW - timedelta(hours=n),
        )
    return bucket


def test_it_shows_the_signature_dates_and_counts_per_release_and_version(anonymous, bucket):
    response = anonymous.get(f"/problems/{bucket.pk}/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "/usr/bin/eog:11:png_read_row:libpng16.so.16" in html
    assert "2026-11-30 12:00 UTC" in html  # first seen
    assert "3 from 2 systems" in html
    counts = list(response.context["counts"].paginated_rows)
    assert [(r.record["version"], r.record["reports"], r.record["systems"]) for r in counts] == [
        ("1.6.43-5ubuntu0.1", 3, 2)
    ]


def test_it_never_shows_what_a_crash_report_holds(anonymous, triager, bucket):
    for client in (anonymous, triager):
        html = client.get(f"/problems/{bucket.pk}/").content.decode()
        for secret in ("SECRET-FRAME", "SECRET-USER", "SECRET-VERSIONS", "0" * 64):
            assert secret not in html


def test_it_links_the_crash_reports_for_triagers(anonymous, bucket):
    html = anonymous.get(f"/problems/{bucket.pk}/").content.decode()

    assert f'href="/problems/{bucket.pk}/reports/"' in html
    assert "Crash reports (triagers only)" in html


def test_it_lists_the_updates_it_affects_and_whether_it_is_overridden_for_them(anonymous, bucket):
    halted = PublicationFactory(
        source_package=bucket.source_package,
        version="1.6.43-5ubuntu0.1",
        state=PhasingState.HALTED,
        phased_update_percentage=0,
    )
    overridden = PublicationFactory(
        source_package=bucket.source_package,
        version="1.6.43-5ubuntu0.2",
        release=ReleaseFactory(codename="jammy", version="22.04"),
    )
    ProblemFactory(publication=halted, bucket=bucket)
    ProblemFactory(publication=overridden, bucket=bucket)
    OverrideFactory(
        source_package=bucket.source_package,
        version="1.6.43-5ubuntu0.2",
        bucket=bucket,
        created_by=UserFactory(username="tess"),
        created_by_name="tess",
        reason="Seen with the previous version too",
    )

    response = anonymous.get(f"/problems/{bucket.pk}/")

    rows = {
        problem.publication.version: override
        for problem, override in response.context["affected_rows"]
    }
    assert rows["1.6.43-5ubuntu0.1"] is None
    assert rows["1.6.43-5ubuntu0.2"].reason == "Seen with the previous version too"
    html = response.content.decode()
    assert "overridden</span> by tess" in html
    assert "not overridden" in html


def test_an_unknown_problem_is_a_404(anonymous):
    response = anonymous.get("/problems/999999/")

    assert response.status_code == 404
    assert "Not found" in response.content.decode()


def test_a_bad_page_number_is_ignored(anonymous, bucket):
    for query in ("?affected-page=abc", "?affected-page=9999", "?counts-page=zz&counts-sort=nope"):
        assert anonymous.get(f"/problems/{bucket.pk}/{query}").status_code == 200


@pytest.mark.parametrize("size", [3, 40])
def test_the_page_costs_a_fixed_number_of_queries(
    anonymous, django_assert_num_queries, bucket, size
):
    noble = ReleaseFactory(codename="noble")
    for n in range(size):
        publication = PublicationFactory(
            source_package=SourcePackageFactory(name=f"pkg{n}"), release=noble
        )
        ProblemFactory(publication=publication, bucket=bucket)
        CrashReportFactory(
            bucket=bucket, source_package=publication.source_package, version=publication.version
        )
        OverrideFactory(source_package=publication.source_package, bucket=bucket)
    # 1 bucket, 2 count of report groups, 3 page of report groups, 4 totals, 5 distinct
    # systems, 6 count of affected problems, 7 their page with publications, 8 live
    # overrides of their packages, 9 source syncs in the footer.
    with django_assert_num_queries(9):
        assert anonymous.get(f"/problems/{bucket.pk}/").status_code == 200


def test_a_link_from_the_source_is_a_link_only_when_it_is_http(anonymous):
    from overview.models import Problem

    hostile = ErrorBucketFactory(web_link="javascript:alert(document.cookie)")
    publication = PublicationFactory(source_package=SourcePackageFactory(name="linked"))
    Problem.objects.create(
        publication=publication,
        kind="increased_rate",
        web_link="javascript:alert(1)",
        detected_at=NOW,
        last_seen_at=NOW,
    )

    for url in (
        f"/problems/{hostile.pk}/",
        "/",
        "/api/v1/publications/",
        f"/api/v1/problems/{hostile.pk}/",
    ):
        body = anonymous.get(url).content.decode()
        assert "javascript:" not in body, url

    kept = ErrorBucketFactory(web_link="https://errors.ubuntu.com/problem/abc")
    assert (
        'href="https://errors.ubuntu.com/problem/abc"'
        in anonymous.get(f"/problems/{kept.pk}/").content.decode()
    )


def test_the_page_links_the_bucket_in_the_error_tracker_by_its_configured_template(
    anonymous, bucket, settings
):
    digest = hashlib.sha1(bucket.signature.encode()).hexdigest()
    html = anonymous.get(f"/problems/{bucket.pk}/").content.decode()
    assert f'href="https://errors.ubuntu.com/problem/{digest}"' in html
    assert 'href="https://errors.ubuntu.com/?package=libpng1.6&amp;period=month"' in html

    settings.PHASING_LINK_BUCKET = ""
    settings.PHASING_LINK_PACKAGE_ERRORS = ""
    html = anonymous.get(f"/problems/{bucket.pk}/").content.decode()
    assert "errors.ubuntu.com" not in html
