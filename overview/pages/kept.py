"""What the overview reads, kept per data version in this process: computed when its
inputs change, not on every view.

Every committed write to the pages' data raises the data version (packages.data_version),
so a value computed at a version stays right until the version moves on. Values that
word a time ("5 min ago") are kept under the minute too. Inside a transaction the version
does not yet count the transaction's own writes, so nothing is kept there (tests run in
one: they always compute). At most KEPT values, the least recently used dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from django.db import connection

from packages.data_version import data_version

T = TypeVar("T")
KEPT = 128

_lock = threading.Lock()
_kept: OrderedDict[Hashable, tuple[int, Any]] = OrderedDict()  # key → (version, value)


def current_version() -> int | None:
    """The data version values may be kept under, or None inside a transaction: one query."""
    return None if connection.in_atomic_block else data_version()


def kept(key: Hashable, compute: Callable[[], T], *, version: int | None) -> T:
    """`compute()`'s value at this data version, computed at most once per version."""
    if version is None:
        return compute()
    with _lock:
        entry = _kept.get(key)
        if entry is not None and entry[0] == version:
            _kept.move_to_end(key)
            return entry[1]
    # Computed after the version was read: at least as new as the number it is kept under.
    value = compute()
    with _lock:
        _kept[key] = (version, value)
        _kept.move_to_end(key)
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return value


def kept_forget() -> None:
    """Forget every kept value (tests that start the data version again)."""
    with _lock:
        _kept.clear()
