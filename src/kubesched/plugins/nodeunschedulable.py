"""NodeUnschedulable (upstream ``pkg/scheduler/framework/plugins/nodeunschedulable``, v1.34).

Filter: a node with ``spec.unschedulable`` is rejected UnschedulableAndUnresolvable with
``"node(s) were unschedulable"`` unless the pod tolerates the taint
``node.kubernetes.io/unschedulable:NoSchedule``.

Queueing hints (QueueingHints on, the v1.34 default): Node Add/UpdateNodeTaint → queue when a
node is added schedulable or goes from unschedulable to schedulable; Pod UpdatePodToleration →
queue when the rejected pod itself now tolerates the unschedulable taint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Taint
from kubesched.api.taints import TAINT_EFFECT_NO_SCHEDULE, tolerations_tolerate_taint
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    features_of,
)
from kubesched.framework.interface import Code, FilterResult, Status

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod, Toleration
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.node_table import NodeTable

__all__ = [
    "ERR_REASON_UNKNOWN_CONDITION",
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "NodeUnschedulable",
    "TAINT_NODE_UNSCHEDULABLE",
    "new",
    "tolerates_unschedulable",
]

NAME = "NodeUnschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=TAINT_EFFECT_NO_SCHEDULE)


def tolerates_unschedulable(tolerations: list[Toleration]) -> bool:
    """Whether the tolerations tolerate ``node.kubernetes.io/unschedulable:NoSchedule``
    (then the pod also tolerates ``spec.unschedulable``)."""
    return tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    """Filter only. See the module docstring."""

    name = NAME

    def __init__(self, handle: Any = None) -> None:
        self.handle = handle

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Node Add|UpdateNodeTaint; the pod's own new toleration: 1.37 ``TargetPod`` (hint
        without a UID check, node_unschedulable.go L60-68), before ``Pod`` comparing UIDs."""
        if features_of(self.handle).at_least(1, 37):
            pod_event = ClusterEventWithHint(
                ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_target_pod_toleration_change)
        else:
            pod_event = ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_TOLERATION),
                self.is_schedulable_after_pod_toleration_change)
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT),
                self.is_schedulable_after_node_change),
            pod_event,
        ]

    @staticmethod
    def is_schedulable_after_target_pod_toleration_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        """1.37 ``isSchedulableAfterTargetPodTolerationChange``: Queue when the updated pod now
        tolerates ``node.kubernetes.io/unschedulable:NoSchedule``."""
        return QueueingHint.QUEUE if tolerates_unschedulable(new.spec.tolerations) else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_node_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if old is None:
            return QueueingHint.SKIP if new.spec.unschedulable else QueueingHint.QUEUE
        if old.spec.unschedulable and not new.spec.unschedulable:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
        same = (pod.metadata.uid or (pod.metadata.namespace, pod.metadata.name)) == \
            (new.metadata.uid or (new.metadata.namespace, new.metadata.name))
        if same and tolerates_unschedulable(new.spec.tolerations):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        if node is None:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNKNOWN_CONDITION)
        if not node.spec.unschedulable or tolerates_unschedulable(pod.spec.tolerations):
            return None
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        mask = nodes.unschedulable[rows]
        if not np.count_nonzero(mask) or tolerates_unschedulable(pod.spec.tolerations):
            return None
        return FilterResult.single(mask, ERR_REASON_UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


def new(args: Any, handle: Any) -> NodeUnschedulable:
    """Factory (upstream ``nodeunschedulable.New``); the plugin takes no args."""
    return NodeUnschedulable(handle)
