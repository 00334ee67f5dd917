"""Dependent updates: which update in phasing needs which other one. Plain Python, no Django.

apt draws each source package separately (``<source>-<version>-<machine id>``), so two
updates that must go together split across machines: with openssl phasing, libssl-dev
could not be installed (LP #1979244); with mutter kept back apt removed gnome-shell
(LP #2025462); a package that ``Breaks`` the old version of one still phasing makes
``full-upgrade`` remove it (LP #2098140).

The new version of A *needs* the new version of B (both in phasing in one release) when
a binary of A has

- a versioned ``Depends`` or ``Pre-Depends`` on a binary of B that B's new version
  satisfies and its previous version does not, or
- a versioned ``Breaks`` or ``Conflicts`` on a binary of B that B's previous version
  matches and its new version does not (the old B is broken by the new A).

A relation with alternatives (``a | b``) is not a need: apt may take the other one. A
previous version we do not know counts as one that would not do (the safe side). The
binaries' relations are read from the Packages files apt reads (``relations_of_stanza``)
and kept on the publication as rows of ``[field, binary, package, operator, version]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from debian.deb822 import PkgRelation
from debian.debian_support import version_compare

# The fields read, as (Packages field, kind stored).
FIELDS = (
    ("Pre-Depends", "pre-depends"),
    ("Depends", "depends"),
    ("Breaks", "breaks"),
    ("Conflicts", "conflicts"),
)
NEEDS_NEW = ("depends", "pre-depends")
BREAKS_OLD = ("breaks", "conflicts")
_OPERATORS = ("<<", "<=", "=", ">=", ">>")
# A relation kept on a publication: [field, binary, package, operator, version].
MAX_RELATIONS = 2000


@dataclass(frozen=True, order=True)
class Relation:
    kind: str  # depends, pre-depends, breaks, conflicts
    binary: str  # the binary of this source that declares it
    package: str  # the binary it names
    operator: str
    version: str

    def as_row(self) -> list[str]:
        return [self.kind, self.binary, self.package, self.operator, self.version]

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Relation | None:
        """A stored row, or None when it is not one (never trusted to be well formed)."""
        if not isinstance(row, list | tuple) or len(row) != 5:
            return None
        if not all(isinstance(part, str) for part in row):
            return None
        kind, binary, package, operator, version = row
        if kind not in dict(FIELDS).values() or operator not in _OPERATORS:
            return None
        return cls(kind, binary, package, operator, version)

    def __str__(self) -> str:
        field = dict((kind, name) for name, kind in FIELDS)[self.kind]
        return f"{self.binary} {field}: {self.package} ({self.operator} {self.version})"


# Every tick asks again of the same versions (20,000 updates in phasing: 5,000 comparisons
# at about 90 µs each in python-debian): a worker's ticks remember the answers.
@lru_cache(maxsize=65536)
def _order(version: str, wanted: str) -> int | None:
    """dpkg's order of two versions (negative, zero, positive); None if either is not one."""
    try:
        return version_compare(version, wanted)
    except ValueError:
        return None


def satisfies(version: str, operator: str, wanted: str) -> bool:
    """Whether `version` satisfies `(operator wanted)`, compared as dpkg compares."""
    order = _order(version, wanted)
    if order is None:
        return False
    return {
        "<<": order < 0,
        "<=": order <= 0,
        "=": order == 0,
        ">=": order >= 0,
        ">>": order > 0,
    }[operator]


def relations_of_stanza(stanza: Mapping[str, str]) -> list[Relation]:
    """The versioned relations of one binary's Packages stanza that may join updates."""
    binary = stanza.get("Package", "")
    found: list[Relation] = []
    for field, kind in FIELDS:
        text = stanza.get(field)
        if not text:
            continue
        try:
            parsed = PkgRelation.parse_relations(text)
        except Exception:  # an unreadable field costs only itself
            continue
        for alternatives in parsed:
            if len(alternatives) != 1:
                continue  # "a | b": apt may take the other one
            target = alternatives[0]
            version = target.get("version")
            if not version or version[0] not in _OPERATORS:
                continue  # unversioned: any version will do, or none will
            found.append(Relation(kind, binary, target["name"], version[0], version[1]))
    return found


def relation_rows(relations: Iterable[Relation]) -> list[list[str]]:
    """Rows to store, each once, in a stable order, at most MAX_RELATIONS."""
    return [r.as_row() for r in sorted(set(relations))][:MAX_RELATIONS]


@dataclass(frozen=True)
class Member:
    """What the rule needs of one update in phasing."""

    pk: int
    release_id: int
    source: str
    version: str
    previous_version: str
    binaries: tuple[str, ...]
    relations: tuple[Relation, ...]
    percentage: int
    state: str
    source_package_id: int = 0

    @property
    def label(self) -> str:
        return f"{self.source} {self.version}"

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> Member:
        """From a row of stored values (binaries and relations as JSON)."""
        binaries = row.get("binaries") or []
        relations = row.get("relations") or []
        return cls(
            pk=row["pk"],
            release_id=row["release_id"],
            source=row["source"],
            version=row["version"],
            previous_version=row.get("previous_version") or "",
            binaries=tuple(b for b in binaries if isinstance(b, str))
            if isinstance(binaries, list)
            else (),
            relations=tuple(
                r
                for r in map(Relation.from_row, relations if isinstance(relations, list) else [])
                if r is not None
            ),
            percentage=row["percentage"],
            state=row["state"],
            source_package_id=row.get("source_package_id") or 0,
        )


@dataclass(frozen=True)
class Need:
    """The new version of `dependent` needs the new version of `needed`."""

    dependent: Member
    needed: Member
    relation: Relation

    @property
    def breaks(self) -> bool:
        """A Breaks or Conflicts on the old version: completing the dependent first makes
        ``full-upgrade`` remove the other on machines not yet in its phase."""
        return self.relation.kind in BREAKS_OLD

    @property
    def why(self) -> str:
        """'Breaks libfoo1 (<< 1.2)' or 'Depends on libfoo1 (>= 1.2)'."""
        r = self.relation
        verb = {
            "depends": "Depends on",
            "pre-depends": "Pre-Depends on",
            "breaks": "Breaks",
            "conflicts": "Conflicts with",
        }[r.kind]
        return f"{r.binary} {verb} {r.package} ({r.operator} {r.version})"


def _is_need(relation: Relation, needed: Member) -> bool:
    new_ok = satisfies(needed.version, relation.operator, relation.version)
    old = needed.previous_version
    if relation.kind in NEEDS_NEW:
        return new_ok and not (old and satisfies(old, relation.operator, relation.version))
    # Breaks/Conflicts: the new version is clear of it, the old one is caught by it.
    return not new_ok and (not old or satisfies(old, relation.operator, relation.version))


def needs_of(members: Iterable[Member]) -> dict[int, list[Need]]:
    """For each update in phasing, what it needs (one Need per needed update, the first
    relation found naming it), by the dependent's primary key."""
    members = list(members)
    by_binary: dict[tuple[int, str], list[Member]] = {}
    for member in members:
        for binary in member.binaries:
            by_binary.setdefault((member.release_id, binary), []).append(member)
    needs: dict[int, list[Need]] = {}
    for member in members:
        found: dict[int, Need] = {}
        for relation in member.relations:
            for other in by_binary.get((member.release_id, relation.package), []):
                if other.source == member.source or other.pk in found:
                    continue
                if _is_need(relation, other):
                    found[other.pk] = Need(member, other, relation)
        if found:
            needs[member.pk] = sorted(found.values(), key=lambda n: n.needed.label)
    return needs


def needed_by(needs: Mapping[int, list[Need]]) -> dict[int, list[Need]]:
    """The same needs by the needed update's primary key."""
    reverse: dict[int, list[Need]] = {}
    for found in needs.values():
        for need in found:
            reverse.setdefault(need.needed.pk, []).append(need)
    return reverse


def machine_share(percentage: int) -> float:
    """The share of machines whose draw (0..100) is at most the percentage: (p+1)/101."""
    return (min(max(percentage, 0), 100) + 1) / 101


def effective_share(member: Member, needs: Mapping[int, list[Need]]) -> float:
    """The share of machines that can take the update with everything it needs, now.

    apt draws each source separately, so, taking the draws as independent, that is the
    product of the shares of the update and of every update it needs (transitively, each
    once). An approximation: the draws of one machine are not truly independent.
    """
    seen = {member.pk: member}
    todo = [member.pk]
    while todo:
        for need in needs.get(todo.pop(), []):
            if need.needed.pk not in seen:
                seen[need.needed.pk] = need.needed
                todo.append(need.needed.pk)
    share = 1.0
    for each in seen.values():
        share *= machine_share(each.percentage)
    return share


@dataclass(frozen=True)
class Group:
    """An update in a dependent group, as the pages show it."""

    member: Member
    needs: tuple[Need, ...]
    needed_by: tuple[Need, ...]
    share: float  # of machines that can take it with what it needs, now
    alone: bool  # its policy lets it phase alone

    @property
    def share_words(self) -> str:
        """'≈ 1.2% of machines': the effective share, approximately."""
        return f"≈ {100 * self.share:.1f}% of machines"

    def need_lines(self) -> list[str]:
        """'needs mutter 46.2-1 (at 10%): gnome-shell Depends on libmutter-14-0 (>= 46.2-1)'."""
        return [f"needs {n.needed.label} ({_state_words(n.needed)}): {n.why}" for n in self.needs]

    def needed_by_lines(self) -> list[str]:
        return [
            f"needed by {n.dependent.label} ({_state_words(n.dependent)})" for n in self.needed_by
        ]


def _state_words(member: Member) -> str:
    if member.state in ("halted", "paused"):
        return member.state
    return f"at {member.percentage}%"


def groups_of(
    members: Iterable[Member], *, alone: Callable[[Member], bool] = lambda m: False
) -> dict[int, Group]:
    """Every update in a dependent group, by primary key."""
    members = list(members)
    needs = needs_of(members)
    reverse = needed_by(needs)
    return {
        m.pk: Group(
            member=m,
            needs=tuple(needs.get(m.pk, ())),
            needed_by=tuple(reverse.get(m.pk, ())),
            share=effective_share(m, needs),
            alone=alone(m),
        )
        for m in members
        if m.pk in needs or m.pk in reverse
    }
