"""NodeName (upstream ``pkg/scheduler/framework/plugins/nodename``, v1.34 and v1.37.2).

Filter: when ``spec.nodeName`` is set, every other node is rejected
UnschedulableAndUnresolvable with ``"node(s) didn't match the requested node name"``.
v1.34–1.36 have no NodeName PreFilter; since 1.37 (node_name.go L73-83) the plugin is also a
PreFilter that returns ``PreFilterResult{spec.nodeName}`` when the field is set (never Skip), so
only that node is evaluated and every other node gets the framework's absent-node status
``"node(s) didn't satisfy plugin(s) [NodeName]"`` (the FailedScheduling text changes, and those
nodes are no preemption candidates); a name no node has leaves no node at all.

Events (QueueingHints on, the v1.34 default): Node Add, without a hint (always queue).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import Code, FilterResult, PreFilterResult, Status
from kubesched.framework.signers import NODE_NAME_SIGNER_NAME
from kubesched.plugins.helper.gates import features_of

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = ["ERR_REASON", "NAME", "NodeName", "NodeName137", "fits", "new"]

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_name: str) -> bool:
    """Upstream ``nodename.Fits``: no ``spec.nodeName``, or it equals the node's name."""
    want = pod.spec.node_name
    return not want or want == node_name


class NodeName:
    """Filter only (v1.34–1.36). See the module docstring."""

    name = NAME
    pure_filter_nodes = True
    """``filter_nodes`` judges each row on its own, without effects (``Framework.run_filter_plugins``)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 node_name.go ``SignPod``): ``spec.nodeName``."""
        return [(NODE_NAME_SIGNER_NAME, pod.spec.node_name)], None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]

    def filter_is_node_local(self, state: CycleState) -> bool:
        """Filter depends only on the pod and the one node's state (the scheduler's equivalence
        cache, :mod:`kubesched.framework.equivalence`, may reuse its passes)."""
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if fits(pod, node_info.node.metadata.name):
            return None
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        want = pod.spec.node_name
        if not want:
            return None
        row = nodes.row_of.get(want)
        mask = np.ones(len(rows), bool) if row is None else rows != row
        if not np.count_nonzero(mask):
            return None
        return FilterResult.single(mask, ERR_REASON, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)


class NodeName137(NodeName):
    """v1.37: also a PreFilter (node_name.go L73-88)."""

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[PreFilterResult | None, None]:
        if pod.spec.node_name:
            return PreFilterResult(frozenset((pod.spec.node_name,))), None
        return None, None

    def pre_filter_extensions(self) -> None:
        return None


def new(args: Any, handle: Any) -> NodeName:
    """Factory (upstream ``nodename.New``); the plugin takes no args. At emulated 1.37+ the
    plugin has a PreFilter."""
    fg = features_of(handle)
    return NodeName137() if fg.at_least(1, 37) else NodeName()
