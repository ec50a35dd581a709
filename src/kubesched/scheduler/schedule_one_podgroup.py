"""The pod-group cycle (upstream ``pkg/scheduler/schedule_one_podgroup.go`` v1.37.2; GenericWorkload;
upstream-v137 §2.8). One popped :class:`~kubesched.queue.podgroups.QueuedPodGroupInfo` is one
scheduling cycle:

1. the PodGroup object is replaced with the observed one (``reconcilePodGroupWithSnapshot``,
   L134); :func:`validate_pod_group` (L218) — a failure fails every member with an Error and sets
   the ``PodGroupInitiallyScheduled`` condition to False/SchedulerError;
2. members being deleted or already assumed are dropped (``skipPodGroupPodSchedule``, L339);
3. the algorithm (``podGroupSchedulingDefaultAlgorithm``, L556): PlacementFeasible before and
   after each member; each member in member order through the single-pod algorithm (filter and
   score, no PostFilter), assumed in the snapshot only and Reserved; every assumption is reverted
   afterwards, last in first out. With TopologyAwareWorkloadScheduling
   (``podGroupSchedulingPlacementAlgorithm``, L971) the algorithm runs once per generated
   placement, restricted to its nodes, and the best feasible placement is chosen;
4. a rejected group runs the PodGroupPostFilter plugins with a function re-running the algorithm
   (``podGroupCycle``, L428; ``applyPodGroupPostFilterResult``, L774);
5. submit (``submitPodGroupAlgorithmResult``, L812): a schedulable group's members are assumed,
   Reserved and Permitted for real and get a binding cycle each; the others go through
   ``handleSchedulingFailure`` with their own status or ``pod group is unschedulable, <group
   message>``; the PodGroup condition is patched (never regressing True); the entity is
   requeued (:meth:`~kubesched.queue.SchedulingQueue.add_attempted_pod_group`).

Statuses follow upstream's ``Status{reasons, err}``: a status built ``WithError(err)`` carries
the error's text as its first reason (so ``message()`` is Go's ``Message()``, err + reasons).
CompositePodGroups (gate on): a popped PodGroup below a CompositePodGroup is scheduled with its root's
whole tree in one cycle (:mod:`kubesched.scheduler.schedule_one_compositepodgroup`); with the gate, the
chosen placement of a PodGroup is assumed again for its siblings (L1055-1066) and a child's placements
are generated within its parent's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.api.objects import pod_priority
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import FitError
from kubesched.framework.interface import Code, NominatingMode, Status, as_status
from kubesched.framework.podgroup import (
    Placement,
    PlacementCycleState,
    PlacementProgress,
    PodGroupAssignments,
    PodGroupCycleState,
    PodGroupInfo,
    ProposedAssignment,
    pod_group_min_count,
    pod_group_preemption_policy,
    pod_group_priority,
    select_placement,
)
from kubesched.framework.record import build_record
from kubesched.scheduler.attempt import (
    CLEAR_NOMINATED_NODE,
    ScheduledPod,
    handle_scheduling_failure,
    node_fit_error,
    should_record,
    skip_pod_schedule,
)
from kubesched.scheduler.schedule_pod import NoNodesAvailable, schedule_pod

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.node_info import QueuedPodInfo
    from kubesched.framework.runtime import Framework
    from kubesched.queue.podgroups import QueuedPodGroupInfo
    from kubesched.scheduler.core import Attempt, SchedulerCore

__all__ = ["POD_GROUP_INITIALLY_SCHEDULED", "POD_GROUP_UNSCHEDULABLE", "PodGroupCycleResult",
           "PodGroupUnschedulableError", "schedule_one_pod_group", "validate_pod_group"]

_log = logging.getLogger("kubesched.scheduler")

POD_GROUP_UNSCHEDULABLE = "pod group is unschedulable"
"""Upstream ``errPodGroupUnschedulable``."""
POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
"""Upstream ``schedulingapi.PodGroupInitiallyScheduled`` (the PodGroup status condition type)."""


@dataclass
class PodGroupCycleResult:
    """What one pod-group cycle produced (GenericWorkload;
    :mod:`kubesched.scheduler.schedule_one_podgroup`): the members assumed for binding
    (``scheduled`` — one binding cycle each, run as a :class:`ScheduledPod`'s), the members'
    failed attempts (already handled and reported) and the root status (None = Success)."""

    entity: QueuedPodGroupInfo
    scheduled: list[ScheduledPod] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    status: Status | None = None


class PodGroupUnschedulableError(Exception):
    """Upstream ``errPodGroupUnschedulable``."""

    def __init__(self) -> None:
        super().__init__(POD_GROUP_UNSCHEDULABLE)


def _reasons(st: Status | None) -> tuple[str, ...]:
    """Go ``Status.Reasons()``: the error's text first (here already the first reason when set
    by :func:`_unschedulable`), then the reasons."""
    if st is None:
        return ()
    if st.reasons:
        return st.reasons
    return (str(st.error),) if st.error is not None else ()


def _unschedulable(*reasons: str) -> Status:
    """``NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable)``."""
    return Status(Code.UNSCHEDULABLE, (POD_GROUP_UNSCHEDULABLE, *reasons), PodGroupUnschedulableError())


def _error(msg: str) -> Status:
    """``AsStatus(fmt.Errorf(msg))``."""
    return as_status(RuntimeError(msg))


def _append_reason(st: Status, reason: str) -> Status:
    """Go ``AppendReason`` (the message keeps the error's text)."""
    return Status(st.code, (*_reasons(st), reason), st.error, st.plugin)


def _ok(st: Status | None) -> bool:
    return st is None or st.code == Code.SUCCESS


@dataclass
class _PodResult:
    """Upstream ``algorithmResult``: one member's simulation."""

    qpi: QueuedPodInfo
    state: CycleState
    status: Status | None
    node: str = ""
    nominated: str | None = None
    """The nominating info: None = none (keep), "" = clear, else the node (override)."""
    start: float = 0.0
    evaluated_nodes: int = 0
    feasible_nodes: int = 0
    record: Any = None


@dataclass
class _GroupResult:
    """Upstream ``podGroupAlgorithmResult``."""

    pg_info: PodGroupInfo
    pod_results: list[_PodResult]
    status: Status | None
    placement_state: PlacementCycleState
    waiting_on_preemption: bool = False
    any_scheduled: bool = False
    placements: list[dict[str, Any]] | None = None
    """With TopologyAwareWorkloadScheduling: what each generated placement gave (for explain)."""
    chosen_placement: str | None = None


Revert = Callable[[], None]


def _revert(fns: list[Revert]) -> None:
    """Upstream ``revertFns.revert``: last in, first out."""
    while fns:
        fns.pop()()


# ───────────────────────────── validation ─────────────────────────────


def _pod_preemption_policy(pod: Pod) -> str:
    return pod.spec.preemption_policy or "PreemptLowerPriority"


def validate_pod_group(sched: SchedulerCore, entity: QueuedPodGroupInfo) -> str | None:
    """Upstream ``validatePodGroup`` (L218-276) and ``validateScheduledPods`` (L303-325): every
    member — queued and already scheduled — has the same ``schedulerName``, the group's priority
    and one preemption policy (with PodGroupPreemptionPolicy: the group's). Returns the error text,
    or None."""
    return validate_group_members(sched, entity.pod_group, [m.pod for m in entity.members],
                                  [(entity.namespace, entity.name)])


def validate_group_members(sched: SchedulerCore, group: dict[str, Any] | None, queued: list[Pod],
                           leaves: list[tuple[str, str]]) -> str | None:
    """:func:`validate_pod_group` for the root ``group`` (a PodGroup, or with CompositePodGroup
    the root CompositePodGroup: its priority and preemption policy), the ``queued`` members of
    the whole tree and the PodGroups ``leaves`` (namespace, name) whose scheduled pods are checked."""
    scheduler_name = ""
    pg_priority = pod_group_priority(group)
    gated_policy = sched.features.enabled("PodGroupPreemptionPolicy")
    pg_policy = pod_group_preemption_policy(group) if gated_policy else ""

    def validate(pod: Pod) -> str | None:
        nonlocal pg_policy
        name = pod.spec.scheduler_name or "default-scheduler"
        if name != scheduler_name:
            return ("all pods in a single pod group should have the same .spec.schedulerName set, "
                    f'got: "{name}" and "{scheduler_name}"')
        prio = pod_priority(pod)
        if prio != pg_priority:
            return ("all pods in a single pod group should have the same priority as the pod group's priority, "
                    f"got {prio} and {pg_priority}")
        policy = _pod_preemption_policy(pod)
        if gated_policy:
            if policy != pg_policy:
                return ("all pods in a single pod group should have the same preemption policy as the pod "
                        f"group's preemption policy, got {policy} and {pg_policy}")
        elif not pg_policy:
            pg_policy = policy
        elif policy != pg_policy:
            return ("all pods in a single pod group should have the same preemption policy, "
                    f"got {policy} and {pg_policy}")
        return None

    for pod in queued:
        if not scheduler_name:
            scheduler_name = pod.spec.scheduler_name or "default-scheduler"
        err = validate(pod)
        if err is not None:
            return err
    pgm = sched.pod_group_manager
    for ns, name in leaves:
        state = pgm.pod_group_state(ns, name) if pgm is not None else None
        if state is None:
            return f"failed to get pod group state: podgroup state {ns}/{name} not found"
        for pod in state.scheduled_pods():
            err = validate(pod)
            if err is not None:
                return err
    if scheduler_name not in sched.profiles:
        return f'profile not found for scheduler name "{scheduler_name}"'
    return None


# ───────────────────────────── the cycle ─────────────────────────────


def schedule_one_pod_group(sched: SchedulerCore, entity: QueuedPodGroupInfo) -> PodGroupCycleResult:
    """Upstream ``scheduleOnePodGroup`` (L81-129): see the module docstring. Runs inside the
    scheduling cycle (:func:`~kubesched.scheduler.schedule_one.scheduling_cycle`)."""
    out = PodGroupCycleResult(entity)
    start = sched.clock.now()
    t0 = time.perf_counter()
    pgm = sched.pod_group_manager
    observed = pgm.pod_group(entity.namespace, entity.name) if pgm is not None else None
    if observed is None:
        # the hierarchy changed under the queued entity: fail it, no condition update
        msg = f'podgroup.scheduling.k8s.io "{entity.name}" not found'
        _fail_before_scheduling(sched, entity, msg, out, condition=False)
        return out
    entity.pod_group = observed
    err = validate_pod_group(sched, entity)
    if err is not None:
        _fail_before_scheduling(sched, entity, err, out, condition=True)
        return out
    fw = sched.profiles[entity.members[0].pod.spec.scheduler_name or "default-scheduler"]
    if not skip_members(sched, entity):
        sched.queue.add_attempted_pod_group(entity, None)
        return out
    pg_state = PodGroupCycleState()
    results = _run_root_algorithm(sched, fw, pg_state, entity)
    root = results
    root_status = root.status
    _complete(root, entity)
    recorder = sched.metrics
    observe = getattr(recorder, "observe_pod_group_algorithm", None) if recorder is not None else None
    if observe is not None:  # upstream PodGroupSchedulingAlgorithmLatency
        observe(time.perf_counter() - t0)
    if root_status is not None and root_status.code == Code.UNSCHEDULABLE:
        def scheduling_func() -> tuple[PodGroupAssignments | None, Status | None]:
            res = _run_root_algorithm(sched, fw, PodGroupCycleState(), entity)
            return PodGroupAssignments(None, _proposed_assignments(res)), res.status

        pf_result, pf_status = fw.run_pod_group_post_filter_plugins(pg_state, root.pg_info, scheduling_func)
        _apply_post_filter_result(root, pf_result, pf_status)
    _submit(sched, fw, entity, root, out, start, t0)
    _explain_group(sched, entity, root, out)
    out.status = root_status
    sched.queue.add_attempted_pod_group(entity, root_status)
    return out


def parent_of(pod_group: dict[str, Any] | None) -> str | None:
    """The PodGroup's ``spec.parentCompositePodGroupName`` (None when unset)."""
    parent = ((pod_group or {}).get("spec") or {}).get("parentCompositePodGroupName")
    return parent if isinstance(parent, str) and parent else None


def _composite_parents(sched: SchedulerCore, entity: QueuedPodGroupInfo) -> list[dict[str, Any]]:
    """With CompositePodGroup: the group's ancestors, parent first, each ``{"name", "policy",
    "minGroupCount"}`` (explain); [] otherwise."""
    pgm = sched.pod_group_manager
    if pgm is None or not pgm.composite_enabled:
        return []
    out: list[dict[str, Any]] = []
    parent = ((entity.pod_group or {}).get("spec") or {}).get("parentCompositePodGroupName")
    while isinstance(parent, str) and len(out) < 4 and all(p["name"] != parent for p in out):
        cpg = pgm.composite_pod_group(entity.namespace, parent)
        gang = (((cpg or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
        out.append({"name": parent, "policy": "gang" if isinstance(gang, dict) else "basic",
                    "minGroupCount": gang.get("minGroupCount") if isinstance(gang, dict) else None})
        parent = ((cpg or {}).get("spec") or {}).get("parentCompositePodGroupName")
    return out


def _explain_group(sched: SchedulerCore, entity: QueuedPodGroupInfo, result: _GroupResult,
                   out: PodGroupCycleResult, records: list[Any] | None = None) -> None:
    """Attach the group's decision (:attr:`~kubesched.framework.record.DecisionRecord.group`) to the
    records of this cycle's members (only built when recording is on; ``records``: those of
    ``entity``'s members when the cycle covered several groups)."""
    if records is None:
        records = [a.record for a in out.attempts] + [sp.record for sp in out.scheduled]
    if not any(r is not None for r in records):
        return
    pg = entity.pod_group
    gst = result.status
    label = ("scheduled" if _ok(gst) else "waiting_on_preemption" if result.waiting_on_preemption
             else "unschedulable" if gst is not None and gst.is_rejected() else "error")
    min_count = pod_group_min_count(pg)
    summary: dict[str, Any] = {
        "podGroup": f"{entity.namespace}/{entity.name}", "policy": "gang" if min_count is not None else "basic",
        "minCount": min_count, "members": len(entity.members), "result": label,
        "message": gst.message() if gst is not None else ""}
    if result.placements is not None:
        summary["placements"] = result.placements
        summary["chosenPlacement"] = result.chosen_placement
    parents = _composite_parents(sched, entity)
    if parents:
        summary["compositePodGroups"] = parents
    for r in records:
        if r is not None:
            r.group = summary


def skip_members(sched: SchedulerCore, entity: QueuedPodGroupInfo) -> list[QueuedPodInfo]:
    """Upstream ``skipPodGroupPodSchedule`` (L339-363) for one PodGroup's entity: members being
    deleted or already assumed are done and dropped. Returns the members kept."""
    kept = []
    for m in entity.members:
        if skip_pod_schedule(sched, m.pod, m.key):
            sched.queue.done(m.key)
        else:
            kept.append(m)
    entity.members = kept
    return kept


def fail_members(sched: SchedulerCore, entity: QueuedPodGroupInfo, st: Status, out: PodGroupCycleResult) -> None:
    """``handlePodGroupFailureBeforeScheduling``'s loop (L179-190): every member through the
    failure handler with ``st`` (a member whose profile is gone is just done)."""
    now = sched.clock.now()
    for m in entity.members:
        fw = sched.profiles.get(m.pod.spec.scheduler_name or "default-scheduler")
        if fw is None:
            sched.queue.done(m.key)
            continue
        out.attempts.append(handle_scheduling_failure(sched, fw, m, st, CLEAR_NOMINATED_NODE, now))


def _fail_before_scheduling(sched: SchedulerCore, entity: QueuedPodGroupInfo, msg: str, out: PodGroupCycleResult,
                            *, condition: bool) -> None:
    """Upstream ``handlePodGroupFailureBeforeScheduling`` (L177-196): every member fails with an
    Error status; the condition becomes False/SchedulerError; the entity is requeued."""
    st = _error(msg)
    fail_members(sched, entity, st, out)
    if condition:
        _update_condition(sched, entity.pod_group, {"type": POD_GROUP_INITIALLY_SCHEDULED, "status": "False",
                                                    "reason": "SchedulerError", "message": msg})
    out.status = st
    sched.queue.add_attempted_pod_group(entity, st)


def _run_root_algorithm(sched: SchedulerCore, fw: Framework, pg_state: PodGroupCycleState,
                        entity: QueuedPodGroupInfo) -> _GroupResult:
    """Upstream ``runRootSchedulingAlgorithm`` (L467-496): the algorithm, its assumptions
    reverted; Success with no member scheduled in this cycle becomes Unschedulable."""
    pg_info = entity.pod_group_info()
    result, reverts = _pod_group_algorithm(sched, fw, pg_state, pg_info, entity)
    _revert(reverts)
    if _ok(result.status) and not result.any_scheduled:
        result.status = _unschedulable()
    return result


def _pod_group_algorithm(sched: SchedulerCore, fw: Framework, pg_state: PodGroupCycleState, pg_info: PodGroupInfo,
                         entity: QueuedPodGroupInfo) -> tuple[_GroupResult, list[Revert]]:
    """Upstream ``podGroupSchedulingAlgorithm`` (L1275-1292): with TopologyAwareWorkloadScheduling
    the placement algorithm, else the default one in one implicit placement."""
    if sched.features.enabled("TopologyAwareWorkloadScheduling"):
        return _placement_algorithm(sched, fw, pg_state, pg_info, entity)
    return _default_algorithm(sched, fw, PlacementCycleState(pg_state), pg_info, entity)


def _default_algorithm(sched: SchedulerCore, fw: Framework, placement_state: PlacementCycleState,
                       pg_info: PodGroupInfo, entity: QueuedPodGroupInfo) -> tuple[_GroupResult, list[Revert]]:
    """Upstream ``podGroupSchedulingDefaultAlgorithm`` (L556-648)."""
    reverts: list[Revert] = []
    result = _GroupResult(pg_info, [], _unschedulable(), placement_state)
    pgm = sched.pod_group_manager
    pgs = pgm.pod_group_state(pg_info.namespace, pg_info.name) if pgm is not None else None
    if pgs is None:
        result.status = _error(f"failed to get podGroup state for podGroup {pg_info.namespace}/{pg_info.name} "
                               "to compute gang feasibility: not found")
        return result, []
    remaining, scheduled = len(pg_info.unscheduled_pods), pgs.scheduled_pods_count()
    st = fw.run_placement_feasible_plugins(placement_state, pg_info, PlacementProgress(remaining, scheduled))
    result.status = st
    if st is not None and st.code == Code.ERROR:
        result.status = _error(f"failed to evaluate placement feasibility: {st.as_error()}")
        return result, []
    if st is not None and st.code == Code.UNSCHEDULABLE:
        result.status = _unschedulable(*_reasons(st))
        return result, []
    any_scheduled = False
    for m in entity.members:
        pr, revert = _pod_algorithm(sched, fw, placement_state, m)
        result.pod_results.append(pr)
        if revert is not None:
            reverts.append(revert)
        if not _ok(pr.status) and not pr.status.is_rejected():  # type: ignore[union-attr]
            result.status = _error(f"failed to schedule other pod from a pod group: "
                                   f"{pr.status.as_error()}")  # type: ignore[union-attr]
            break
        remaining -= 1
        if _ok(pr.status):
            scheduled += 1
        st = fw.run_placement_feasible_plugins(placement_state, pg_info, PlacementProgress(remaining, scheduled))
        if st is not None and st.code == Code.ERROR:
            result.status = _error(f"failed to evaluate placement feasibility: {st.as_error()}")
            break
        result.status = st
        if st is not None and st.code == Code.UNSCHEDULABLE:
            break
        any_scheduled = any_scheduled or _ok(pr.status)
    if result.status is not None and result.status.is_wait():
        result.status = _unschedulable(*_reasons(result.status))
    result.any_scheduled = any_scheduled
    if not _ok(result.status):  # the deferred revert (L557-562)
        _revert(reverts)
        result.any_scheduled = False
    return result, reverts


def _pod_algorithm(sched: SchedulerCore, fw: Framework, placement_state: PlacementCycleState,
                   qpi: QueuedPodInfo) -> tuple[_PodResult, Revert | None]:
    """Upstream ``podGroupPodSchedulingAlgorithm`` (L654-690) + ``assumeAndReserveWithRevert``:
    the single-pod algorithm without PostFilter, then assume in the snapshot only and Reserve;
    the revert function Unreserves and forgets (restoring the pod's nomination)."""
    pod, key = qpi.pod, qpi.key
    state = CycleState(qpi.pod_info)
    state.pod_group_cycle_state = placement_state.pod_group_cycle_state
    state.placement_cycle_state = placement_state
    start = sched.clock.now()
    recording = should_record(sched, key)
    with sched.table.frozen("the scheduling cycle"):
        res = schedule_pod(fw, state, pod, sched.table, sched.sampler, sched.rng, record=recording,
                           extenders=sched.extenders, signature=qpi.pod_signature,
                           cycle=sched.queue.scheduling_cycle, placement_rows=sched.placement_rows)
    if isinstance(res, Status):
        fe = res.error
        if isinstance(fe, FitError):
            # no PostFilter in a pod-group cycle: nil NominatingInfo, decided at submit (L272-277)
            return _PodResult(qpi, state, Status(Code.UNSCHEDULABLE, (), fe), start=start), None
        if isinstance(fe, NoNodesAvailable):
            res = Status(res.code, (str(fe),), fe, res.plugin)
        return _PodResult(qpi, state, res, nominated=CLEAR_NOMINATED_NODE, start=start), None
    node = res.suggested_host
    record = None
    if recording:
        record = build_record(pod=key, profile=fw.profile_name, attempt=qpi.attempts, time=start,
                              table=sched.table, chunks=res.chunks, scores=res.scores, selected=node,
                              result="scheduled", extender_statuses=res.extender_statuses)
    st, revert = _assume_and_reserve(sched, fw, qpi, state, node)
    if st is not None:
        if st.is_rejected():
            st = node_fit_error(key, node, st)
        return _PodResult(qpi, state, st, nominated=CLEAR_NOMINATED_NODE, start=start), None
    return _PodResult(qpi, state, None, node, start=start, evaluated_nodes=res.evaluated_nodes,
                      feasible_nodes=res.feasible_nodes, record=record), revert


def _assume_and_reserve(sched: SchedulerCore, fw: Framework, qpi: QueuedPodInfo, state: CycleState,
                        node: str) -> tuple[Status | None, Revert | None]:
    """Upstream ``assumeAndReserveWithRevert`` (L693-710): assume the member on ``node`` in the
    snapshot only and Reserve; returns ``(None, revert)`` — the revert Unreserves and forgets,
    restoring the pod's nomination — or ``(Reserve's status, None)`` with nothing left assumed."""
    pod, key = qpi.pod, qpi.key
    assumed = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))
    pi = qpi.pod_info.with_pod(assumed)
    sched.cache.assume_pod_in_snapshot(pi, node)
    sched.queue.delete_nominated_pod(key)

    def forget() -> None:
        sched.cache.forget_pod_in_snapshot(pi, node)
        if pod.status.nominated_node_name:  # the nomination assume removed comes back (L376-391)
            sched.queue.add_nominated_pod(qpi.pod_info, pod.status.nominated_node_name)

    st = fw.run_reserve_plugins_reserve(state, assumed, node)
    if st is not None:
        fw.run_reserve_plugins_unreserve(state, assumed, node)
        forget()
        return st, None

    def revert() -> None:
        fw.run_reserve_plugins_unreserve(state, assumed, node)
        forget()

    return None, revert


def assume_results(sched: SchedulerCore, fw: Framework,
                   results: list[_GroupResult]) -> tuple[list[Revert], Status | None]:
    """Upstream ``assumeSubtreeWithRevert`` (L1391-1421) over the given (successful leaf) results:
    every member placed in the simulation is assumed and Reserved again, so that the groups
    evaluated next see the chosen placement. Returns the reverts, or ``([], status)`` after
    reverting what was done when a Reserve fails."""
    reverts: list[Revert] = []
    for result in results:
        for pr in result.pod_results:
            if not _ok(pr.status) or not pr.node:
                continue
            st, revert = _assume_and_reserve(sched, fw, pr.qpi, pr.state, pr.node)
            if revert is not None:
                reverts.append(revert)
            if st is not None:
                _revert(reverts)
                return [], st
    return reverts, None


def placement_rows(sched: SchedulerCore, placement: Any, parent: np.ndarray | None) -> np.ndarray:
    """The table rows of ``placement`` within the enclosing placement's rows ``parent`` (None:
    every node), in snapshot order (upstream ``AssumePlacement`` on the snapshot). A placement that
    carries its rows (:attr:`Placement.rows`) and is the enclosing one (every node, or
    ``parent`` itself) is returned as is, without a lookup per node."""
    table = sched.table
    full: np.ndarray = table.order() if parent is None else parent
    given = placement.rows
    if given is full:
        return given
    wanted = np.zeros(len(table.names), bool)  # the placement's rows, as a mask over table rows
    if given is not None:
        wanted[given] = True
    else:
        row_of = table.row_of
        wanted[[r for n in placement.nodes if (r := row_of.get(n)) is not None]] = True
    rows: np.ndarray = full[wanted[full]]
    return rows


def parent_placement(sched: SchedulerCore) -> Placement | None:
    """Upstream ``ListNodesInPlacement``: the enclosing placement's nodes (inside a
    CompositePodGroup's placement), or None for every node."""
    rows = sched.placement_rows
    if rows is None:
        return None
    names = sched.table.names
    return Placement("", [names[r] for r in rows.tolist()], rows)


def _placement_algorithm(sched: SchedulerCore, fw: Framework, pg_state: PodGroupCycleState, pg_info: PodGroupInfo,
                         entity: QueuedPodGroupInfo) -> tuple[_GroupResult, list[Revert]]:
    """:func:`_evaluate_placements`, with what each placement gave kept on the result (explain)."""
    evals: list[dict[str, Any]] = []
    result, reverts = _evaluate_placements(sched, fw, pg_state, pg_info, entity, evals)
    result.placements = evals
    chosen = [e["name"] for e in evals if e.get("chosen")]
    result.chosen_placement = chosen[0] if chosen else None
    return result, reverts


def _evaluate_placements(sched: SchedulerCore, fw: Framework, pg_state: PodGroupCycleState, pg_info: PodGroupInfo,
                         entity: QueuedPodGroupInfo, evals: list[dict[str, Any]],
                         ) -> tuple[_GroupResult, list[Revert]]:
    """Upstream ``podGroupSchedulingPlacementAlgorithm`` (L971-1071): generate placements; run
    the default algorithm restricted to each (reverted after each); none feasible → ``0/%d
    placements are available, first placement status: %v``; several → PlacementScore plugins and
    the best total (ties by the randomizer)."""
    placements, st = fw.run_placement_generate_plugins(pg_state, pg_info, parent_placement(sched))
    if not _ok(st):
        return _GroupResult(pg_info, [], st, PlacementCycleState(pg_state)), []
    recorder: Any = sched.metrics
    if recorder is not None and hasattr(recorder, "observe_generated_placements"):
        recorder.observe_generated_placements(fw.profile_name, len(placements))  # RecordGeneratedPlacements
    any_result: _GroupResult | None = None
    feasible: list[tuple[Any, _GroupResult]] = []
    parent = sched.placement_rows
    for placement in placements:
        t0 = time.perf_counter()
        placement_state = PlacementCycleState(pg_state)
        sched.placement_rows = placement_rows(sched, placement, parent)
        try:
            result, reverts = _default_algorithm(sched, fw, placement_state, pg_info, entity)
            _revert(reverts)
        finally:
            sched.placement_rows = parent
        if result.status is not None and result.status.code == Code.ERROR:
            return result, []
        if any_result is None:
            any_result = result
        evals.append({"name": placement.name, "nodes": len(placement.nodes), "feasible": _ok(result.status),
                      "status": "" if _ok(result.status) else (result.status.message() if result.status else "")})
        if _ok(result.status):
            feasible.append((placement, result))
        if recorder is not None and hasattr(recorder, "observe_placement_evaluation"):  # L1027-1036
            recorder.observe_placement_evaluation("feasible" if _ok(result.status) else "infeasible",
                                                  fw.profile_name, time.perf_counter() - t0)
    if not feasible:
        if any_result is None:
            return _GroupResult(pg_info, [], _unschedulable(
                f"0/{len(placements)} placements are available, first placement status: <nil>"),
                PlacementCycleState(pg_state)), []
        any_result.status = _unschedulable(
            f"0/{len(placements)} placements are available, first placement status: "
            f"{any_result.status.as_error() if any_result.status is not None else '<nil>'}")
        return any_result, []
    by_name = {e["name"]: e for e in evals}
    if len(feasible) == 1:
        by_name[feasible[0][0].name]["chosen"] = True
        return _assume_best(sched, fw, feasible[0][1])
    assignments = [PodGroupAssignments(p, _proposed_assignments(r)) for p, r in feasible]
    states = [r.placement_state for _, r in feasible]
    scores, st = fw.run_placement_score_plugins(pg_state, pg_info, assignments, states)
    if not _ok(st):
        return _GroupResult(pg_info, [], st, PlacementCycleState(pg_state)), []
    for sc in scores:
        if sc.placement is not None and sc.placement.name in by_name:
            by_name[sc.placement.name].update(scores=dict(sc.scores), total=sc.total_score)
    best = select_placement(scores, sched.rng)
    by_name[feasible[best][0].name]["chosen"] = True
    return _assume_best(sched, fw, feasible[best][1])


def _assume_best(sched: SchedulerCore, fw: Framework, best: _GroupResult) -> tuple[_GroupResult, list[Revert]]:
    """With CompositePodGroup (L1055-1066) the chosen placement's members are assumed again so
    that the sibling groups of a tree see them; ``failed to assume the subtree: <err>``."""
    if not sched.features.enabled("CompositePodGroup"):
        return best, []
    reverts, st = assume_results(sched, fw, [best])
    if st is not None:
        return _GroupResult(best.pg_info, [], _error(f"failed to assume the subtree: {st.as_error()}"),
                            PlacementCycleState(best.placement_state.pod_group_cycle_state)), []
    return best, reverts


def _proposed_assignments(result: _GroupResult) -> list[ProposedAssignment]:
    """Upstream ``makeProposedAssignments`` (L1263-1272): the members placed in the simulation."""
    out = []
    for pr in result.pod_results:
        if _ok(pr.status) and pr.node:
            out.append(ProposedAssignment(pr.qpi.pod, pr.qpi.pod_info, pr.node, pr.state))
    return out


def _complete(result: _GroupResult, entity: QueuedPodGroupInfo) -> None:
    """Upstream ``completePodGroupAlgorithmResult`` (L712-733): members the algorithm did not
    reach get the group's status."""
    n = len(result.pod_results)
    for m in entity.members[n:]:
        state = CycleState(m.pod_info)
        result.pod_results.append(_PodResult(m, state, result.status, start=0.0))


def _apply_post_filter_result(result: _GroupResult, pf_result: Any, pf_status: Status | None) -> None:
    """Upstream ``applyPodGroupPostFilterResult`` (L774-806): Success marks the group waiting on
    preemption and gives members their nominated nodes; an Error replaces the group status;
    otherwise the PodGroupPostFilter message is appended to it."""
    if _ok(pf_status):
        result.waiting_on_preemption = True
        infos = getattr(pf_result, "nominating_infos", None) or {}
        for pr in result.pod_results:
            info = infos.get(pr.qpi.key)
            if info is not None:
                pr.nominated = info.nominated_node_name if info.mode == NominatingMode.OVERRIDE else None
    if pf_status is not None and pf_status.code == Code.ERROR:
        result.status = pf_status
    elif result.status is not None:
        result.status = _append_reason(result.status, pf_status.message() if pf_status is not None else "")


# ───────────────────────────── submit ─────────────────────────────


def _submit(sched: SchedulerCore, fw: Framework, entity: QueuedPodGroupInfo, result: _GroupResult,
            out: PodGroupCycleResult, start: float, t0: float) -> None:
    """Upstream ``submitPodGroupAlgorithmResult`` (L812-940): the members and the condition
    (:func:`submit_leaf`), then the attempt's metric."""
    submit_leaf(sched, fw, entity, result, out)
    observe_attempt(sched, fw, result, t0)


def submit_leaf(sched: SchedulerCore, fw: Framework, entity: QueuedPodGroupInfo, result: _GroupResult,
                out: PodGroupCycleResult) -> None:
    """One PodGroup's part of upstream ``submitPodGroupAlgorithmResult`` (L815-940): each member
    to its binding cycle or the failure handler; the ``PodGroupInitiallyScheduled`` condition."""
    gst = result.status
    group_error = gst is not None and gst.code == Code.ERROR
    for i, m in enumerate(entity.members):
        pr = result.pod_results[i]
        pst = pr.status
        if group_error:
            st = pst if pst is not None and pst.code == Code.ERROR else gst
            out.attempts.append(handle_scheduling_failure(sched, fw, m, st, CLEAR_NOMINATED_NODE,  # type: ignore[arg-type]
                                                          pr.start, pr.record))
            continue
        if _ok(pst):
            if _ok(gst):
                pr.state.pod_group_cycle_state = None  # the binding cycle is a plain one
                sp = _prepare_for_binding_cycle(sched, fw, m, pr, out)
                if sp is not None:
                    out.scheduled.append(sp)
            elif gst is not None and gst.is_rejected():
                if result.waiting_on_preemption:
                    st = gst
                    nominated = pr.nominated
                else:
                    st = Status(Code.UNSCHEDULABLE, (POD_GROUP_UNSCHEDULABLE, gst.message()),
                                PodGroupUnschedulableError())
                    nominated = CLEAR_NOMINATED_NODE
                out.attempts.append(handle_scheduling_failure(sched, fw, m, st, nominated, pr.start, pr.record))
            else:
                st = _error(f"received unexpected pod group scheduling algorithm status code: "
                            f"{gst.code if gst is not None else Code.SUCCESS}")
                out.attempts.append(handle_scheduling_failure(sched, fw, m, st, CLEAR_NOMINATED_NODE,
                                                              pr.start, pr.record))
        else:
            out.attempts.append(handle_scheduling_failure(sched, fw, m, pst, pr.nominated,  # type: ignore[arg-type]
                                                          pr.start, None))
    if _ok(gst):
        cond = {"type": POD_GROUP_INITIALLY_SCHEDULED, "status": "True", "reason": "Scheduled",
                "message": gst.message() if gst is not None else ""}
    elif gst is not None and gst.is_rejected():
        cond = {"type": POD_GROUP_INITIALLY_SCHEDULED, "status": "False", "reason": "Unschedulable",
                "message": gst.message()}
    else:
        cond = {"type": POD_GROUP_INITIALLY_SCHEDULED, "status": "False", "reason": "SchedulerError",
                "message": str(gst.as_error()) if gst is not None else ""}
    _update_condition(sched, entity.pod_group, cond)


def observe_attempt(sched: SchedulerCore, fw: Framework, root: _GroupResult, t0: float) -> None:
    """Upstream L916-928: the root's outcome counted once per cycle (``PodGroupScheduled`` /
    ``…Unschedulable`` / ``…WaitingOnPreemption`` / ``…ScheduleError``)."""
    gst = root.status
    if _ok(gst):
        label = "scheduled"
    elif gst is not None and gst.is_rejected():
        label = "waiting_on_preemption" if root.waiting_on_preemption else "unschedulable"
    else:
        label = "error"
    recorder = sched.metrics
    observe = getattr(recorder, "observe_pod_group_attempt", None) if recorder is not None else None
    if observe is not None:  # upstream PodGroupScheduled / …Unschedulable / …WaitingOnPreemption / …ScheduleError
        observe(label, fw.profile_name, time.perf_counter() - t0)
    sched.pod_group_attempts[label] = sched.pod_group_attempts.get(label, 0) + 1


def _prepare_for_binding_cycle(sched: SchedulerCore, fw: Framework, qpi: QueuedPodInfo, pr: _PodResult,
                               out: PodGroupCycleResult) -> ScheduledPod | None:
    """Upstream ``prepareForBindingCycle`` (schedule_one.go L196-243) for a member: assume in the
    cache, Reserve, Permit (a Wait parks the pod); a failure rejects only this pod."""
    key, node, state = qpi.key, pr.node, pr.state
    pod = qpi.pod
    assumed = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))
    try:
        sched.cache.assume_pod(qpi.pod_info.with_pod(assumed), node)
    except ValueError as e:
        out.attempts.append(handle_scheduling_failure(sched, fw, qpi, as_status(e), CLEAR_NOMINATED_NODE,
                                                      pr.start, pr.record))
        return None
    sched.queue.delete_nominated_pod(key)
    st = fw.run_reserve_plugins_reserve(state, assumed, node)
    if st is None:
        st = fw.run_permit_plugins(state, assumed, node)
        if st is not None and st.is_wait():
            st = None
        elif st is not None:
            fw.run_reserve_plugins_unreserve(state, assumed, node)
            sched.cache.forget_pod(key)
    else:
        fw.run_reserve_plugins_unreserve(state, assumed, node)
        sched.cache.forget_pod(key)
    if st is not None:
        if st.is_rejected():
            st = node_fit_error(key, node, st)
        out.attempts.append(handle_scheduling_failure(sched, fw, qpi, st, CLEAR_NOMINATED_NODE, pr.start,
                                                      pr.record))
        return None
    return ScheduledPod(qpi, fw, state, assumed, node, pr.record, pr.start, pr.evaluated_nodes,
                        pr.feasible_nodes, key)


def _update_condition(sched: SchedulerCore, pod_group: dict[str, Any] | None, condition: dict[str, Any]) -> None:
    """Upstream ``updatePodGroupCondition`` (L943-968): never regress a True condition; stamp
    ``observedGeneration``; patch only when ``SetStatusCondition`` would change something (the
    client stamps ``lastTransitionTime`` when the status changes)."""
    if pod_group is None or sched.client is None:
        return
    status = pod_group.get("status") if isinstance(pod_group.get("status"), dict) else {}
    existing = next((c for c in (status or {}).get("conditions") or []
                     if isinstance(c, dict) and c.get("type") == condition["type"]), None)
    if existing is not None and existing.get("status") == "True" and condition["status"] != "True":
        return
    gen = (pod_group.get("metadata") or {}).get("generation")
    cond = {"type": condition["type"], "status": condition["status"],
            **({"observedGeneration": int(gen)} if isinstance(gen, int) and gen else {}),
            "reason": condition["reason"], "message": condition["message"]}
    if existing is not None and all(existing.get(k) == cond.get(k)
                                    for k in ("status", "reason", "message", "observedGeneration")):
        return
    patch = getattr(sched.client, "patch_pod_group_condition", None)
    if patch is None:
        return
    try:
        patch(pod_group, cond)
    except Exception:  # noqa: BLE001 - upstream logs the failed status patch and goes on
        _log.exception("failed to update PodGroup status %s", (pod_group.get("metadata") or {}).get("name"))
