"""A local webhook receiver that verifies signatures, and tasks run in the test's process."""

from __future__ import annotations

import json

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from overview.models import WebhookEndpoint
from overview.notices import delivery, tasks
from tests.fake_http import Recorded, Reply

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


class Receiver:
    """Answers 204 to a request whose Standard Webhooks signature verifies, 401 otherwise,
    and keeps what it verified."""

    def __init__(self, secret: str = SECRET) -> None:
        self.secret = secret
        self.verified: list[dict] = []
        self.refused: list[str] = []

    def __call__(self, request: Recorded) -> Reply:
        try:
            payload = Webhook(self.secret).verify(request.body, request.headers)
        except WebhookVerificationError as exc:
            self.refused.append(str(exc))
            return Reply(status=401, body="bad signature")
        self.verified.append(payload)
        return Reply(status=204)


@pytest.fixture
def allow_local(settings):
    """The receiver listens on 127.0.0.1, which only this setting lets through."""
    settings.PHASING_WEBHOOKS_ALLOW_PRIVATE = True
    settings.PHASING_WEBHOOKS_TIMEOUT = 2


@pytest.fixture
def receiver(http_server, allow_local) -> Receiver:
    verifier = Receiver()
    http_server.post("/hooks", verifier)
    return verifier


@pytest.fixture
def endpoint(db, http_server) -> WebhookEndpoint:
    return WebhookEndpoint.objects.create(
        name="release team", url=http_server.url("/hooks"), secret=SECRET
    )


@pytest.fixture
def queued(monkeypatch) -> list[int]:
    """The fan-out runs in the test's process; deliveries are queued here, sent by `drain`."""
    sent: list[int] = []
    monkeypatch.setattr(tasks.fan_out, "delay", lambda topic, items: tasks.fan_out(topic, items))
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: sent.append(pk))
    return sent


def drain(queued: list[int]) -> list[delivery.AttemptOutcome]:
    outcomes = [delivery.delivery_attempt(delivery_id=pk) for pk in queued]
    queued.clear()
    return outcomes


def body_json(request: Recorded) -> dict:
    return json.loads(request.body)
