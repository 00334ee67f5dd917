"""The JSON schema of a webhook notice, for the OpenAPI document's `webhooks` section and
docs/teams.md. The notices themselves are built by overview.notices.events."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class UpdateRef(BaseModel):
    model_config = ConfigDict(extra="forbid")  # the schema names every key sent

    id: int
    package: str
    version: str
    release: str = Field(description="the release's codename")
    pocket: str
    percentage: int
    state: str
    url: str = Field(description="the update's page on the site")


class EventDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")  # the schema names every key sent

    id: int
    kind: str
    at: datetime
    actor: str = Field(description='a user name, or "controller"')
    reason: str
    old_percentage: int | None
    new_percentage: int
    old_state: str
    new_state: str


class ChangeDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")  # the schema names every key sent

    id: int
    action: str
    percentage: int | None
    run_at: datetime
    reason: str
    requested_by: str


class NoticeData(BaseModel):
    model_config = ConfigDict(extra="forbid")  # the schema names every key sent

    title: str = Field(description="the update, or the release, in a few words")
    summary: str = Field(description="what happened, in a few words")
    url: str = Field(description="the page to open")
    update: UpdateRef | None = Field(None, description="halted, resumed, paused, released")
    event: EventDetail | None = Field(None, description="halted, resumed, paused, released")
    release: str | None = Field(None, description="frozen: the release's codename")
    actor: str | None = Field(None, description="frozen: who froze it")
    reason: str | None = Field(None, description="frozen: why")
    updates: list[UpdateRef] | None = Field(
        None, description="frozen: the updates it holds; crash data stale: those without data"
    )
    change: ChangeDetail | None = Field(None, description="sign-off requested")


class WebhookNotice(BaseModel):
    """POSTed as JSON with the Standard Webhooks headers webhook-id, webhook-timestamp and
    webhook-signature (v1, HMAC-SHA256 of "id.timestamp.body" with the endpoint's secret)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal[
        "update.halted",
        "update.resumed",
        "update.paused",
        "update.released",
        "release.frozen",
        "sign_off.requested",
        "crash_data.stale",
        "test",
    ]
    timestamp: datetime
    data: NoticeData


def _inlined(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with every reference replaced by what it names: the API's own
    `components` are django-ninja's, so the notice's schema carries its parts itself."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inlined(defs[ref.removeprefix("#/$defs/")], defs)
        return {key: _inlined(value, defs) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(item, defs) for item in node]
    return node


def notice_schema() -> dict[str, Any]:
    schema = WebhookNotice.model_json_schema()
    defs = schema.pop("$defs", {})
    inlined: dict[str, Any] = _inlined(schema, defs)
    return inlined


def openapi_webhooks() -> dict[str, Any]:
    """The OpenAPI 3.1 `webhooks` section: the notice POSTed to an endpoint."""
    return {
        "webhooks": {
            "notice": {
                "post": {
                    "summary": "A notice to a webhook endpoint added by an archive admin",
                    "description": (WebhookNotice.__doc__ or "").strip(),
                    "requestBody": {"content": {"application/json": {"schema": notice_schema()}}},
                    "responses": {"200": {"description": "Any 2xx: received"}},
                }
            }
        }
    }
