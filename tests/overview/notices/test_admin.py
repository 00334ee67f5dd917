"""The admin of webhook endpoints and deliveries, as an archive admin uses it."""

from __future__ import annotations

import pytest
from django.urls import reverse

from overview.models import WebhookDelivery, WebhookEndpoint
from overview.notices import delivery

pytestmark = pytest.mark.django_db


def test_an_archive_admin_adds_an_endpoint_and_a_secret_is_made_for_it(archive_admin):
    answer = archive_admin.post(
        reverse("admin:overview_webhookendpoint_add"),
        {
            "name": "release team",
            "format": "standard",
            "url": "https://hooks.example.org/phasing",
            "secret": WebhookEndpoint._meta.get_field("secret").get_default(),
            "events": ["update.halted", "crash_data.stale"],
            "enabled": "on",
        },
    )
    assert answer.status_code == 302, answer.content.decode()[:2000]
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["update.halted", "crash_data.stale"]
    assert endpoint.secret.startswith("whsec_")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://hooks.example.org/", "only http and https"),
        ("http://127.0.0.1:8000/admin/", "own host"),
        ("https://u:p@hooks.example.org/", "user name or password"),
    ],
)
def test_an_endpoint_url_that_may_not_be_called_is_refused_in_the_form(archive_admin, url, words):
    answer = archive_admin.post(
        reverse("admin:overview_webhookendpoint_add"),
        {
            "name": "x",
            "format": "standard",
            "url": url,
            "secret": "whsec_c2VjcmV0",
            "enabled": "on",
        },
    )
    assert answer.status_code == 200
    assert words in answer.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_a_matrix_endpoint_needs_a_room_and_a_token(archive_admin):
    answer = archive_admin.post(
        reverse("admin:overview_webhookendpoint_add"),
        {
            "name": "m",
            "format": "matrix",
            "url": "https://matrix.example.org",
            "secret": "whsec_c2VjcmV0",
        },
    )
    assert "needs the room id and an access token" in answer.content.decode()


def test_send_a_test_event_queues_a_delivery_after_commit(
    archive_admin, monkeypatch, django_capture_on_commit_callbacks
):
    from overview.notices import tasks

    queued = []
    monkeypatch.setattr(tasks.deliver, "delay", queued.append)
    endpoint = WebhookEndpoint.objects.create(name="team", url="https://hooks.example.org/")
    with django_capture_on_commit_callbacks(execute=True):
        answer = archive_admin.post(
            reverse("admin:overview_webhookendpoint_changelist"),
            {"action": "send_test_event", "_selected_action": [endpoint.pk]},
            follow=True,
        )
    assert "A test event is on its way to 1 endpoint" in answer.content.decode()
    [sent] = WebhookDelivery.objects.all()
    assert queued == [sent.pk] and sent.notice_type == "test"


@pytest.mark.parametrize("count", [2, 20])
def test_the_deliveries_changelist_costs_the_same_whatever_the_number_of_rows(
    archive_admin, django_assert_num_queries, count
):
    endpoint = WebhookEndpoint.objects.create(name="team-x1", url="https://hooks.example.org/")
    for _ in range(count):
        delivery.sample_event_send(endpoint)
    # 1 session, 2 user, 3 user permissions, 4 group permissions, 5 the endpoint filter's
    # choices, 6 filtered count, 7 full count, 8 the page with its endpoints, 9 the date
    # hierarchy's range, 10 its days
    with django_assert_num_queries(10):
        answer = archive_admin.get(reverse("admin:overview_webhookdelivery_changelist"))
    assert answer.status_code == 200
    assert answer.content.decode().count(">team-x1<") >= count


def test_the_change_page_has_a_send_a_test_event_button(
    archive_admin, monkeypatch, django_capture_on_commit_callbacks
):
    from overview.notices import tasks

    queued = []
    monkeypatch.setattr(tasks.deliver, "delay", queued.append)
    endpoint = WebhookEndpoint.objects.create(name="team", url="https://hooks.example.org/")
    page = archive_admin.get(reverse("admin:overview_webhookendpoint_change", args=[endpoint.pk]))
    button = reverse("admin:overview_webhookendpoint_send_test", args=[endpoint.pk])
    assert f'action="{button}"' in page.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        answer = archive_admin.post(button, follow=True)
    assert "A test event is on its way to team" in answer.content.decode()
    assert queued == [WebhookDelivery.objects.get(notice_type="test").pk]


def test_the_button_needs_the_right_to_change_endpoints(triager_user, client):
    from django.contrib.auth.models import User

    endpoint = WebhookEndpoint.objects.create(name="team", url="https://hooks.example.org/")
    User.objects.filter(pk=triager_user.pk).update(is_staff=True)
    client.force_login(triager_user)
    button = reverse("admin:overview_webhookendpoint_send_test", args=[endpoint.pk])
    assert client.post(button).status_code == 403
    assert not WebhookDelivery.objects.exists()
