"""What the JSON API answers, as schemas: they are its OpenAPI document too."""

from __future__ import annotations

from datetime import datetime

from ninja import Schema


class PolicyOut(Schema):
    start_percentage: int
    step: int
    interval_seconds: int
    ceiling: int
    schedule: list[int]
    quiet_weekend: bool


class NextStepOut(Schema):
    kind: str
    text: str
    percentage: int | None = None
    at: datetime | None = None
    full_at: datetime | None = None


class ProblemOut(Schema):
    kind: str
    title: str
    bucket_id: int | None = None
    url: str | None = None
    report_count: int
    overridden: bool


class PublicationOut(Schema):
    id: int
    release: str
    release_version: str
    source_package: str
    version: str
    previous_version: str
    pocket: str
    date_published: datetime
    phased_update_percentage: int
    state: str
    hold_reason: str
    last_change: datetime
    policy: PolicyOut
    next_step: NextStepOut
    problems: list[ProblemOut]
    history_url: str
    events_url: str


class PublicationPage(Schema):
    count: int
    next: str | None
    previous: str | None
    results: list[PublicationOut]


class EventOut(Schema):
    id: int
    created_at: datetime
    kind: str
    old_percentage: int | None
    new_percentage: int
    old_state: str
    new_state: str
    actor: str
    reason: str


class EventPage(Schema):
    count: int
    next: str | None
    previous: str | None
    results: list[EventOut]


class BucketOut(Schema):
    id: int
    signature: str
    function: str
    source_package: str | None
    first_seen: datetime | None
    last_seen: datetime | None
    error_tracker_url: str
    url: str


class BucketPage(Schema):
    count: int
    next: str | None
    previous: str | None
    results: list[BucketOut]


class ReportCountOut(Schema):
    release: str
    source_package: str
    version: str
    reports: int
    systems: int
    first_reported: datetime
    last_reported: datetime


class AffectedOut(Schema):
    publication_id: int
    release: str
    source_package: str
    version: str
    kind: str
    active: bool
    state: str
    phased_update_percentage: int
    overridden: bool


class BucketDetailOut(BucketOut):
    report_counts: list[ReportCountOut]
    affects: list[AffectedOut]


class UpdateOut(Schema):
    """An update in phasing, as the machine checks list it."""

    publication_id: int
    release: str
    source_package: str
    version: str
    phased_update_percentage: int
    state: str


class DecisionOut(Schema):
    """What apt decides for one machine and one update."""

    publication_id: int
    draw: int
    included: bool
    included_from_percentage: int
    included_at: datetime | None
    waiting_for: str


class MachineRowOut(UpdateOut, DecisionOut):
    pass


class MachinePage(Schema):
    machine_id: str
    release: str | None
    count: int
    next: str | None
    previous: str | None
    results: list[MachineRowOut]


class ErrorOut(Schema):
    detail: str
