"""How a notice is written for each kind of endpoint: the Standard Webhooks JSON as it
is, or a chat message (Matrix, Mattermost, Slack) with the update, the problem in a few
words and a link to the update page."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote

from overview.models import EndpointFormat, WebhookDelivery, WebhookEndpoint

LABELS = {
    "update.halted": "Halted",
    "update.resumed": "Resumed",
    "update.paused": "Paused",
    "update.released": "Released to everyone",
    "release.frozen": "Frozen",
    "sign_off.requested": "Sign-off requested",
    "crash_data.stale": "Crash data missing",
    "test": "Test",
}


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    body: bytes
    headers: dict[str, str]


def _words(payload: dict[str, Any]) -> tuple[str, str, str, str]:
    data = payload.get("data") or {}
    label = LABELS.get(payload.get("type", ""), payload.get("type", ""))
    return label, str(data.get("title", "")), str(data.get("summary", "")), str(data.get("url", ""))


def plain_text(payload: dict[str, Any]) -> str:
    label, title, summary, url = _words(payload)
    return f"[phasing] {label}: {title}: {summary} {url}".strip()


def slack_message(payload: dict[str, Any]) -> dict[str, Any]:
    """Slack incoming webhook: mrkdwn text, the link as <url|words>."""
    label, title, summary, url = _words(payload)

    def safe(text: str) -> str:  # Slack's three control characters
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

    return {
        "text": f"*{safe(label)}: {safe(title)}*\n{safe(summary)}\n<{url}|Open the update page>",
        "unfurl_links": False,
    }


def mattermost_message(payload: dict[str, Any]) -> dict[str, Any]:
    """Mattermost incoming webhook: Markdown text."""
    label, title, summary, url = _words(payload)
    return {
        "username": "Phasing",
        "text": f"**{label}: {title}**\n{summary}\n[Open the update page]({url})",
    }


def matrix_message(payload: dict[str, Any]) -> dict[str, Any]:
    """A Matrix m.notice (a bot's message: clients do not notify as loudly), with HTML."""
    label, title, summary, url = _words(payload)
    return {
        "msgtype": "m.notice",
        "body": plain_text(payload),
        "format": "org.matrix.custom.html",
        "formatted_body": (
            f"<strong>{escape(label)}: {escape(title)}</strong><br>{escape(summary)}<br>"
            f'<a href="{escape(url)}">Open the update page</a>'
        ),
    }


def matrix_url(endpoint: WebhookEndpoint, transaction_id: str) -> str:
    """PUT /_matrix/client/v3/rooms/{room}/send/m.room.message/{txn}: the transaction id
    is the delivery's, so a retry of one delivery is one message in the room."""
    return (
        f"{endpoint.url.rstrip('/')}/_matrix/client/v3/rooms/{quote(endpoint.matrix_room, safe='')}"
        f"/send/m.room.message/{quote(transaction_id, safe='')}"
    )


def request_for(endpoint: WebhookEndpoint, delivery: WebhookDelivery) -> Request:
    """The request without its signature headers (notices.delivery adds them)."""
    payload = delivery.payload
    headers = {"Content-Type": "application/json", "User-Agent": "Phasing-Webhooks/1"}
    if endpoint.format == EndpointFormat.MATRIX:
        headers["Authorization"] = f"Bearer {endpoint.matrix_access_token}"
        return Request(
            "PUT",
            matrix_url(endpoint, delivery.message_id),
            _json(matrix_message(payload)),
            headers,
        )
    if endpoint.format == EndpointFormat.SLACK:
        return Request("POST", endpoint.url, _json(slack_message(payload)), headers)
    if endpoint.format == EndpointFormat.MATTERMOST:
        return Request("POST", endpoint.url, _json(mattermost_message(payload)), headers)
    return Request("POST", endpoint.url, _json(payload), headers)


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
