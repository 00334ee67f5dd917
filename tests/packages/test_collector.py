"""The cyclic collector paused for bulk work, and as it was after."""

from __future__ import annotations

import gc

import pytest

from packages.collector import collector_paused


@pytest.fixture(autouse=True)
def _collector_as_it_was():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_the_collector_is_paused_in_the_block_and_runs_again_after():
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_runs_again_after_a_block_that_failed():
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("the work failed")
    assert gc.isenabled()


def test_a_process_that_turned_it_off_keeps_it_off():
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_nested_blocks_leave_it_paused_until_the_outer_one_ends():
    gc.enable()
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
