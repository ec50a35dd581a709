"""The injected clock: the engine never reads the time itself (``docs/architecture.md``, "The seams").

A :class:`Clock` gives the time (``now()``, seconds as a float), one-shot timers
(``call_later``) and futures (``create_future``) — everything the binding cycle needs to wait
(upstream: ``time.AfterFunc`` timers of the waiting-pods map, the channel ``WaitOnPermit``
reads; ``pkg/scheduler/framework/runtime/waiting_pods_map.go``).

* :class:`AsyncioClock` — live: the running asyncio loop (``loop.call_later``,
  ``loop.create_future``) and ``time.monotonic``. Its methods need a running loop.
* :class:`ManualClock` — simulator and tests: time moves only when told to (``advance``/``set``,
  or a :class:`~kubesched.sim.event_heap.Environment` that owns it); timers fire when time passes
  them (or become Environment events once an Environment is attached); futures are
  :class:`SimFuture`, which :func:`kubesched.scheduler.drive` resumes without asyncio.
* :class:`WallClock` — ``time.monotonic`` with asyncio timers (an :class:`AsyncioClock`).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import asyncio

__all__ = ["AsyncioClock", "Clock", "ClockFuture", "ManualClock", "SimFuture", "TimerHandle", "WallClock"]


class TimerHandle(Protocol):
    """A pending ``call_later`` callback; ``cancel()`` makes it a no-op (idempotent)."""

    def cancel(self) -> None: ...


class ClockFuture(Protocol):
    """The part of ``asyncio.Future`` the engine uses. ``add_done_callback(cb)`` calls
    ``cb(future)`` once a result is set (at once if it already is)."""

    def set_result(self, result: Any) -> None: ...

    def done(self) -> bool: ...

    def result(self) -> Any: ...

    def add_done_callback(self, fn: Callable[[Any], object]) -> None: ...

    def __await__(self) -> Generator[Any, None, Any]: ...


class Clock(Protocol):
    """Time source, timers and futures (see the module docstring)."""

    def now(self) -> float:
        """Seconds (monotonic; only differences matter)."""
        ...

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> TimerHandle:
        """Run ``callback()`` once, ``delay_s`` seconds (>= 0) from now."""
        ...

    def create_future(self) -> ClockFuture:
        """A future its owner resolves with ``set_result``; awaitable in a binding cycle."""
        ...


class SimFuture:
    """A minimal future for the simulator: ``__await__`` yields the future itself until a result
    is set, so a trampoline (:func:`kubesched.scheduler.drive`) resumes the awaiting coroutine
    from :meth:`add_done_callback`. ``set_result`` twice raises ``asyncio.InvalidStateError``."""

    __slots__ = ("_callbacks", "_done", "_result")

    def __init__(self) -> None:
        self._done = False
        self._result: Any = None
        self._callbacks: list[Callable[[Any], object]] = []

    def done(self) -> bool:
        return self._done

    def result(self) -> Any:
        if not self._done:
            raise _invalid_state("result is not set")
        return self._result

    def set_result(self, result: Any) -> None:
        if self._done:
            raise _invalid_state("result is already set")
        self._done = True
        self._result = result
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, fn: Callable[[Any], object]) -> None:
        if self._done:
            fn(self)
        else:
            self._callbacks.append(fn)

    def __await__(self) -> Generator[Any, None, Any]:
        if not self._done:
            yield self
        return self.result()


def _invalid_state(msg: str) -> Exception:
    import asyncio  # only on misuse: the simulator never imports asyncio otherwise

    return asyncio.InvalidStateError(msg)


class _ManualTimer:
    __slots__ = ("callback", "seq", "when")

    def __init__(self, when: float, seq: int, callback: Callable[[], None] | None) -> None:
        self.when = when
        self.seq = seq
        self.callback = callback

    def __lt__(self, other: _ManualTimer) -> bool:
        return (self.when, self.seq) < (other.when, other.seq)

    def cancel(self) -> None:
        self.callback = None


class ManualClock:
    """A clock that only moves when told to (``advance``/``set``). Starts at ``start`` seconds.

    Timers (``call_later``) are kept in order of due time (then creation) and run by
    ``advance``/``set`` as time passes them, the clock standing at each timer's time while it
    runs. Once an Environment is attached (:meth:`attach`), timers are scheduled on it instead.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[_ManualTimer] = []
        self._seq = 0
        self._schedule: Callable[[float, Callable[[], None]], TimerHandle] | None = None

    def now(self) -> float:
        return self._now

    def attach(self, schedule_in: Callable[[float, Callable[[], None]], TimerHandle]) -> None:
        """Let an event loop own the timers: ``call_later(d, cb)`` becomes ``schedule_in(d, cb)``.
        Timers already pending move there too."""
        self._schedule = schedule_in
        pending, self._timers = self._timers, []
        for t in sorted(pending):
            if t.callback is not None:
                cb = t.callback
                t.callback = None
                schedule_in(max(0.0, t.when - self._now), cb)

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> TimerHandle:
        if delay_s < 0:
            raise ValueError(f"negative delay {delay_s!r}")
        if self._schedule is not None:
            return self._schedule(delay_s, callback)
        self._seq += 1
        t = _ManualTimer(self._now + delay_s, self._seq, callback)
        heapq.heappush(self._timers, t)
        return t

    def create_future(self) -> SimFuture:
        return SimFuture()

    def next_timer(self) -> float | None:
        """When the earliest pending own timer is due, None if there is none."""
        timers = self._timers
        while timers and timers[0].callback is None:
            heapq.heappop(timers)
        return timers[0].when if timers else None

    def pending_timers(self) -> int:
        """Timers not yet run nor cancelled (own timers only)."""
        return sum(1 for t in self._timers if t.callback is not None)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time cannot go backwards")
        self.set(self._now + seconds)

    def set(self, t: float) -> None:
        if t < self._now:
            raise ValueError("time cannot go backwards")
        timers = self._timers
        while timers and timers[0].when <= t:
            timer = heapq.heappop(timers)
            cb = timer.callback
            if cb is None:
                continue
            timer.callback = None
            self._now = max(self._now, timer.when)
            cb()
        self._now = t


class AsyncioClock:
    """Live clock: ``time.monotonic`` and the running loop's timers and futures.

    Used from another thread (the live loop runs scheduling cycles on a worker thread when
    extenders are configured), it needs :attr:`loop` (set by that loop): ``call_later`` is then
    scheduled on the loop thread-safely and ``create_future`` makes a future of that loop.
    ``defer`` (optional, set by the same loop) receives every timer callback instead of running
    it directly — the loop runs it at once, or after the scheduling cycle in flight."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.defer: Callable[[Callable[[], None]], None] | None = None

    def now(self) -> float:
        return time.monotonic()

    def _loop_or_none(self) -> asyncio.AbstractEventLoop | None:
        """The running loop of this thread, or None on a worker thread."""
        import asyncio

        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            if self.loop is None:
                raise
            return None

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> TimerHandle:
        defer = self.defer
        cb = callback if defer is None else (lambda: defer(callback))
        running = self._loop_or_none()
        if running is not None:
            return running.call_later(delay_s, cb)
        assert self.loop is not None
        handle = _ThreadTimer()
        loop = self.loop

        def arm() -> None:
            if not handle.cancelled:
                handle.handle = loop.call_later(delay_s, cb)

        loop.call_soon_threadsafe(arm)
        return handle

    def create_future(self) -> asyncio.Future[Any]:
        running = self._loop_or_none()
        if running is not None:
            return running.create_future()
        assert self.loop is not None
        return self.loop.create_future()


class _ThreadTimer:
    """A timer armed from a worker thread (armed on the loop thread; ``cancel()`` either way)."""

    __slots__ = ("cancelled", "handle")

    def __init__(self) -> None:
        self.cancelled = False
        self.handle: asyncio.TimerHandle | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()


class WallClock(AsyncioClock):
    """Monotonic wall time in seconds (an :class:`AsyncioClock`)."""
