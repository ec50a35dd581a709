"""``kubesched run``'s garbage-collection policy once its caches are synced (kube/runner.py
``SERVING_GC_THRESHOLD``): fewer collections, but cyclic garbage is still freed without anyone
calling ``gc.collect``, and the process's thresholds are restored when the runner returns."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
from livehelpers import eventually
from test_run_faults import make_runner, start, stop

from kubesched.apiserver.launcher import start_server
from kubesched.kube.runner import SERVING_GC_THRESHOLD

pytestmark = pytest.mark.asyncio


class _Cycle:
    def __init__(self) -> None:
        self.me = self


async def test_serving_thresholds_still_free_cycles_and_are_restored(tmp_path) -> None:
    before = gc.get_threshold()
    assert before != SERVING_GC_THRESHOLD
    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data"):
        runner = make_runner(str(tmp_path / "kc"))
        task = await start(runner)
        try:
            assert gc.isenabled() and gc.get_threshold() == SERVING_GC_THRESHOLD
            cycle = _Cycle()
            freed = weakref.ref(cycle)
            del cycle
            assert freed() is not None  # a cycle: reference counting alone never frees it
            # allocations (each a tracked container) until the young generation's threshold passes
            keep = []
            for i in range(3 * SERVING_GC_THRESHOLD[0]):
                keep.append([i])
                if i % 10_000 == 0:
                    await asyncio.sleep(0)
            assert freed() is None, "the young collection did not run within 3× its threshold"
            del keep
        finally:
            await stop(runner, task)
    await eventually(lambda: task.done(), what="runner stopped")
    assert gc.get_threshold() == before
