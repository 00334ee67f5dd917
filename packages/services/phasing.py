"""The one writer of phasing events: every change of percentage or state goes through here.

A change is a `Change`, built by one of its named constructors (advanced, halted, paused,
...), so the words of an event are the same whoever makes it: a person in the admin, the
controller, or the sync of a source. `publication_transition` applies one change to one
publication under a row lock; `publications_apply` applies many to rows the caller has
locked (the controller's tick, the sync), in a fixed number of queries. Both write the
PhasingEvent in the same transaction and queue the write-back to the publication source
after commit. People's actions (packages.services.rollouts) call publication_transition.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from packages.domain import change_words as words
from packages.domain import policy
from packages.holds import HoldReason
from packages.models import (
    ACTIVE_STATES,
    ArchiveStatus,
    EventKind,
    PhasingEvent,
    PhasingState,
    Publication,
    WriteBack,
)
from packages.public_names import public_name
from packages.services.announcements import PHASING_EVENTS, announce
from packages.services.bulk import publications_save
from packages.services.writeback import queue_write_back

log = logging.getLogger(__name__)

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


def _apply(
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


_SAVED_FIELDS = (
    "phased_update_percentage",
    "state",
    "state_changed_at",
    "last_increase_at",
    "completed_at",
    "hold_reason",
    "hold_detail",
    "crash_data_unavailable_since",
    "status",
    "superseded_by",
    "date_superseded",
    "percentage_before_halt",
)
# What the controller records of a hold at each tick: no event, nothing changed.
HOLD_FIELDS = ("hold_reason", "hold_detail", "crash_data_unavailable_since")


def publication_transition(
    *,
    publication: Publication,
    change: Change | Callable[[Publication], Change],
    actor: User | None = None,
    actor_name: str | None = None,
    now: datetime | None = None,
) -> PhasingEvent:
    """Apply one change to one publication under a row lock, with its event.

    A change that depends on the current state is given as a function of the locked
    row, so it never acts on a stale copy.
    """
    with transaction.atomic():
        locked = Publication.objects.select_for_update().get(pk=publication.pk)
        # The time is taken once the lock is ours: a change that waited for another one
        # is recorded after it, so the history never shows an impossible order.
        now = now or timezone.now()
        if callable(change):
            change = change(locked)
        event = _apply(locked, change, now=now, actor=actor, actor_name=actor_name)
        locked.save(update_fields=_SAVED_FIELDS)
        event.save()
        queue_write_back([event])
        announce(PHASING_EVENTS, [(event.pk, event.kind)])
    for name in _SAVED_FIELDS:
        setattr(publication, name, getattr(locked, name))
    return event


def publications_apply(
    changes: Sequence[tuple[Publication, Change]],
    *,
    now: datetime,
    actor: User | None = None,
    actor_name: str | None = None,
    on_error: Callable[[Publication, TransitionError], None] | None = None,
) -> list[PhasingEvent]:
    """Apply many changes to rows the caller has locked, in a fixed number of queries.

    Must run inside the caller's transaction, on publications fetched with
    select_for_update(); a publication appears at most once. A change the publication's
    state refuses raises, unless `on_error` is given: then that publication is left as it
    was, reported to `on_error`, and the others are changed.
    """
    events = []
    applied = []
    for publication, change in changes:
        try:
            event = _apply(publication, change, now=now, actor=actor, actor_name=actor_name)
        except TransitionError as error:
            if on_error is None:
                raise
            on_error(publication, error)
            continue
        events.append(event)
        applied.append(publication)
    if events:
        publications_save(applied, _SAVED_FIELDS)
        # One statement however many rows (PostgreSQL has no batch limit): a flat tick.
        PhasingEvent.objects.bulk_create(events)
        queue_write_back(events)
        announce(PHASING_EVENTS, [(e.pk, e.kind) for e in events])
    return events


def publications_hold(publications: Sequence[Publication]) -> None:
    """Record why these locked publications hold (no change, so no event)."""
    publications_save(publications, HOLD_FIELDS)


def publications_publish(publications: Sequence[Publication], *, now: datetime, by: str) -> None:
    """Store publications a source showed for the first time, each with its first event."""
    Publication.objects.bulk_create(publications, batch_size=500)
    PhasingEvent.objects.bulk_create(
        [
            PhasingEvent(
                publication=p,
                created_at=now,
                kind=EventKind.PUBLISHED,
                old_percentage=None,
                new_percentage=p.phased_update_percentage,
                old_state="",
                new_state=p.state,
                actor_name=by,
                reason=f"published in {p.release.codename}-{p.pocket}",
            )
            for p in publications
        ],
        batch_size=500,
    )


def publications_supersede(
    replaced: Sequence[tuple[Publication, Publication | None]], *, now: datetime, by: str
) -> list[PhasingEvent]:
    """Mark locked publications superseded (by a newer one, or None: at the source, where
    a publication already marked deleted stays deleted)."""
    changes = []
    for publication, winner in replaced:
        deleted = winner is None and publication.status == ArchiveStatus.DELETED
        publication.status = ArchiveStatus.DELETED if deleted else ArchiveStatus.SUPERSEDED
        publication.superseded_by = winner
        publication.date_superseded = publication.date_superseded or now
        changes.append(
            (
                publication,
                Change.superseded(by_version=winner.version if winner else None, deleted=deleted),
            )
        )
    return publications_apply(changes, now=now, actor_name=by)


def publications_note(
    publications: QuerySet[Publication],
    *,
    kind: str,
    reason: str,
    actor: User | None,
    now: datetime,
) -> list[PhasingEvent]:
    """Record a decision on every active update it touches, in a fixed number of queries
    (by a person, or by the product itself when `actor` is None)."""
    locked = list(
        publications.filter(state__in=ACTIVE_STATES).select_for_update(of=("self",)).order_by("pk")
    )
    return publications_apply(
        [(p, Change.note(kind, reason=reason)) for p in locked], now=now, actor=actor
    )


__all__ = [
    "CONTROLLER",
    "HOLD_FIELDS",
    "Change",
    "TransitionError",
    "publication_transition",
    "publications_apply",
    "publications_hold",
    "publications_note",
    "publications_publish",
    "publications_supersede",
]
