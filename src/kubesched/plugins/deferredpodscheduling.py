"""DeferredPodScheduling (upstream v1.37.2 ``pkg/scheduler/framework/plugins/deferredpodscheduling``).

Alpha, gate InPlacePodVerticalScalingSchedulerPreemption (off by default, exists since 1.37).
A running pod whose in-place resize the kubelet deferred (``PodResizePending`` condition with
reason ``Deferred``, :func:`~kubesched.plugins.helper.resize.is_pod_resize_deferred`) re-enters
the scheduling queue; the scheduler only checks whether the resize fits its node (Fit compares
the delta over the cached copy of the pod) and preempts lower-priority pods there if not.

* PreFilter (deferred_pod_scheduling.go L116-121): Skip unless the gate is on and the pod's
  resize is deferred.
* Filter (L127-144): a node other than the pod's ``spec.nodeName`` →
  UnschedulableAndUnresolvable ``"pod assigned to different node"``; a node whose
  ``spec.podPreemptionPolicy.disableResizePreemption`` is non-empty →
  UnschedulableAndUnresolvable ``"node had resize preemption disabled"``.
* Permit (L146-151): always UnschedulableAndUnresolvable ``"pod resize fits, waiting for
  Kubelet actuation"`` — the kubelet actuates the resize, the scheduler never binds.
* Events (L52-63): Node/UpdateNodePreemptionPolicy (Queue when the pod's node re-enables resize
  preemption) and Node/Add (Queue when the pod's node is added with it enabled).

No batching signer (upstream has no ``SignPod``: enabling the plugin disables batching).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, Status
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.resize import deferred_resize_enabled, is_pod_resize_deferred

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Node, Pod
    from kubesched.features import FeatureGate
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "ERR_REASON_DIFFERENT_NODE",
    "ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION",
    "ERR_REASON_PERMIT",
    "NAME",
    "DeferredPodScheduling",
    "new",
    "resize_preemption_disabled",
]

NAME = "DeferredPodScheduling"
ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION = "node had resize preemption disabled"
ERR_REASON_DIFFERENT_NODE = "pod assigned to different node"
ERR_REASON_PERMIT = "pod resize fits, waiting for Kubelet actuation"


def resize_preemption_disabled(node: Node) -> bool:
    """``node.Spec.PodPreemptionPolicy != nil && len(...DisableResizePreemption) > 0``."""
    pol = node.spec.pod_preemption_policy
    return pol is not None and len(pol.disable_resize_preemption) > 0


class DeferredPodScheduling:
    """PreFilter, Filter (both shapes), Permit, EnqueueExtensions. See the module docstring."""

    name = NAME

    def __init__(self, features: FeatureGate | None = None) -> None:
        self.enabled = features is not None and deferred_resize_enabled(features)
        """``enableInPlacePodVerticalScalingSchedulerPreemption``."""

    def _applies(self, pod: Pod) -> bool:
        return self.enabled and is_pod_resize_deferred(pod)

    # ───────────────────────────── events ─────────────────────────────

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """L52-63: Node/UpdateNodePreemptionPolicy and Node/Add."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_PREEMPTION_POLICY),
                                 self.is_schedulable_after_node_change),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD),
                                 self.is_schedulable_after_node_add),
        ]

    def is_schedulable_after_node_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """L65-94: Queue when the pod's own node went from resize preemption disabled to enabled."""
        if not self._applies(pod) or pod.spec.node_name != new.metadata.name:
            return QueueingHint.SKIP
        if old is not None and resize_preemption_disabled(old) and not resize_preemption_disabled(new):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_add(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """L96-114: Queue when the pod's own node is added with resize preemption enabled."""
        if not self._applies(pod) or pod.spec.node_name != new.metadata.name:
            return QueueingHint.SKIP
        return QueueingHint.SKIP if resize_preemption_disabled(new) else QueueingHint.QUEUE

    # ───────────────────────────── PreFilter / Filter ─────────────────────────────

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if not self._applies(pod):
            return None, SKIP_STATUS
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def _node_status(self, pod: Pod, node: Node) -> Status | None:
        if pod.spec.node_name and pod.spec.node_name != node.metadata.name:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_DIFFERENT_NODE)
        if resize_preemption_disabled(node):
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION)
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not self._applies(pod):
            return None
        node = node_info.node
        if node is None:
            return Status.of(Code.ERROR, "node not found")
        return self._node_status(pod, node)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        if not self._applies(pod):
            return None
        want = pod.spec.node_name
        if not want:  # (an unassigned pod's resize is never deferred) every node is checked
            return FilterResult.from_statuses([self._node_status(pod, n) if (n := nodes.nodes[r]) is not None
                                               else Status.of(Code.ERROR, "node not found") for r in rows.tolist()])
        own = nodes.row_of.get(want)
        ids = (rows != own).astype(np.int64) if own is not None else np.ones(len(rows), np.int64)
        own_node = nodes.nodes[own] if own is not None else None
        if own_node is not None and resize_preemption_disabled(own_node):
            ids[rows == own] = 2
        if not np.count_nonzero(ids):
            return None
        return FilterResult.interned(ids, [
            ((ERR_REASON_DIFFERENT_NODE,), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
            ((ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION,), Code.UNSCHEDULABLE_AND_UNRESOLVABLE)])

    # ───────────────────────────── Permit ─────────────────────────────

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        if not self._applies(pod):
            return None, 0.0
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_PERMIT), 0.0


def new(args: Any, handle: Any) -> DeferredPodScheduling:
    """Factory (upstream ``deferredpodscheduling.New``); the plugin takes no args."""
    return DeferredPodScheduling(features_of(handle))
