"""Each update's current verdict and evidence, as the controller's tick found them."""

from __future__ import annotations

from collections.abc import Sequence

from overview.models import Assessment
from packages.services import bulk

_FIELDS = tuple(f.name for f in Assessment._meta.concrete_fields if f.name != "publication")


def assessments_record(assessments: Sequence[Assessment]) -> None:
    """Insert or replace the assessments of these publications, in one statement."""
    bulk.rows_upsert(Assessment, assessments, unique_fields=("publication",), update_fields=_FIELDS)
