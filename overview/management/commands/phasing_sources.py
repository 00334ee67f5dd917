"""Say whether each configured source answers, and what it would read or write."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from overview.sources import crash_source
from overview.sources.base import CrashQuery
from packages.models import ACTIVE_STATES, Publication
from packages.sources import publication_source
from packages.sources.base import SourceError


class Command(BaseCommand):
    help = "Check the configured publication and crash sources."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["check"])

    def handle(self, *args, **options) -> None:
        now = timezone.now()
        failed = False
        source = publication_source()
        try:
            releases = source.releases()
            supported = [r.codename for r in releases if r.supported]
            first = (
                next(iter(source.publications(release=supported[0], since=None, now=now)), None)
                if supported
                else None
            )
            self.stdout.write(
                self.style.SUCCESS(
                    f"publications: {source.name} answers; releases {', '.join(supported) or 'none'}"
                )
            )
            if first is not None:
                self.stdout.write(
                    f"  for example {first.source_package} {first.version} at {first.percentage}%"
                )
            mode = (
                "writes percentages"
                if source.can_write
                else "read-only: write-backs are reported as dry runs"
            )
            self.stdout.write(f"  {mode}")
        except (SourceError, IndexError) as exc:
            failed = True
            self.stdout.write(
                self.style.ERROR(f"publications: {source.name} does not answer: {exc}")
            )
        crashes = crash_source()
        sample = (
            Publication.objects.filter(state__in=ACTIVE_STATES)
            .select_related("release", "source_package")
            .first()
        )
        if sample is None:
            self.stdout.write(
                f"crashes: {crashes.name} configured; no publication in phasing to ask about"
            )
        else:
            query = CrashQuery(
                sample.release.codename,
                sample.source_package.name,
                sample.version,
                sample.previous_version,
                sample.phased_update_percentage,
            )
            answer = crashes.problems([query], now=now)[query]
            if answer.error:
                failed = True
                self.stdout.write(self.style.ERROR(f"crashes: {crashes.name}: {answer.error}"))
            else:
                self.stdout.write(
                    self.style.SUCCESS(
                        f"crashes: {crashes.name} answers; {len(answer.problems)} problems for {sample}"
                    )
                )
        if failed:
            raise SystemExit(1)
