"""What happens next to each update on the pages: the controller's one rule
(overview.controller.rule) asked with what the page knows of the update."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from overview.controller import rule
from overview.controller.halting import halting_problems
from overview.controller.rule import Action
from overview.pages.selectors import PublicationInPhasing, problem_views
from packages.domain import policy as policy_rules
from packages.holds import HoldReason
from packages.models import (
    ACTIVE_STATES,
    EventKind,
    PhasingState,
)


@dataclass(frozen=True)
class Outlook:
    """What happens next to one update: it advances, it is complete, or it holds for a
    HoldReason. Worded by overview.pages.wording.outlook_lines."""

    next: Action
    now: datetime
    percentage: int
    hold: HoldReason = HoldReason.NONE
    detail: str = ""
    next_percentage: int | None = None
    next_at: datetime | None = None
    full_at: datetime | None = None
    since: datetime | None = None

    @property
    def kind(self) -> str:
        """'advance', 'complete', 'halt', or the hold reason (the API's next_step.kind)."""
        return self.hold.value if self.next == Action.HOLD else self.next.value


def _halt_detail(publication: PublicationInPhasing) -> str:
    blocking = [view.title for view in problem_views(publication) if not view.overridden]
    if blocking:
        return ", ".join(dict.fromkeys(blocking))
    last_halt = next((e for e in publication.hold_events if e.kind == EventKind.HALTED), None)
    if last_halt is not None and last_halt.actor_name != "controller":
        return f"by {last_halt.actor_name}" + (f": {last_halt.reason}" if last_halt.reason else "")
    return publication.hold_detail or (last_halt.reason if last_halt else "")


def _pause_actor(publication: PublicationInPhasing) -> str:
    last_pause = next((e for e in publication.hold_events if e.kind == EventKind.PAUSED), None)
    if last_pause is not None:
        return last_pause.actor_name
    return publication.hold_detail


# Holds the last tick found from what only it reads; the page passes them to the rule.
_TICK_ONLY_HOLDS = (HoldReason.DEPENDENCY, HoldReason.NOT_ENOUGH_DATA, HoldReason.JUDGE_FAILED)
# Holds the page words from their reason and since when, not from the tick's detail.
_WORDED_BY_REASON = (
    HoldReason.CRASH_DATA_UNAVAILABLE,
    HoldReason.NOT_ENOUGH_DATA,
    HoldReason.QUIET_WEEKEND,
)


def publication_outlook(
    publication: PublicationInPhasing, *, rules: policy_rules.Rules, now: datetime
) -> Outlook:
    """What the controller's rule (overview.controller.rule) does next to this update, on
    what the page knows of it: its stored state, problems and the last tick's holds."""
    percentage = publication.phased_update_percentage
    if publication.state not in ACTIVE_STATES:
        return Outlook(Action.COMPLETE, now, percentage)
    views = problem_views(publication)
    blocking = halting_problems(publication.state, [view.problem for view in views])
    titles = list(dict.fromkeys(str(problem) for problem in blocking))
    stored = publication.hold_reason
    decision = rule.decide(
        rule.facts_of(publication),
        rule.Evidence(
            unknown_version=publication.hold_detail if stored == HoldReason.UNKNOWN_VERSION else "",
            error="crash data unavailable" if publication.crash_data_unavailable_since else "",
            blocking=tuple(titles),
            unresolved=sum(1 for view in views if not view.overridden),
            held=stored if stored in _TICK_ONLY_HOLDS else "",
            held_detail=publication.hold_detail,
        ),
        rules,
        now,
    )
    if decision.action == Action.HALT:
        return Outlook(
            Action.HALT, now, percentage, hold=HoldReason.PROBLEMS, detail=", ".join(titles)
        )
    reason = HoldReason(decision.hold or HoldReason.NONE)
    if decision.action == Action.HOLD and reason != HoldReason.WAITING:
        return _held(publication, reason, decision.detail, now)
    if decision.action == Action.COMPLETE and decision.new_percentage == percentage:
        return Outlook(Action.COMPLETE, now, percentage)  # its watch at 100% is over
    if decision.action == Action.HOLD and percentage >= policy_rules.FULL:
        # At 100% its judge still watches it (Rules.watch_at_full): complete at next_at.
        return Outlook(
            Action.HOLD,
            now,
            percentage,
            hold=HoldReason.WAITING,
            detail=decision.detail,
            next_at=decision.next_at,
        )
    steps = policy_rules.projected_steps(
        rules,
        percentage=percentage,
        last_increase_at=publication.last_increase_at or publication.date_published,
        now=now,
    )
    if not steps:
        return Outlook(
            Action.HOLD,
            now,
            percentage,
            hold=HoldReason.WAITING,
            detail=f"at the policy's ceiling of {percentage}%",
        )
    next_at, next_percentage = steps[0]
    full_at = next((at for at, value in steps if value >= policy_rules.FULL), None)
    return Outlook(
        Action.ADVANCE,
        now,
        percentage,
        next_percentage=next_percentage,
        next_at=next_at,
        full_at=full_at,
    )


def _held(
    publication: PublicationInPhasing, reason: HoldReason, detail: str, now: datetime
) -> Outlook:
    """A hold, said as the pages say it: who halted or paused, since when data is missing."""
    percentage = publication.phased_update_percentage
    if publication.state == PhasingState.HALTED:
        if reason not in (HoldReason.PROBLEMS, HoldReason.PULLED):
            reason = HoldReason.PROBLEMS  # an outage since the halt keeps the halt's reason
        detail = _halt_detail(publication)
    elif reason == HoldReason.PAUSED:
        detail = _pause_actor(publication)
    elif reason in _WORDED_BY_REASON:
        detail = ""
    since = publication.crash_data_unavailable_since if reason in _WORDED_BY_REASON else None
    return Outlook(Action.HOLD, now, percentage, hold=reason, detail=detail, since=since)
