"""The overview says which source or service is failing and since when; with the database
down every page and the API answer a clear 503."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.db.backends.base.base import BaseDatabaseWrapper

from packages.services.faults import beat_seen, service_failed
from tests.factories import NOW, SourceSyncFactory

pytestmark = pytest.mark.django_db


def test_the_overview_and_the_footer_name_each_failing_service_and_since_when(
    anonymous, frozen_now, settings
):
    settings.PHASING_TICK_INTERVAL = timedelta(minutes=5)
    SourceSyncFactory(name="simulator:crashes", kind="crashes", last_success_at=NOW)
    service_failed("email", now=NOW - timedelta(hours=2), error="email to Ana: smtp down")
    service_failed("write-back", now=NOW - timedelta(hours=1), error="noble tool 1.0: 503")
    beat_seen("host-a:1", now=NOW - timedelta(minutes=3))
    beat_seen("host-b:2", now=NOW - timedelta(minutes=1))
    beat_seen("host-a:1", now=NOW)

    html = anonymous.get("/").content.decode()

    banner = html[html.index('class="faults"') : html.index("</section>")]
    assert "sending email</strong> since 2026-12-03 10:00 UTC: email to Ana: smtp down" in banner
    assert "writing percentages back to the archive</strong> since 2026-12-03 11:00 UTC" in banner
    assert "2 beats are running</strong> since 2026-12-03 11:59 UTC: host-a:1, host-b:2" in banner
    footer = html[html.index("<footer") :]
    assert "Failing: " in footer and "sending email since 2026-12-03 10:00 UTC" in footer


def test_the_overview_says_when_the_controller_s_ticks_stopped_and_not_before(
    anonymous, frozen_now, settings
):
    # All workers killed, or beat gone: the ticks beat schedules stop without an error.
    settings.PHASING_TICK_INTERVAL = timedelta(minutes=5)
    SourceSyncFactory(name="simulator:crashes", kind="crashes", last_success_at=NOW)
    beat_seen("host-a:1", now=NOW - timedelta(minutes=15))
    assert "the controller" not in anonymous.get("/").content.decode()  # 3 intervals: due

    beat_seen("host-a:1", now=NOW - timedelta(minutes=16))
    html = anonymous.get("/").content.decode()

    banner = html[html.index('class="faults"') : html.index("</section>")]
    assert (
        "the controller&#x27;s tick</strong> since 2026-12-03 11:44 UTC: no tick has run since"
        in banner
    )


def test_the_page_has_no_fault_banner_when_all_is_well(anonymous, frozen_now):
    SourceSyncFactory(name="simulator:crashes", kind="crashes", last_success_at=NOW)
    assert 'class="faults"' not in anonymous.get("/").content.decode()


@pytest.fixture
def database_down(monkeypatch):
    """The fault: every new query finds no database server."""

    def refused(self, *args, **kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    monkeypatch.setattr(BaseDatabaseWrapper, "_cursor", refused)


@pytest.mark.parametrize("path", ["/", "/source/bash/", "/problems/1/", "/feeds/halts/"])
def test_with_the_database_down_a_page_answers_503_and_says_so(anonymous, database_down, path):
    anonymous.raise_request_exception = False
    response = anonymous.get(path)
    assert response.status_code == 503
    assert response["Retry-After"] == "60"
    assert "The database is not answering" in response.content.decode()


@pytest.mark.parametrize(
    "path", ["/api/v1/publications/", "/api/v1/problems/1/", "/api/v1/nowhere/"]
)
def test_with_the_database_down_the_api_answers_json_503(anonymous, database_down, path):
    anonymous.raise_request_exception = False
    response = anonymous.get(path)
    if path.endswith("nowhere/"):
        assert (response.status_code, response.json()) == (404, {"detail": "Not Found"})
        return
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"].startswith("The database is not answering")


def test_a_signed_in_page_with_the_database_down_is_a_503_not_a_500(member, database_down):
    member.raise_request_exception = False
    assert member.get("/machine/").status_code == 503


def test_every_403_logs_one_line_not_a_traceback(member, archive_admin, caplog):
    from tests.factories import CrashReportFactory

    report = CrashReportFactory()
    with caplog.at_level(logging.WARNING, logger="django.request"):
        assert member.get(f"/reports/{report.pk}/").status_code == 403
        assert archive_admin.get("/admin/auth/user/").status_code == 403  # PermissionDenied
    records = [r for r in caplog.records if r.name == "django.request"]
    assert [r.getMessage() for r in records] == [
        f"Forbidden: /reports/{report.pk}/",
        "Forbidden (Permission denied): /admin/auth/user/",
    ]
    assert all(r.exc_info is None and r.exc_text is None for r in records)
    assert "Traceback" not in caplog.text
