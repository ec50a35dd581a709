"""Suite-wide settings: debug consistency checks are on in every test (``KUBESCHED_DEBUG=1``,
inherited by subprocesses too), e.g. ``NodeTable.frozen`` during scheduling cycles."""

from __future__ import annotations

import gc
import os
import weakref
from collections.abc import Callable

import pytest

os.environ.setdefault("KUBESCHED_DEBUG", "1")

from kubesched.framework import node_table  # noqa: E402  (after the environment is set)

node_table.set_debug_checks(os.environ["KUBESCHED_DEBUG"] not in ("", "0"))


class _Cycle:
    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def check_cycles_freed() -> Callable[[tuple[int, int, int]], None]:
    """The serving collector policy's check (kube/runner.py, apiserver/server.py
    ``SERVING_GC_THRESHOLD``): called with the expected thresholds, it asserts they are in force and
    that a reference cycle made now is freed by the collections that ``3 × threshold[0]`` tracked
    allocations trigger, with no ``gc.collect``."""

    def check(threshold: tuple[int, int, int]) -> None:
        assert gc.isenabled() and gc.get_threshold() == threshold
        cycle = _Cycle()
        freed = weakref.ref(cycle)
        del cycle
        assert freed() is not None  # a cycle: reference counting alone never frees it
        keep = [[i] for i in range(3 * threshold[0])]  # tracked containers
        assert freed() is None, "the young collection did not run within 3× its threshold"
        del keep

    return check
