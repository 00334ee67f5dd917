"""List the pending scheduled changes, or run those due (what the periodic task does)."""

from __future__ import annotations

from datetime import datetime

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from packages.models import ScheduledState
from packages.selectors import scheduled_changes
from packages.services.scheduled import scheduled_changes_run_due


class Command(BaseCommand):
    help = "phasing_scheduled list|run [--now ISO-8601]: pending scheduled changes; run those due"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("operation", choices=("list", "run"))
        parser.add_argument("--now", help="ISO 8601 with a zone; default: now")

    def handle(self, *args, operation: str, now: str | None, **options) -> None:
        moment = self._moment(now)
        if operation == "run":
            for change in scheduled_changes_run_due(now=moment):
                self.stdout.write(f"{change}: {change.state}: {change.outcome}")
            return
        for change in scheduled_changes().filter(state=ScheduledState.PENDING):
            waiting = f" ({change.outcome})" if change.outcome else ""
            self.stdout.write(f"{change} by {change.created_by}: {change.reason}{waiting}")

    @staticmethod
    def _moment(text: str | None) -> datetime:
        if text is None:
            return timezone.now()
        moment = parse_datetime(text)
        if moment is None or moment.tzinfo is None:
            raise CommandError(f"--now {text!r} is not an ISO 8601 time with a zone")
        return moment
