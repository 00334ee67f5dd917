"""POST /<system id> as whoopsie posts it: answers, limits, and what is kept."""

from __future__ import annotations

import bson
import pytest
from django.core.cache import cache

from overview.models import ReceivedCrash
from tests.overview.evidence.test_intake import SYSTEM, python_crash

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_limits():
    cache.clear()
    yield
    cache.clear()


def post(client, body: bytes, system: str = SYSTEM, **extra):
    return client.generic(
        "POST",
        f"/{system}",
        data=body,
        content_type="application/octet-stream",
        HTTP_X_WHOOPSIE_VERSION="0.2.77",
        **extra,
    )


def test_a_report_is_answered_with_its_oops_id_and_kept_as_sent(anonymous):
    response = post(anonymous, bson.encode(python_crash()))
    assert response.status_code == 200
    oops_id, word = response.content.decode().split(" ")
    assert word == "OOPSID"
    crash = ReceivedCrash.objects.get()
    assert str(crash.oops_id) == oops_id
    assert crash.system_id == SYSTEM
    assert crash.fields["Package"] == "ubiquity 2.34"
    assert "Traceback" not in crash.fields and "ProcCmdline" not in crash.fields


def test_the_system_id_is_stored_as_sent_whatever_its_case(anonymous):
    assert post(anonymous, bson.encode(python_crash()), system=SYSTEM.upper()).status_code == 200
    assert ReceivedCrash.objects.get().system_id == SYSTEM.upper()


def test_it_needs_no_csrf_token(client):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    assert post(strict, bson.encode(python_crash())).status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        (b"", 400, "Invalid BSON."),
        (b"\x00garbage", 400, "Invalid BSON."),
        (bson.encode(python_crash())[:40], 400, "Invalid BSON."),
        (bson.encode({**python_crash(), "Signal": 11}), 400, "is not a string"),
        (bson.encode(python_crash(Package="ubiquity")), 400, "no version"),
        (bson.encode(python_crash(Architecture="a" * 21)), 400, "Architecture is longer"),
    ],
    ids=["empty", "not BSON", "truncated", "not a string", "no version", "over its bound"],
)
def test_a_bad_body_is_a_clear_400_and_nothing_is_kept(anonymous, body, status, text):
    response = post(anonymous, body)
    assert response.status_code == status
    assert text in response.content.decode()
    assert not ReceivedCrash.objects.exists()


def test_a_50_megabyte_body_is_refused_before_it_is_read(anonymous, settings):
    body = b"\x00" * (50 * 1024 * 1024)
    response = post(anonymous, body)
    assert response.status_code == 413
    assert not ReceivedCrash.objects.exists()


def test_a_body_longer_than_it_says_is_cut_at_the_limit(anonymous, settings):
    settings.PHASING_INTAKE_MAX_BYTES = 2048
    response = post(anonymous, bson.encode(python_crash(ProcMaps="x" * 4096)))
    assert response.status_code == 413


@pytest.mark.parametrize(
    "system", ["g" * 128, "a" * 127 + "-", "a" * 129, "%00" + "a" * 125], ids=str
)
def test_a_system_id_that_is_not_a_sha512_in_hex_is_refused(anonymous, system):
    response = post(anonymous, bson.encode(python_crash()), system=system)
    assert 400 <= response.status_code < 500
    assert not ReceivedCrash.objects.exists()


def test_a_replayed_report_is_a_409_and_changes_nothing(anonymous):
    first = post(anonymous, bson.encode(python_crash()))
    kept = ReceivedCrash.objects.get()
    again = post(anonymous, bson.encode(python_crash()))
    assert (first.status_code, again.status_code) == (200, 409)
    assert again.content == b"Crash already reported."
    assert list(ReceivedCrash.objects.values_list("pk", "oops_id")) == [(kept.pk, kept.oops_id)]


def test_the_same_crash_from_another_machine_is_another_report(anonymous):
    assert post(anonymous, bson.encode(python_crash())).status_code == 200
    assert post(anonymous, bson.encode(python_crash()), system="e" * 128).status_code == 200
    assert ReceivedCrash.objects.count() == 2


def test_a_machine_over_its_hourly_limit_is_told_to_come_back_and_others_are_not(
    anonymous, settings
):
    settings.PHASING_INTAKE_REPORTS_PER_HOUR = 2
    answers = [
        post(anonymous, bson.encode(python_crash(Date=f"Thu Dec  3 11:00:0{n} 2026"))).status_code
        for n in range(3)
    ]
    assert answers == [200, 200, 429]
    assert post(anonymous, bson.encode(python_crash()), system="e" * 128).status_code == 200
    assert ReceivedCrash.objects.filter(system_id=SYSTEM).count() == 2


def test_only_post_is_answered(anonymous):
    assert anonymous.get(f"/{SYSTEM}").status_code == 405


def test_received_reports_are_not_on_any_page_for_anonymous_visitors(anonymous):
    post(anonymous, bson.encode(python_crash()))
    for url in ("/", "/api/v1/", "/sources/"):
        response = anonymous.get(url, follow=True)
        assert SYSTEM not in response.content.decode()
