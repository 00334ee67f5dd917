"""The evidence and the decisions: crash buckets and reports, their counters, problems,
overrides, emails (evidence), what the judges read and concluded (judging), and the
last run of each periodic job (operations), where notices go and how each went (webhooks)."""

from overview.models.dependents import DependentCrashCount
from overview.models.evidence import (
    BucketSystem,
    BucketVersionStat,
    CrashCounter,
    CrashReport,
    ErrorBucket,
    ProblemType,
)
from overview.models.intake import FleetReport, ReceivedCrash
from overview.models.judging import Assessment, HourlyCrashCount, Verdict, VersionSighting
from overview.models.notifications import Notification
from overview.models.operations import PeriodicRun
from overview.models.problems import (
    VERSION_WIDE_KINDS,
    Override,
    OverrideQuerySet,
    Problem,
    ProblemKind,
    ProblemQuerySet,
)
from overview.models.webhooks import (
    DeliveryStatus,
    EndpointFormat,
    NoticeType,
    WebhookDelivery,
    WebhookEndpoint,
)

__all__ = [
    "Assessment",
    "BucketSystem",
    "BucketVersionStat",
    "CrashCounter",
    "CrashReport",
    "DeliveryStatus",
    "DependentCrashCount",
    "EndpointFormat",
    "ErrorBucket",
    "FleetReport",
    "HourlyCrashCount",
    "Notification",
    "NoticeType",
    "Override",
    "OverrideQuerySet",
    "PeriodicRun",
    "Problem",
    "ProblemKind",
    "ProblemQuerySet",
    "ProblemType",
    "ReceivedCrash",
    "VERSION_WIDE_KINDS",
    "Verdict",
    "VersionSighting",
    "WebhookDelivery",
    "WebhookEndpoint",
]
