"""When problems halt an update: one rule for the controller that acts on it and the
pages that announce it, so "what happens next" never promises a step the tick refuses.

Plain Python: anything with `is_overridden` is a problem here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

# A person's pause does not shield an update from a regression; a halt is already one.
HALTABLE_STATES = ("phasing", "paused")


class Judged(Protocol):
    @property
    def is_overridden(self) -> bool: ...


P = TypeVar("P", bound=Judged)


def halting_problems(state: str, problems: Iterable[P]) -> list[P]:
    """The problems no live override covers, when they halt an update in this state."""
    if state not in HALTABLE_STATES:
        return []
    return [problem for problem in problems if not problem.is_overridden]
