"""The evidence and the decisions: crash buckets and reports, their counters, problems,
overrides, emails (evidence), and what the judges read and concluded (judging)."""

from overview.models.evidence import (
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
)
from overview.models.judging import Assessment, HourlyCrashCount, Verdict, VersionSighting

__all__ = [
    "Assessment",
    "BucketVersionStat",
    "CrashCounter",
    "CrashReport",
    "ErrorBucket",
    "HourlyCrashCount",
    "Notification",
    "Override",
    "OverrideQuerySet",
    "Problem",
    "ProblemKind",
    "ProblemQuerySet",
    "Verdict",
    "VersionSighting",
]
