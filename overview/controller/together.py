"""Dependent updates phase together: the controller's rule, after each update's own.

apt draws each source separately, so an update whose new version needs another's new
version (packages.domain.dependencies) must never run ahead of it: its percentage stays at most
the other's, it completes only with it, and a halt or a pause of the other holds it. The
controller decides each update by its own evidence and policy first; this pass then caps
what it would raise, over every update of the tick at once (a chain of needs caps in
turn), with no query of its own. A policy with ``phase_with_dependencies`` off lets its
package phase alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from packages.domain import policy as policy_rules
from packages.domain.dependencies import Member, Need, needs_of

__all__ = ["Need", "cap", "member_of", "state_words", "tick_needs"]
from packages.models import EventKind, PhasingState, Publication
from packages.services.changes import Change

_RAISES = (EventKind.ADVANCED, EventKind.COMPLETED)
# A halt or a pause of an update holds what needs it, whatever the percentages.
_STOPPED = (PhasingState.HALTED, PhasingState.PAUSED)


def member_of(publication: Publication) -> Member:
    return Member.of(
        {
            "pk": publication.pk,
            "release_id": publication.release_id,
            "source": publication.source_package.name,
            "version": publication.version,
            "previous_version": publication.previous_version,
            "binaries": publication.binaries,
            "relations": publication.relations,
            "percentage": publication.phased_update_percentage,
            "state": publication.state,
        }
    )


def tick_needs(candidates: Iterable[Publication]) -> dict[int, list[Need]]:
    """What each update of the tick needs, from the rows read before the lock (the
    binaries and relations, which the tick never changes)."""
    return needs_of(member_of(p) for p in candidates)


def state_words(state: str, percentage: int) -> str:
    if state == PhasingState.HALTED:
        return "halted"
    if state == PhasingState.PAUSED:
        return "paused"
    return f"at {percentage}%"


def cap(
    publications: list[Publication],
    changes: list[tuple[Publication, Change]],
    needs: Mapping[int, list[Need]],
    rules_of: Mapping[int, policy_rules.Rules],
) -> tuple[list[tuple[Publication, Change]], dict[int, tuple[int, str]]]:
    """The changes with every raise capped at what the updates it needs will be at after
    this tick, and the updates that now hold instead: pk -> (percentage, hold detail)."""
    by_pk = {p.pk: p for p in publications}
    planned_change = {p.pk: c for p, c in changes}
    planned: dict[int, int] = {}
    state: dict[int, str] = {}
    for publication in publications:
        change = planned_change.get(publication.pk)
        planned[publication.pk] = (
            change.percentage
            if change is not None and change.percentage is not None
            else publication.phased_update_percentage
        )
        state[publication.pk] = (change.state if change is not None else None) or publication.state
    held: dict[int, tuple[int, str]] = {}
    capped: dict[int, Change] = {}

    def completing(pk: int) -> bool:
        """Complete already, or completing at this tick (not held)."""
        change = capped.get(pk, planned_change.get(pk))
        if pk in held or change is None:
            return pk not in held and state[pk] == PhasingState.COMPLETE
        return change.kind == EventKind.COMPLETED

    settled = False
    while not settled:  # each turn only lowers a planned percentage: it ends
        settled = True
        for pk, publication in by_pk.items():
            change = capped.get(pk, planned_change.get(pk))
            if change is None or change.kind not in _RAISES or pk in held:
                continue
            if not rules_of[pk].phase_with_dependencies:
                continue
            present = [n for n in needs.get(pk, []) if n.needed.pk in by_pk]
            if not present:
                continue
            stopped = [n for n in present if state[n.needed.pk] in _STOPPED]
            unfinished = [n for n in present if not completing(n.needed.pk)]
            if not stopped and change.kind == EventKind.COMPLETED and unfinished:
                # Never complete before what it needs, which may still be watched at 100%.
                first = unfinished[0]
                current = publication.phased_update_percentage
                held[pk] = (current, f"{first.needed.label}: not complete yet ({first.why})")
                planned[pk] = current
                settled = False
                continue
            if stopped:
                limit = stopped[0]
            else:
                limit = min(present, key=lambda n: (planned[n.needed.pk], n.needed.label))
                if planned[pk] <= planned[limit.needed.pk]:
                    continue
            ceiling = planned[limit.needed.pk]
            current = publication.phased_update_percentage
            words = state_words(state[limit.needed.pk], ceiling)
            if ceiling > current and not stopped:
                capped[pk] = Change.advanced(
                    old=current,
                    new=ceiling,
                    why=f"no problems; held with {limit.needed.label} {words}",
                )
                planned[pk] = ceiling
            else:
                held[pk] = (current, f"{limit.needed.label}: {words} ({limit.why})")
                planned[pk] = current
            settled = False
    result = []
    for publication, change in changes:
        if publication.pk in held:
            continue
        result.append((publication, capped.get(publication.pk, change)))
    return result, held
