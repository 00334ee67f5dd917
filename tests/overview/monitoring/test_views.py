"""/healthz says what is missing; /metrics gives Prometheus the figures, and only to it and
to staff."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.test import Client, override_settings

from overview.models import Notification, ProblemKind
from overview.monitoring.runs import periodic_run_recorded
from packages.models import EventKind, PhasingState, WriteBack
from tests.factories import (
    NOW,
    CrashReportFactory,
    PersonFactory,
    PhasingEventFactory,
    ProblemFactory,
    PublicationFactory,
    ReleaseFactory,
    SourceSyncFactory,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("frozen_now")]

TOKEN = "scrape-token-0123456789"
BROKER_DOWN = "redis://127.0.0.1:1/0"  # nothing listens on port 1


def _fresh_crash_data() -> None:
    SourceSyncFactory(name="simulator:crashes", kind="crashes", last_success_at=NOW)


def test_healthz_answers_200_when_the_database_broker_and_crash_data_are_there(
    anonymous, django_assert_num_queries
):
    _fresh_crash_data()

    # 1 SELECT 1, 2 the crash sources' last syncs; the broker is asked outside the database.
    with django_assert_num_queries(2):
        response = anonymous.get("/healthz")

    body = response.content.decode()
    assert response.status_code == 200, body
    assert body.startswith("ok\n")
    assert "database: ok" in body and "broker: ok" in body and "crash data: ok" in body


def test_healthz_answers_503_naming_stale_crash_data(anonymous):
    SourceSyncFactory(
        name="simulator:crashes", kind="crashes", last_success_at=NOW - timedelta(hours=3)
    )

    response = anonymous.get("/healthz")

    assert response.status_code == 503
    body = response.content.decode()
    assert "crash data: stale: 180 min old" in body
    assert "database: ok" in body


def test_healthz_answers_503_naming_missing_crash_data(anonymous):
    response = anonymous.get("/healthz")
    assert response.status_code == 503
    assert "crash data: missing: no crash source has synced yet" in response.content.decode()


def test_healthz_answers_503_naming_the_broker_when_it_is_down(anonymous, settings):
    _fresh_crash_data()
    from phasing_site.celery import app

    previous = app.conf.broker_url
    app.conf.broker_url = BROKER_DOWN
    try:
        response = anonymous.get("/healthz")
    finally:
        app.conf.broker_url = previous

    assert response.status_code == 503
    body = response.content.decode()
    assert "broker: unreachable" in body and "database: ok" in body
    assert "127.0.0.1" not in body and "Error" not in body  # what is down, not the exception


def test_healthz_says_the_database_is_down_without_its_error_text(anonymous, monkeypatch):
    from django.db import OperationalError
    from django.db.backends.postgresql.base import DatabaseWrapper

    def refused(self, *args, **kwargs):
        raise OperationalError('connection to server at "db.internal" (10.0.0.5) failed')

    monkeypatch.setattr(DatabaseWrapper, "cursor", refused)

    response = anonymous.get("/healthz")

    body = response.content.decode()
    assert response.status_code == 503
    assert "database: unreachable" in body
    assert "db.internal" not in body and "OperationalError" not in body


@override_settings(PHASING_METRICS_TOKEN=TOKEN)
def test_metrics_are_for_the_scraper_s_token_and_the_metrics_permission_only(
    anonymous, member, archive_admin, admin_client_superuser
):
    assert anonymous.get("/metrics").status_code == 403
    assert member.get("/metrics").status_code == 403
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    assert admin_client_superuser.get("/metrics").status_code == 200


def test_being_staff_is_not_enough_to_read_the_metrics(archive_admin, archive_admin_user):
    assert archive_admin_user.is_staff
    assert archive_admin.get("/metrics").status_code == 403

    archive_admin_user.user_permissions.add(
        Permission.objects.get(content_type__app_label="overview", codename="view_metrics")
    )
    assert archive_admin.get("/metrics").status_code == 200


def test_without_a_token_only_the_permission_reads_the_metrics(anonymous, admin_client_superuser):
    assert anonymous.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 403
    assert admin_client_superuser.get("/metrics").status_code == 200


@override_settings(PHASING_METRICS_TOKEN=TOKEN)
def test_metrics_count_updates_halts_jobs_sources_write_backs_and_emails(
    django_assert_num_queries,
):
    noble = ReleaseFactory(codename="noble", version="24.04")
    PublicationFactory(release=noble, source_package__name="a")
    halted = PublicationFactory(
        release=noble,
        source_package__name="b",
        state=PhasingState.HALTED,
        hold_reason="problems",
        phased_update_percentage=0,
    )
    ProblemFactory(publication=halted, kind=ProblemKind.NEW_BUCKET)
    halt = PhasingEventFactory(
        publication=halted,
        kind=EventKind.HALTED,
        actor_name="controller",
        write_back=WriteBack.FAILED,
    )
    Notification.objects.create(
        publication=halted,
        event=halt,
        person=PersonFactory(),
        roles="signer",
        subject="halted",
        created_at=NOW,
        error="mail server down",
    )
    SourceSyncFactory(
        name="simulator:crashes", kind="crashes", last_success_at=NOW - timedelta(minutes=4)
    )
    with periodic_run_recorded("tick"):
        pass
    scraper = Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    # 1 updates by release, state and hold reason; 2 halts by who; 3 problems of halted
    # updates with covering overrides; 4 periodic runs; 5 crash sources; 6 write-backs;
    # 7 unsent emails. The broker is asked for the queue length outside the database.
    with django_assert_num_queries(7):
        response = scraper.get("/metrics")

    text = response.content.decode()
    assert response["Content-Type"].startswith("text/plain; version=")
    assert 'phasing_updates{release="noble",state="phasing"} 1.0' in text
    assert 'phasing_updates{release="noble",state="halted"} 1.0' in text
    assert 'phasing_halted_updates{reason="problems",release="noble"} 1.0' in text
    assert 'phasing_halts_total{by="controller"} 1.0' in text
    assert 'phasing_halt_problems{kind="new_bucket",overridden="false"} 1.0' in text
    assert 'phasing_job_last_success_timestamp_seconds{job="tick"}' in text
    assert 'phasing_job_last_run_failed{job="tick"} 0.0' in text
    assert 'phasing_crash_data_age_seconds{source="simulator:crashes"} 240.0' in text
    assert 'phasing_write_back_events{status="failed"} 1.0' in text
    assert 'phasing_emails_pending{status="pending"} 1.0' in text
    assert 'phasing_emails_pending{status="failed"} 1.0' in text
    assert "phasing_broker_up 1.0" in text
    assert "phasing_queue_length " in text


@override_settings(PHASING_METRICS_TOKEN=TOKEN)
def test_metrics_name_no_package_bucket_or_crash_report():
    report = CrashReportFactory(stack_trace="SECRET_FRAME in libsecret.so")
    ProblemFactory(bucket=report.bucket, publication=PublicationFactory(state=PhasingState.HALTED))

    text = Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}").get("/metrics").content.decode()

    assert "SECRET_FRAME" not in text
    assert report.bucket.signature not in text
    assert report.source_package.name not in text
