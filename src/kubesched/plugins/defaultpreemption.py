"""DefaultPreemption (upstream ``pkg/scheduler/framework/plugins/defaultpreemption``, v1.34).

PostFilter only: when no node fits, run the preemption
:class:`~kubesched.framework.preemption.Evaluator` and prefix its message with
``"preemption: "`` (keeping its code and result), e.g.
``"preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for
incoming pod."`` or ``"preemption: not eligible due to preemptionPolicy=Never."``. On success
the pod is nominated to the chosen node (``NominatingInfo(node, OVERRIDE)``) after its victims
were deleted; since v1.37 the Success status reads ``"preemption: found a potential placement for
pod on node <node>, preempting <n> victims"`` and ends the FailedScheduling message.

Args (``DefaultPreemptionArgs``): ``minCandidateNodesPercentage`` (10) and
``minCandidateNodesAbsolute`` (100): the dry run looks for
``max(n*pct/100, abs)`` candidates (at most ``n``) among the ``n`` potential nodes.

PreEnqueue / events: upstream registers a PreEnqueue gate and an ``AssignedPod/Delete`` event
(hint: Skip) only with ``SchedulerAsyncPreemption``; preemption here is synchronous, so
``events_to_register`` is empty (the plugin implements EnqueueExtensions and never rejects in
PreEnqueue) and there is no PreEnqueue.

Customisation as upstream's exported fields: ``plugin.evaluator.is_eligible_pod`` and
``plugin.evaluator.more_important_pod`` may be replaced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.config.args import DefaultPreemptionArgs
from kubesched.errors import InputError
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interface import PostFilterResult, Status
from kubesched.framework.preemption import Evaluator
from kubesched.plugins.noderesources.fit import PRE_FILTER_STATE_KEY as FIT_STATE_KEY
from kubesched.plugins.noderesources.fit import Fit, FitRequest

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Sequence

    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_info import PodInfo

__all__ = ["MESSAGE_PREFIX", "NAME", "DefaultPreemption", "new"]

NAME = "DefaultPreemption"
MESSAGE_PREFIX = "preemption: "


class DefaultPreemption:
    """PostFilter plugin. See the module docstring."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        args = args if args is not None else DefaultPreemptionArgs()
        pct = 10 if args.min_candidate_nodes_percentage is None else args.min_candidate_nodes_percentage
        absolute = 100 if args.min_candidate_nodes_absolute is None else args.min_candidate_nodes_absolute
        if not 0 <= pct <= 100:
            raise InputError(f"Invalid value: {pct}: not in valid range [0, 100]", "minCandidateNodesPercentage")
        if absolute < 0:
            raise InputError(f"Invalid value: {absolute}: not in valid range [0, inf)", "minCandidateNodesAbsolute")
        if pct == 0 and absolute == 0:
            raise InputError("Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
                             "minCandidateNodesPercentage")
        self.args = args
        self.handle = handle
        self.evaluator = Evaluator(NAME, handle, min_candidate_nodes_percentage=pct,
                                   min_candidate_nodes_absolute=absolute)
        self.evaluator.reprieve_precheck = self._fit_reprieve_precheck

    def _fit_reprieve_precheck(self, state: CycleState, plugins: Sequence[Any]
                               ) -> Callable[[int, Sequence[PodInfo], Sequence[PodInfo]], bool] | None:
        """NodeResourcesFit's verdict by arithmetic on a row: ``rejects(row, added, removed)`` is
        True when, with the pods ``added`` added to the row and ``removed`` removed, the row's
        pod count or a checked resource rejects the preemptor (as ``Fit.filter_nodes`` on the
        edited row). None when Fit is not among ``plugins`` (the
        Filter plugins not skipped in this cycle) or its PreFilter state is absent."""
        if not any(isinstance(pl, Fit) for pl in plugins):
            return None
        pi = state.pod_info
        if pi is not None and pi.pod.spec.node_name and any(
                isinstance(pl, Fit) and pl.deferred_resize for pl in plugins):
            return None  # an assigned (deferred-resize) preemptor: Fit checks the delta over its cached copy
        req = state.get(FIT_STATE_KEY)
        if not isinstance(req, FitRequest):
            return None
        table = self.handle.nodes
        checks = () if req.empty else req.checks
        index = table.resource_index

        def rejects(row: int, added: Sequence[PodInfo], removed: Sequence[PodInfo]) -> bool:
            alloc, used, pods_col = table.allocatable, table.requested, table.PODS
            for pi in added:
                if any(name not in index for name in pi.requests if name != "pods"):
                    return False  # adding it creates a column: leave it to the real run
            delta = len(added) - len(removed)
            if int(used[row, pods_col]) + delta >= int(alloc[row, pods_col]):
                return True
            for name, q in checks:
                col = index.get(name)
                if name in req.dra and (col is None or int(alloc[row, col]) == 0):
                    continue  # DRAExtendedResource: left to DynamicResources on this node
                if col is None:
                    return True  # no node has the resource
                if col == pods_col:
                    change = delta
                else:
                    change = 0
                    for pi in added:
                        change += pi.requests.get(name, 0)
                    for pi in removed:
                        change -= pi.requests.get(name, 0)
                if int(alloc[row, col]) - (int(used[row, col]) + change) < q:
                    return True
            return False
        return rejects

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """None without async preemption (upstream returns ``nil, nil``)."""
        return []

    def post_filter(self, state: CycleState, pod: Pod,
                    filtered_node_status_map: Any) -> tuple[PostFilterResult | None, Status]:
        fw = self.handle.framework
        recorder = fw.metrics if fw is not None else None
        if recorder is not None:  # upstream: PreemptionAttempts.Inc() deferred in PostFilter
            recorder.observe_preemption_attempt()
        result, status = self.evaluator.preempt(state, pod, filtered_node_status_map)
        msg = status.message()
        if msg:
            return result, Status(status.code, (MESSAGE_PREFIX + msg,), status.error)
        return result, status


def new(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    """Factory (upstream ``defaultpreemption.New``)."""
    return DefaultPreemption(args, handle)
