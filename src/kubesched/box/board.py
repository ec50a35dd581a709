"""What ``kubesched up`` shows: the pods as a user sees them through the API.

:class:`PodBoard` is a pod-informer handler (``on_add`` / ``on_update`` / ``on_delete`` with
:class:`kubesched.api.objects.Pod` objects from a list+watch of ``/api/v1/pods``, every phase).
It keeps one :class:`PodRow` per pod and reports transitions to a listener:

- ``bound``: a pod that was seen without ``spec.nodeName`` now has one;
- ``pending``: a pending pod's reason changed — the ``PodScheduled=False`` condition's message,
  which upstream sets to the FailedScheduling message (``pkg/scheduler/schedule_one.go``
  ``handleSchedulingFailure``), or, for a pod with ``spec.schedulingGates``, upstream's
  ``SchedulingGated`` message (the API server sets that condition on create:
  ``pkg/registry/core/pod/strategy.go``; shown the same way when the server did not).

Pods created bound are counted (``preexisting``) but produce no transitions. Pods whose
``schedulerName`` has no profile here are ``other`` (nobody here will schedule them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kubesched.api.objects import Pod

__all__ = ["GATED_MESSAGE", "PodBoard", "PodRow"]

GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
"""Upstream's message for the ``PodScheduled=False, reason=SchedulingGated`` condition."""


@dataclass(slots=True)
class PodRow:
    """One pod. ``node``: ``spec.nodeName`` ('' = pending); ``reason``/``message``: of the
    ``PodScheduled=False`` condition (or ``SchedulingGated``); ``was_pending``: seen without a node."""

    key: str
    scheduler_name: str
    ours: bool
    node: str = ""
    reason: str = ""
    message: str = ""
    nominated: str = ""
    terminating: bool = False
    was_pending: bool = False
    changed_at: float = 0.0

    @property
    def pending(self) -> bool:
        return not self.node


Listener = Callable[[str, PodRow], None]


class PodBoard:
    """Pods by ``namespace/name``; ``listener(event, row)`` with event ``bound`` or ``pending``.

    ``scheduler_names``: the profiles' ``schedulerName`` values (pods naming another scheduler
    are ``other``). ``clock``: seconds (monotonic) for :attr:`last_change`.
    """

    def __init__(self, scheduler_names: Iterable[str], listener: Listener | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.scheduler_names = frozenset(scheduler_names)
        self.listener = listener
        self.clock = clock
        self.rows: dict[str, PodRow] = {}
        self.last_change = clock()
        self.version = 0  # bumped on every change (for redrawing)

    # ── informer handler ──

    def on_add(self, pod: Pod, _initial: bool = False) -> None:
        self._apply(pod)

    def on_update(self, _old: Pod, new: Pod) -> None:
        self._apply(new)

    def on_delete(self, obj: Any) -> None:
        pod = getattr(obj, "obj", obj)  # DeletedFinalStateUnknown carries .obj
        md = getattr(pod, "metadata", None)
        if md is None:
            return
        if self.rows.pop(f"{md.namespace}/{md.name}", None) is not None:
            self._touch()

    # ── state ──

    def _touch(self) -> None:
        self.last_change = self.clock()
        self.version += 1

    def _apply(self, pod: Pod) -> None:
        md, spec, st = pod.metadata, pod.spec, pod.status
        key = f"{md.namespace}/{md.name}"
        sched = spec.scheduler_name or "default-scheduler"
        row = self.rows.get(key)
        if row is None:
            row = PodRow(key, sched, sched in self.scheduler_names, changed_at=self.clock())
            self.rows[key] = row
            self._touch()
        reason = message = ""
        for c in st.conditions:
            if c.type == "PodScheduled" and c.status == "False":
                reason, message = c.reason or "Unschedulable", c.message
        if not reason and spec.scheduling_gates:
            reason, message = "SchedulingGated", GATED_MESSAGE
        terminating = md.deletion_timestamp is not None
        nominated = st.nominated_node_name
        if terminating != row.terminating or nominated != row.nominated:
            row.terminating, row.nominated = terminating, nominated
            self._touch()
        if spec.node_name:
            if not row.node:
                row.node = spec.node_name
                row.changed_at = self.clock()
                self._touch()
                if row.was_pending:
                    self._emit("bound", row)
            return
        row.was_pending = True
        if (reason, message) != (row.reason, row.message):
            row.reason, row.message = reason, message
            row.changed_at = self.clock()
            self._touch()
            if reason:
                self._emit("pending", row)

    def _emit(self, event: str, row: PodRow) -> None:
        if self.listener is not None:
            self.listener(event, row)

    # ── queries ──

    def scheduled(self) -> list[PodRow]:
        """Pods of ours that were pending and are now bound."""
        return [r for r in self.rows.values() if r.ours and r.was_pending and r.node]

    def pending(self) -> list[PodRow]:
        """Pods of ours without a node."""
        return [r for r in self.rows.values() if r.ours and not r.node]

    def others(self) -> list[PodRow]:
        """Pending pods naming a scheduler with no profile here."""
        return [r for r in self.rows.values() if not r.ours and not r.node]

    def preexisting(self) -> int:
        """Pods bound when first seen."""
        return sum(1 for r in self.rows.values() if r.node and not r.was_pending)

    def settled(self) -> bool:
        """Every pending pod of ours has been attempted and found unschedulable (or is gated),
        none is nominated to a node (preemption under way) and no pod of ours is terminating."""
        for r in self.rows.values():
            if not r.ours:
                continue
            if r.terminating:
                return False
            if not r.node and (not r.reason or r.nominated):
                return False
        return True

    def quiet_for(self) -> float:
        """Seconds since the last change seen."""
        return self.clock() - self.last_change
