"""Bring publications and crash reports from the configured sources, with progress."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from overview.evidence.crash_sync import crashes_sync
from overview.judges.crash_source import crash_source
from overview.management.commands.phasing_tick import aware
from packages.services.sync import publications_sync
from packages.sources import publication_source


class Command(BaseCommand):
    help = "Sync publications (and crash reports) from the configured sources."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--source", help="publication source to use instead of the configured one"
        )
        parser.add_argument("--since", help="only what changed since this ISO-8601 moment")
        parser.add_argument("--dry-run", action="store_true", help="count what would change")
        parser.add_argument("--no-crashes", action="store_true", help="skip crash reports")

    def handle(self, *args, **options) -> None:
        since = aware(options["since"]) if options["since"] else None
        source = publication_source(options["source"])
        with tqdm(
            desc=f"publications from {source.name}", unit=" records", file=self.stderr
        ) as bar:
            summary = publications_sync(
                source, since=since, dry_run=options["dry_run"], progress=bar.update
            )
        self.stdout.write(
            f"{source.name}: {summary.new} new, {summary.changed} changed, {summary.superseded} superseded, "
            f"{summary.unchanged} unchanged, {len(summary.errors)} errors"
        )
        for error in summary.errors[:20]:
            self.stdout.write(self.style.WARNING(f"  {error}"))
        if options["no_crashes"] or options["dry_run"]:
            return
        crashes = crash_source()
        with tqdm(
            desc=f"crash reports from {crashes.name}", unit=" reports", file=self.stderr
        ) as bar:
            result = crashes_sync(crashes, since=since, progress=bar.update)
        self.stdout.write(
            f"{crashes.name}: {result['inserted']} new crash reports, {result['duplicates']} known, "
            f"{result['skipped']} skipped"
        )
