"""Fault injection for tests (all off by default).

:class:`Faults` is safe to call from any thread: knobs are plain attributes read by the
server's loop; actions that must run on the loop (``compact``, ``close_watches``) are
scheduled there with ``call_soon_threadsafe`` and waited for.

Knobs: close every watch stream every ``watch_close_every`` seconds (``0``: right after its
initial events/backlog — with nothing to send, the client sees a "very short watch"); streams
closed by a fault end without a closing BOOKMARK (kube-apiserver sends one only near a watch's
own ``timeoutSeconds`` deadline); fail a fraction of
writes to a resource (optionally one subresource) with 500 InternalError or 409 Conflict;
add ``latency`` seconds before every request; ``pause()`` holds every request until
``resume()``.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

__all__ = ["Faults", "WriteFault"]


@dataclass
class WriteFault:
    """Fail ``fraction`` of writes to ``resource`` (plural, e.g. ``pods``) / ``subresource``
    (``""`` = the main resource, ``"*"`` = any) with HTTP ``code`` (500, 503 or 409); at most
    ``times`` of them when set."""

    resource: str
    subresource: str = ""
    fraction: float = 1.0
    code: int = 500
    verbs: tuple[str, ...] = ("create", "update", "patch", "delete")
    times: int | None = None


class Faults:
    """The fault-injection API of a running server."""

    def __init__(self, *, seed: int = 0) -> None:
        self.watch_close_every: float | None = None
        self.latency: float = 0.0
        self.write_faults: list[WriteFault] = []
        self.injected: int = 0  #: writes failed on purpose so far
        self._fault_hits: dict[int, int] = {}
        self._rng = random.Random(seed)
        self._paused = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._compact: Callable[[], int] | None = None
        self._close_watches: Callable[[], int] | None = None

    # ---------------------------------------------------------------- binding
    def _bind(self, loop: asyncio.AbstractEventLoop, compact: Callable[[], int],
              close_watches: Callable[[], int]) -> None:
        self._loop = loop
        self._compact = compact
        self._close_watches = close_watches

    def _on_loop(self, fn: Callable[[], Any]) -> Any:
        loop = self._loop
        if loop is None:
            raise RuntimeError("server not started")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return fn()
        fut: Future[Any] = Future()

        def run() -> None:
            try:
                fut.set_result(fn())
            except BaseException as e:  # noqa: BLE001 - surfaced to the caller
                fut.set_exception(e)

        loop.call_soon_threadsafe(run)
        return fut.result(timeout=30)

    # ---------------------------------------------------------------- actions
    def compact(self) -> int:
        """Compact the store to its current revision now; returns it. Every watch or list
        from an older resourceVersion then gets 410 Expired."""
        assert self._compact is not None, "server not started"
        return int(self._on_loop(self._compact))

    def close_watches(self) -> int:
        """End every open watch stream now (clean end of the chunked body, no closing bookmark,
        as when a connection is cut); returns how many."""
        assert self._close_watches is not None, "server not started"
        return int(self._on_loop(self._close_watches))

    def fail_writes(self, resource: str, *, subresource: str = "", fraction: float = 1.0, code: int = 500,
                    verbs: tuple[str, ...] = ("create", "update", "patch", "delete"),
                    times: int | None = None) -> WriteFault:
        """Fail ``fraction`` of matching writes with ``code`` (500 InternalError, 503
        ServiceUnavailable or 409 Conflict), the first ``times`` only when given."""
        if code not in (409, 500, 503):
            raise ValueError(f"code must be 409, 500 or 503, not {code}")
        f = WriteFault(resource, subresource, fraction, code, verbs, times)
        self.write_faults = [*self.write_faults, f]
        self._fault_hits[id(f)] = 0
        return f

    def pause(self) -> None:
        """Hold every request (new and in flight before their handler) until :meth:`resume`."""
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    @property
    def paused(self) -> bool:
        return self._paused.is_set()

    def clear(self) -> None:
        """Turn every fault off."""
        self.watch_close_every = None
        self.latency = 0.0
        self.write_faults = []
        self._paused.clear()

    # ------------------------------------------------------------ server side
    def write_fault(self, resource: str, subresource: str, verb: str) -> int | None:
        """The code to fail this write with, or None (called by the server)."""
        for f in self.write_faults:
            if f.resource != resource or verb not in f.verbs:
                continue
            if f.subresource != "*" and f.subresource != subresource:
                continue
            if f.times is not None and self._fault_hits.get(id(f), 0) >= f.times:
                continue
            if self._rng.random() < f.fraction:
                self.injected += 1
                self._fault_hits[id(f)] = self._fault_hits.get(id(f), 0) + 1
                return f.code
        return None

    async def before_request(self) -> None:
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        while self._paused.is_set():
            await asyncio.sleep(0.02)
