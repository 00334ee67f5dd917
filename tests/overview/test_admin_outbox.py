"""The outbox in the admin: every email the product wrote, sent, failed or waiting, newest
first, with its body; for archive admins and superusers only."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse

from overview.models import Notification
from packages.models import EventKind
from tests.factories import NOW, PersonFactory, PhasingEventFactory, PublicationFactory

pytestmark = pytest.mark.django_db

OUTBOX = "admin:overview_notification_changelist"


def _email(subject: str, *, minutes_ago: int, sent: bool = True, error: str = "") -> Notification:
    publication = PublicationFactory()
    event = PhasingEventFactory(publication=publication, kind=EventKind.HALTED)
    return Notification.objects.create(
        publication=publication,
        event=event,
        person=PersonFactory(name="Ana Example", account_name=f"ana{minutes_ago}"),
        roles="signer",
        subject=subject,
        body=f"{subject}: the body, with the problem and the link",
        created_at=NOW - timedelta(minutes=minutes_ago),
        sent_at=NOW if sent else None,
        attempts=0 if sent or not error else 3,
        error=error,
    )


def test_the_outbox_lists_every_email_newest_first_with_its_delivery(archive_admin):
    _email("old halt", minutes_ago=60)
    _email("failed halt", minutes_ago=30, sent=False, error="SMTPServerDisconnected: down")
    _email("new halt", minutes_ago=1, sent=False)

    response = archive_admin.get(reverse(OUTBOX))

    assert response.status_code == 200
    rows = list(response.context["cl"].result_list)
    assert [n.subject for n in rows] == ["new halt", "failed halt", "old halt"]
    html = response.content.decode()
    assert "Outbox" in html
    assert "failed (3 attempts): SMTPServerDisconnected: down" in html
    assert "waiting" in html and "Ana Example &lt;ana1@ubuntu.example&gt;" in html


def test_the_outbox_filters_by_delivery(archive_admin):
    _email("sent one", minutes_ago=60)
    _email("failed one", minutes_ago=30, sent=False, error="refused")

    def subjects(delivery: str) -> list[str]:
        response = archive_admin.get(reverse(OUTBOX), {"delivery": delivery})
        return [n.subject for n in response.context["cl"].result_list]

    assert subjects("sent") == ["sent one"]
    assert subjects("failed") == ["failed one"]
    assert subjects("waiting") == []


def test_an_email_in_the_outbox_shows_its_body_and_cannot_be_changed(archive_admin):
    email = _email("bash halted", minutes_ago=5)
    url = reverse("admin:overview_notification_change", args=[email.pk])

    html = archive_admin.get(url).content.decode()

    assert "bash halted: the body, with the problem and the link" in html
    assert 'name="_save"' not in html
    archive_admin.post(url, {"subject": "changed"})
    email.refresh_from_db()
    assert email.subject == "bash halted"


def test_only_archive_admins_and_superusers_see_the_outbox(
    triager, member, admin_client_superuser, archive_admin
):
    email = _email("bash halted", minutes_ago=5)
    detail = reverse("admin:overview_notification_change", args=[email.pk])

    assert admin_client_superuser.get(reverse(OUTBOX)).status_code == 200
    assert archive_admin.get(detail).status_code == 200
    for client in (triager, member):
        assert client.get(reverse(OUTBOX)).status_code in (302, 403)
        assert client.get(detail).status_code in (302, 403)
    assert "Outbox" not in triager.get(reverse("admin:index")).content.decode()


@pytest.mark.parametrize("count", [2, 20])
def test_the_outbox_costs_a_fixed_number_of_queries(
    archive_admin, count, django_assert_num_queries
):
    for n in range(count):
        _email(f"halt {n}", minutes_ago=n)
    # 1 session, 2 user, 3 user permissions, 4 group permissions, 5 filtered count, 6 full
    # count, 7 the page with its people, 8 and 9 the date hierarchy's range and days.
    with django_assert_num_queries(9):
        assert archive_admin.get(reverse(OUTBOX)).status_code == 200
