"""What a publication's source shows, as facts of one row for the pages: each binary's
percentage, a write read back as something else, binaries that disagree, a version in
-security that carries a percentage, and who is who behind the upload.

A mixin of packages.models.Publication, over its own fields only, so a page that lists
publications pays no query for any of it (people come with select_related).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from django.db import models

from packages.domain import change_words as words


class WritePermission(models.TextChoices):
    """Whether a publication source takes our percentages (packages.models.SourceSync)."""

    UNKNOWN = "", "Not checked yet"
    GRANTED = "granted", "Takes our percentages"
    READ_ONLY = "read_only", "Read-only by configuration"
    DENIED = "denied", "No permission to change phasing"


class _Named(Protocol):
    name: str
    account_name: str


class SourceFacts:
    source_name: str
    source_percentage: int | None
    source_percentages: list[list[Any]]
    in_security: bool
    synced_at: datetime | None
    written_percentage: int | None
    written_at: datetime | None
    signer: _Named | None
    uploader: _Named | None
    sponsor: _Named | None

    @property
    def source_values(self) -> list[int]:
        """Each binary's percentage at the source (100 for none), or the one we know."""
        values = [100 if row[2] is None else row[2] for row in self.source_percentages or ()]
        if not values and self.source_percentage is not None:
            values = [self.source_percentage]
        return values

    @property
    def binaries_disagree(self) -> bool:
        return len(set(self.source_values)) > 1

    @property
    def readback_mismatch(self) -> bool:
        """Read after our last write, the source holds another percentage."""
        if self.written_percentage is None or self.written_at is None or self.synced_at is None:
            return False
        if self.synced_at < self.written_at:
            return False  # not read back yet
        return any(value != self.written_percentage for value in self.source_values)

    @property
    def security_percentage(self) -> int | None:
        """The percentage a version also in -security carries at the source, if any."""
        if not self.in_security:
            return None
        lowest = min(self.source_values, default=100)
        return lowest if lowest < 100 else None

    def source_notes(self) -> list[str]:
        """What the source shows that people must know, worded for the pages."""
        return words.source_notes(
            source=self.source_name,
            written=self.written_percentage if self.readback_mismatch else None,
            read=sorted(set(self.source_values)),
            disagree=self.binaries_disagree,
            security_percentage=self.security_percentage,
        )
