"""Ask each configured source again, and print one table: does it answer, may we change
phasing there, how fresh is its data, and its last error."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from overview.evidence.sources.base import CrashQuery
from overview.judges.crash_source import crash_source
from overview.pages.source_statuses import SourceStatus, source_status
from packages.models import ACTIVE_STATES, Publication, SourceSync
from packages.services.source_status import source_write_permission_record
from packages.sources import publication_source
from packages.sources.base import SourceError

COLUMNS = ("source", "answers", "permission to change phasing", "freshness", "last error")


class Command(BaseCommand):
    help = "Check the configured publication and crash sources: one line each."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["check"])

    def handle(self, *args, **options) -> None:
        now = timezone.now()
        rows = [self._publications(now), self._crashes(now)]
        widths = [
            max(len(COLUMNS[i]), *(len(_cells(row)[i]) for row in rows))
            for i in range(len(COLUMNS))
        ]
        self.stdout.write("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True)))
        for row in rows:
            line = "  ".join(c.ljust(w) for c, w in zip(_cells(row), widths, strict=True))
            self.stdout.write(self.style.ERROR(line) if row.problem else line)
        if any(row.problem for row in rows):
            raise SystemExit(1)

    def _stored(self, name: str, kind: str, now) -> SourceStatus:
        sync = SourceSync.objects.filter(name=f"{name}:{kind}").first() or SourceSync(
            name=f"{name}:{kind}", kind=kind
        )
        return source_status(sync, now=now, max_age=settings.PHASING_CRASH_DATA_MAX_AGE)

    def _publications(self, now) -> SourceStatus:
        source = publication_source()
        reachable = "yes"
        try:
            releases = [r.codename for r in source.releases() if r.supported]
            reachable = f"yes: releases {', '.join(releases) or 'none'}"
        except SourceError as exc:
            reachable = f"no: {exc}"
        # Asking changes nothing at the source (each source's check_write says how).
        checked = source.check_write()
        source_write_permission_record(
            source.name, status=checked.status, detail=checked.detail, now=now
        )
        stored = self._stored(source.name, "publications", now)
        permission = (
            f"unknown: {checked.detail}" if checked.status == "failed" else stored.permission
        )
        return SourceStatus(
            name=f"{source.name} (publications)",
            kind="publications",
            reachable=reachable,
            permission=permission,
            freshness=stored.freshness,
            last_error=stored.last_error,
            problem=not reachable.startswith("yes") or checked.status == "denied",
        )

    def _crashes(self, now) -> SourceStatus:
        crashes = crash_source()
        sample = (
            Publication.objects.filter(state__in=ACTIVE_STATES)
            .select_related("release", "source_package")
            .first()
        )
        if sample is None:
            reachable = "not asked: no update in phasing to ask about"
            failed = False
        else:
            query = CrashQuery(
                sample.release.codename,
                sample.source_package.name,
                sample.version,
                sample.previous_version,
                sample.phased_update_percentage,
            )
            answer = crashes.problems([query], now=now)[query]
            failed = bool(answer.error)
            reachable = f"no: {answer.error}" if failed else f"yes: asked about {sample}"
        stored = self._stored(crashes.name, "crashes", now)
        return SourceStatus(
            name=f"{crashes.name} (crashes)",
            kind="crashes",
            reachable=reachable,
            permission="never written",
            freshness=stored.freshness,
            last_error=stored.last_error,
            problem=failed,
        )


def _cells(row: SourceStatus) -> tuple[str, ...]:
    return (row.name, row.reachable, row.permission, row.freshness, row.last_error)
