"""Tell listeners, after commit, what was just written: phasing events, sign-off requests.

`packages` never imports what listens (webhooks and chat notices live in `overview`): a
listener registers itself here when its app is ready. Each announcement is an on-commit
callback, so a rolled-back change announces nothing, a listener never runs inside the
writer's transaction (the tick or a person's action costs no more), and a listener that
fails is logged without stopping the other callbacks of the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial

from django.db import transaction

log = logging.getLogger(__name__)

# What is announced: PhasingEvent rows, ScheduledChange rows waiting for a sign-off, and
# publications whose crash data went missing at this tick.
PHASING_EVENTS = "phasing-events"
SIGN_OFF_REQUESTED = "sign-off-requested"
DATA_STALE = "data-stale"

# (primary key, kind): the kind lets a listener skip what it does not want without a query.
Item = tuple[int, str]
Listener = Callable[[str, list[Item]], None]

_listeners: list[Listener] = []


def listener_register(listener: Listener) -> None:
    """Hear every announcement from now on (idempotent: registering twice hears once)."""
    if listener not in _listeners:
        _listeners.append(listener)


def listener_unregister(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def announce(topic: str, items: Sequence[Item]) -> None:
    """Give `items` to every listener once the current transaction commits."""
    if not items or not _listeners:
        return
    frozen = list(items)
    for listener in list(_listeners):
        transaction.on_commit(partial(listener, topic, frozen), robust=True)


__all__ = [
    "DATA_STALE",
    "PHASING_EVENTS",
    "SIGN_OFF_REQUESTED",
    "Item",
    "Listener",
    "announce",
    "listener_register",
    "listener_unregister",
]
