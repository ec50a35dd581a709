"""NodeName (upstream ``pkg/scheduler/framework/plugins/nodename``, v1.34).

Filter only: when ``spec.nodeName`` is set, every other node is rejected
UnschedulableAndUnresolvable with ``"node(s) didn't match the requested node name"``.
v1.34 has no NodeName PreFilter (one existed briefly around v1.26 and was removed), so none
is implemented here; the batch Filter is a single comparison of row numbers anyway.

Events (QueueingHints on, the v1.34 default): Node Add, without a hint (always queue).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import Code, FilterResult, Status

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["ERR_REASON", "NAME", "NodeName", "fits", "new"]

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_name: str) -> bool:
    """Upstream ``nodename.Fits``: no ``spec.nodeName``, or it equals the node's name."""
    want = pod.spec.node_name
    return not want or want == node_name


class NodeName:
    """Filter only. See the module docstring."""

    name = NAME

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD))]

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


def new(args: Any, handle: Any) -> NodeName:
    """Factory (upstream ``nodename.New``); the plugin takes no args."""
    return NodeName()
