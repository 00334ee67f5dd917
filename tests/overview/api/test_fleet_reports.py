"""POST /api/v1/fleet-reports/: the fleet agent's batch, counted per update."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
import time_machine
from django.core.cache import cache
from django.utils import timezone

from overview.evidence.fleet_reads import fleet_counts
from overview.models import FleetReport
from tests.factories import PublicationFactory, SourcePackageFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/fleet-reports/"


@pytest.fixture(autouse=True)
def fresh_limits():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def update(db):
    return PublicationFactory(
        source_package=SourcePackageFactory(name="tool"),
        version="1.2-1ubuntu0.1",
        previous_version="1.2-1",
    )


def machine(n: int) -> str:
    return hashlib.sha256(f"machine-{n}".encode()).hexdigest()


def fact(
    *, installed="1.2-1", held_back=True, package="tool", source="tool", version="1.2-1ubuntu0.1"
):
    return {
        "package": package,
        "source": source,
        "source_version": version,
        "candidate": version,
        "installed": installed,
        "held_back": held_back,
    }


def send(client, n: int, *facts, release="noble"):
    return client.post(
        URL,
        {"machine": machine(n), "release": release, "packages": list(facts)},
        content_type="application/json",
    )


def test_a_batch_is_counted_per_update(anonymous, update):
    assert send(anonymous, 1, fact()).json() == {"kept": 1, "skipped": []}
    send(anonymous, 2, fact(installed="1.2-1ubuntu0.1", held_back=False))
    send(anonymous, 3, fact(held_back=False))
    counts = fleet_counts([update.pk], now=timezone.now())[update.pk]
    assert (counts.machines, counts.held_back, counts.on_new_version) == (3, 1, 1)


def test_the_same_machine_sending_again_counts_once_and_its_last_word_stands(anonymous, update):
    send(anonymous, 1, fact())
    send(anonymous, 1, fact())
    with time_machine.travel(timezone.now() + timedelta(days=1)):
        send(anonymous, 1, fact(installed="1.2-1ubuntu0.1", held_back=False))
        counts = fleet_counts([update.pk], now=timezone.now())[update.pk]
    assert (counts.machines, counts.held_back, counts.on_new_version) == (1, 0, 1)
    assert FleetReport.objects.count() == 1


def test_packages_the_archive_does_not_have_are_skipped_and_the_rest_kept(anonymous, update):
    response = send(
        anonymous,
        1,
        fact(),
        fact(package="ghost", source="ghost", version="9.9"),
        fact(version="1.2-1ubuntu0.99"),
    )
    assert response.status_code == 200
    body = response.json()
    assert body["kept"] == 1
    assert body["skipped"] == [
        "ghost 9.9: no update ghost 9.9 in noble",
        "tool 1.2-1ubuntu0.99: no update tool 1.2-1ubuntu0.99 in noble",
    ]
    assert send(anonymous, 2, fact(), release="plucky").json()["kept"] == 0


def test_two_binaries_of_one_source_are_one_machine(anonymous, update):
    send(
        anonymous, 1, fact(), fact(package="libtool1", installed="1.2-1ubuntu0.1", held_back=False)
    )
    row = FleetReport.objects.get()
    assert (row.held_back, row.on_new_version) == (True, True)


@pytest.mark.parametrize(
    "body",
    [
        {"machine": "not-a-hash", "release": "noble", "packages": []},
        {"machine": "A" * 64, "release": "noble", "packages": []},
        {"machine": machine(1), "release": "Noble!", "packages": []},
        {"machine": machine(1), "release": "noble", "packages": [{**fact(), "installed": "x;y"}]},
        {"machine": machine(1), "release": "noble", "packages": [{**fact(), "held_back": "often"}]},
        {"machine": machine(1), "release": "noble", "packages": [fact()] * 2001},
        {"machine": machine(1), "release": "noble"},
    ],
    ids=["not hex", "upper case", "bad release", "bad version", "not a bool", "too many", "none"],
)
def test_a_bad_batch_is_a_400_and_keeps_nothing(anonymous, update, body):
    response = anonymous.post(URL, body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"]
    assert not FleetReport.objects.exists()


def test_a_body_that_is_not_json_is_a_400(anonymous, update):
    response = anonymous.post(URL, b"\x00\xff{", content_type="application/json")
    assert response.status_code == 400


def test_a_machine_over_its_hourly_limit_is_refused_and_another_is_not(anonymous, update, settings):
    settings.PHASING_INTAKE_REPORTS_PER_HOUR = 1
    assert send(anonymous, 1, fact()).status_code == 200
    assert send(anonymous, 1, fact(held_back=False)).status_code == 429
    assert send(anonymous, 2, fact()).status_code == 200
    assert FleetReport.objects.get(machine=machine(1)).held_back is True


def test_a_batch_never_touches_another_machines_report(anonymous, update):
    send(anonymous, 1, fact(installed="1.2-1ubuntu0.1", held_back=False))
    send(anonymous, 2, fact())
    row = FleetReport.objects.get(machine=machine(1))
    assert (row.held_back, row.on_new_version) == (False, True)


def test_the_history_page_shows_the_measured_uptake_beside_the_estimate(anonymous, update):
    send(anonymous, 1, fact(installed="1.2-1ubuntu0.1", held_back=False))
    send(anonymous, 2, fact())
    page = anonymous.get("/source/tool/").content.decode()
    assert "measured: 1 of 2 reporting machines run it (50%), apt holds it back on 1" in page


def test_with_a_token_set_only_a_batch_that_carries_it_is_taken(anonymous, update, settings):
    settings.PHASING_FLEET_TOKEN = "s3cret"
    body = {"machine": machine(1), "release": "noble", "packages": [fact()]}
    assert anonymous.post(URL, body, content_type="application/json").status_code == 401
    wrong = anonymous.post(
        URL, body, content_type="application/json", HTTP_AUTHORIZATION="Bearer guess"
    )
    assert wrong.status_code == 401
    assert not FleetReport.objects.exists()
    right = anonymous.post(
        URL, body, content_type="application/json", HTTP_AUTHORIZATION="Bearer s3cret"
    )
    assert right.json() == {"kept": 1, "skipped": []}
