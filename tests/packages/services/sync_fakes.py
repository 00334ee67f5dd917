"""A publication source the test controls."""

from __future__ import annotations

from datetime import UTC, datetime

from packages.sources.base import PublicationRecord, ReleaseRecord, SourceError

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class ListSource:
    """A publication source serving a list the test controls."""

    name = "listed"
    can_write = False

    def __init__(self, records, *, fail_release: str | None = None) -> None:
        self.records = list(records)
        self.fail_release = fail_release
        self.watches = {}  # release -> what the last sync asked to read again

    def releases(self):
        return [ReleaseRecord("noble", "24.04"), ReleaseRecord("jammy", "22.04")]

    def publications(self, *, release, since, now, watch=None):
        self.watches[release] = watch
        if release == self.fail_release:
            raise SourceError("503 from the archive")
        return iter([r for r in self.records if r.release == release])

    def set_percentage(self, **kwargs):
        raise AssertionError("a sync never writes")

    def check_write(self):
        raise AssertionError("a sync never writes")


def record(version="2.0-1ubuntu0.1", **fields) -> PublicationRecord:
    defaults = {
        "release": "noble",
        "source_package": "apport",
        "version": version,
        "date_published": T0,
        "phased_update_percentage": 10,
        "previous_version": "2.0-1ubuntu0",
    }
    return PublicationRecord(**{**defaults, **fields})
