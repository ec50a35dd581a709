"""The box's garbage-collection policy once it serves (apiserver/server.py ``SERVING_GC_THRESHOLD``,
set by ``freeze_startup_heap``, which ``kubesched apiserver`` calls after start-up): fewer
collections, but cyclic garbage is still freed without anyone calling ``gc.collect``."""

from __future__ import annotations

import gc

import pytest

from kubesched.apiserver.launcher import start_server
from kubesched.apiserver.server import SERVING_GC_THRESHOLD

pytestmark = pytest.mark.asyncio


async def test_frozen_box_uses_serving_thresholds_and_still_frees_cycles(tmp_path, check_cycles_freed) -> None:
    before = gc.get_threshold()
    assert before != SERVING_GC_THRESHOLD
    try:
        async with start_server(tmp_path / "kc") as box:
            box.freeze_startup_heap()
            check_cycles_freed(SERVING_GC_THRESHOLD)
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
