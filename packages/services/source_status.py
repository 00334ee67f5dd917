"""What each source last did: when it answered, its last error, and whether it takes our
percentages. The pages, `phasing_sources check`, the controller's freshness rule and the
write-back read it; the sync, the crash sync and the write-back record it here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from packages.models import SourceSync, WriteBack, WritePermission

_PERMISSION_OF = {
    WriteBack.APPLIED: WritePermission.GRANTED,
    WriteBack.DRY_RUN: WritePermission.READ_ONLY,
    WriteBack.DENIED: WritePermission.DENIED,
}


def source_sync_record(
    name: str,
    kind: str,
    *,
    now: datetime,
    summary: Mapping[str, object] | None = None,
    warnings: Sequence[str] = (),
    error: str = "",
) -> None:
    """Record that source `name` was asked for its `kind` of data: a success unless `error`.

    Warnings (records skipped, one release failing) are kept as the last error of a
    sync that otherwise succeeded.
    """
    defaults: dict[str, object] = {
        "kind": kind,
        "last_attempt_at": now,
        "last_error": error or "; ".join(warnings[:5]),
    }
    if summary is not None:
        defaults["last_summary"] = dict(summary)
    key = f"{name}:{kind}"
    if error:
        # Since the first failure after the last success: what the pages say.
        since = SourceSync.objects.filter(name=key).values_list("failing_since", flat=True)
        defaults["failing_since"] = since.first() or now
    else:
        defaults["last_success_at"] = now
        defaults["failing_since"] = None
    SourceSync.objects.update_or_create(name=key, defaults=defaults)


def source_write_permission_record(name: str, *, status: str, detail: str, now: datetime) -> None:
    """What the publication source `name` said of a write (or of a check that writes
    nothing): it takes our percentages, is read-only, or refuses them. A failure says
    nothing about permission and changes nothing here."""
    permission = _PERMISSION_OF.get(WriteBack(status)) if status in WriteBack.values else None
    if permission is None:
        return
    SourceSync.objects.update_or_create(
        name=f"{name}:publications",
        defaults={
            "kind": "publications",
            "write_permission": permission,
            "write_checked_at": now,
            "write_detail": detail[:2000],
        },
    )


def source_write_denied(name: str) -> bool:
    """The publication source `name` refused our last write for want of permission."""
    return SourceSync.objects.filter(
        name=f"{name}:publications", write_permission=WritePermission.DENIED
    ).exists()
