"""How the public pages, the API and the feeds word durations, times and what happens next.

Plain functions: the template tags register them as filters, the tables and the API call
them, so every place says the same words.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from overview.controller.rule import Action
from overview.models import Assessment, Problem, ProblemKind
from overview.pages.outlook import Outlook
from overview.pages.selectors import Averted, ReleaseSummary
from overview.pages.words import plural
from packages.holds import HoldReason, hold_words


def duration_words(delta: timedelta) -> str:
    """'2 h 10 min', '45 min', '3 d 4 h': short enough for a table cell."""
    minutes = max(int(delta.total_seconds() // 60), 0)
    if minutes < 1:
        return "less than a minute"
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def age(moment: datetime | None, now: datetime) -> str:
    """'5 h ago', '11 d ago': how old, to the largest whole unit."""
    if moment is None:
        return ""
    seconds = (now - moment).total_seconds()
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def time_until(moment: datetime | None, now: datetime) -> str:
    """'in 2 h 10 min', or 'at the next run' for a step already due."""
    if moment is None:
        return ""
    if moment - now < timedelta(minutes=1):
        return "at the next run"
    return f"in {duration_words(moment - now)}"


def about_duration(delta: timedelta) -> str:
    """'about 26 h', 'about 4 days': for estimates a tick or two may shift."""
    hours = delta.total_seconds() / 3600
    if hours < 1:
        return "less than an hour"
    if hours < 72:
        return f"about {round(hours)} h"
    return f"about {round(hours / 24)} days"


def utc_time(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def outlook_lines(outlook: Outlook) -> list[str]:
    """What happens next to an update, as one or two short lines."""
    if outlook.next == Action.ADVANCE:
        assert outlook.next_at is not None
        wait = outlook.next_at - outlook.now
        if wait <= timedelta(0):
            first = f"→ {outlook.next_percentage}% at the next run"
        else:
            first = f"→ {outlook.next_percentage}% in {duration_words(wait)}"
        lines = [first]
        if outlook.full_at is not None and outlook.next_percentage != 100:
            lines.append(f"100% in {about_duration(outlook.full_at - outlook.now)}")
        return lines
    if outlook.next == Action.COMPLETE:
        return ["complete"]
    if outlook.next == Action.HALT:
        return [f"→ 0% at the next run: halts on {outlook.detail or 'its problems'}"]
    return [_hold_line(outlook)]


def _hold_line(outlook: Outlook) -> str:
    match outlook.hold:
        case HoldReason.PROBLEMS | HoldReason.PULLED:
            return f"halted: {outlook.detail}" if outlook.detail else "halted"
        case HoldReason.PAUSED:
            return f"held: paused by {outlook.detail}" if outlook.detail else "held: paused"
        case HoldReason.CRASH_DATA_UNAVAILABLE:
            since = f" since {utc_time(outlook.since)}" if outlook.since else ""
            return f"held: crash data unavailable{since}"
        case HoldReason.QUIET_WEEKEND:
            return "held: quiet weekend, no update reaches 100% before Monday 12:00 UTC"
        case HoldReason.WAITING if outlook.next_at is not None:
            # At 100% its judge still watches it (Rules.watch_at_full).
            wait = about_duration(outlook.next_at - outlook.now)
            return (
                f"complete in {wait}: still judged at 100% until {utc_time(outlook.next_at)}, "
                "halts on a regression"
            )
        case HoldReason.WAITING:
            return f"stays at {outlook.percentage}%: the policy's ceiling"
        case HoldReason.DEPENDENCY:
            return hold_words(outlook.hold, outlook.detail)
        case HoldReason.RELEASE_FROZEN | HoldReason.NOT_ENOUGH_DATA:
            return f"held: {hold_words(outlook.hold)}"
    return f"held: {hold_words(outlook.hold, outlook.detail)}"


def outlook_text(outlook: Outlook) -> str:
    return "; ".join(outlook_lines(outlook))


def summary_words(summary: ReleaseSummary) -> str:
    """'3 at 90%, 5 at 80%, 2 at 0%', highest percentage first."""
    return ", ".join(f"{count} at {percentage}%" for percentage, count in summary.counts)


def summary_holds(summary: ReleaseSummary) -> str:
    """'2 halted, 1 paused': the updates of a release a person has to look at."""
    parts = [f"{summary.halted} halted"] if summary.halted else []
    if summary.paused:
        parts.append(f"{summary.paused} paused")
    return ", ".join(parts)


# The verdicts as people read them (the overview's words, overview/pages/words.py).
_VERDICT_LABELS = {"regressed": "Regressed", "healthy": "No rise seen"}


def verdict_label(assessment: Assessment | None) -> str:
    """'Regressed', 'No rise seen', 'Too little data yet', or '—' before the first tick."""
    if assessment is None:
        return "—"
    return _VERDICT_LABELS.get(assessment.verdict, "Too little data yet")


def share_line(assessment: Assessment | None) -> str:
    """The share of machines on the new version beside the target percentage: 'about 21%
    running it (measured)', as the Snap Store shows '21 → 30 %'."""
    if assessment is None or not assessment.sightings and assessment.share <= 0:
        return ""
    how = "measured" if assessment.share_measured else "modelled"
    return f"about {round(100 * assessment.share)}% running it ({how})"


def averted_words(averted: Averted) -> str:
    """'Halts in the last 30 days spared about 4,200 crashes (3 updates, ...)', or why
    there is no estimate: no halt, or halts without the crash rates to estimate from."""
    if not averted.halted:
        return f"No update was halted in the last {averted.days} days."
    if not averted.halts:
        halted = plural(averted.halted, "update was", "updates were")
        return (
            f"{halted} halted in the last {averted.days} days; "
            "none yet has the crash rates to estimate what its halt spared."
        )
    more = averted.halted - averted.halts
    updates = plural(averted.halts, "update")
    return (
        f"Halts in the last {averted.days} days spared about {averted.crashes:,.0f} crashes "
        f"({updates}, had each gone on to 100% for {averted.period} days"
        + (f"; {plural(more, 'other halt')} without an estimate yet" if more else "")
        + ")."
    )


def problem_counts(problem: Problem) -> str:
    """What a problem's counts are, by its kind: '12 reports from 5 systems' (a bucket),
    '40 crash events on this version' (its rate), '40 crash events of its dependents with
    this version' (a library's dependents): never '40 reports from 0 systems'."""
    if problem.kind == ProblemKind.DEPENDENTS:
        return f"{plural(problem.report_count, 'crash event')} of its dependents with this version"
    if problem.kind == ProblemKind.INCREASED_RATE:
        return f"{plural(problem.report_count, 'crash event')} on this version"
    return f"{plural(problem.report_count, 'report')} from {plural(problem.system_count, 'system')}"
