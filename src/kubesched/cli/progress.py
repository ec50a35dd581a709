"""A progress bar on the terminal for runs that take a while (issue 18 item 4).

:class:`DelayedProgress` is a ``(done, total)`` callback that draws nothing during the first
``delay`` seconds — a quick run prints exactly what it printed before — and then a rich bar on
stderr, redrawn at most ten times a second. Nothing is drawn when stderr is not a terminal.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any


class DelayedProgress:
    """``with DelayedProgress("simulate", "pods") as tick: run(progress=tick)``.

    Args:
        label: the text before the bar.
        unit: what ``done``/``total`` count (shown after ``done/total``).
        delay: seconds before the bar appears (2 s: a run shorter than that shows none).
        enabled: ``None`` = only when stderr is a terminal.
    """

    def __init__(self, label: str, unit: str, *, delay: float = 2.0, enabled: bool | None = None) -> None:
        self.label, self.unit, self.delay = label, unit, delay
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._next = time.monotonic() + delay  # no bar before this instant, then at most one redraw per 0.1 s
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> DelayedProgress:
        self._next = time.monotonic() + self.delay  # the delay counts from the start of the run
        return self

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + 0.1
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TextColumn(self.unit),
                                 TimeElapsedColumn(), console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=total)
        self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
