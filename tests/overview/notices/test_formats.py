"""Chat formats: Matrix, Mattermost and Slack messages with the update, the problem in a
few words and a link to the update page, sent to a local receiver."""

from __future__ import annotations

import json

import pytest

from overview.models import DeliveryStatus, EndpointFormat, WebhookEndpoint
from overview.notices import delivery, formats
from packages.services import rollouts
from tests.factories import PublicationFactory
from tests.fake_http import Reply
from tests.overview.notices.conftest import drain

pytestmark = pytest.mark.django_db

HALT = {
    "type": "update.halted",
    "timestamp": "2026-12-03T12:00:00+00:00",
    "data": {
        "title": "hello 2.10-1ubuntu1 in noble-updates",
        "summary": "halted by controller: new crash <bucket> & more",
        "url": "https://phasing.example.org/updates/7/",
    },
}


def test_a_slack_message_names_the_update_the_problem_and_links_the_page():
    message = formats.slack_message(HALT)
    assert message["text"] == (
        "*Halted: hello 2.10-1ubuntu1 in noble-updates*\n"
        "halted by controller: new crash &lt;bucket&gt; &amp; more\n"
        "<https://phasing.example.org/updates/7/|Open the update page>"
    )


def test_a_mattermost_message_is_markdown_with_the_link():
    message = formats.mattermost_message(HALT)
    assert message["text"].startswith("**Halted: hello 2.10-1ubuntu1 in noble-updates**\n")
    assert message["text"].endswith(
        "[Open the update page](https://phasing.example.org/updates/7/)"
    )


def test_a_matrix_message_is_a_notice_with_escaped_html():
    message = formats.matrix_message(HALT)
    assert message["msgtype"] == "m.notice"
    assert "&lt;bucket&gt;" in message["formatted_body"]
    assert '<a href="https://phasing.example.org/updates/7/">' in message["formatted_body"]
    assert message["body"].startswith("[phasing] Halted: hello 2.10-1ubuntu1 in noble-updates")


def test_a_halt_reaches_a_matrix_room_through_the_client_server_api(
    http_server, allow_local, queued, archive_admin_user, django_capture_on_commit_callbacks
):
    http_server.route("PUT", "/_matrix/client/v3/*", Reply(json={"event_id": "$abc"}))
    WebhookEndpoint.objects.create(
        name="matrix",
        format=EndpointFormat.MATRIX,
        url=http_server.base_url,
        matrix_room="!ops:example.org",
        matrix_access_token="syt_token",
    )
    publication = PublicationFactory()
    with django_capture_on_commit_callbacks(execute=True):
        rollouts.publication_halt(
            publication=publication, reason="crashes", actor=archive_admin_user
        )
    [outcome] = drain(queued)
    assert outcome.status == DeliveryStatus.DELIVERED
    [request] = http_server.made("PUT")
    message_id = request.headers["webhook-id"]
    assert request.path == (
        f"/_matrix/client/v3/rooms/%21ops%3Aexample.org/send/m.room.message/{message_id}"
    )
    assert request.headers["Authorization"] == "Bearer syt_token"
    body = json.loads(request.body)
    assert body["msgtype"] == "m.notice"
    assert f"/updates/{publication.pk}/" in body["body"] and "crashes" in body["body"]


@pytest.mark.parametrize(
    ("kind", "key"), [(EndpointFormat.SLACK, "text"), (EndpointFormat.MATTERMOST, "text")]
)
def test_an_incoming_webhook_gets_its_chat_message(http_server, allow_local, kind, key):
    http_server.post("/hooks/abc", Reply(body="ok"))
    endpoint = WebhookEndpoint.objects.create(
        name=kind, format=kind, url=http_server.url("/hooks/abc")
    )
    sent = delivery.sample_event_send(endpoint)
    assert delivery.delivery_attempt(delivery_id=sent.pk).status == DeliveryStatus.DELIVERED
    [request] = http_server.made("POST", "/hooks/abc")
    assert "a test event" in json.loads(request.body)[key]
