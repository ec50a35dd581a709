"""PodGroupPodsCount: prefer the placement that holds more of the pod group's members.

Follows upstream ``pkg/scheduler/framework/plugins/podgrouppodscount/podgroup_pods_count.go``
(v1.37.2, TopologyAwareWorkloadScheduling, alpha), a PlacementScore plugin (default weight 1):

* ``ScorePlacement`` (L50-60): the members already scheduled (assumed + assigned; with
  CompositePodGroup, of every pod group below the composite group) plus the placement's proposed
  assignments. A missing pod group state is an Error ("pod group state not found for pod group ns/name").
* ``NormalizePlacementScore`` (L68-90): ``MinScore + score × (MaxScore − MinScore) / max`` in Go
  integer division over the candidate placements (``max`` = the largest raw score); ``max`` 0 is an
  Error "no pods from pod group are assigned to any of the candidate placements". MinCount plays
  no part (small differences in counts stay small differences in score).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, Status, as_status
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.podgroup import PodGroupLookupError, pod_group_states

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.handle import Handle
    from kubesched.framework.podgroup import (
        PlacementCycleState,
        PlacementScore,
        PodGroupAssignments,
        PodGroupCycleState,
        PodGroupInfo,
    )

__all__ = ["NAME", "NO_PODS_ASSIGNED", "PodGroupPodsCount", "new"]

NAME = "PodGroupPodsCount"
NO_PODS_ASSIGNED = "no pods from pod group are assigned to any of the candidate placements"


class PodGroupPodsCount:
    """The PodGroupPodsCount plugin: PlacementScore with NormalizePlacementScore."""

    name = NAME

    def __init__(self, handle: Handle | None = None) -> None:
        self.handle = handle
        self.composite_enabled = features_of(handle).enabled("CompositePodGroup")

    def score_placement(self, state: PlacementCycleState | None, pg_info: PodGroupInfo,
                        assignments: PodGroupAssignments) -> tuple[int, Status | None]:
        """Scheduled members + ``len(assignments.proposed_assignments)``; ``(0, Error)`` on a missing state."""
        try:
            scheduled = sum(s.scheduled_pods_count() for s in pod_group_states(
                getattr(self.handle, "pod_group_manager", None), pg_info, self.composite_enabled))
        except PodGroupLookupError as e:
            return 0, as_status(e)
        return scheduled + len(assignments.proposed_assignments), None

    def normalize_placement_score(self, state: PodGroupCycleState | None, pg_info: PodGroupInfo,
                                  scores: Sequence[PlacementScore]) -> Status | None:
        """Scale ``scores[i].score`` in place to ``[0, 100]`` by the largest one (see the module docstring)."""
        top = 0
        for s in scores:
            top = max(top, s.score)
        if top == 0:
            return as_status(RuntimeError(NO_PODS_ASSIGNED))
        for s in scores:
            s.score = MIN_NODE_SCORE + _go_div(s.score * (MAX_NODE_SCORE - MIN_NODE_SCORE), top)
        return None


def _go_div(a: int, b: int) -> int:
    """Go's int64 division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def new(args: Any, handle: Handle | None) -> PodGroupPodsCount:
    """Factory (``kubesched.plugins.podgrouppodscount:new``); the plugin takes no arguments."""
    return PodGroupPodsCount(handle)
