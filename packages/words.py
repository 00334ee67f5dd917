"""How changes of a rollout are said, the same on every page, feed, email and event.

Plain Python, no Django.
"""

from __future__ import annotations


def percentage_change(old: int | None, new: int) -> str:
    """'10% → 20%', or '20%' when nothing changed or nothing was there before."""
    if old is None or old == new:
        return f"{new}%"
    return f"{old}% → {new}%"


def state_change(old: str, new: str) -> str:
    """'Phasing → Halted', or 'Halted' when the state stayed (labels as given)."""
    if not old or old == new:
        return new
    return f"{old} → {new}"
