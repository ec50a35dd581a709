"""NodeUnschedulable (upstream ``pkg/scheduler/framework/plugins/nodeunschedulable``, v1.34; v1.37.2 changes below).

Filter: a node with ``spec.unschedulable`` is rejected UnschedulableAndUnresolvable with
``"node(s) were unschedulable"`` unless the pod tolerates the taint
``node.kubernetes.io/unschedulable:NoSchedule``.

Queueing hints (QueueingHints on, the v1.34 default): Node Add/UpdateNodeTaint → queue when a
node is added schedulable or goes from unschedulable to schedulable; Pod UpdatePodToleration →
queue when the rejected pod itself now tolerates the unschedulable taint.

Since 1.37 also a PreFilter (node_unschedulable.go L127-133): Success, or Skip for a pod whose
resize the kubelet deferred when InPlacePodVerticalScalingSchedulerPreemption (alpha) is on —
Filter then passes such a pod (L141-144). Below 1.37 there is no PreFilter (the factory returns
the plain class). Toleration operators ``Lt``/``Gt`` count only with the gate
TaintTolerationComparisonOperators (alpha, 1.35+).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.objects import Taint
from kubesched.api.taints import TAINT_EFFECT_NO_SCHEDULE, tolerations_tolerate_taint
from kubesched.features import FeatureGate, default_feature_gate
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import Code, FilterResult, Status
from kubesched.framework.npfast import count_nonzero
from kubesched.framework.signers import TOLERATIONS_SIGNER_NAME, tolerations_signer
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.resize import SkipDeferredResizePreFilter, deferred_resize_enabled, is_pod_resize_deferred

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod, Toleration
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "ERR_REASON_UNKNOWN_CONDITION",
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "NodeUnschedulable",
    "NodeUnschedulable137",
    "TAINT_NODE_UNSCHEDULABLE",
    "new",
    "tolerates_unschedulable",
]

NAME = "NodeUnschedulable"
ERR_REASON_UNKNOWN_CONDITION = "node(s) had unknown conditions"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=TAINT_EFFECT_NO_SCHEDULE)


def tolerates_unschedulable(tolerations: list[Toleration], comparison_operators: bool = False) -> bool:
    """Whether the tolerations tolerate ``node.kubernetes.io/unschedulable:NoSchedule``
    (then the pod also tolerates ``spec.unschedulable``)."""
    return tolerations_tolerate_taint(tolerations, _UNSCHEDULABLE_TAINT, comparison_operators)


class NodeUnschedulable:
    """Filter only (v1.34–1.36). See the module docstring."""

    name = NAME
    pure_filter_nodes = True
    """``filter_nodes`` judges each row on its own, without effects (``Framework.run_filter_plugins``)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 node_unschedulable.go ``SignPod``): the pod's sorted tolerations."""
        return [(TOLERATIONS_SIGNER_NAME, tolerations_signer(pod))], None

    def __init__(self, features: FeatureGate | None = None) -> None:
        fg = features if features is not None else default_feature_gate()
        self.features = fg
        self.comparison_operators = fg.enabled("TaintTolerationComparisonOperators")
        self.deferred_resize = deferred_resize_enabled(fg)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """Node Add|UpdateNodeTaint; the pod's own new toleration: 1.37 ``TargetPod`` (hint
        without a UID check, node_unschedulable.go L60-68), before ``Pod`` comparing UIDs."""
        if self.features.at_least(1, 37):
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

    def is_schedulable_after_pod_toleration_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        same = (pod.metadata.uid or (pod.metadata.namespace, pod.metadata.name)) == \
            (new.metadata.uid or (new.metadata.namespace, new.metadata.name))
        if same and tolerates_unschedulable(new.spec.tolerations, self.comparison_operators):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def filter_is_node_local(self, state: CycleState) -> bool:
        """Filter depends only on the pod and the one node's state (the scheduler's equivalence
        cache, :mod:`kubesched.framework.equivalence`, may reuse its passes)."""
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        node = node_info.node
        if node is None:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNKNOWN_CONDITION)
        if not node.spec.unschedulable or tolerates_unschedulable(pod.spec.tolerations, self.comparison_operators):
            return None
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSCHEDULABLE)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        mask = nodes.unschedulable[rows]
        if not count_nonzero(mask) or tolerates_unschedulable(pod.spec.tolerations, self.comparison_operators):
            return None
        return FilterResult.single(mask, ERR_REASON_UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class NodeUnschedulable137(SkipDeferredResizePreFilter, NodeUnschedulable):
    """v1.37: also a PreFilter (node_unschedulable.go L127-138)."""


def new(args: Any, handle: Any) -> NodeUnschedulable:
    """Factory (upstream ``nodeunschedulable.New``); the plugin takes no args. At emulated
    1.37+ the plugin has a PreFilter."""
    fg = features_of(handle)
    return (NodeUnschedulable137 if fg.at_least(1, 37) else NodeUnschedulable)(fg)
