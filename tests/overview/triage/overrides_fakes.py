"""Overrides made through the service, with defaults a test can change."""

from __future__ import annotations

from overview.models import ProblemKind
from overview.triage.overrides import override_create
from tests.factories import NOW, ErrorBucketFactory, SourcePackageFactory, UserFactory


def create_override(**kwargs):
    """override_create with a package, a version, a triager and a bucket unless given."""
    defaults = {
        "source_package": kwargs.pop("source_package", None) or SourcePackageFactory(name="tool"),
        "version": "1.0-1ubuntu0.2",
        "kind": ProblemKind.NEW_BUCKET,
        "actor": kwargs.pop("actor", None) or UserFactory(username="tessa"),
        "reason": "crash predates the update",
        "now": NOW,
    }
    defaults.update(kwargs)
    if "bucket" not in defaults:
        defaults["bucket"] = ErrorBucketFactory()
    return override_create(**defaults)
