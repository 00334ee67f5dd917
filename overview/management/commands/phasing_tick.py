"""Run one controller tick and say, per publication, what it did (or would do) and why."""

from __future__ import annotations

from datetime import datetime

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from overview.controller import tick as controller
from packages.terminal import terminal_safe


def aware(value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise CommandError(f"--now must be an ISO-8601 date and time, not {value!r}") from exc
    if timezone.is_naive(moment):
        raise CommandError("--now needs a time zone, for example 2026-12-03T12:00:00+00:00")
    return moment


class Command(BaseCommand):
    help = "Advance, hold or halt every update in phasing, once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--now", help="the moment of the tick, ISO-8601 with a time zone")
        parser.add_argument(
            "--dry-run", action="store_true", help="decide and print, change nothing"
        )
        parser.add_argument("--quiet-holds", action="store_true", help="print only changes")

    def handle(self, *args, **options) -> None:
        now = aware(options["now"]) if options["now"] else timezone.now()
        decisions = controller.tick(now=now, dry_run=options["dry_run"])
        # By release, then package (the label starts "codename package version"), so a
        # person reads one release's plan together rather than in the controller's order.
        decisions = sorted(decisions, key=lambda decision: decision.label.split(" "))
        counts: dict[str, int] = {}
        for decision in decisions:
            counts[decision.action] = counts.get(decision.action, 0) + 1
            if decision.action == "hold" and options["quiet_holds"]:
                continue
            style = {
                "halt": self.style.ERROR,
                "advance": self.style.SUCCESS,
                "complete": self.style.SUCCESS,
            }
            # Reasons are people's words: no control character reaches the terminal.
            self.stdout.write(style.get(decision.action, str)(terminal_safe(str(decision))))
        summary = (
            ", ".join(f"{n} {action}" for action, n in sorted(counts.items()))
            or "nothing in phasing"
        )
        prefix = "dry run, nothing changed: " if options["dry_run"] else ""
        self.stdout.write(f"{prefix}{summary} at {now:%Y-%m-%d %H:%M} UTC")
