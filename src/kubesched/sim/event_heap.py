"""The simulator's event heap: a small threadless discrete-event environment over virtual time
(SimPy's core idea; see ``docs/architecture.md``). Not the scheduling engine (``kubesched.scheduler``).

Time moves only when the event heap is popped. Each entry is keyed ``(time, priority, seq)``:
earlier time first, then lower ``priority``, then insertion order (``seq`` only grows), so
events at the same time and priority run first-in first-out and a run is fully deterministic.
A callback may schedule further events, including at the current time.

The environment owns the virtual time and pushes it into a
:class:`~kubesched.framework.clock.ManualClock` before each callback, so the scheduling
engine (which only ever asks its injected clock) sees the event's time. It also owns the
clock's timers: ``clock.call_later(d, cb)`` becomes an event ``d`` seconds from now (priority
``timer_priority``), so Permit timeouts fire at their virtual time.

    env = Environment(clock)
    env.schedule(10.0, lambda: print(env.now))
    env.run()            # prints 10.0

Callbacks that raise propagate out of :meth:`Environment.step` / :meth:`Environment.run`: a
failed event is never swallowed.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.clock import ManualClock

__all__ = ["EmptySchedule", "Environment", "Event"]


class EmptySchedule(Exception):
    """:meth:`Environment.step` was called with no event left."""


@dataclass(order=True, slots=True)
class Event:
    """A scheduled callback. Ordered by ``(time, priority, seq)``; ``cancel()`` makes it a no-op."""

    time: float
    priority: int
    seq: int
    callback: Callable[[], Any] | None = field(compare=False)

    @property
    def cancelled(self) -> bool:
        return self.callback is None

    def cancel(self) -> None:
        """Drop the event: it stays in the heap but does nothing (and is not counted) when popped."""
        self.callback = None


class Environment:
    """A deterministic event loop over virtual time (seconds).

    Args:
        clock: the clock to drive (a new :class:`ManualClock` at ``start`` when omitted).
        start: initial time when ``clock`` is omitted.
        timer_priority: the priority of events created by ``clock.call_later``.
    """

    def __init__(self, clock: ManualClock | None = None, *, start: float = 0.0, timer_priority: int = 0) -> None:
        self.clock = clock if clock is not None else ManualClock(start)
        self._now = self.clock.now()
        self._heap: list[Event] = []
        self._seq = 0
        self.processed = 0
        """How many (non-cancelled) events have run."""
        self.clock.attach(lambda delay, cb: self.schedule_in(delay, cb, timer_priority))

    @property
    def now(self) -> float:
        """The current virtual time."""
        return self._now

    def __len__(self) -> int:
        """Events in the heap (cancelled ones included until popped)."""
        return len(self._heap)

    def schedule(self, at: float, callback: Callable[[], Any], priority: int = 0) -> Event:
        """Run ``callback()`` at absolute time ``at`` (>= ``now``). Returns the event (cancellable)."""
        if not math.isfinite(at):
            raise ValueError(f"event time must be finite, got {at!r}")
        if at < self._now:
            raise ValueError(f"cannot schedule an event in the past: {at} < now {self._now}")
        self._seq += 1
        ev = Event(float(at), priority, self._seq, callback)
        heapq.heappush(self._heap, ev)
        return ev

    def schedule_in(self, delay: float, callback: Callable[[], Any], priority: int = 0) -> Event:
        """Run ``callback()`` ``delay`` seconds from now."""
        if delay < 0:
            raise ValueError(f"negative delay {delay!r}")
        return self.schedule(self._now + delay, callback, priority)

    def peek(self) -> float:
        """Time of the next live event, ``inf`` when there is none."""
        heap = self._heap
        while heap and heap[0].callback is None:
            heapq.heappop(heap)
        return heap[0].time if heap else math.inf

    def step(self) -> None:
        """Pop the next live event, advance the clock to its time and run it."""
        heap = self._heap
        while heap:
            ev = heapq.heappop(heap)
            cb = ev.callback
            if cb is None:
                continue
            ev.callback = None
            if ev.time > self._now:
                self._now = ev.time
                self.clock.set(ev.time)
            self.processed += 1
            cb()
            return
        raise EmptySchedule()

    def run(self, until: float | None = None) -> None:
        """Run events until none is left, or — with ``until`` — every event with ``time < until``;
        the clock then stands at ``until`` (if that is later than the last event)."""
        if until is not None:
            if until < self._now:
                raise ValueError(f"until ({until}) is before now ({self._now})")
            while self.peek() < until:
                self.step()
            if until > self._now and math.isfinite(until):
                self._now = float(until)
                self.clock.set(self._now)
            return
        while self.peek() != math.inf:
            self.step()
