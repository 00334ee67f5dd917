"""What taking an update past the updates it needs would leave behind, in words.

Raising or releasing an update beyond the percentage of an update it needs (a versioned
Depends, or a Breaks of the other's old version) lets machines take it before they can
take what it needs. The update page and the admin warn with these lines; with
PHASING_SIGN_OFF_REQUIRED such a raise waits for a second archive admin
(packages.services.sign_off.sign_off_required).
"""

from __future__ import annotations

from collections.abc import Iterable

from packages.domain.dependencies import Member, Need, needs_of
from packages.models import Publication
from packages.selectors import phasing_members


def needs_behind(
    publication: Publication, percentage: int, *, members: Iterable[Member] | None = None
) -> list[Need]:
    """The updates in phasing this one needs that are below `percentage` (or held): one
    query unless the members of its release are given."""
    if members is None:
        members = phasing_members(release_ids=[publication.release_id])
    found = needs_of(_with_target(list(members), publication, percentage)).get(publication.pk, [])
    return [
        need
        for need in found
        if need.needed.percentage < percentage or need.needed.state in ("halted", "paused")
    ]


def _with_target(members: list[Member], publication: Publication, percentage: int) -> list[Member]:
    """The members, with this update among them whatever its state (a completed update
    still needs what it needs)."""
    if any(member.pk == publication.pk for member in members):
        return members
    return [
        *members,
        Member.of(
            {
                "pk": publication.pk,
                "release_id": publication.release_id,
                "source": publication.source_package.name,
                "version": publication.version,
                "previous_version": publication.previous_version,
                "binaries": publication.binaries,
                "relations": publication.relations,
                "percentage": percentage,
                "state": publication.state,
                "source_package_id": publication.source_package_id,
            }
        ),
    ]


def warning_lines(needs: Iterable[Need], percentage: int) -> list[str]:
    """'openssh 1:9.6p1-3ubuntu13.5 needs openssl 3.0.13-0ubuntu3.2, which is at 10%: at 100%
    some machines would take it without what it needs (openssh-server Depends on ...)'."""
    lines = []
    for need in needs:
        where = (
            need.needed.state
            if need.needed.state in ("halted", "paused")
            else f"at {need.needed.percentage}%"
        )
        lines.append(
            f"{need.dependent.label} needs {need.needed.label}, which is {where}: at "
            f"{percentage}% some machines would take it before what it needs ({need.why})."
        )
    return lines
