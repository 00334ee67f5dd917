"""Bring crash reports from the configured crash source into the database."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from django.utils import timezone

from overview.evidence.ingest import crash_reports_ingest
from overview.evidence.sources.base import CrashSource
from packages.models import SourceSync
from packages.services.source_status import source_sync_record


def crashes_sync(
    source: CrashSource,
    *,
    now: datetime | None = None,
    since: datetime | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Ingest the crash reports a source has for us since the last successful sync."""
    now = now or timezone.now()
    status = SourceSync.objects.filter(name=f"{source.name}:crashes").first()
    if since is None and status and status.last_success_at:
        # Reports can arrive late; asking again for the last hour costs only duplicates.
        since = status.last_success_at - timedelta(hours=1)
    if since is None:
        since = now - timedelta(days=15)
    try:
        summary = crash_reports_ingest(
            source.reports(since=since, now=now), progress=progress, now=now
        )
    except Exception as exc:  # recorded, so pages and the controller know the data is stale
        source_sync_record(source.name, "crashes", now=now, error=f"{type(exc).__name__}: {exc}")
        raise
    result = {
        "received": summary.received,
        "inserted": summary.inserted,
        "duplicates": summary.duplicates,
        "skipped": summary.skipped,
    }
    source_sync_record(source.name, "crashes", now=now, summary=result, warnings=summary.errors)
    return result
