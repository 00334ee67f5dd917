"""One compact line per update on the overview: what the row template
(templates/overview/_update_lines.html) writes, as plain values built once per row.

Evidence sentences are not here: they belong on the update's own page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils import timezone

from overview.controller.rule import Action
from overview.models import Assessment, Problem
from overview.pages import outlook as outlook_of
from overview.pages import words
from overview.pages.outlook import Outlook
from overview.pages.selectors import PublicationInPhasing
from overview.pages.wording import about_duration, duration_words, utc_time
from packages.domain import policy as policy_rules
from packages.domain.dependencies import Group
from packages.holds import HoldReason
from packages.models import EventKind, PhasingState, ScheduledChange
from packages.selectors import PolicyMap

# At 100 %: just stepped there (no hold yet), or held there while still judged.
_WATCHING = (HoldReason.NONE, HoldReason.WAITING)
# Holds that wait for data, not for a person's decision.
_DATA_HOLDS = (
    HoldReason.CRASH_DATA_UNAVAILABLE,
    HoldReason.UNKNOWN_VERSION,
    HoldReason.NOT_ENOUGH_DATA,
)


@dataclass(frozen=True)
class Scheduled:
    what: str
    when: str
    when_iso: str


@dataclass(frozen=True)
class UpdateLine:
    pk: int
    url: str
    package: str
    version: str
    release: str
    release_version: str
    release_frozen: bool
    release_frozen_reason: str
    percentage: int
    percentage_words: str
    badge: words.Badge
    badge_label: str
    badge_icon: str
    badge_title: str
    next_words: str
    next_title: str
    scheduled: tuple[Scheduled, ...]
    problems: int
    verdict: words.VerdictWords
    exposure: str
    needs: str  # 'needs openssl 3.0.13 (at 10%)' for an update in a dependent group
    notes: tuple[str, ...]  # what the archive holds that contradicts us or hurts machines
    # The line's row as HTML, with and without its release cell, written once
    # (overview.pages.line_rows) and kept with the line.
    rows: dict[bool, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def scheduled_more(self) -> int:
        return max(len(self.scheduled) - 1, 0)


def _short_time(moment: datetime) -> str:
    local = timezone.localtime(moment)
    return f"{local.day} {local:%b %H:%M %Z}"


def badge_of(record: PublicationInPhasing) -> tuple[words.Badge, str]:
    """The badge of an update, and who or what put it there (the badge's title)."""
    hold_events = getattr(record, "hold_events", [])
    if record.state == PhasingState.HALTED:
        last = next((e for e in hold_events if e.kind == EventKind.HALTED), None)
        if last is not None and last.actor_name != "controller":
            return words.Badge.HALTED_BY_PERSON, f"halted by {last.actor_name}"
        return words.Badge.HALTED, "halted by the controller on a problem"
    if record.state == PhasingState.PAUSED:
        last = next((e for e in hold_events if e.kind == EventKind.PAUSED), None)
        return words.Badge.PAUSED, f"paused by {last.actor_name}" if last else "paused"
    if record.state != PhasingState.PHASING:
        return words.Badge.DONE, "at 100 %"
    if record.release.frozen:
        return words.Badge.FROZEN, f"release {record.release.codename} is frozen"
    if record.hold_reason in _DATA_HOLDS:
        return words.Badge.HELD, record.hold_words
    if record.phased_update_percentage >= 100 and record.hold_reason in _WATCHING:
        # Full, yet its judge still watches it (from the step to 100 % on): it can halt,
        # so it is not done. Held there for another reason (a judge that failed, a
        # dependency), it waits like any other.
        return words.Badge.WATCHED, record.hold_words or "still judged at 100 %"
    if record.hold_reason and record.hold_reason != HoldReason.NONE:
        return words.Badge.WAITING, record.hold_words
    return words.Badge.RISING, "rising as its policy says"


def next_words(outlook: Outlook) -> tuple[str, str]:
    """The next step in a few words, and its time in full (a title)."""
    if outlook.next == Action.ADVANCE and outlook.next_at is not None:
        wait = outlook.next_at - outlook.now
        when = "at the next run" if wait <= timedelta(0) else f"in {duration_words(wait)}"
        title = f"{utc_time(outlook.next_at)}"
        if outlook.full_at is not None and outlook.next_percentage != 100:
            title += f"; 100 % in {about_duration(outlook.full_at - outlook.now)}"
        return f"→ {outlook.next_percentage} % {when}", title
    if outlook.next == Action.COMPLETE:
        return "done", ""
    if outlook.next == Action.HALT:
        return "→ 0 % at the next run", f"halts on {outlook.detail or 'its problems'}"
    match outlook.hold:
        case HoldReason.PROBLEMS | HoldReason.PULLED | HoldReason.PAUSED:
            return "waits for a person", ""
        case HoldReason.RELEASE_FROZEN:
            return "waits for unfreeze", "the release is frozen"
        case HoldReason.CRASH_DATA_UNAVAILABLE:
            since = f" since {utc_time(outlook.since)}" if outlook.since else ""
            return "waits for crash data", f"crash data unavailable{since}"
        case HoldReason.NOT_ENOUGH_DATA:
            return "waits for more crash data", ""
        case HoldReason.UNKNOWN_VERSION:
            return "waits for a person", "the error tracker does not know this version"
        case HoldReason.QUIET_WEEKEND:
            return "waits for Monday", "no update reaches 100 % before Monday 12:00 UTC"
        case HoldReason.WAITING if outlook.next_at is not None:
            # At 100 % its judge still watches it: complete at next_at unless it halts.
            wait = outlook.next_at - outlook.now
            return f"still judged, complete in {about_duration(wait)}", (
                f"still judged at 100 % until {utc_time(outlook.next_at)}; halts on a regression"
            )
        case HoldReason.WAITING:
            return f"stays at {outlook.percentage} %", "the policy's ceiling"
        case HoldReason.DEPENDENCY:
            return "waits for an update it needs", outlook.detail
    return "waits", outlook.detail


def crashes_per_day(assessment: Assessment, published: datetime, now: datetime) -> float:
    """Today's traffic as the judge sees it: crash reports of both versions a day since
    publication."""
    days = max((now - published).total_seconds() / 86400, 1 / 24)
    return (assessment.crashes_new + assessment.crashes_old) / days


def halt_words(record: PublicationInPhasing) -> str | None:
    """Who halted a halted update and why ('by ada: a bad postinst', 'by the controller:
    ...'), '' when no event says; None when the update is not halted."""
    if record.state != PhasingState.HALTED:
        return None
    last = next((e for e in getattr(record, "hold_events", []) if e.kind == EventKind.HALTED), None)
    if last is None:
        return ""
    who = "the controller" if last.actor_name == "controller" else last.actor_name
    reason = " ".join((last.reason or "").split())
    return f"by {who}" + (f": {reason}" if reason else "")


def verdict_of(
    record: PublicationInPhasing, rules: policy_rules.Rules, now: datetime
) -> words.VerdictWords:
    assessment: Assessment | None = getattr(record, "assessment", None)
    problems: list[Problem] = record.active_problems
    blocking = [str(p) for p in problems if not p.is_overridden]
    overridden = [
        (getattr(p, "override_by", None) or "", getattr(p, "override_reason", None) or "")
        for p in problems
        if p.is_overridden
    ]
    if assessment is None:
        return words.verdict_words(
            verdict=None,
            judge_sequential=rules.judge == policy_rules.SEQUENTIAL,
            blocking=blocking,
            overridden=overridden,
            crashes=0,
            needed=0,
            crashes_per_day=0.0,
            comparable=False,
        )
    return words.verdict_words(
        verdict=assessment.verdict,
        judge_sequential=assessment.judge == policy_rules.SEQUENTIAL,
        blocking=blocking,
        overridden=overridden,
        crashes=assessment.crashes_new + assessment.crashes_old,
        needed=assessment.crashes_needed,
        crashes_per_day=crashes_per_day(assessment, record.date_published, now),
        comparable=bool(record.previous_version),
        halted=halt_words(record),
    )


def _scheduled(changes: Sequence[ScheduledChange], now: datetime) -> tuple[Scheduled, ...]:
    return tuple(
        Scheduled(
            change.what,
            "needs a sign-off"
            if change.run_at <= now and change.signed_off_by_id is None and change.outcome
            else _short_time(change.run_at),
            change.run_at.isoformat(),
        )
        for change in changes
    )


def _needs(group: Group | None) -> str:
    if group is None or not group.needs:
        return ""
    first = group.needs[0].needed
    state = first.state if first.state in ("halted", "paused") else f"at {first.percentage} %"
    more = f" and {words.plural(len(group.needs) - 1, 'more')}" if len(group.needs) > 1 else ""
    alone = " · its policy lets it phase alone" if group.alone else ""
    return f"needs {first.label} ({state}){more}{alone}"


def update_lines(
    records: Sequence[PublicationInPhasing],
    *,
    policies: PolicyMap,
    groups: Mapping[int, Group],
    scheduled: Sequence[ScheduledChange],
    now: datetime,
) -> list[UpdateLine]:
    """The page's lines, each built once. Reads nothing: the records come with their
    problems, events and assessment, the scheduled changes are the page's."""
    by_publication: dict[int, list[ScheduledChange]] = {}
    for change in scheduled:
        if change.publication_id is not None:
            by_publication.setdefault(change.publication_id, []).append(change)
    lines = []
    for record in records:
        rules = policy_rules.resolve_for(policies, record)
        outlook = outlook_of.publication_outlook(record, rules=rules, now=now)
        badge, badge_title = badge_of(record)
        step, step_title = next_words(outlook)
        assessment: Assessment | None = getattr(record, "assessment", None)
        lines.append(
            UpdateLine(
                pk=record.pk,
                url=record.get_update_url(),
                package=record.source_package.name,
                version=record.version,
                release=record.release.codename,
                release_version=record.release.version,
                release_frozen=record.release.frozen,
                release_frozen_reason=record.release.frozen_reason,
                percentage=record.phased_update_percentage,
                percentage_words=words.percentage_words(
                    record.phased_update_percentage,
                    record.percentage_before_halt,
                    record.state == PhasingState.HALTED,
                ),
                badge=badge,
                badge_label=words.badge_label(badge),
                badge_icon=words.badge_icon(badge),
                badge_title=badge_title,
                next_words=step,
                next_title=step_title,
                scheduled=_scheduled(by_publication.get(record.pk, ()), now),
                problems=record.problem_count,
                verdict=verdict_of(record, rules, now),
                exposure=words.exposure_range(assessment.share_low, assessment.share_high)
                if assessment is not None
                else "",
                needs=_needs(groups.get(record.pk)),
                notes=tuple(record.source_notes()),  # fields of the row: no query
            )
        )
    return lines
