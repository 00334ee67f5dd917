"""What one tick does to one update: the controller rule's answer for it, as the outcome
people read and the change the tick writes (or a hold with its reason)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from overview.controller import rule
from overview.controller.halting import halting_problems
from overview.controller.rule import Action
from overview.evidence.sources.base import (
    CrashAnswer,
)
from overview.judges import verdicts
from overview.models import Problem
from packages.domain import policy as policy_rules
from packages.holds import HoldReason, hold_words
from packages.models import (
    EventKind,
    PhasingState,
    Publication,
)
from packages.services.changes import Change


@dataclass(frozen=True)
class TickOutcome:
    """What one tick did (or, in a dry run, would do) to one update, for people to read."""

    publication_id: int
    label: str
    action: Action
    detail: str
    old_percentage: int
    new_percentage: int
    hold_reason: str = ""

    def __str__(self) -> str:
        if self.action in (Action.ADVANCE, Action.COMPLETE):
            return f"{self.label}: {self.action} {self.old_percentage}→{self.new_percentage} ({self.detail})"
        return f"{self.label}: {self.action}: {self.detail}"


def label_of(publication: Publication) -> str:
    return f"{publication.release.codename} {publication.source_package.name} {publication.version}"


def failed(publication: Publication, exc: Exception) -> TickOutcome:
    return hold_outcome(publication, HoldReason.CONTROLLER_ERROR, f"{type(exc).__name__}: {exc}")[0]


def hold_outcome(
    publication: Publication, reason: str, detail: str
) -> tuple[TickOutcome, None, list[Problem]]:
    publication.hold_reason, publication.hold_detail = reason, detail[:500]
    decision = TickOutcome(
        publication.pk,
        label_of(publication),
        Action.HOLD,
        hold_words(reason, detail),
        publication.phased_update_percentage,
        publication.phased_update_percentage,
        reason,
    )
    return decision, None, []


def outcome_of(
    publication: Publication,
    rules: policy_rules.Rules,
    answer: CrashAnswer,
    problems: list[Problem],
    verdict: tuple[str, str],
    now: datetime,
    judge_error: str = "",
) -> tuple[TickOutcome, Change | None, list[Problem]]:
    """The rule's answer for one locked publication, as the change the tick writes."""
    if answer.unknown_version or not answer.error:
        publication.crash_data_unavailable_since = None
    elif publication.crash_data_unavailable_since is None:
        publication.crash_data_unavailable_since = now
    blocking = halting_problems(publication.state, problems)
    decision = rule.decide(
        rule.facts_of(publication),
        rule.Evidence(
            unknown_version=answer.unknown_version,
            error=answer.error,
            blocking=tuple(verdicts.describe_problem(p) for p in blocking),
            unresolved=sum(1 for p in problems if not p.is_overridden),
            overridden=sum(1 for p in problems if p.is_overridden),
            previous_reports=answer.previous_reports,
            judge_error=judge_error,
            verdict=verdict[0],
            verdict_words=verdict[1],
        ),
        rules,
        now,
    )
    if decision.action == rule.Action.HOLD:
        return hold_outcome(publication, decision.hold, decision.detail)
    outcome = TickOutcome(
        publication.pk,
        label_of(publication),
        decision.action,
        decision.detail,
        decision.percentage,
        decision.new_percentage,
        decision.hold,
    )
    if decision.action == rule.Action.HALT:
        return outcome, Change.halted(reason=decision.detail, by_person=False), blocking
    if decision.action == rule.Action.RESUME:
        resumed = Change(
            EventKind.RESUMED,
            percentage=decision.new_percentage,
            state=PhasingState.PHASING,
            reason=decision.detail,
            hold_reason=HoldReason.NONE,
            # Resumed at 100% (halted there while watched): watched again from now.
            watched=rules.watches_at_full,
        )
        return replace(outcome, action=Action.ADVANCE), resumed, []
    if decision.new_percentage == decision.percentage:
        return outcome, Change.completed(), []
    change = Change.advanced(
        old=decision.percentage,
        new=decision.new_percentage,
        why=decision.detail,
        complete=decision.action == rule.Action.COMPLETE,
    )
    return outcome, change, []
