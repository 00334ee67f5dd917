"""The controller's rule: what happens to one update next, from its facts, its evidence, its
policy and the time. A pure function: the tick acts on its answer, and the pages'
"what happens next" shows the same answer, so a page never promises what the tick refuses.

Plain Python (no Django, no queries). The order is the design's: hold on missing crash
data, halt on a problem no override covers, hold what a person paused or the controller
halted, hold a frozen release, else step by the policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from packages.domain import policy as policy_rules

PHASING, PAUSED, HALTED = "phasing", "paused", "halted"

# Hold reasons, as packages.holds.HoldReason spells them (that enum is a Django choice).
PROBLEMS = "problems"
UNKNOWN_VERSION = "unknown_version"
CRASH_DATA_UNAVAILABLE = "crash_data_unavailable"
PAUSED_BY_PERSON = "paused"
RELEASE_FROZEN = "release_frozen"
WAITING = "waiting"
NOT_ENOUGH_DATA = "not_enough_data"
QUIET_WEEKEND = "quiet_weekend"
INSUFFICIENT = "insufficient"
JUDGE_FAILED = "judge_failed"


class Action(StrEnum):
    ADVANCE = "advance"
    COMPLETE = "complete"
    HALT = "halt"
    HOLD = "hold"
    RESUME = "resume"  # a policy's auto-resume of a halt whose checks are clean again


@dataclass(frozen=True)
class Facts:
    """What the rule reads of one update in phasing, paused or halted."""

    state: str
    percentage: int
    last_increase_at: datetime
    hold_reason: str = ""
    hold_detail: str = ""
    frozen: bool = False
    frozen_reason: str = ""
    previous_version: str = ""
    crash_data_unavailable_since: datetime | None = None
    percentage_before_halt: int = 0


@dataclass(frozen=True)
class Evidence:
    """What the crash data says of it: whether it could be read, the problems that halt it
    (halting.halting_problems applied), and what the policy's gates read."""

    unknown_version: str = ""  # the tracker does not know this version (lasts)
    error: str = ""  # crash data could not be read
    blocking: tuple[str, ...] = ()  # how each problem no override covers is said
    unresolved: int = 0  # problems no override covers, whatever the state
    overridden: int = 0
    previous_reports: int | None = None  # None: the source cannot count them
    verdict: str = ""
    verdict_words: str = ""
    # A hold the last tick found from what only it reads (what an update needs, the
    # policy's data gates): the pages pass it on, the tick finds its own.
    held: str = ""
    held_detail: str = ""
    # The sequential judge failed for this update: no silent fallback to another judge.
    judge_error: str = ""


@dataclass(frozen=True)
class Decision:
    action: Action
    percentage: int
    new_percentage: int
    hold: str = ""
    detail: str = ""
    # When it waits for its next step: which, and when (the pages' "next step at").
    next_percentage: int | None = None
    next_at: datetime | None = None

    @property
    def halts(self) -> bool:
        return self.action == Action.HALT


def facts_of(publication: Any) -> Facts:
    """What the rule reads of a publication (a packages.models.Publication with its release),
    the same for the tick and the pages."""
    return Facts(
        state=publication.state,
        percentage=publication.phased_update_percentage,
        last_increase_at=publication.last_increase_at or publication.date_published,
        hold_reason=publication.hold_reason,
        hold_detail=publication.hold_detail,
        frozen=publication.release.frozen,
        frozen_reason=publication.release.frozen_reason,
        previous_version=publication.previous_version,
        crash_data_unavailable_since=publication.crash_data_unavailable_since,
        percentage_before_halt=publication.percentage_before_halt or 0,
    )


def _hold(facts: Facts, reason: str, detail: str = "", **when: object) -> Decision:
    return Decision(
        Action.HOLD,
        facts.percentage,
        facts.percentage,
        reason,
        detail,
        **when,  # type: ignore[arg-type]
    )


def _kept(facts: Facts) -> Decision:
    """A person's pause or a halt keeps its own reason whatever the crash data does."""
    return _hold(facts, facts.hold_reason or PROBLEMS, facts.hold_detail)


def decide(facts: Facts, evidence: Evidence, rules: policy_rules.Rules, now: datetime) -> Decision:
    decision = _decide(facts, evidence, rules, now)
    if evidence.judge_error and facts.state == PHASING and not decision.halts:
        return _hold(facts, JUDGE_FAILED, evidence.judge_error)
    return decision


def _decide(facts: Facts, evidence: Evidence, rules: policy_rules.Rules, now: datetime) -> Decision:
    percentage = facts.percentage

    # A version the error tracker does not know (a 404, which lasts): the policy holds it,
    # or judges it on the reports held here (the evidence then carries those).
    if evidence.unknown_version and rules.unknown_version != "local":
        if facts.state != PHASING:
            return _kept(facts)
        return _hold(facts, UNKNOWN_VERSION, evidence.unknown_version)
    if evidence.error:
        if facts.state != PHASING:
            return _kept(facts)
        since = facts.crash_data_unavailable_since or now
        return _hold(
            facts, CRASH_DATA_UNAVAILABLE, f"{evidence.error} (since {since:%Y-%m-%d %H:%M} UTC)"
        )
    if evidence.blocking and facts.state in (PHASING, PAUSED):
        return Decision(Action.HALT, percentage, 0, PROBLEMS, "; ".join(evidence.blocking))
    if facts.state == PAUSED:
        return _hold(facts, PAUSED_BY_PERSON, facts.hold_detail or "paused by a person")
    if facts.state == HALTED:
        if rules.auto_resume and not evidence.unresolved and facts.hold_reason in (PROBLEMS, ""):
            return _auto_resumed(facts, rules)
        return _kept(facts)
    if facts.frozen:
        return _hold(facts, RELEASE_FROZEN, facts.frozen_reason)
    return _step(facts, evidence, rules, now)


def _auto_resumed(facts: Facts, rules: policy_rules.Rules) -> Decision:
    """Ubuntu's phased-updater on a halted update whose checks are clean again: on at one
    step above the last percentage before the halt (its ``max_pup + PUP_INCREMENT``)."""
    before = facts.percentage_before_halt
    target = policy_rules.next_percentage(rules, before) or before
    detail = (
        f"checks clean again: resumed by the policy's auto-resume at {target}% "
        f"(halted at {before}%)"
    )
    return Decision(Action.RESUME, facts.percentage, target, detail=detail)


def _step(facts: Facts, evidence: Evidence, rules: policy_rules.Rules, now: datetime) -> Decision:
    """The policy's next step, once every gate of the policy lets it through."""
    percentage = facts.percentage
    if evidence.held:
        return _hold(facts, evidence.held, evidence.held_detail)
    target = policy_rules.next_percentage(rules, percentage)
    if target is None:
        if percentage >= policy_rules.FULL:
            return _at_full(facts, rules, now)
        return _hold(facts, WAITING, f"at the policy's ceiling of {rules.ceiling}%")
    last = facts.last_increase_at
    due = last + rules.interval
    if now < due:
        return _hold(
            facts,
            WAITING,
            f"→ {target}% at {due:%Y-%m-%d %H:%M} UTC",
            next_percentage=target,
            next_at=due,
        )
    if rules.min_time_at_percentage and now - last < rules.min_time_at_percentage:
        return _hold(
            facts, NOT_ENOUGH_DATA, f"less than {rules.min_time_at_percentage} at {percentage}%"
        )
    if (
        rules.min_previous_reports
        and evidence.previous_reports is not None
        and evidence.previous_reports < rules.min_previous_reports
    ):
        return _hold(
            facts,
            NOT_ENOUGH_DATA,
            f"{evidence.previous_reports or 0} reports of "
            f"{facts.previous_version or 'the previous version'}, "
            f"policy wants {rules.min_previous_reports} to compare with",
        )
    gate = rules.insufficient_gate
    if (
        gate is not None
        and percentage >= gate
        and evidence.verdict == INSUFFICIENT
        and now - last < rules.insufficient_max_hold
    ):
        until = last + rules.insufficient_max_hold
        return _hold(
            facts,
            NOT_ENOUGH_DATA,
            f"{evidence.verdict_words}; the policy holds at {gate}% until the verdict is "
            f"healthy, at most until {until:%Y-%m-%d %H:%M} UTC",
        )
    if rules.quiet_weekend and target >= policy_rules.FULL and policy_rules.in_quiet_weekend(now):
        return _hold(facts, QUIET_WEEKEND, "100% waits until Monday 12:00 UTC")
    detail = (
        "no problems"
        if not evidence.overridden
        else f"{evidence.overridden} overridden problem{'s' if evidence.overridden != 1 else ''}"
    )
    # An update its judge watches at 100% reaches it in phasing, complete after the watch.
    complete = target >= policy_rules.FULL and not rules.watches_at_full
    action = Action.COMPLETE if complete else Action.ADVANCE
    return Decision(action, percentage, target, detail=detail)


def _at_full(facts: Facts, rules: policy_rules.Rules, now: datetime) -> Decision:
    """At 100%: complete, once the judge's watch there (Rules.watch_at_full) is over."""
    until = rules.watched_until(facts.last_increase_at)
    if until is not None and now < until:
        return _hold(
            facts,
            WAITING,
            f"at 100%, still judged until {until:%Y-%m-%d %H:%M} UTC",
            next_at=until,
        )
    return Decision(Action.COMPLETE, facts.percentage, facts.percentage, detail="at 100%")
