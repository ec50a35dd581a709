"""The tree-wide pod-group cycle of a CompositePodGroup (CompositePodGroup, alpha; upstream
``pkg/scheduler/schedule_one_podgroup.go`` v1.37.2 L428-496, L734-806, L1073-1448).

With the gate on, a popped PodGroup whose ``spec.parentCompositePodGroupName`` is set is scheduled
together with the whole tree of its root CompositePodGroup, in one cycle:

1. the tree is built from the pod-group manager (``GetRootKeyForGroup``; children sorted); the
   sibling PodGroups' queued entities are taken into flight with the popped one
   (:meth:`~kubesched.queue.SchedulingQueue.take_pod_group_entity`: upstream keeps one queue entry
   per root in ``backend/queue/workload_forest.go``; kubesched keeps one per leaf and gathers them
   at pop); a gated sibling, or a PodGroup without queued members, takes part with no member;
2. ``podGroupSchedulingRecursiveAlgorithm`` (L1294): a leaf runs the PodGroup algorithm; a
   CompositePodGroup runs ``compositePodGroupSchedulingPlacementAlgorithm`` (L1073): its
   placements are generated within the enclosing placement, and within each one
   ``compositePodGroupSchedulingDefaultAlgorithm`` (L1321) tries the children in order —
   PlacementFeasible (child groups against ``minGroupCount``) before and after each child, each
   child recursively within this placement; every placement's tentative assumptions are reverted;
   none feasible → ``0/N placements are available, first placement status: …`` with the first
   placement's whole subtree kept; several → PlacementScore over the leaves' combined assignments;
   the best subtree is assumed again (``assumeSubtreeWithRevert``) for the siblings that follow;
3. ``completeCompositePodGroupAlgorithmResult`` (L737): a group below a failed parent takes the
   parent's status; PodGroupPostFilter runs for the root when it is Unschedulable, its outcome
   applied to every group of the tree (L774);
4. submit per leaf (L812-940): members bound or failed with their group's status, each PodGroup's
   ``PodGroupInitiallyScheduled`` condition; the attempt metric once for the root; every taken
   entity requeued with the root status.

Differences kept: validation (``validatePodGroup``) runs per leaf — a failing leaf fails the whole
tree before scheduling — and the queue's forest bookkeeping (one entity per root) is modelled by
gathering the leaves' entities as described above.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kubesched.framework.interface import Code, Status
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KEY_TYPE,
    POD_GROUP_KEY_TYPE,
    Placement,
    PlacementCycleState,
    PlacementProgress,
    PodGroupAssignments,
    PodGroupCycleState,
    PodGroupInfo,
    select_placement,
)
from kubesched.queue.podgroups import QueuedPodGroupInfo
from kubesched.scheduler.schedule_one_podgroup import (
    POD_GROUP_INITIALLY_SCHEDULED,
    PodGroupCycleResult,
    Revert,
    _apply_post_filter_result,
    _complete,
    _error,
    _explain_group,
    _GroupResult,
    _ok,
    _pod_group_algorithm,
    _proposed_assignments,
    _reasons,
    _revert,
    _unschedulable,
    _update_condition,
    assume_results,
    fail_members,
    observe_attempt,
    parent_of,
    parent_placement,
    placement_rows,
    schedule_one_pod_group,
    skip_members,
    submit_leaf,
    validate_group_members,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.runtime import Framework
    from kubesched.scheduler.core import SchedulerCore

__all__ = ["schedule_pod_group_entity", "schedule_tree"]

Results = dict[str, _GroupResult]
"""Upstream ``map[EntityKey]*podGroupAlgorithmResult``: a result per group of the tree, by entity key."""


@dataclass
class _Tree:
    """The root's :class:`PodGroupInfo` tree and the leaves' entities (popped or taken: ``taken``)."""

    root: PodGroupInfo
    entities: dict[str, QueuedPodGroupInfo] = field(default_factory=dict)
    taken: list[QueuedPodGroupInfo] = field(default_factory=list)


def _observed_keys(sched: SchedulerCore, key: str, out: list[str]) -> bool:
    """Every entity key below ``key`` (itself included) into ``out``; False when a group of the
    tree is not observed (a placeholder) or the tree is deeper than the manager allows."""
    pgm = sched.pod_group_manager
    assert pgm is not None
    if key in out or len(out) > 10_000:
        return False
    out.append(key)
    key_type, ns, name = key.split("/", 2)
    if key_type == POD_GROUP_KEY_TYPE:
        return pgm.pod_group(ns, name) is not None
    cst = pgm.composite_pod_group_state(ns, name)
    if cst is None or cst.composite_pod_group is None:
        return False
    return all(_observed_keys(sched, child, out) for child in cst.children())


def _build(sched: SchedulerCore, key: str, popped: QueuedPodGroupInfo, tree: _Tree) -> PodGroupInfo:
    pgm = sched.pod_group_manager
    assert pgm is not None
    key_type, ns, name = key.split("/", 2)
    if key_type == POD_GROUP_KEY_TYPE:
        if key == popped.key:
            entity = popped
        else:
            taken = sched.queue.take_pod_group_entity(ns, name)
            if taken is not None:
                tree.taken.append(taken)
                entity = taken
            else:
                entity = QueuedPodGroupInfo(ns, name, pgm.pod_group(ns, name) or {})
        entity.pod_group = pgm.pod_group(ns, name) or entity.pod_group  # reconcilePodGroupWithSnapshot
        tree.entities[key] = entity
        return entity.pod_group_info()
    cst = pgm.composite_pod_group_state(ns, name)
    assert cst is not None
    children = [_build(sched, child, popped, tree) for child in cst.children()]
    return PodGroupInfo(name, ns, type=COMPOSITE_POD_GROUP_KEY_TYPE, composite_pod_group=cst.composite_pod_group,
                        children=children, unscheduled_pods=[p for c in children for p in c.unscheduled_pods])


def _gather(sched: SchedulerCore, entity: QueuedPodGroupInfo) -> _Tree | None:
    """The popped leaf's tree (step 1), or None when its root is not an observed CompositePodGroup."""
    pgm = sched.pod_group_manager
    assert pgm is not None
    try:
        root_key = pgm.root_key_for_group(entity.key)
    except ValueError:
        return None
    if root_key is None or not root_key.startswith(COMPOSITE_POD_GROUP_KEY_TYPE + "/"):
        return None
    keys: list[str] = []
    if not _observed_keys(sched, root_key, keys) or entity.key not in keys:
        return None
    tree = _Tree(PodGroupInfo("", ""))
    tree.root = _build(sched, root_key, entity, tree)
    return tree


def _queued(tree: _Tree, popped: QueuedPodGroupInfo) -> list[QueuedPodGroupInfo]:
    """The entities that came from the queue (to requeue after the cycle)."""
    return [popped, *tree.taken]


# ───────────────────────────── the algorithm ─────────────────────────────


def _recursive(sched: SchedulerCore, fw: Framework, pg_state: PodGroupCycleState, pgi: PodGroupInfo, tree: _Tree,
               results: Results) -> tuple[_GroupResult, list[Revert]]:
    """Upstream ``podGroupSchedulingRecursiveAlgorithm`` (L1294-1307)."""
    if pgi.type == POD_GROUP_KEY_TYPE:
        result, reverts = _pod_group_algorithm(sched, fw, pg_state, pgi, tree.entities[pgi.key])
        results[pgi.key] = result
        return result, reverts
    return _composite_placement_algorithm(sched, fw, pg_state, pgi, tree, results)


def _successful_leaves(pgi: PodGroupInfo, results: Results) -> list[_GroupResult]:
    """Upstream ``successfulLeafResults`` (L1423-1448): the leaves whose own and ancestors'
    results are successful, with at least one member result."""
    result = results.get(pgi.key)
    if result is None or not _ok(result.status):
        return []
    out = [leaf for child in pgi.children for leaf in _successful_leaves(child, results)]
    if result.pod_results:
        out.append(result)
    return out


def _composite_placement_algorithm(sched: SchedulerCore, fw: Framework, pg_state: PodGroupCycleState,
                                   pgi: PodGroupInfo, tree: _Tree, results: Results,
                                   ) -> tuple[_GroupResult, list[Revert]]:
    """Upstream ``compositePodGroupSchedulingPlacementAlgorithm`` (L1073-1171): see the module
    docstring, step 2."""
    key = pgi.key

    def done(result: _GroupResult, reverts: list[Revert]) -> tuple[_GroupResult, list[Revert]]:
        results[key] = result
        return result, reverts

    placements, st = fw.run_placement_generate_plugins(pg_state, pgi, parent_placement(sched))
    if not _ok(st):
        return done(_GroupResult(pgi, [], st, PlacementCycleState(pg_state)), [])
    any_subtree: Results | None = None
    feasible: list[tuple[Placement, Results]] = []
    parent = sched.placement_rows
    try:
        for placement in placements:
            sched.placement_rows = placement_rows(sched, placement, parent)
            placement_state = PlacementCycleState(pg_state)
            subtree: Results = {}
            result, reverts = _composite_default_algorithm(sched, fw, placement_state, pgi, tree, subtree)
            _revert(reverts)
            if result.status is not None and result.status.code == Code.ERROR:
                return done(result, [])
            if any_subtree is None:
                any_subtree = subtree
            if _ok(result.status):
                feasible.append((placement, subtree))
    finally:
        sched.placement_rows = parent
    if not feasible:
        if any_subtree is None:
            return done(_GroupResult(pgi, [], _unschedulable(
                f"0/{len(placements)} placements are available, first placement status: <nil>"),
                PlacementCycleState(pg_state)), [])
        any_root = any_subtree[key]
        first = any_root.status.as_error() if any_root.status is not None else "<nil>"
        any_root.status = _unschedulable(
            f"0/{len(placements)} placements are available, first placement status: {first}")
        results.update(any_subtree)  # keeps each member's FitError (its unschedulable plugins)
        return done(any_root, [])
    best = 0
    if len(feasible) > 1:  # findBestCompositePodGroupPlacement (L1184-1194)
        assignments = [PodGroupAssignments(p, [a for leaf in _successful_leaves(pgi, sub)
                                               for a in _proposed_assignments(leaf)]) for p, sub in feasible]
        states = [sub[key].placement_state for _, sub in feasible]
        scores, st = fw.run_placement_score_plugins(pg_state, pgi, assignments, states)
        if not _ok(st):
            return done(_GroupResult(pgi, [], st, PlacementCycleState(pg_state)), [])
        best = select_placement(scores, sched.rng)
    best_subtree = feasible[best][1]
    reverts, st = assume_results(sched, fw, _successful_leaves(pgi, best_subtree))
    if st is not None:
        return done(_GroupResult(pgi, [], _error(f"failed to assume the subtree: {st.as_error()}"),
                                 PlacementCycleState(pg_state)), [])
    results.update(best_subtree)
    return best_subtree[key], reverts


def _feasible(fw: Framework, state: PlacementCycleState, pgi: PodGroupInfo, remaining: int,
              scheduled: int) -> Status | None:
    return fw.run_placement_feasible_plugins(state, pgi, PlacementProgress(remaining, scheduled))


def _stops(st: Status | None) -> bool:
    return st is not None and st.code in (Code.UNSCHEDULABLE, Code.ERROR)


def _composite_default_algorithm(sched: SchedulerCore, fw: Framework, placement_state: PlacementCycleState,
                                 pgi: PodGroupInfo, tree: _Tree, results: Results,
                                 ) -> tuple[_GroupResult, list[Revert]]:
    """Upstream ``compositePodGroupSchedulingDefaultAlgorithm`` (L1321-1379): PlacementFeasible
    with ``remaining`` = the children, then each child recursively within this placement;
    Unschedulable or Error from PlacementFeasible stops; a child's Error becomes ``composite pod
    group evaluation failed due to child error: <err>``; Wait at the end is Unschedulable. A
    failure reverts every child's assumptions."""
    reverts: list[Revert] = []
    remaining, scheduled = len(pgi.children), 0
    st = _feasible(fw, placement_state, pgi, remaining, scheduled)
    result = _GroupResult(pgi, [], st, placement_state)
    if not _stops(st):
        for child in pgi.children:
            child_result, child_reverts = _recursive(sched, fw, PodGroupCycleState(placement_state), child, tree,
                                                     results)
            if child_result.status is not None and child_result.status.code == Code.ERROR:
                result.status = _error("composite pod group evaluation failed due to child error: "
                                       f"{child_result.status.as_error()}")
                break
            result.any_scheduled = result.any_scheduled or child_result.any_scheduled
            reverts.extend(child_reverts)
            remaining -= 1
            if _ok(child_result.status):
                scheduled += 1
            st = _feasible(fw, placement_state, pgi, remaining, scheduled)
            result.status = st
            if _stops(st):
                break
    if result.status is not None and result.status.is_wait():
        result.status = _unschedulable(*_reasons(result.status))
    results[pgi.key] = result
    if not _ok(result.status):
        _revert(reverts)
        result.any_scheduled = False
    return result, reverts


def _run_root(sched: SchedulerCore, fw: Framework, pg_state: PodGroupCycleState, tree: _Tree) -> Results:
    """Upstream ``runRootSchedulingAlgorithm`` for a CompositePodGroup root (L473-482): the
    recursive algorithm, every assumption reverted; Success with no member scheduled this cycle
    is Unschedulable."""
    results: Results = {}
    root, reverts = _recursive(sched, fw, pg_state, tree.root, tree, results)
    _revert(reverts)
    if _ok(root.status) and not root.any_scheduled:
        root.status = _unschedulable()
    return results


def _complete_tree(pgi: PodGroupInfo, results: Results, parent: Status | None, pg_state: PodGroupCycleState) -> None:
    """Upstream ``completeCompositePodGroupAlgorithmResultMap`` (L750-772): a group without a
    result, or a successful one below a failed parent, takes the parent's status."""
    result = results.get(pgi.key)
    if result is None or (not _ok(parent) and _ok(result.status)):
        result = _GroupResult(pgi, [], parent, PlacementCycleState(pg_state))
        results[pgi.key] = result
    for child in pgi.children:
        _complete_tree(child, results, result.status, pg_state)


# ───────────────────────────── the cycle ─────────────────────────────


def _refresh(pgi: PodGroupInfo, tree: _Tree) -> list[Pod]:
    """Upstream ``updateUnscheduledPods`` (L365-393): every group's unscheduled pods after
    ``skipPodGroupPodSchedule``."""
    if pgi.type == POD_GROUP_KEY_TYPE:
        pgi.unscheduled_pods = [m.pod for m in tree.entities[pgi.key].members]
    else:
        pgi.unscheduled_pods = [p for child in pgi.children for p in _refresh(child, tree)]
    return pgi.unscheduled_pods


def schedule_pod_group_entity(sched: SchedulerCore, entity: QueuedPodGroupInfo) -> PodGroupCycleResult:
    """A popped pod-group entity's cycle: with CompositePodGroup, a PodGroup below an observed
    CompositePodGroup runs its root's tree-wide cycle (:func:`schedule_tree`); any other group
    :func:`~kubesched.scheduler.schedule_one_podgroup.schedule_one_pod_group`."""
    pgm = sched.pod_group_manager
    if pgm is not None and pgm.composite_enabled:
        observed = pgm.pod_group(entity.namespace, entity.name)
        if observed is not None and parent_of(observed) is not None:
            t0 = time.perf_counter()
            out = PodGroupCycleResult(entity)
            entity.pod_group = observed  # reconcilePodGroupWithSnapshot (L134-175)
            if schedule_tree(sched, entity, out, t0):
                return out
    return schedule_one_pod_group(sched, entity)


def schedule_tree(sched: SchedulerCore, popped: QueuedPodGroupInfo, out: PodGroupCycleResult, t0: float) -> bool:
    """The tree-wide cycle for ``popped`` (a PodGroup below a CompositePodGroup, its object just
    reconciled with the observed one): see the module docstring. False (nothing done) when the
    root is not an observed CompositePodGroup — the caller then runs the PodGroup's own cycle."""
    tree = _gather(sched, popped)
    if tree is None:
        return False
    queued = _queued(tree, popped)
    # validatePodGroup (L218-276) over the root: its priority and policy, every member of the tree
    err = validate_group_members(sched, tree.root.composite_pod_group,
                                 [m.pod for e in tree.entities.values() for m in e.members],
                                 [(e.namespace, e.name) for e in tree.entities.values()])
    if err is not None:
        _fail_tree(sched, tree, queued, err, out)
        return True
    first = next((m.pod for e in queued for m in e.members), None)
    if first is None:
        for e in queued:
            sched.queue.add_attempted_pod_group(e, None)
        return True
    fw = sched.profiles[first.spec.scheduler_name or "default-scheduler"]  # frameworkForPodGroup
    for entity in queued:
        skip_members(sched, entity)
    _refresh(tree.root, tree)
    if not any(e.members for e in queued):
        for e in queued:
            sched.queue.add_attempted_pod_group(e, None)
        return True
    pg_state = PodGroupCycleState()
    results = _run_root(sched, fw, pg_state, tree)
    root_key = tree.root.key
    root_status = results[root_key].status
    _complete_tree(tree.root, results, None, pg_state)
    for key, entity in tree.entities.items():
        _complete(results[key], entity)
    if root_status is not None and root_status.code == Code.UNSCHEDULABLE:
        def scheduling_func() -> tuple[PodGroupAssignments | None, Status | None]:
            res = _run_root(sched, fw, PodGroupCycleState(), tree)
            assignments = [a for r in res.values() for a in _proposed_assignments(r)]
            return PodGroupAssignments(None, assignments), res[root_key].status

        pf_result, pf_status = fw.run_pod_group_post_filter_plugins(pg_state, tree.root, scheduling_func)
        for result in results.values():
            _apply_post_filter_result(result, pf_result, pf_status)
    for key, entity in tree.entities.items():
        n_attempts, n_scheduled = len(out.attempts), len(out.scheduled)
        submit_leaf(sched, fw, entity, results[key], out)
        records = ([a.record for a in out.attempts[n_attempts:]]
                   + [sp.record for sp in out.scheduled[n_scheduled:]])
        _explain_group(sched, entity, results[key], out, records)
    observe_attempt(sched, fw, results[root_key], t0)
    out.status = root_status
    for entity in queued:
        sched.queue.add_attempted_pod_group(entity, root_status)
    return True


def _fail_tree(sched: SchedulerCore, tree: _Tree, queued: list[QueuedPodGroupInfo], msg: str,
               out: PodGroupCycleResult) -> None:
    """Upstream ``handlePodGroupFailureBeforeScheduling`` (L177-216) for the tree: every member
    fails with an Error; every PodGroup of the tree gets False/SchedulerError; requeued."""
    st = _error(msg)
    for entity in queued:
        fail_members(sched, entity, st, out)
    for entity in tree.entities.values():
        _update_condition(sched, entity.pod_group, {"type": POD_GROUP_INITIALLY_SCHEDULED, "status": "False",
                                                    "reason": "SchedulerError", "message": msg})
    out.status = st
    for entity in queued:
        sched.queue.add_attempted_pod_group(entity, st)
