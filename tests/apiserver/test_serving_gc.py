"""The box's garbage-collection policy once it serves (apiserver/server.py ``SERVING_GC_THRESHOLD``,
set by ``freeze_startup_heap``, which ``kubesched apiserver`` calls after start-up): fewer
collections, but cyclic garbage is still freed without anyone calling ``gc.collect``."""

from __future__ import annotations

import gc
import weakref

import pytest

from kubesched.apiserver.launcher import start_server
from kubesched.apiserver.server import SERVING_GC_THRESHOLD

pytestmark = pytest.mark.asyncio


class _Cycle:
    def __init__(self) -> None:
        self.me = self


async def test_frozen_box_uses_serving_thresholds_and_still_frees_cycles(tmp_path) -> None:
    before = gc.get_threshold()
    assert before != SERVING_GC_THRESHOLD
    try:
        async with start_server(tmp_path / "kc") as box:
            box.freeze_startup_heap()
            assert gc.isenabled() and gc.get_threshold() == SERVING_GC_THRESHOLD
            cycle = _Cycle()
            freed = weakref.ref(cycle)
            del cycle
            assert freed() is not None  # reference counting alone never frees a cycle
            keep = [[i] for i in range(3 * SERVING_GC_THRESHOLD[0])]  # tracked containers
            assert freed() is None, "the young collection did not run within 3× its threshold"
            del keep
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
