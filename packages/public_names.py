"""How a person is named where everyone reads it: pages, feeds, the API, event reasons.

A login name is half of a credential and says nothing to a reader, so it never goes out:
a person is shown by the name they gave (first and last name) or, without one, by the
role they acted in. Plain Python over the user object; no query.
"""

from __future__ import annotations

from typing import Protocol

ARCHIVE_ADMIN = "an archive admin"
TRIAGER = "a triager"


class _Named(Protocol):
    def get_full_name(self) -> str: ...


def public_name(user: _Named | None, role: str = ARCHIVE_ADMIN) -> str:
    """The person's display name, else the role they acted in ("" for nobody)."""
    if user is None:
        return ""
    return " ".join(user.get_full_name().split()) or role
