"""The evidence and the decisions: crash buckets and reports, their counters, problems,
overrides, emails (evidence), what the judges read and concluded (judging), and the
last run of each periodic job (operations)."""

from overview.models.evidence import (
    BucketSystem,
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    ErrorBucket,
    Notification,
    Override,
    OverrideQuerySet,
    Problem,
    ProblemKind,
    ProblemQuerySet,
    ProblemType,
)
from overview.models.judging import Assessment, HourlyCrashCount, Verdict, VersionSighting
from overview.models.operations import PeriodicRun

__all__ = [
    "Assessment",
    "BucketSystem",
    "BucketVersionStat",
    "CrashCounter",
    "CrashReport",
    "ErrorBucket",
    "HourlyCrashCount",
    "Notification",
    "Override",
    "OverrideQuerySet",
    "PeriodicRun",
    "Problem",
    "ProblemKind",
    "ProblemQuerySet",
    "ProblemType",
    "Verdict",
    "VersionSighting",
]
