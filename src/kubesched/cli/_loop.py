"""The event loop of the long-running commands (``kubesched run``, ``apiserver``, ``up``).

asyncio's own loop by default; uvloop (libuv's loop, TLS transports in C) when
``KUBESCHED_EVENT_LOOP=uvloop`` asks for it and it is installed. Opt-in because the measurements
disagree (benchmarks/README.md, issue 18 §1 and §3): ~12 % less client CPU per request in a
microbenchmark, no difference through the real kube-apiserver, and more CPU per pod for the box
and the scheduler in ``benchmarks/live.py`` (at load 25–50, two pairs of runs).
"""

from __future__ import annotations

import asyncio
import importlib
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["loop_factory", "run"]

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """``uvloop.new_event_loop`` when ``KUBESCHED_EVENT_LOOP=uvloop`` and uvloop is installed,
    else None (asyncio's default loop)."""
    if os.environ.get("KUBESCHED_EVENT_LOOP", "").lower() != "uvloop":
        return None
    try:
        uvloop = importlib.import_module("uvloop")  # optional: not a dependency of the package
    except ImportError:
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on the loop of :func:`loop_factory`."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
