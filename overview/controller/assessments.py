"""Each update's current verdict and evidence, as the controller's tick found them."""

from __future__ import annotations

from collections.abc import Sequence

from overview.models import Assessment
from packages.services import bulk

_FIELDS = tuple(f.name for f in Assessment._meta.concrete_fields if f.name != "publication")
# What the tick found: an assessment found the same again is not written (its assessed_at
# stays the tick that found it), so a tick writes the assessments that changed.
_FOUND = tuple(name for name in _FIELDS if name != "assessed_at")


def assessments_record(assessments: Sequence[Assessment]) -> None:
    """Insert the assessments of these publications, or replace those that changed, in one
    statement."""
    bulk.rows_upsert(
        Assessment,
        assessments,
        unique_fields=("publication",),
        update_fields=_FIELDS,
        compared_fields=_FOUND,
    )
