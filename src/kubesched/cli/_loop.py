"""The event loop of the long-running commands (``kubesched run``, ``apiserver``, ``up``).

uvloop (libuv's loop, with TLS transports in C) when it is installed and not turned off with
``KUBESCHED_EVENT_LOOP=asyncio``; otherwise asyncio's own loop, whose SSL protocol is pure
Python. The loop changes no behaviour, only the CPU each HTTP request and watch event costs
(benchmarks/README.md, "CPU per pod against the real kube-scheduler").
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "run"]

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """``uvloop.new_event_loop`` when available and wanted, else None (asyncio's default)."""
    if os.environ.get("KUBESCHED_EVENT_LOOP", "").lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop of :func:`loop_factory`."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
