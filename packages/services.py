"""Writes to publications. Every change of percentage or state goes through here.

`publication_transition` is the one entry point for a single publication: it locks the
row, checks the change is allowed, writes the PhasingEvent in the same transaction and
queues the write-back to the publication source after commit. The controller changes
many publications in one tick through `publications_apply`, which shares the same rules
(`_apply`) and saves in bulk. The named services below are what callers use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from packages import policy as policy_rules
from packages.models import (
    ACTIVE_STATES,
    ArchiveStatus,
    EventKind,
    HoldReason,
    PhasingEvent,
    PhasingState,
    Policy,
    Publication,
    Release,
    SourcePackage,
    WriteBack,
)

log = logging.getLogger(__name__)

CONTROLLER = "controller"

# Which states each kind of change may start from.
_ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    EventKind.ADVANCED: (PhasingState.PHASING,),
    EventKind.COMPLETED: (PhasingState.PHASING,),
    EventKind.HALTED: (PhasingState.PHASING, PhasingState.PAUSED, PhasingState.COMPLETE),
    EventKind.PAUSED: (PhasingState.PHASING,),
    EventKind.RESUMED: (PhasingState.PAUSED, PhasingState.HALTED),
    EventKind.SET: (
        PhasingState.PHASING,
        PhasingState.PAUSED,
        PhasingState.HALTED,
        PhasingState.COMPLETE,
    ),
    EventKind.RELEASED: (PhasingState.PHASING, PhasingState.PAUSED, PhasingState.HALTED),
    EventKind.SUPERSEDED: (
        PhasingState.PHASING,
        PhasingState.PAUSED,
        PhasingState.HALTED,
        PhasingState.COMPLETE,
    ),
    EventKind.EXTERNAL: (
        PhasingState.PHASING,
        PhasingState.PAUSED,
        PhasingState.HALTED,
        PhasingState.COMPLETE,
    ),
    # Notes on the updates a release- or package-wide decision touches: no change of
    # percentage or state, but the who, when and why show in their histories and feeds.
    EventKind.FROZEN: ACTIVE_STATES,
    EventKind.UNFROZEN: ACTIVE_STATES,
    EventKind.POLICY: ACTIVE_STATES,
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


def _actor_name(actor: AbstractBaseUser | None, actor_name: str | None) -> str:
    if actor_name:
        return actor_name
    return actor.get_username() if actor is not None else CONTROLLER


def _apply(
    publication: Publication,
    change: Change,
    *,
    now: datetime,
    actor: AbstractBaseUser | None,
    actor_name: str | None,
) -> PhasingEvent:
    """Change the publication in memory and return its (unsaved) event."""
    allowed = _ALLOWED_FROM[change.kind]
    if publication.state not in allowed:
        raise TransitionError(
            f"cannot {EventKind(change.kind).label.lower()} {publication}: it is {publication.state}"
        )
    new_percentage = (
        publication.phased_update_percentage if change.percentage is None else change.percentage
    )
    if not 0 <= new_percentage <= 100:
        raise TransitionError(f"a percentage is 0..100, not {new_percentage}")
    new_state = change.state or publication.state
    if new_state == PhasingState.PHASING and new_percentage >= 100:
        new_state = PhasingState.COMPLETE

    old_percentage, old_state = publication.phased_update_percentage, publication.state
    if new_percentage > old_percentage or change.kind == EventKind.RESUMED:
        publication.last_increase_at = now
    if new_state != old_state:
        publication.state_changed_at = now
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
)


_deferred_write_back: ContextVar[list[int] | None] = ContextVar("deferred_write_back", default=None)


@contextmanager
def write_back_deferred() -> Iterator[list[int]]:
    """Collect the events to write back instead of queueing a task per commit.

    For bulk work (seeding a demo, replaying the past) that writes back once at the end.
    """
    collected: list[int] = []
    token = _deferred_write_back.set(collected)
    try:
        yield collected
    finally:
        _deferred_write_back.reset(token)


def _queue_write_back(events: Iterable[PhasingEvent]) -> None:
    ids = [event.pk for event in events if event.write_back == WriteBack.PENDING]
    if not ids:
        return
    deferred = _deferred_write_back.get()
    if deferred is not None:
        deferred.extend(ids)
        return

    def enqueue() -> None:
        from overview.tasks import write_back_percentages

        write_back_percentages.delay(ids)

    # Robust: a broker that is down must not cancel the other callbacks of the commit
    # (the halt emails); the periodic reconcile writes back whatever was left pending.
    transaction.on_commit(enqueue, robust=True)


def publication_transition(
    *,
    publication: Publication,
    change: Change | Callable[[Publication], Change],
    actor: AbstractBaseUser | None = None,
    actor_name: str | None = None,
    now: datetime | None = None,
) -> PhasingEvent:
    """Apply one change to one publication under a row lock, with its event.

    A change that depends on the current state is given as a function of the locked
    row, so it never acts on a stale copy.
    """
    now = now or timezone.now()
    with transaction.atomic():
        locked = Publication.objects.select_for_update().get(pk=publication.pk)
        if callable(change):
            change = change(locked)
        event = _apply(locked, change, now=now, actor=actor, actor_name=actor_name)
        locked.save(update_fields=_SAVED_FIELDS)
        event.save()
        _queue_write_back([event])
    for name in _SAVED_FIELDS:
        setattr(publication, name, getattr(locked, name))
    return event


def publications_apply(
    changes: Sequence[tuple[Publication, Change]],
    *,
    now: datetime,
    actor: AbstractBaseUser | None = None,
    actor_name: str | None = None,
) -> list[PhasingEvent]:
    """Apply many changes to rows the caller has locked, in a fixed number of queries.

    Must run inside the caller's transaction, on publications fetched with
    select_for_update(); a publication appears at most once.
    """
    events = [
        _apply(publication, change, now=now, actor=actor, actor_name=actor_name)
        for publication, change in changes
    ]
    if events:
        publications_save([p for p, _ in changes], _SAVED_FIELDS)
        PhasingEvent.objects.bulk_create(events, batch_size=500)
        _queue_write_back(events)
    return events


# Field types whose Python values psycopg adapts as they are (aware datetimes included);
# preparing them through the field one by one was a fifth of a large tick's time.
_DRIVER_ADAPTS = frozenset(
    {"CharField", "DateTimeField", "PositiveSmallIntegerField", "BooleanField", "ForeignKey"}
)


def publications_save(publications: Sequence[Publication], fields: Sequence[str]) -> None:
    """Save `fields` of many publications in one statement.

    Django's bulk_update builds a CASE WHEN per field and row, which costs more Python
    time than the database spends on the update; on PostgreSQL one UPDATE ... FROM
    unnest(...) does the same. Callers hold the rows locked.
    """
    if not publications:
        return
    if connection.vendor != "postgresql":
        Publication.objects.bulk_update(publications, fields, batch_size=500)
        return
    meta = Publication._meta
    columns = [meta.get_field(name) for name in fields]
    pk = meta.pk
    types = [pk.rel_db_type(connection)] + [
        (c.rel_db_type(connection) if c.is_relation else c.db_type(connection)) or "text"
        for c in columns
    ]
    quote = connection.ops.quote_name
    names = [quote(c.column) for c in columns]
    # One typed array per column through unnest(): a fixed number of parameters.
    arrays = ", ".join(f"%s::{t}[]" for t in types)
    assignments = ", ".join(f"{n} = v.{n}" for n in names)
    sql = (
        f"UPDATE {quote(meta.db_table)} AS t SET {assignments} "
        f"FROM unnest({arrays}) AS v({quote(pk.column)}, {', '.join(names)}) "
        f"WHERE t.{quote(pk.column)} = v.{quote(pk.column)}"
    )
    params = [[p.pk for p in publications]] + [
        [getattr(p, c.attname) for p in publications]
        if c.get_internal_type() in _DRIVER_ADAPTS
        else [c.get_db_prep_save(getattr(p, c.attname), connection) for p in publications]
        for c in columns
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def _reason_required(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError("a reason is required")
    return reason


def publication_advance(
    *, publication: Publication, percentage: int, now: datetime | None = None
) -> PhasingEvent:
    return publication_transition(
        publication=publication,
        change=Change(
            EventKind.ADVANCED,
            percentage=percentage,
            reason=f"no problems: {publication.phased_update_percentage}% → {percentage}%",
        ),
        now=now,
    )


def publication_halt(
    *,
    publication: Publication,
    reason: str,
    actor: AbstractBaseUser | None = None,
    now: datetime | None = None,
) -> PhasingEvent:
    """Dial the update to 0% and halt it; only a person resumes it."""
    return publication_transition(
        publication=publication,
        change=Change(
            EventKind.HALTED,
            percentage=0,
            state=PhasingState.HALTED,
            reason=_reason_required(reason),
            hold_reason=HoldReason.PROBLEMS if actor is None else HoldReason.PULLED,
            hold_detail=reason,
        ),
        actor=actor,
        now=now,
    )


def publication_pause(
    *, publication: Publication, actor: AbstractBaseUser, reason: str, now: datetime | None = None
) -> PhasingEvent:
    return publication_transition(
        publication=publication,
        change=Change(EventKind.PAUSED, state=PhasingState.PAUSED, reason=_reason_required(reason)),
        actor=actor,
        now=now,
    )


def publication_resume(
    *,
    publication: Publication,
    actor: AbstractBaseUser,
    reason: str,
    now: datetime | None = None,
) -> PhasingEvent:
    """Resume a paused update where it was, or a halted one from the policy's first step."""
    reason = _reason_required(reason)

    def change(locked: Publication) -> Change:
        percentage = None
        if locked.state == PhasingState.HALTED:
            percentage = policy_resolve(publication=locked).first_percentage
        return Change(
            EventKind.RESUMED, percentage=percentage, state=PhasingState.PHASING, reason=reason
        )

    return publication_transition(publication=publication, change=change, actor=actor, now=now)


def publication_set_percentage(
    *,
    publication: Publication,
    percentage: int,
    actor: AbstractBaseUser,
    reason: str,
    now: datetime | None = None,
) -> PhasingEvent:
    """A person sets the percentage; on a halted update that is a decision to go on."""
    reason = _reason_required(reason)

    def change(locked: Publication) -> Change:
        state = None
        if locked.state == PhasingState.HALTED or (
            locked.state == PhasingState.COMPLETE and percentage < 100
        ):
            state = PhasingState.PHASING
        return Change(EventKind.SET, percentage=percentage, state=state, reason=reason)

    return publication_transition(publication=publication, change=change, actor=actor, now=now)


def publication_release(
    *, publication: Publication, actor: AbstractBaseUser, reason: str, now: datetime | None = None
) -> PhasingEvent:
    """Straight to 100% for everyone, for an urgent fix."""
    return publication_transition(
        publication=publication,
        change=Change(
            EventKind.RELEASED,
            percentage=100,
            state=PhasingState.COMPLETE,
            reason=_reason_required(reason),
        ),
        actor=actor,
        now=now,
    )


def policy_resolve(*, publication: Publication) -> policy_rules.Rules:
    """The package's policy, else the release's, else the global one, else the default."""
    policies = {
        (p.release_id, p.source_package_id): p
        for p in Policy.objects.filter(
            Q(source_package_id=publication.source_package_id)
            | Q(release_id=publication.release_id)
            | Q(release__isnull=True, source_package__isnull=True)
        )
    }
    return policies_resolve_from(
        policies, release_id=publication.release_id, source_package_id=publication.source_package_id
    )


def policies_resolve_from(
    policies: dict[tuple[int | None, int | None], Policy],
    *,
    release_id: int,
    source_package_id: int,
) -> policy_rules.Rules:
    for key in ((None, source_package_id), (release_id, None), (None, None)):
        if key in policies:
            return policies[key].rules()
    return policy_rules.DEFAULT_RULES


def _note_on_active(
    publications, *, kind: str, reason: str, actor: AbstractBaseUser, now: datetime
) -> list[PhasingEvent]:
    """Record a decision on every active update it touches, in a fixed number of queries."""
    locked = list(
        publications.filter(state__in=ACTIVE_STATES).select_for_update(of=("self",)).order_by("pk")
    )
    return publications_apply(
        [(p, Change(kind, reason=reason)) for p in locked], now=now, actor=actor
    )


def release_freeze(
    *, release: Release, actor: AbstractBaseUser, reason: str, now: datetime | None = None
) -> Release:
    """Emergency stop: no update of the release advances until it is unfrozen."""
    reason = _reason_required(reason)
    now = now or timezone.now()
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        locked.frozen = True
        locked.frozen_reason = reason
        locked.frozen_at = now
        locked.frozen_by = actor
        locked.save(update_fields=("frozen", "frozen_reason", "frozen_at", "frozen_by"))
        _note_on_active(
            locked.publications.all(), kind=EventKind.FROZEN, reason=reason, actor=actor, now=now
        )
    return locked


def release_unfreeze(
    *, release: Release, actor: AbstractBaseUser, reason: str, now: datetime | None = None
) -> Release:
    reason = _reason_required(reason)
    now = now or timezone.now()
    with transaction.atomic():
        locked = Release.objects.select_for_update().get(pk=release.pk)
        locked.frozen = False
        locked.frozen_reason = ""
        locked.frozen_at = None
        locked.frozen_by = actor
        locked.save(update_fields=("frozen", "frozen_reason", "frozen_at", "frozen_by"))
        _note_on_active(
            locked.publications.all(), kind=EventKind.UNFROZEN, reason=reason, actor=actor, now=now
        )
    return locked


def publication_supersede(
    *, publication: Publication, by: Publication, now: datetime | None = None
) -> PhasingEvent | None:
    """A newer version of the same source in the same release and pocket replaces it."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = Publication.objects.select_for_update().get(pk=publication.pk)
        locked.status = ArchiveStatus.SUPERSEDED
        locked.superseded_by = by
        locked.date_superseded = locked.date_superseded or now
        if locked.state == PhasingState.SUPERSEDED:
            locked.save(update_fields=_SAVED_FIELDS)
            return None
        event = _apply(
            locked,
            Change(
                EventKind.SUPERSEDED,
                state=PhasingState.SUPERSEDED,
                reason=f"superseded by {by.version}",
                hold_reason=HoldReason.NONE,
            ),
            now=now,
            actor=None,
            actor_name=None,
        )
        locked.save(update_fields=_SAVED_FIELDS)
        event.save()
    return event


POLICY_FIELDS = (
    "start_percentage",
    "step",
    "interval",
    "ceiling",
    "schedule",
    "quiet_weekend",
    "min_time_at_percentage",
    "min_previous_reports",
)


def policy_set(
    *,
    scope_release: Release | None = None,
    scope_package: SourcePackage | None = None,
    actor: AbstractBaseUser,
    reason: str,
    **fields: object,
) -> Policy:
    """Create or change the policy of a package, a release, or (neither) all updates.

    The audit record is an admin LogEntry on the policy (its history page in the admin),
    naming the actor, the reason and each field's old and new value; the controller reads
    the new policy at its next tick.
    """
    from django.contrib.admin.models import ADDITION, CHANGE, LogEntry

    reason = _reason_required(reason)
    if scope_release is not None and scope_package is not None:
        raise ValidationError("a policy is for a release or a package, not both")
    unknown = sorted(set(fields) - set(POLICY_FIELDS))
    if unknown:
        raise ValidationError(f"not a policy setting: {', '.join(unknown)}")
    with transaction.atomic():
        policy = (
            Policy.objects.select_for_update()
            .filter(release=scope_release, source_package=scope_package)
            .first()
        )
        created = policy is None
        if policy is None:
            policy = Policy(release=scope_release, source_package=scope_package)
        before = {name: getattr(policy, name) for name in fields}
        for name, value in fields.items():
            setattr(policy, name, value)
        try:
            policy.rules()
        except ValueError as error:
            raise ValidationError(str(error)) from error
        policy.full_clean(validate_unique=False, validate_constraints=False)
        policy.save()
        changes = [
            f"{name} {before[name]!s} → {getattr(policy, name)!s}"
            for name in fields
            if created or before[name] != getattr(policy, name)
        ]
        verb = "Created" if created else "Changed"
        message = (
            f"{verb} {policy.scope_label}: {'; '.join(changes) or 'nothing'}. Reason: {reason}"
        )
        LogEntry.objects.log_actions(
            user_id=actor.pk,
            queryset=[policy],
            action_flag=ADDITION if created else CHANGE,
            change_message=message,
            single_object=True,
        )
        touched = Publication.objects.all()
        if scope_package is not None:
            touched = touched.filter(source_package=scope_package)
        elif scope_release is not None:
            touched = touched.filter(release=scope_release)
        _note_on_active(
            touched, kind=EventKind.POLICY, reason=message, actor=actor, now=timezone.now()
        )
    return policy


__all__ = [
    "Change",
    "TransitionError",
    "policy_resolve",
    "policy_set",
    "policies_resolve_from",
    "publication_advance",
    "publication_halt",
    "publication_pause",
    "publication_release",
    "publication_resume",
    "publication_set_percentage",
    "publication_supersede",
    "publication_transition",
    "publications_apply",
    "publications_save",
    "release_freeze",
    "release_unfreeze",
]
