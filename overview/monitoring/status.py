"""What is failing, and since when: the sources' last syncs and the services' faults, read
in one query for the overview and the footer of every page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from packages.models import SourceSync


@dataclass(frozen=True)
class Fault:
    """Something failing that a person should know of, and since when."""

    what: str
    since: datetime | None
    detail: str = ""


@dataclass(frozen=True)
class ServiceStatus:
    sources: list[SourceSync]  # publications and crashes, as they last synced
    faults: list[Fault]


SERVICE_NAMES = {
    "email": "sending email",
    "write-back": "writing percentages back to the archive",
    "sync": "the periodic sync",
    "broker": "queueing work for the workers (the broker)",
}
_SOURCE_KINDS = ("publications", "crashes")


def service_status(*, now: datetime) -> ServiceStatus:
    """Where the data comes from, and what is failing since when: one query, for the
    overview and the footer of every page."""
    # The demo seeder keeps its progress here too; it is not a source of data.
    rows = list(SourceSync.objects.exclude(kind="demo").order_by("kind", "name"))
    sources = [row for row in rows if row.kind in _SOURCE_KINDS]
    faults = []
    stale_after = settings.PHASING_CRASH_DATA_MAX_AGE
    for row in sources:
        label = f"{row.name} ({row.kind})"
        if row.failing_since is not None:
            faults.append(Fault(label, row.failing_since, row.last_error))
        elif row.last_success_at is not None and now - row.last_success_at > stale_after:
            # No error, but no sync either: a sync that stalled or keeps being skipped.
            faults.append(Fault(label, row.last_success_at, "no sync has finished since"))
    for row in rows:
        if row.kind == "service" and row.failing_since is not None:
            what = SERVICE_NAMES.get(row.name, row.name)
            faults.append(Fault(what, row.failing_since, row.last_error))
    # Every tick beat schedules marks its beat's row as it starts in a worker: none for
    # three intervals means no worker takes them (all killed, the broker lost them) or no
    # beat sends them, and the controller has stopped without a word.
    last_tick = max(
        (row.last_attempt_at for row in rows if row.kind == "beat" and row.last_attempt_at),
        default=None,
    )
    if last_tick is not None and now - last_tick > 3 * settings.PHASING_TICK_INTERVAL:
        faults.append(
            Fault(
                "the controller's tick",
                last_tick,
                "no tick has run since: are the broker, a worker and beat running?",
            )
        )
    recent = now - 2 * settings.PHASING_TICK_INTERVAL
    beats = [
        row
        for row in rows
        if row.kind == "beat" and row.last_attempt_at and row.last_attempt_at >= recent
    ]
    if _overlapping(beats):
        # Two schedulers: every tick and sync runs twice (harmless, but one should go).
        names = ", ".join(row.name.removeprefix("beat:") for row in beats)
        since = max(row.last_success_at for row in beats if row.last_success_at)
        faults.append(Fault(f"{len(beats)} beats are running", since, names))
    return ServiceStatus(sources, faults)


def _overlapping(beats: list[SourceSync]) -> bool:
    """Two beats scheduled ticks over the same stretch of time: each was seen again after
    the other was first seen (`last_success_at`). One beat taking over from another that
    stopped (a failover, a database blip) is not two running."""
    spans = [
        (row.last_success_at, row.last_attempt_at)
        for row in beats
        if row.last_success_at and row.last_attempt_at
    ]
    return any(
        a_last >= b_first and b_last >= a_first
        for i, (a_first, a_last) in enumerate(spans)
        for b_first, b_last in spans[i + 1 :]
    )
