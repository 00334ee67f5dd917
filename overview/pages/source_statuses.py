"""Reads shaped for the sources page and `phasing_sources check`: for each source, whether
it answers, whether it takes our percentages, how fresh its data is, and its last error."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from overview.pages.wording import age
from packages.models import SourceSync, WritePermission


@dataclass(frozen=True)
class SourceStatus:
    name: str
    kind: str
    reachable: str
    permission: str
    freshness: str
    last_error: str
    # Unreachable, refusing our writes, or stale: shown as a problem, and the check fails.
    problem: bool


def permission_words(sync: SourceSync) -> str:
    if sync.kind != "publications":
        return "never written"
    if sync.write_permission == WritePermission.DENIED:
        return f"no: {sync.write_detail or 'no permission to change phasing'}"
    if sync.write_permission == WritePermission.GRANTED:
        return "yes"
    if sync.write_permission == WritePermission.READ_ONLY:
        return f"read-only: {sync.write_detail}" if sync.write_detail else "read-only"
    return "not checked yet"


def source_status(sync: SourceSync, *, now: datetime, max_age: timedelta) -> SourceStatus:
    answered = sync.last_success_at is not None and sync.last_success_at == sync.last_attempt_at
    if sync.last_attempt_at is None:
        reachable = "never asked"
    elif answered:
        reachable = f"yes ({age(sync.last_attempt_at, now)})"
    else:
        reachable = f"no: the last attempt failed {age(sync.last_attempt_at, now)}"
    stale = sync.last_success_at is None or now - sync.last_success_at > max_age
    if sync.last_success_at is None:
        freshness = "never synced"
    else:
        freshness = f"{'stale: ' if stale else ''}synced {age(sync.last_success_at, now)}"
    denied = sync.write_permission == WritePermission.DENIED
    return SourceStatus(
        name=sync.name.rsplit(":", 1)[0],
        kind=sync.kind,
        reachable=reachable,
        permission=permission_words(sync),
        freshness=freshness,
        last_error=sync.last_error or "—",
        problem=not answered or denied or stale,
    )


def source_statuses(*, now: datetime, max_age: timedelta) -> list[SourceStatus]:
    """Every source that has been asked for data (one query); the demo seeder is not one."""
    # Services (email, write-back, the sync's lock) and beats are not sources of data.
    syncs = SourceSync.objects.exclude(kind__in=("demo", "service", "beat")).order_by(
        "kind", "name"
    )
    return [source_status(sync, now=now, max_age=max_age) for sync in syncs]
