"""The read-only JSON API under /api/v1/."""

from __future__ import annotations

from datetime import timedelta

import pytest

from overview.models import Verdict
from packages.domain import apt_phasing
from packages.models import PhasingState
from tests.factories import (
    NOW,
    AssessmentFactory,
    CrashReportFactory,
    ErrorBucketFactory,
    OverrideFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourcePackageFactory,
    phasing_archive,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]

MACHINE_ID = "4c4c4544004a4d1080345ac04f565232"


def test_publications_carry_percentage_state_policy_next_step_and_problems(anonymous):
    publication = PublicationFactory(
        release=ReleaseFactory(codename="noble", version="24.04"),
        source_package=SourcePackageFactory(name="bash"),
        version="5.2-2ubuntu0.1",
        previous_version="5.2-2",
        state=PhasingState.HALTED,
        phased_update_percentage=0,
    )
    problem = ProblemFactory(publication=publication, bucket__function="png_read_row")

    response = anonymous.get("/api/v1/publications/")

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1 and body["next"] is None
    [item] = body["results"]
    assert item["release"] == "noble"
    assert item["source_package"] == "bash"
    assert item["version"] == "5.2-2ubuntu0.1"
    assert item["previous_version"] == "5.2-2"
    assert item["phased_update_percentage"] == 0
    assert item["state"] == "halted"
    assert item["policy"] == {
        "start_percentage": 10,
        "step": 10,
        "interval_seconds": 21600,
        "ceiling": 100,
        "schedule": [],
        "quiet_weekend": False,
        "judge": "sequential",
        "insufficient_gate": None,
        "insufficient_max_hold_seconds": 172800,
        "watch_at_full_seconds": 259200,
    }
    assert item["next_step"]["text"] == "halted: png_read_row"
    assert item["problems"] == [
        {
            "kind": "new_bucket",
            "title": "png_read_row",
            "bucket_id": problem.bucket_id,
            "url": f"http://testserver/problems/{problem.bucket_id}/",
            "report_count": 5,
            "overridden": False,
        }
    ]
    assert item["events_url"] == f"http://testserver/api/v1/publications/{publication.pk}/events/"


def test_a_publication_carries_its_verdict_the_evidence_and_the_share_running_it(anonymous):
    AssessmentFactory(
        publication=PublicationFactory(source_package=SourcePackageFactory(name="bash")),
        verdict=Verdict.INSUFFICIENT,
        evidence="insufficient evidence: about 140 more crash events to tell a doubling",
        ratio=1.1,
        ratio_low=0.5,
        ratio_high=2.4,
        crashes_new=6,
        crashes_old=30,
        crashes_needed=140,
        share=0.21,
        share_low=0.15,
        share_high=0.26,
        sightings=0,
        measured_hours=0,
    )
    PublicationFactory(source_package=SourcePackageFactory(name="zsh"))

    bash, zsh = anonymous.get("/api/v1/publications/").json()["results"]

    verdict = bash["verdict"]
    assert verdict["verdict"] == "insufficient" and verdict["judge"] == "sequential"
    assert verdict["evidence"].startswith("insufficient evidence: about 140 more")
    assert (verdict["rate_ratio_low"], verdict["rate_ratio"], verdict["rate_ratio_high"]) == (
        0.5,
        1.1,
        2.4,
    )
    assert (verdict["crash_events_new"], verdict["crash_events_needed"]) == (6, 140)
    assert (verdict["share_running"], verdict["share_measured"]) == (0.21, False)
    assert verdict["crashes_averted"] is None
    assert zsh["verdict"] is None
    assert [
        i["source_package"]
        for i in anonymous.get("/api/v1/publications/?verdict=insufficient").json()["results"]
    ] == ["bash"]


def test_a_phasing_publication_says_when_its_next_step_comes(anonymous):
    PublicationFactory(phased_update_percentage=50, last_increase_at=NOW - timedelta(hours=1))

    [item] = anonymous.get("/api/v1/publications/").json()["results"]

    assert item["next_step"]["kind"] == "advance"
    assert item["next_step"]["percentage"] == 60
    assert item["next_step"]["at"] == "2026-12-03T17:00:00Z"
    assert item["next_step"]["text"] == "→ 60% in 5 h; 100% in about 29 h"


def test_publications_filter_as_the_page_does(anonymous):
    noble = ReleaseFactory(codename="noble", version="24.04")
    PublicationFactory(
        release=noble, source_package=SourcePackageFactory(name="bash"), phased_update_percentage=30
    )
    PublicationFactory(
        release=noble, source_package=SourcePackageFactory(name="zsh"), phased_update_percentage=70
    )
    PublicationFactory(
        release=ReleaseFactory(codename="jammy", version="22.04"),
        source_package=SourcePackageFactory(name="bashtop"),
    )

    def names(query: str) -> list[str]:
        return [
            i["source_package"]
            for i in anonymous.get(f"/api/v1/publications/?{query}").json()["results"]
        ]

    assert names("release=noble") == ["bash", "zsh"]
    assert names("percentage_min=50") == ["zsh"]
    assert names("package=bash") == ["bash", "bashtop"]
    assert anonymous.get("/api/v1/publications/?q=bash").status_code == 400  # one name: package
    assert names("state=halted") == []


@pytest.mark.parametrize(
    ("path", "unknown"),
    [
        ("/api/v1/publications/?limit=5", "limit"),
        ("/api/v1/publications/?source_package=bash", "source_package"),
        ("/api/v1/problems/?package=bash", "package"),
        ("/api/v1/scheduled-changes/?release=noble", "release"),
    ],
)
def test_a_parameter_an_endpoint_does_not_take_is_a_400_naming_it(anonymous, path, unknown):
    response = anonymous.get(path)

    assert response.status_code == 400
    detail = response.json()["detail"]
    assert detail.startswith(f"unknown query parameter: {unknown}; this endpoint takes ")
    assert "page" in detail.split("takes ")[1]


def test_the_unknown_parameters_are_named_with_every_one_the_endpoint_takes(anonymous):
    response = anonymous.get("/api/v1/publications/?limit=5&sort=name&release=noble")

    assert response.json()["detail"] == (
        "unknown query parameters: limit, sort; this endpoint takes package, page, per_page, "
        "percentage_max, percentage_min, release, state, verdict"
    )


def test_an_endpoint_without_query_parameters_says_so(anonymous):
    bucket = ErrorBucketFactory()
    response = anonymous.get(f"/api/v1/problems/{bucket.pk}/?verbose=1")

    assert (response.status_code, response.json()["detail"]) == (
        400,
        "unknown query parameter: verbose; this endpoint takes no query parameters",
    )


def test_the_api_root_is_a_json_index_of_its_endpoints(anonymous):
    response = anonymous.get("/api/v1/")

    assert response.status_code == 200
    body = response.json()
    assert body["openapi"] == "http://testserver/api/v1/openapi.json"
    urls = {e["name"]: (e["method"], e["url"]) for e in body["endpoints"]}
    assert urls["publications"] == ("GET", "http://testserver/api/v1/publications/")
    assert urls["publication_events"] == (
        "GET",
        "http://testserver/api/v1/publications/{publication_id}/events/",
    )
    assert urls["machines"] == ("POST", "http://testserver/api/v1/machines/")
    assert len(urls) == 7


def test_an_address_under_the_api_no_endpoint_has_is_a_json_404_in_development(anonymous, settings):
    settings.DEBUG = True  # Django answers its own HTML 404 then, not handler404

    response = anonymous.get("/api/v1/no-such-thing/")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not Found"}


def test_publications_are_paginated_with_a_next_link(anonymous):
    phasing_archive(7)

    first = anonymous.get("/api/v1/publications/?per_page=5").json()
    second = anonymous.get(first["next"].removeprefix("http://testserver")).json()

    assert first["count"] == 7 and len(first["results"]) == 5
    assert first["previous"] is None
    assert len(second["results"]) == 2 and second["next"] is None
    assert {i["id"] for i in first["results"]}.isdisjoint(i["id"] for i in second["results"])


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("page=abc", "page"),
        ("page=0", "page"),
        ("per_page=1000", "per_page"),
        ("percentage_min=abc", "percentage_min"),
        ("percentage_max=150", "percentage_max"),
        ("state=exploded", "state"),
        ("verdict=fine", "verdict"),
    ],
)
def test_bad_query_parameters_give_400_with_a_message(anonymous, query, message):
    PublicationFactory()

    response = anonymous.get(f"/api/v1/publications/?{query}")

    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_a_publications_events_newest_first(anonymous):
    publication = PublicationFactory()
    PhasingEventFactory(publication=publication, created_at=NOW - timedelta(hours=6))
    PhasingEventFactory(
        publication=publication, old_percentage=20, new_percentage=30, created_at=NOW
    )

    body = anonymous.get(f"/api/v1/publications/{publication.pk}/events/").json()

    assert [(e["old_percentage"], e["new_percentage"]) for e in body["results"]] == [
        (20, 30),
        (10, 20),
    ]
    assert body["results"][0]["actor"] == "controller"
    assert anonymous.get("/api/v1/publications/999999/events/").status_code == 404


def test_problem_buckets_give_public_fields_and_counts_only(anonymous):
    bucket = ErrorBucketFactory(
        function="png_read_row", web_link="https://errors.example/problem/1"
    )
    publication = PublicationFactory(source_package=SourcePackageFactory(name="libpng1.6"))
    ProblemFactory(publication=publication, bucket=bucket)
    OverrideFactory(source_package=publication.source_package, bucket=bucket)
    CrashReportFactory(
        bucket=bucket,
        source_package=publication.source_package,
        version=publication.version,
        stack_trace="SECRET-FRAME",
        environment={"USER": "SECRET-USER"},
        system_id="e" * 64,
    )

    listing = anonymous.get("/api/v1/problems/")
    detail = anonymous.get(f"/api/v1/problems/{bucket.pk}/")

    assert [b["function"] for b in listing.json()["results"]] == ["png_read_row"]
    body = detail.json()
    assert body["report_counts"][0]["reports"] == 1 and body["report_counts"][0]["systems"] == 1
    assert body["affects"][0]["source_package"] == "libpng1.6"
    assert body["affects"][0]["overridden"] is True
    for response in (listing, detail):
        for secret in ("SECRET-FRAME", "SECRET-USER", "e" * 64, "stack_trace", "environment"):
            assert secret not in response.content.decode()
    assert anonymous.get("/api/v1/problems/999999/").status_code == 404


def test_the_machine_check_gives_apts_decision(anonymous):
    noble = ReleaseFactory(codename="noble", version="24.04")
    PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="bash"),
        version="5.2-2ubuntu0.1",
        phased_update_percentage=50,
    )
    PublicationFactory(release=ReleaseFactory(codename="jammy", version="22.04"))

    response = anonymous.get(f"/api/v1/machine/?machine_id={MACHINE_ID}&release=noble")

    assert response.status_code == 200
    body = response.json()
    assert body["machine_id"] == MACHINE_ID and body["release"] == "noble"
    [row] = body["results"]
    draw = apt_phasing.phased_draw("bash", "5.2-2ubuntu0.1", MACHINE_ID)
    assert row["source_package"] == "bash"
    assert row["draw"] == draw
    assert row["included"] is (draw <= 50)
    assert row["included_from_percentage"] == draw
    if row["included"]:
        assert row["included_at"] == "2026-12-03T12:00:00Z"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("machine_id=a%09b", "control characters"),
        ("", "machine_id"),
        (f"machine_id={MACHINE_ID}&page=x", "page"),
    ],
)
def test_the_machine_check_answers_400_to_bad_parameters(anonymous, query, message):
    response = anonymous.get(f"/api/v1/machine/?{query}")

    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_the_openapi_schema_and_docs_are_served_without_a_cdn(anonymous):
    schema = anonymous.get("/api/v1/openapi.json").json()
    docs = anonymous.get("/api/v1/docs")

    assert {"/api/v1/publications/", "/api/v1/machine/", "/api/v1/problems/"} <= set(
        schema["paths"]
    )
    assert docs.status_code == 200
    html = docs.content.decode()
    for cdn in ("cdn.jsdelivr", "unpkg.com", "cdnjs", "https://"):
        assert cdn not in html


@pytest.mark.parametrize("size", [3, 40])
def test_api_lists_cost_a_fixed_number_of_queries(anonymous, django_assert_num_queries, size):
    publications = phasing_archive(size)
    # 1 the release of the filter, 2 count, 3 policies, 4 page with the assessments,
    # 5 problems with their covering overrides, 6 pause and halt events.
    with django_assert_num_queries(6):
        assert anonymous.get("/api/v1/publications/?release=noble&per_page=100").status_code == 200
    # 1 release, 2 count, 3 page of publications, 4 policies, 5 the updates in phasing as
    # the dependency rule reads them (what keeps one back).
    with django_assert_num_queries(5):
        assert (
            anonymous.get(f"/api/v1/machine/?machine_id={MACHINE_ID}&release=noble").status_code
            == 200
        )
    # 1 publication, 2 count, 3 page of events.
    with django_assert_num_queries(3):
        assert (
            anonymous.get(f"/api/v1/publications/{publications[2].pk}/events/").status_code == 200
        )
    # 1 count, 2 page of buckets with their packages.
    with django_assert_num_queries(2):
        assert anonymous.get("/api/v1/problems/").status_code == 200


def test_the_docs_are_swagger_from_local_static_files(anonymous):
    html = anonymous.get("/api/v1/docs").content.decode()

    assert "/static/ninja/swagger-ui-bundle.js" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/v1/publications/?package=to%00ol", 400),
        ("/api/v1/problems/%00/", 400),
        ("/api/v1/no-such-thing/", 404),
        ("/api/v1/publications/?page=999", 404),
        ("/api/v1/publications/?release=nowhere", 404),
        ("/api/v1/publications/?release=NOT%20A%20CODENAME", 400),
        (f"/api/v1/machine/?machine_id={MACHINE_ID}&release=nosuch", 404),
        ("/api/v1/publications/?per_page=1000", 400),
    ],
)
def test_every_error_under_the_api_is_json(anonymous, path, status):
    response = anonymous.get(path)
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["detail"]


def test_a_percentage_range_upside_down_matches_nothing(anonymous, publication):
    response = anonymous.get("/api/v1/publications/?percentage_min=50&percentage_max=20")
    assert (response.status_code, response.json()["count"]) == (200, 0)


def test_a_bucket_says_whether_it_holds_crashes_or_install_failures(anonymous):
    crash = ErrorBucketFactory(function="png_read_row")
    failure = ErrorBucketFactory(signature="package:tool:1.1-1:dpkg failed", problem_type="package")

    kinds = {
        anonymous.get(f"/api/v1/problems/{b.pk}/").json()["problem_type"] for b in (crash, failure)
    }

    assert kinds == {"crash", "package"}
