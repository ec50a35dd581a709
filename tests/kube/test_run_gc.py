"""``kubesched run``'s garbage-collection policy once its caches are synced (kube/runner.py
``SERVING_GC_THRESHOLD``): fewer collections, but cyclic garbage is still freed without anyone
calling ``gc.collect``, and the process's thresholds are restored when the runner returns."""

from __future__ import annotations

import gc

import pytest
from test_run_faults import make_runner, start, stop

from kubesched.apiserver.launcher import start_server
from kubesched.kube.runner import SERVING_GC_THRESHOLD

pytestmark = pytest.mark.asyncio


async def test_serving_thresholds_still_free_cycles_and_are_restored(tmp_path, check_cycles_freed) -> None:
    before = gc.get_threshold()
    assert before != SERVING_GC_THRESHOLD
    async with start_server(tmp_path / "kc", data_dir=tmp_path / "data"):
        runner = make_runner(str(tmp_path / "kc"))
        task = await start(runner)
        try:
            check_cycles_freed(SERVING_GC_THRESHOLD)
        finally:
            await stop(runner, task)  # the runner has returned
    assert gc.get_threshold() == before
