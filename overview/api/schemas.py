"""What the JSON API answers, as schemas: they are its OpenAPI document too."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from ninja import Field, Schema

from packages.domain import policy

Percentage = Annotated[int, Field(ge=0, le=policy.FULL)]


class PolicyOut(Schema):
    """A policy, within the bounds every policy keeps (packages.domain.policy)."""

    start_percentage: Percentage
    step: Annotated[int, Field(ge=1, le=policy.FULL)]
    interval_seconds: Annotated[
        int,
        Field(
            ge=int(policy.MIN_INTERVAL.total_seconds()),
            le=int(policy.MAX_INTERVAL.total_seconds()),
        ),
    ]
    ceiling: Annotated[int, Field(ge=1, le=policy.FULL)]
    schedule: Annotated[list[Percentage], Field(max_length=policy.MAX_SCHEDULE_STEPS)]
    quiet_weekend: bool
    judge: str
    insufficient_gate: int | None
    insufficient_max_hold_seconds: int
    watch_at_full_seconds: int  # under the sequential judge: judged this long at 100 %


class VerdictOut(Schema):
    """What the evidence says of the update as of the controller's last tick."""

    verdict: str  # regressed, healthy or insufficient
    judge: str  # ubuntu or sequential
    evidence: str  # the test and the figures, in words
    rate_ratio: float | None
    rate_ratio_low: float | None
    rate_ratio_high: float | None
    crash_events_new: int
    crash_events_previous: int
    crash_events_needed: int  # about how many more to tell a doubling (insufficient)
    share_running: float  # estimated share of machines on the new version now
    share_running_low: float
    share_running_high: float
    share_measured: bool
    uptake_hours: float
    exposure_hours: float  # machine-hours on the new version per machine
    crashes_averted: float | None  # by a halt, over PHASING_AVERTED_DAYS at 100 %
    assessed_at: datetime  # when the controller found this assessment (unchanged since)


class NextStepOut(Schema):
    kind: str
    text: str
    percentage: Annotated[int | None, Field(ge=0, le=policy.FULL)] = None
    at: datetime | None = None
    full_at: datetime | None = None


class ProblemOut(Schema):
    kind: str
    title: str
    bucket_id: int | None = None
    url: str | None = None
    report_count: Annotated[int, Field(ge=0)]
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
    phased_update_percentage: Percentage
    state: str
    hold_reason: str
    last_change: datetime
    policy: PolicyOut
    next_step: NextStepOut
    problems: list[ProblemOut]
    verdict: VerdictOut | None
    history_url: str
    events_url: str


class PublicationPage(Schema):
    count: Annotated[int, Field(ge=0)]
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
    count: Annotated[int, Field(ge=0)]
    next: str | None
    previous: str | None
    results: list[EventOut]


class ScheduledChangeOut(Schema):
    """An archive admin's change for a later time, or awaiting a second admin's sign-off."""

    id: int
    action: str  # pause, resume, set, release, freeze, unfreeze, policy
    what: str  # in words: "set percentage to 50%"
    target: str  # in words: "hello 2.10-3ubuntu1 in noble", "release noble"
    publication_id: int | None
    release: str | None
    source_package: str | None
    percentage: Annotated[int | None, Field(ge=0, le=policy.FULL)] = None
    policy: dict[str, Any]  # a policy change's settings, durations in seconds
    run_at: datetime
    reason: str
    state: str  # pending, done, failed or cancelled
    scheduled_by: str
    created_at: datetime
    sign_off_needed: bool  # pending, and waiting for a second archive admin
    signed_off_by: str | None
    signed_off_at: datetime | None
    cancelled_by: str | None
    cancelled_at: datetime | None
    cancel_reason: str
    ran_at: datetime | None
    outcome: str  # what it did, or the error that stopped it


class ScheduledChangePage(Schema):
    count: Annotated[int, Field(ge=0)]
    next: str | None
    previous: str | None
    results: list[ScheduledChangeOut]


class BucketOut(Schema):
    id: int
    signature: str
    function: str
    # "crash", or "package": package install failures (apport's ProblemType: Package).
    problem_type: str
    source_package: str | None
    first_seen: datetime | None
    last_seen: datetime | None
    error_tracker_url: str
    url: str


class BucketPage(Schema):
    count: Annotated[int, Field(ge=0)]
    next: str | None
    previous: str | None
    results: list[BucketOut]


class ReportCountOut(Schema):
    release: str
    source_package: str
    version: str
    reports: Annotated[int, Field(ge=0)]
    systems: Annotated[int, Field(ge=0)]
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
    phased_update_percentage: Percentage
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
    phased_update_percentage: Percentage
    state: str


class KeptBackOut(Schema):
    """An update in phasing that another needs, not yet in this machine's phase."""

    publication_id: int
    source_package: str
    version: str
    relation: str  # "gnome-shell Depends on libmutter-14-0 (>= 46.2)"
    draw: Percentage  # this machine's draw for the needed update
    percentage: Percentage  # the needed update's
    explanation: str


class DecisionOut(Schema):
    """What apt decides for one machine and one update."""

    publication_id: int
    draw: Percentage  # apt draws 0..100
    included: bool  # in its phase on this machine
    included_from_percentage: Percentage
    included_at: datetime | None
    waiting_for: str
    # In its phase and with everything it needs: apt installs it now.
    installs: bool
    # What it needs that this machine does not take yet: apt keeps it back for those.
    kept_back_for: list[KeptBackOut]


class MachineRowOut(UpdateOut, DecisionOut):
    pass


class MachinePage(Schema):
    machine_id: str
    release: str | None
    count: Annotated[int, Field(ge=0)]
    next: str | None
    previous: str | None
    results: list[MachineRowOut]


class ErrorOut(Schema):
    detail: str
