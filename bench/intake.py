"""The intake's own path in the ingest figure: the bench's reports posted as whoopsie posts
them (BSON bodies), read, checked and kept by the intake as each POST does past HTTP, then
brought into the evidence by the crash sync through the same ingest.

Run by bench.ingest on its throwaway copy of the bench database, after the main figure.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from datetime import timedelta

COUNT = 20_000


def bodies(records: Sequence, versions: dict[str, str]) -> list[tuple[str, bytes]]:
    """(system id, body) of each record as whoopsie would send it."""
    import bson

    posts = []
    for record in records:
        document = {
            "ProblemType": record.problem_type or "Crash",
            "Package": f"{record.source_package} {record.version}",
            "SourcePackage": record.source_package,
            "DistroRelease": f"Ubuntu {versions.get(record.release, record.release)}",
            "Architecture": record.architecture or "amd64",
            "ExecutablePath": f"/usr/bin/{record.source_package}",
            "DuplicateSignature": record.signature,
            "Date": record.reported_at.strftime("%a %b %d %H:%M:%S %Y"),
            "ProcStatus": f"Name:\t{record.source_package}\nPid:\t{record.external_id}",
            "Dependencies": "libc6 2.39-0ubuntu8.3\nlibglib2.0-0t64 2.80.0-6ubuntu3.1",
            "ProcEnviron": "LANG=C.UTF-8\nSHELL=/bin/bash",
        }
        system = hashlib.sha512(record.system_id.encode()).hexdigest()
        posts.append((system, bson.encode(document)))
    return posts


def measure(records: Sequence, *, count: int = COUNT) -> dict:
    from django.utils import timezone

    from overview.evidence import intake
    from overview.evidence.crash_sync import crashes_sync
    from overview.evidence.intake_store import Replayed, crash_receive
    from overview.evidence.sources.intake import IntakeFeed
    from overview.judges.local import LocalCrashSource
    from packages.models import Release

    versions = dict(Release.objects.values_list("codename", "version"))
    posts = bodies(records[:count], versions)
    since = timezone.now() - timedelta(seconds=1)
    started = time.perf_counter()
    kept = refused = 0
    for system, body in posts:
        try:
            crash_receive(system, intake.parse(system, body), now=timezone.now())
            kept += 1
        except (intake.Refused, Replayed):
            refused += 1
    received = time.perf_counter() - started
    started = time.perf_counter()
    synced = crashes_sync(LocalCrashSource(feed=IntakeFeed()), since=since)
    ingested = time.perf_counter() - started
    return {
        "posted": len(posts),
        "kept": kept,
        "refused": refused,
        "received_per_s": round(kept / received) if received else 0,
        "synced": synced["inserted"],
        "synced_per_s": round(synced["inserted"] / ingested) if ingested else 0,
    }
