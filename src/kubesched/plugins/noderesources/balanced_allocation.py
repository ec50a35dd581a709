"""NodeResourcesBalancedAllocation: favour nodes whose resource usage stays balanced.

Follows upstream ``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go``
(v1.34): real requests (``useRequested = true``) of the configured resources (default cpu,
memory; weights must be 1 and are not used by the formula). For each resource with
allocatable > 0 on the node, ``f = min((node requested + pod request) / allocatable, 1)``
in float64; two fractions → ``std = |f1 - f2| / 2``; more → population standard deviation;
``balance = int64((1 - std) * 100)``. A scalar resource the pod does not request is skipped.
Up to v1.35 the score is the balance with the pod; since v1.36 (no gate; v1.37.2
``balanced_allocation.go`` L204-218) it is ``50 + (50 + with - without) / 2`` (Go integer
division), ``with`` / ``without`` the balance of the node's requests with / without the pod.

PreScore returns Skip when every configured request of the pod is 0 (upstream issue
#129138: otherwise best-effort pods would all pile onto the same node).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import kubesched.plugins.helper.extendedresources as _extres
from kubesched.config.args import NodeResourcesBalancedAllocationArgs
from kubesched.features import default_feature_gate
from kubesched.framework.interface import SKIP_STATUS, Code, Status
from kubesched.plugins.noderesources.resource_allocation import (
    BALANCED,
    PreScoreState,
    ResourceAllocationScorer,
    sign_resources,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = ["NAME", "PRE_SCORE_STATE_KEY", "BalancedAllocation", "new"]

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_STATE_KEY = "PreScore" + NAME




class BalancedAllocation:
    """The NodeResourcesBalancedAllocation plugin: PreScore and Score (both shapes)."""

    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]] | None, Status | None]:
        """Batching signature (v1.37.2 balanced_allocation.go ``SignPod``): :func:`sign_resources`."""
        return sign_resources(pod, self.handle)

    def __init__(self, args: NodeResourcesBalancedAllocationArgs | None = None, handle: Handle | None = None) -> None:
        args = args if args is not None else NodeResourcesBalancedAllocationArgs()
        self.handle = handle
        features = handle.features if handle is not None else default_feature_gate()
        self.scorer = ResourceAllocationScorer(BALANCED, [(r.name, r.weight) for r in args.resources],
                                               use_requested=True, balanced_delta=features.at_least(1, 36))
        self.dra_extended_resource = features.enabled("DRAExtendedResource")
        """DRAExtendedResource: DeviceClass-mapped extended resources are scored on the node's
        devices (v1.37.2 balanced_allocation.go L85-98)."""

    def _compute(self, state: CycleState | None, pod: Pod) -> PreScoreState:
        reqs = self.scorer.pod_requests(state, pod)
        dra = _extres.dra_score_state(self.handle, self.scorer.names) if self.dra_extended_resource else None
        return PreScoreState(tuple(reqs), self.scorer.terms_for(reqs), dra)

    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> Status | None:
        s = self._compute(state, pod)
        if not any(s.pod_requests):
            return SKIP_STATUS
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def _state(self, state: CycleState, pod: Pod) -> PreScoreState:
        s = state.get(PRE_SCORE_STATE_KEY) if state is not None else None
        return s if isinstance(s, PreScoreState) else self._compute(state, pod)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = self._state(state, pod)
        if not any(s.pod_requests):  # upstream: without PreScore state, best-effort pods score 0
            return 0, None
        try:
            return self.scorer.score_node(node_info, s.pod_requests, s.dra), None
        except ValueError as e:
            return 0, Status(Code.ERROR, (str(e),), e)

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        s = self._state(state, pod)
        if not any(s.pod_requests):
            return np.zeros(len(rows), np.int64)
        return self.scorer.score_rows(nodes, rows, s.terms, s.dra)


def new(args: NodeResourcesBalancedAllocationArgs | None, handle: Handle | None) -> BalancedAllocation:
    """Factory (``kubesched.plugins.noderesources.balanced_allocation:new``)."""
    return BalancedAllocation(args, handle)
