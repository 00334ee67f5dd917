"""POST /api/v1/machines/: apt's decision for a fleet of machines at once."""

from __future__ import annotations

import json

import pytest

from packages.domain import apt_phasing
from tests.factories import PublicationFactory, ReleaseFactory, SourcePackageFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]

FLEET = [
    "4c4c4544004a4d1080345ac04f565232",
    "4C4C4544004A4D1080345AC04F565232",
    "c0ffee00-1234-4abc-9def-0123456789ab",
]


def post(client, body, path="/api/v1/machines/"):
    return client.post(path, json.dumps(body), content_type="application/json")


def test_a_fleet_gets_apts_decision_for_every_machine_and_update(anonymous):
    noble = ReleaseFactory(codename="noble", version="24.04")
    bash = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="bash"),
        version="5.2-2ubuntu0.1",
        phased_update_percentage=50,
    )
    curl = PublicationFactory(
        release=noble,
        source_package=SourcePackageFactory(name="curl"),
        version="8.5.0-2ubuntu10.2",
        phased_update_percentage=10,
    )
    PublicationFactory(release=ReleaseFactory(codename="jammy", version="22.04"))

    response = post(anonymous, {"machine_ids": FLEET, "release": "noble"})

    assert response.status_code == 200
    body = response.json()
    assert [u["source_package"] for u in body["updates"]] == ["bash", "curl"]
    assert [m["machine_id"] for m in body["machines"]] == FLEET  # verbatim, case kept
    for machine in body["machines"]:
        for decision, publication in zip(machine["decisions"], (bash, curl), strict=True):
            expected = apt_phasing.decide(
                publication.source_package.name,
                publication.version,
                machine["machine_id"],
                publication.phased_update_percentage,
            )
            assert decision["publication_id"] == publication.pk
            assert (decision["draw"], decision["included"]) == (expected.draw, expected.included)
        assert machine["included_count"] == sum(d["included"] for d in machine["decisions"])


def test_machines_sharing_one_apt_machine_id_are_one_bucket(anonymous):
    PublicationFactory(phased_update_percentage=30)

    body = post(anonymous, {"machine_ids": ["fleet-a", "fleet-a", "fleet-b"]}).json()

    assert [m["machine_id"] for m in body["machines"]] == ["fleet-a", "fleet-b"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"machine_ids": []}, "1 to 200 machine ids"),
        ({"machine_ids": [f"m{n}" for n in range(201)]}, "1 to 200 machine ids"),
        ({"machine_ids": ["ok", "tab\there"]}, "machine_ids.1: A machine id has no control"),
        ({"machine_ids": [""]}, "machine_ids.0: Without a machine id apt does not phase"),
        ({"release": "noble"}, "machine_ids"),
    ],
)
def test_a_bad_fleet_request_answers_400_with_the_reason(anonymous, body, words):
    response = post(anonymous, body)

    assert response.status_code == 400
    assert words in response.json()["detail"]


def test_a_fleet_request_for_a_release_that_does_not_exist_is_a_404(anonymous):
    response = post(anonymous, {"machine_ids": ["ok"], "release": "nosuch"})
    assert response.status_code == 404
    assert response.json()["detail"] == "no release called 'nosuch'"


def test_the_fleet_answer_is_paged_by_updates_and_costs_a_fixed_number_of_queries(
    anonymous, django_assert_num_queries
):
    noble = ReleaseFactory(codename="noble")
    for n in range(105):
        PublicationFactory(release=noble, source_package=SourcePackageFactory(name=f"pkg{n:03d}"))
    fleet = [f"machine-{n}" for n in range(200)]

    # 1 the release, 2 count, 3 page of publications, 4 policies, 5 the updates in phasing
    # as the dependency rule reads them (what keeps one back).
    with django_assert_num_queries(5):
        first = post(anonymous, {"machine_ids": fleet, "release": "noble"}).json()
    second = post(anonymous, {"machine_ids": fleet, "release": "noble"}, path=first["next"]).json()

    assert (first["count"], len(first["updates"]), len(second["updates"])) == (105, 100, 5)
    assert len(first["machines"]) == 200 and len(first["machines"][0]["decisions"]) == 100
    assert second["next"] is None


def test_the_fleet_endpoint_is_in_the_openapi_schema_with_its_limit(anonymous):
    schema = anonymous.get("/api/v1/openapi.json").json()

    operation = schema["paths"]["/api/v1/machines/"]["post"]
    assert "200" in operation["summary"] and "APT::Machine-ID" in operation["description"]


@pytest.mark.parametrize("debug", [False, True])
def test_a_fleet_body_over_the_upload_limit_is_refused_with_413_not_a_server_error(
    anonymous, settings, debug
):
    settings.DEBUG = debug
    body = {"machine_ids": ["0" * 32] * 100_000}  # about 3.5 MB of JSON

    response = post(anonymous, body)

    assert response.status_code == 413
    assert response.json() == {"detail": "the request body is larger than 2.5 MB"}
