"""What a change to a publication is, and what it does to one in memory.

A change is a `Change`, built by one of its named constructors (advanced, halted, paused,
...), so the words of an event are the same whoever makes it: a person in the admin, the
controller, or the sync of a source. `change_applied` checks that the publication's state
allows it, changes the publication in memory and returns its (unsaved) event; the writers
in packages.services.phasing save both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from packages.domain import change_words as words
from packages.domain import policy
from packages.holds import HoldReason
from packages.models import (
    ACTIVE_STATES,
    EventKind,
    PhasingEvent,
    PhasingState,
    Publication,
    WriteBack,
)
from packages.public_names import public_name

CONTROLLER = "controller"

_ANY_STATE = (
    PhasingState.PHASING,
    PhasingState.PAUSED,
    PhasingState.HALTED,
    PhasingState.COMPLETE,
)
# Which states each kind of change may start from.
_ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    EventKind.ADVANCED: (PhasingState.PHASING,),
    EventKind.COMPLETED: (PhasingState.PHASING,),
    EventKind.HALTED: (PhasingState.PHASING, PhasingState.PAUSED, PhasingState.COMPLETE),
    EventKind.PAUSED: (PhasingState.PHASING,),
    EventKind.RESUMED: (PhasingState.PAUSED, PhasingState.HALTED),
    EventKind.SET: _ANY_STATE,
    EventKind.RELEASED: (PhasingState.PHASING, PhasingState.PAUSED, PhasingState.HALTED),
    EventKind.SUPERSEDED: _ANY_STATE,
    EventKind.EXTERNAL: _ANY_STATE,
    # Notes on the updates a release- or package-wide decision touches: no change of
    # percentage or state, but the who, when and why show in their histories and feeds.
    EventKind.FROZEN: ACTIVE_STATES,
    EventKind.UNFROZEN: ACTIVE_STATES,
    EventKind.POLICY: ACTIVE_STATES,
    EventKind.RELEASE: ACTIVE_STATES,
    EventKind.SCHEDULED_CANCELLED: ACTIVE_STATES,
}


# How a refusal names the change: "cannot pause noble foo 1.2: it is halted".
_VERBS: dict[str, str] = {
    EventKind.ADVANCED: "advance",
    EventKind.COMPLETED: "complete",
    EventKind.HALTED: "halt",
    EventKind.PAUSED: "pause",
    EventKind.RESUMED: "resume",
    EventKind.SET: "set the percentage of",
    EventKind.RELEASED: "release",
    EventKind.SUPERSEDED: "supersede",
}


class TransitionError(ValidationError):
    """A change that the publication's state does not allow."""


@dataclass(frozen=True)
class Change:
    kind: str
    percentage: int | None = None
    state: str | None = None
    reason: str = ""
    hold_reason: str | None = None
    hold_detail: str = ""
    # Brought to 100% by the controller for its judge to watch there (Rules.watch_at_full):
    # it stays in phasing.
    watched: bool = False

    @classmethod
    def advanced(
        cls, *, old: int, new: int, why: str = "no problems", complete: bool | None = None
    ) -> Change:
        """One step of the policy; at 100% it completes, unless `complete` is False (its
        judge watches it at 100% first: Rules.watch_at_full)."""
        complete = new >= policy.FULL if complete is None else complete
        kind = EventKind.COMPLETED if complete else EventKind.ADVANCED
        return cls(
            kind,
            percentage=new,
            reason=f"{why}: {words.percentage_change(old, new)}",
            hold_reason=HoldReason.NONE,
            watched=new >= policy.FULL and not complete,
        )

    @classmethod
    def completed(cls) -> Change:
        return cls(EventKind.COMPLETED, state=PhasingState.COMPLETE, reason="at 100%")

    @classmethod
    def halted(cls, *, reason: str, by_person: bool) -> Change:
        """Dial to 0% and halt: on problems (the controller) or pulled (a person)."""
        return cls(
            EventKind.HALTED,
            percentage=0,
            state=PhasingState.HALTED,
            reason=reason if by_person else f"halted on problems: {reason}",
            hold_reason=HoldReason.PULLED if by_person else HoldReason.PROBLEMS,
            hold_detail=reason,
        )

    @classmethod
    def superseded(cls, *, by_version: str | None, deleted: bool = False) -> Change:
        if by_version:
            reason = f"superseded by {by_version}"
        else:
            reason = "deleted at the source" if deleted else "superseded at the source"
        return cls(
            EventKind.SUPERSEDED,
            state=PhasingState.SUPERSEDED,
            reason=reason,
            hold_reason=HoldReason.NONE,
        )

    @classmethod
    def security_released(cls) -> Change:
        """A version also published in -security reaches everyone: apt never phases it
        (apt-pkg/pkgcache.cc IsSecurityUpdate), and a percentage left on it kept machines
        with apt before 2.7.11 (2.4.12 on 22.04) from the fix (LP #2051181)."""
        return cls(
            EventKind.RELEASED,
            percentage=policy.FULL,
            state=PhasingState.COMPLETE,
            reason="also published in -security, which apt never phases: released to everyone",
            hold_reason=HoldReason.NONE,
        )

    @classmethod
    def note(cls, kind: str, *, reason: str) -> Change:
        """A decision that touches the update without changing it (freeze, policy)."""
        return cls(kind, reason=reason)


def _actor_name(actor: User | None, actor_name: str | None) -> str:
    if actor_name:
        return actor_name
    # Events are public (pages, feeds, the API): the display name or the role, never a
    # login name; the event's `actor` keeps who it was for the admin.
    return public_name(actor) if actor is not None else CONTROLLER


def change_applied(
    publication: Publication,
    change: Change,
    *,
    now: datetime,
    actor: User | None,
    actor_name: str | None,
) -> PhasingEvent:
    """Change the publication in memory and return its (unsaved) event."""
    if publication.state not in _ALLOWED_FROM[change.kind]:
        verb = _VERBS.get(change.kind, f"record '{EventKind(change.kind).label.lower()}' on")
        raise TransitionError(
            f"cannot {verb} {publication}: it is {publication.get_state_display().lower()}"
        )
    new_percentage = (
        publication.phased_update_percentage if change.percentage is None else change.percentage
    )
    if not 0 <= new_percentage <= 100:
        raise TransitionError(f"a percentage is 0..100, not {new_percentage}")
    if publication.in_security and new_percentage < policy.FULL:
        raise TransitionError(
            f"cannot phase {publication}: it is also published in -security, which apt never "
            "phases; a percentage on it keeps machines with apt before 2.7.11 (2.4.12 on "
            "22.04) from a security fix (LP #2051181)"
        )
    new_state = change.state or publication.state
    # A change that brings an update in phasing to 100% completes it, unless it is brought
    # there for its judge to watch (Change.watched). One that leaves it at 100% (a note, a
    # person's resume of a pause) leaves it watched: the controller completes it.
    if (
        new_state == PhasingState.PHASING
        and new_percentage >= 100
        and publication.phased_update_percentage < 100
        and not change.watched
    ):
        new_state = PhasingState.COMPLETE

    old_percentage, old_state = publication.phased_update_percentage, publication.state
    if new_percentage > old_percentage or change.kind == EventKind.RESUMED:
        publication.last_increase_at = now
    if new_state != old_state:
        publication.state_changed_at = now
    if new_state == PhasingState.HALTED and old_state != PhasingState.HALTED:
        publication.percentage_before_halt = old_percentage
    elif new_state != PhasingState.HALTED:
        publication.percentage_before_halt = None
    if new_state == PhasingState.COMPLETE and old_state != PhasingState.COMPLETE:
        publication.completed_at = now
    elif new_state != PhasingState.COMPLETE:
        publication.completed_at = None
    publication.phased_update_percentage = new_percentage
    publication.state = new_state
    if change.hold_reason is not None:
        publication.hold_reason = change.hold_reason
        publication.hold_detail = change.hold_detail[:500]
    elif new_state == PhasingState.PAUSED:
        publication.hold_reason, publication.hold_detail = HoldReason.PAUSED, change.reason[:500]
    elif new_state in (PhasingState.PHASING, PhasingState.COMPLETE, PhasingState.SUPERSEDED):
        publication.hold_reason, publication.hold_detail = HoldReason.NONE, ""

    needs_write = new_percentage != old_percentage and change.kind != EventKind.EXTERNAL
    return PhasingEvent(
        publication=publication,
        created_at=now,
        kind=change.kind,
        old_percentage=old_percentage,
        new_percentage=new_percentage,
        old_state=old_state,
        new_state=new_state,
        actor=actor,
        actor_name=_actor_name(actor, actor_name),
        reason=change.reason,
        write_back=WriteBack.PENDING if needs_write else WriteBack.NOT_NEEDED,
    )


__all__ = ["CONTROLLER", "Change", "TransitionError", "change_applied"]
