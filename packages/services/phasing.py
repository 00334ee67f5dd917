"""The one writer of phasing events: every change of percentage or state goes through here.

A change is a `Change` (packages.services.changes, with what it does to a publication).
`publication_transition` applies one change to one
publication under a row lock; `publications_apply` applies many to rows the caller has
locked (the controller's tick, the sync), in a fixed number of queries. Both write the
PhasingEvent in the same transaction and queue the write-back to the publication source
after commit. People's actions (packages.services.rollouts) call publication_transition.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from packages.models import (
    ACTIVE_STATES,
    ArchiveStatus,
    EventKind,
    PhasingEvent,
    Publication,
)
from packages.services.announcements import PHASING_EVENTS, announce
from packages.services.bulk import publications_save
from packages.services.changes import Change, TransitionError, change_applied
from packages.services.writeback import queue_write_back

log = logging.getLogger(__name__)

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
        event = change_applied(locked, change, now=now, actor=actor, actor_name=actor_name)
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
            event = change_applied(publication, change, now=now, actor=actor, actor_name=actor_name)
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
    "HOLD_FIELDS",
    "publication_transition",
    "publications_apply",
    "publications_hold",
    "publications_note",
    "publications_publish",
    "publications_supersede",
]
