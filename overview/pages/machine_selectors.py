"""Reads for "is my machine in the phase?": the machine page, its API and the fleet check.

A fixed number of queries whatever the number of rows, as every selector (overview.pages.selectors).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import QuerySet

if TYPE_CHECKING:
    pass

from packages.domain import apt_phasing
from packages.domain import policy as policy_rules
from packages.domain.dependencies import Group, Need
from packages.models import (
    ACTIVE_STATES,
    PhasingState,
    Publication,
    Release,
)
from packages.selectors import PolicyMap


@dataclass(frozen=True)
class KeptBack:
    """An update apt would take on this machine but keeps back: something it needs (an
    update in phasing, drawn separately) is not yet in this machine's phase."""

    need: Need
    draw: int  # this machine's draw for the needed update

    @property
    def words(self) -> str:
        needed = self.need.needed
        phase = f"this machine's draw for it is {self.draw}, above its {needed.percentage}%"
        if needed.state in (PhasingState.HALTED, PhasingState.PAUSED):
            phase += f" ({needed.state})"
        if self.need.breaks:
            return (
                f"kept back: {self.need.why}, and {needed.label} is not yet in this machine's "
                f"phase ({phase}); apt upgrade keeps it back, apt full-upgrade would remove "
                f"{self.need.relation.package}"
            )
        return (
            f"kept back: {self.need.why}, and {needed.label} is not yet in this machine's "
            f"phase ({phase})"
        )


@dataclass(frozen=True)
class MachineRow:
    publication: Publication
    decision: apt_phasing.Draw
    # When the percentage reaches this machine's draw; None when nobody can say.
    included_at: datetime | None
    # Why there is no time: "", "when phasing resumes", "not under the current policy".
    waiting_for: str
    # What it needs that this machine does not take yet: apt keeps it back for those.
    kept_back: tuple[KeptBack, ...] = ()

    @property
    def installs(self) -> bool:
        """apt installs it now: in its phase, and with everything it needs."""
        return self.decision.included and not self.kept_back


def machine_publications(*, release: Release | None) -> QuerySet[Publication]:
    publications = (
        Publication.objects.filter(state__in=ACTIVE_STATES)
        .select_related("release", "source_package")
        .order_by("-release__version", "source_package__name", "version", "id")
    )
    if release is not None:
        publications = publications.filter(release=release)
    return publications


def _kept_back(needs: Iterable[Need], machine_id: str) -> tuple[KeptBack, ...]:
    kept = []
    for need in needs:
        needed = need.needed
        decision = apt_phasing.decide(needed.source, needed.version, machine_id, needed.percentage)
        if not decision.included:
            kept.append(KeptBack(need, decision.draw))
    return tuple(kept)


def machine_rows(
    publications: list[Publication],
    *,
    machine_id: str,
    policies: PolicyMap,
    now: datetime,
    groups: Mapping[int, Group] | None = None,
) -> list[MachineRow]:
    """apt's decision for this machine on each publication, when it will be included, and
    what keeps it back when something it needs is not yet in this machine's phase."""
    groups = groups or {}
    rows = []
    for publication in publications:
        decision = apt_phasing.decide(
            publication.source_package.name,
            publication.version,
            machine_id,
            publication.phased_update_percentage,
        )
        included_at, waiting_for = None, ""
        if decision.included:
            included_at = now
        elif publication.state in (PhasingState.HALTED, PhasingState.PAUSED):
            waiting_for = "when phasing resumes"
        elif publication.release.frozen:
            waiting_for = "when the release is unfrozen"
        else:
            included_at = policy_rules.time_to_reach(
                policy_rules.resolve_for(policies, publication),
                percentage=publication.phased_update_percentage,
                last_increase_at=publication.last_increase_at or publication.date_published,
                now=now,
                target=decision.included_from_percentage,
            )
            if included_at is None:
                waiting_for = "not under the current policy"
        group = groups.get(publication.pk)
        kept_back = _kept_back(group.needs, machine_id) if group and decision.included else ()
        rows.append(MachineRow(publication, decision, included_at, waiting_for, kept_back))
    return rows
