"""Dependent groups, computed once per data version, not on every page view.

Regrouping every update in phasing was a third of each overview and history render. The
groups change only when their inputs do (a sync's relations, a tick's percentages, a
person's action, a policy), and every such write raises the data version
(packages.data_version), so the groups of a version are kept in this process and served
until the version moves on.

Inside a transaction the version does not yet count this transaction's own writes (it is
raised at commit), so a read there computes afresh and keeps nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connection

from packages.data_version import data_version
from packages.domain.dependencies import Group
from packages.selectors import PolicyMap, dependency_groups

_lock = threading.Lock()
_kept: tuple[int, dict[int, Group]] | None = None


def groups_for_pages(
    *,
    policies: PolicyMap,
    compute: Callable[..., dict[int, Group]] = dependency_groups,
) -> dict[int, Group]:
    """Every update in a dependent group, by primary key, as of the current data version:
    one query (the version) when this process has them, two when it computes them."""
    global _kept
    if connection.in_atomic_block:
        return compute(policies=policies)
    version = data_version()
    with _lock:
        kept = _kept
    if kept is not None and kept[0] == version:
        return kept[1]
    # Read after the version: the groups are at least as new as the number they are kept
    # under, so a later version never finds older groups.
    groups = compute(policies=policies)
    with _lock:
        _kept = (version, groups)
    return groups


def groups_forget() -> None:
    """Forget the kept groups (tests that start the data version again)."""
    global _kept
    with _lock:
        _kept = None
