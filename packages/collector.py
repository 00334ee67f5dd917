"""Bulk work with Python's cyclic garbage collector paused.

A tick at 20,000 updates in phasing makes hundreds of thousands of objects (rows, model
instances, judgements) that all live until its release is decided. Each time enough of
them have been made, the collector goes over every object still alive, the tick's own
included, looking for cycles none of them are in: measured on the bench database, a third
of a settled tick's CPU time (12-13 s of CPU against 7.4-8 without). Reference counting
frees these objects whatever the collector does; the few cycles made meanwhile are
collected when it runs again, after the work.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; it runs again after, if it ran before
    (so blocks nest, and a process that turned it off keeps it off)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
