"""SchedulingGates (upstream ``pkg/scheduler/framework/plugins/schedulinggates``, v1.34).

PreEnqueue: a pod with any ``spec.schedulingGates`` is rejected UnschedulableAndUnresolvable
with ``"waiting for scheduling gates: [g1 g2]"`` (Go ``%v`` of the ``[]string`` of gate names),
and the queue parks it as gated.

Queueing hint: Pod update with ``UpdatePodSchedulingGatesEliminated`` → queue only when the
updated pod is the gated pod itself (compared by UID, as upstream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.api.objects import pod_key
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import Code, Status
from kubesched.plugins.helper.gates import features_of

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod

__all__ = ["NAME", "SchedulingGates", "gates_message", "new"]

NAME = "SchedulingGates"


def gates_message(gate_names: list[str]) -> str:
    """``fmt.Sprintf("waiting for scheduling gates: %v", gates)`` for a ``[]string``."""
    return f"waiting for scheduling gates: [{' '.join(gate_names)}]"


def _uid(pod: Any) -> str:
    return pod.metadata.uid or pod_key(pod)


class SchedulingGates:
    """PreEnqueue only. See the module docstring."""

    name = NAME

    def __init__(self, handle: Any = None) -> None:
        self.handle = handle

    def pre_enqueue(self, pod: Pod) -> Status | None:
        gates = pod.spec.scheduling_gates
        if not gates:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (gates_message([g.name for g in gates]),))

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """1.37: ``TargetPod/UpdatePodSchedulingGatesEliminated``, always Queue
        (scheduling_gates.go L61-66); before: ``Pod/…`` with a UID check."""
        if features_of(self.handle).at_least(1, 37):
            return [ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
                self.is_schedulable_after_target_pod_gates_eliminated)]
        return [ClusterEventWithHint(
            ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
            self.is_schedulable_after_gates_eliminated)]

    @staticmethod
    def is_schedulable_after_target_pod_gates_eliminated(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """1.37 ``isSchedulableAfterUpdateTargetPodSchedulingGatesEliminated``: always Queue."""
        return QueueingHint.QUEUE

    @staticmethod
    def is_schedulable_after_gates_eliminated(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Queue only when the modified pod is the pod itself (upstream compares UIDs)."""
        if new is None or _uid(new) != _uid(pod):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def new(args: Any, handle: Any) -> SchedulingGates:
    return SchedulingGates(handle)
