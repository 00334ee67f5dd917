"""`phasing_sources check` and the sources page against a Launchpad that answers as the
real one does (tests/packages/sources/fake_launchpad.py): reachability, permission to
change phasing (a 401 from changeOverride: lib/lp/soyuz/security.py 556-563,
lib/lp/services/webapp/authorization.py 66-91), freshness and the last error."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from packages.models import SourceSync, WritePermission
from packages.services.sync import source_sync_record
from tests.packages.sources.launchpad.fake_launchpad import FakeLaunchpad

pytestmark = pytest.mark.django_db


@pytest.fixture
def launchpad(http_server, settings):
    settings.PHASING_PUBLICATION_SOURCE = "launchpad"
    settings.PHASING_CRASH_SOURCE = "local"
    settings.PHASING_LAUNCHPAD_API_ROOT = http_server.url("/devel/")
    settings.PHASING_LAUNCHPAD_TOKEN = "tok123"
    settings.PHASING_LAUNCHPAD_TOKEN_SECRET = "secret"
    settings.PHASING_HTTP_TIMEOUT = 2
    fake = FakeLaunchpad(http_server)
    fake.publish("hello", "2.10-3ubuntu0.1", binaries=(("amd64", 30),))
    return fake


def check(capsys) -> tuple[int, list[str]]:
    try:
        call_command("phasing_sources", "check")
        code = 0
    except SystemExit as exit:
        code = exit.code
    return code, capsys.readouterr().out.splitlines()


def test_the_check_prints_one_table_and_changes_nothing_at_launchpad(launchpad, capsys):
    before = len(launchpad.binaries)
    source_sync_record("launchpad", "publications", now=timezone.now() - timedelta(minutes=3))

    code, (header, publications, crashes) = check(capsys)

    assert code == 0
    for column in ("answers", "permission to change phasing", "freshness", "last error"):
        assert column in header
    assert publications.startswith("launchpad (publications)")
    assert "yes: releases noble" in publications and "synced 3 min ago" in publications
    assert "  yes  " in publications  # permission
    assert crashes.startswith("local (crashes)")
    assert len(launchpad.binaries) == before


def test_no_permission_is_a_lasting_state_on_the_check_the_sources_page_and_the_footer(
    launchpad, capsys, anonymous
):
    launchpad.team = set()  # our token's owner is not in the archive owner's team

    code, lines = check(capsys)

    assert code == 1
    assert "no: no permission to change phasing: Launchpad answered HTTP 401" in lines[1]
    status = SourceSync.objects.get(name="launchpad:publications")
    assert status.write_permission == WritePermission.DENIED
    page = anonymous.get("/sources/").content.decode()
    assert "no permission to change phasing" in page
    assert "no permission to change phasing" in anonymous.get("/machine/").content.decode()

    launchpad.team = {"phasing-bot"}
    code, lines = check(capsys)
    assert code == 0
    SourceSync.objects.get(write_permission=WritePermission.GRANTED)


def test_the_sources_page_costs_a_fixed_number_of_queries(anonymous, django_assert_num_queries):
    now = timezone.now()
    for n in range(5):
        source_sync_record(f"source{n}", "publications", now=now, error="HTTP 503" if n % 2 else "")
    # 1 source statuses, 2 the footer's sources.
    with django_assert_num_queries(2):
        page = anonymous.get("/sources/")
    assert page.status_code == 200
    assert page.content.decode().count("HTTP 503") >= 2
