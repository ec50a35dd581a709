"""The injected clock: the engine never reads the time itself (``../shared/DESIGN.md``).

``now()`` returns seconds as a float. :class:`WallClock` is the real time (live mode);
:class:`ManualClock` is moved by whoever drives it (the simulator's event loop, tests).
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = ["Clock", "ManualClock", "WallClock"]


class Clock(Protocol):
    def now(self) -> float: ...


class WallClock:
    """Monotonic wall time in seconds."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that only moves when told to (``advance``/``set``). Starts at ``start`` seconds."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time cannot go backwards")
        self._now += seconds

    def set(self, t: float) -> None:
        if t < self._now:
            raise ValueError("time cannot go backwards")
        self._now = t
