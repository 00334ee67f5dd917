"""A crash source the test scripts, and the controller's tick at a chosen moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from overview.controller import tick as controller
from overview.evidence.sources.base import CrashAnswer, ProblemRecord

# A Tuesday, so no test trips over the quiet weekend by accident.
T0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)


HOURS = timedelta(hours=1)


class ScriptedCrashes:
    """A crash source whose answers the test sets per package."""

    name = "scripted"

    def __init__(self) -> None:
        self.answers: dict[str, CrashAnswer] = {}
        self.failure: Exception | None = None
        self.calls = 0

    def problems(self, queries, *, now):
        self.calls += 1
        if self.failure:
            raise self.failure
        return {q: self.answers.get(q.source_package, CrashAnswer()) for q in queries}

    def reports(self, *, since, now):
        return iter(())


def tick(crashes, at, **kwargs):
    return controller.tick(now=at, crash_source=crashes, **kwargs)


def new_bucket(signature="/usr/bin/tool:11:g_main:1", systems=4) -> ProblemRecord:
    """A new-bucket problem seen on enough systems to count."""
    return ProblemRecord(
        kind="new_bucket",
        signature=signature,
        function="g_main",
        report_count=7,
        system_count=systems,
    )
