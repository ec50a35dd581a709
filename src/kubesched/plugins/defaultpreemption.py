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
``plugin.evaluator.more_important_pod`` may be replaced (with GenericWorkload, v1.37:
``is_eligible_victim`` and ``more_important_victim``, over victim units).

Workload-aware preemption (GenericWorkload, v1.37.2 ``default_preemption.go`` L483-515):
victims are units (a PodGroup with ``disruptionMode: all`` is preempted whole, see
:mod:`kubesched.framework.preemption`), and ``pod_group_post_filter`` (PodGroupPostFilter) runs
:class:`~kubesched.framework.podgrouppreemption.PodGroupEvaluator` for a group the pod-group cycle
could not place, prefixing its message with ``"pod group preemption: "`` and counting
``workload_preemption_attempts_total{result}`` (the status code name). With GenericWorkload the
plugin is also a PreEnqueue plugin (upstream: always, but it gates only with async preemption):
a member of a group whose preemption is still being actuated is held with
UnschedulableAndUnresolvable ``"waiting for the preemption for this pod group to be finished"``;
preemption here is synchronous, so by the time a member is queued again it has finished and the
gate passes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.config.args import DefaultPreemptionArgs
from kubesched.errors import InputError
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interface import Code, PostFilterResult, Status
from kubesched.framework.podgroup import pod_group_name_of
from kubesched.framework.podgrouppreemption import PodGroupEvaluator
from kubesched.framework.preemption import Evaluator, ExactPrecheck
from kubesched.plugins.noderesources.fit import PRE_FILTER_STATE_KEY as FIT_STATE_KEY
from kubesched.plugins.noderesources.fit import Fit, FitRequest

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable, Sequence

    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.handle import Handle
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.podgroup import (
        PodGroupCycleState,
        PodGroupInfo,
        PodGroupPostFilterResult,
        PodGroupSchedulingFunc,
    )

__all__ = ["MESSAGE_PREFIX", "NAME", "POD_GROUP_MESSAGE_PREFIX", "DefaultPreemption", "new"]

NAME = "DefaultPreemption"
MESSAGE_PREFIX = "preemption: "
POD_GROUP_MESSAGE_PREFIX = "pod group preemption: "
MSG_WAITING_FOR_GROUP_PREEMPTION = "waiting for the preemption for this pod group to be finished"
_NEVER_SHORT = 1 << 62
"""The batch slack of a check Fit does not make on a row (no pod request comes near it)."""


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
        self.pod_group_evaluator = PodGroupEvaluator(handle, self.evaluator)
        self.preempting: set[str] = set()
        """UIDs of the pod groups whose preemption is being actuated (upstream
        ``Executor.preempting``; filled and emptied within one synchronous PodGroupPostFilter)."""
        fg = handle.features
        if fg.enabled("GenericWorkload") and fg.at_least(1, 37):
            self.pre_enqueue = self._pre_enqueue

    def _fit_reprieve_precheck(self, state: CycleState, plugins: Sequence[Any]) -> ExactPrecheck | None:
        """NodeResourcesFit's verdict by arithmetic on a row: ``verdict(row, added, removed)`` is
        True when, with the pods ``added`` added to the row and ``removed`` removed, the row's
        pod count or a checked resource rejects the preemptor (as ``Fit.filter_nodes`` on the
        edited row), False when Fit passes it, None when an added pod requests a resource no
        node has yet (adding it would create a table column: left to the real run). Calling the
        result is ``verdict(...) is True``; it decides the Fit plugins of ``plugins`` exactly.
        ``reprieve(row, passes, removed, order)``: the same arithmetic for a whole reprieve —
        with ``removed`` off the row and each pass's pods added, which of ``order``, re-added in
        turn, still leave room (a kept victim's requests are spent), or None (unknown).
        None when Fit is not among ``plugins`` (the Filter plugins not skipped in this cycle) or
        its PreFilter state is absent."""
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

        def verdict(row: int, added: Sequence[PodInfo], removed: Sequence[PodInfo]) -> bool | None:
            for pi in added:
                if any(name not in index for name in pi.requests if name != "pods"):
                    return None  # adding it creates a column: leave it to the real run
            pods_col = table.PODS
            alloc = table.allocatable[row].tolist()
            used = table.requested[row].tolist()
            delta = len(added) - len(removed)
            if used[pods_col] + delta >= alloc[pods_col]:
                return True
            for name, q in checks:
                col = index.get(name)
                if name in req.dra and (col is None or alloc[col] == 0):
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
                if alloc[col] - (used[col] + change) < q:
                    return True
            return False
        def reprieve(row: int, passes: Sequence[Sequence[PodInfo]], removed: Sequence[PodInfo],
                     order: Sequence[PodInfo]) -> list[bool] | None:
            # the slack of each pass (with ``added`` added and ``removed`` removed), per check:
            # Fit passes while every slack is >= 0; re-adding a victim spends its requests
            pods_col = table.PODS
            alloc = table.allocatable[row].tolist()
            used = table.requested[row].tolist()
            cols: list[tuple[str, int, int]] = []  # (resource, column, request) of the checks Fit makes here
            for name, q in checks:
                col = index.get(name)
                if name in req.dra and (col is None or alloc[col] == 0):
                    continue  # DRAExtendedResource: left to DynamicResources on this node
                if col is None:
                    return None
                cols.append((name, col, q))
            slacks: list[list[int]] = []
            for added in passes:
                if any(name not in index for pi in added for name in pi.requests if name != "pods"):
                    return None
                delta = len(added) - len(removed)
                slack = [alloc[pods_col] - used[pods_col] - delta - 1]
                for name, col, q in cols:
                    if col == pods_col:
                        change = delta
                    else:
                        change = (sum(pi.requests.get(name, 0) for pi in added)
                                  - sum(pi.requests.get(name, 0) for pi in removed))
                    slack.append(alloc[col] - used[col] - change - q)
                if min(slack) < 0:
                    return None  # the row does not fit even with every victim removed
                slacks.append(slack)
            kept: list[bool] = []
            for pi in order:
                cost = [1] + [1 if col == pods_col else pi.requests.get(name, 0) for name, col, _ in cols]
                fits = all(s - c >= 0 for slack in slacks for s, c in zip(slack, cost, strict=True))
                if fits:
                    for slack in slacks:
                        for i, c in enumerate(cost):
                            slack[i] -= c
                kept.append(fits)
            return kept

        def batch(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, Callable[[PodInfo], list[int]]] | None:
            # verdict(row, (), removed) for many rows: the slack of each check on the row as it is
            # (column 0 the pod count), what the row's pods take from each together, and what one does
            pods_col = table.PODS
            alloc = table.allocatable[rows]
            used = table.requested[rows]
            slack = [alloc[:, pods_col] - used[:, pods_col] - 1]
            taken = [used[:, pods_col]]
            kept: list[tuple[str, int]] = []
            for name, q in checks:
                col = index.get(name)
                if name in req.dra and col is None:
                    continue  # DRAExtendedResource on every node: left to DynamicResources
                if col is None:
                    return None  # no node has the resource: verdict rejects every row
                s = alloc[:, col] - used[:, col] - q
                if name in req.dra:
                    s[alloc[:, col] == 0] = _NEVER_SHORT  # DRAExtendedResource on this node
                slack.append(s)
                taken.append(used[:, pods_col] if col == pods_col else used[:, col])
                kept.append((name, col))

            names = tuple(name for name, col in kept if col != pods_col)
            if len(names) == len(kept):
                def cost(pi: PodInfo) -> list[int]:
                    get = pi.requests.get
                    return [1, *[get(name, 0) for name in names]]
            else:  # a check on the pod-count column: each pod takes 1 there
                def cost(pi: PodInfo) -> list[int]:
                    r = pi.requests
                    return [1, *[1 if col == pods_col else r.get(name, 0) for name, col in kept]]

            return np.stack(slack, axis=1), np.stack(taken, axis=1), cost

        return ExactPrecheck(verdict, tuple(pl for pl in plugins if isinstance(pl, Fit)), reprieve, batch)

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


    def _pre_enqueue(self, pod: Pod) -> Status | None:
        """Upstream ``PreEnqueue`` for members of a pod group (L160-200): held while the group's
        preemption is being actuated; a pod without its PodGroup object is not held."""
        name = pod_group_name_of(pod)
        if name is None or not self.preempting:
            return None
        pg = self.pod_group_evaluator.evaluator._group_index().pod_group(pod.metadata.namespace, name)
        if pg is None:
            return None
        uid = str((pg.get("metadata") or {}).get("uid") or f"{pod.metadata.namespace}/{name}")
        if uid in self.preempting:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (MSG_WAITING_FOR_GROUP_PREEMPTION,))
        return None

    def pod_group_post_filter(self, state: PodGroupCycleState, pg_info: PodGroupInfo,
                              scheduling_func: PodGroupSchedulingFunc,
                              ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """Upstream ``PodGroupPostFilter`` (L483-515): pod-group preemption on the whole cluster,
        the message prefixed with ``"pod group preemption: "``; the NodeTable is left as found."""
        group = pg_info.composite_pod_group if pg_info.composite_pod_group is not None else pg_info.pod_group
        meta = (group or {}).get("metadata") or {}
        uid = str(meta.get("uid") or f"{pg_info.namespace}/{pg_info.name}")
        self.preempting.add(uid)
        try:
            result, status = self.pod_group_evaluator.preempt(pg_info, scheduling_func)
        finally:
            self.preempting.discard(uid)
        fw = self.handle.framework
        recorder = fw.metrics if fw is not None else None
        observe = getattr(recorder, "observe_workload_preemption_attempt", None)
        if observe is not None:
            observe(str(status.code))
        msg = status.message()
        if msg:
            return result, Status(status.code, (POD_GROUP_MESSAGE_PREFIX + msg,), status.error)
        return result, status


def new(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    """Factory (upstream ``defaultpreemption.New``)."""
    return DefaultPreemption(args, handle)
