"""Pod-group preemption (upstream ``pkg/scheduler/framework/preemption/podgrouppreemption.go``,
v1.37.2; GenericWorkload): DefaultPreemption's PodGroupPostFilter, run after a failed pod-group
cycle. The preemptor is the group, the domain the whole cluster.

:meth:`PodGroupEvaluator.preempt` (upstream ``Preempt``, L96-135):

1. Preemptor (``newPodGroupPreemptor``, types.go L36-110): priority = the group's
   ``spec.priority`` (absent → 0); preemption policy: with PodGroupPreemptionPolicy the group's
   ``spec.preemptionPolicy`` (absent → ``PreemptLowerPriority``), without it ``Never`` when any
   member pod says ``preemptionPolicy: Never``. ``Never`` → ``(None, Unschedulable "not eligible
   due to preemptionPolicy=Never.")``.
2. Ongoing preemption (``isOngoingPreemption``, L380-400): a member nominated to a node that holds a
   pod of lower (group) priority terminating because of preemption → Success ``"ongoing preemption
   on nominated nodes"`` with every member's current ``nominatedNodeName`` as its NominatingInfo.
3. ``selectVictimsOnDomain`` (L150-340), on the NodeTable through a :class:`TableEdit` (upstream's
   mutable snapshot), restored exactly before returning: the victims are every node's units
   (:meth:`PodGroupIndex.victims_on_rows`); those of lower priority than the group are removed;
   none → UnschedulableAndUnresolvable ``"No preemption victims found for incoming preemptor"``.
   The ``scheduling_func`` (the group's algorithm, from the pod-group cycle) runs on the emptied
   table; its failure status is returned as is. Then the units are reprieved one by one,
   PDB-violating first, most important first (:func:`more_important_victim`): added back (with
   the PreFilter AddPod extension on every proposed assignment's CycleState), then Filter (with
   nominated pods) is re-run for each proposed assignment in order, each passing member being
   added to the table and Reserved so the next sees it; a failure removes the unit again (it is a
   victim); the members are Unreserved and removed afterwards, last first. When every Filter
   the members run reads only their own node and no AddPod/RemovePod extension or Reserve
   plugin has work for them (:func:`_node_local`), the reprieve keeps each member's answer and
   re-filters only the members on the victim's nodes (:class:`_NodeLocalReprieve`): the same
   decisions with about one Filter run per victim instead of one per victim and member.
4. Actuation (``actuatePodGroupPreemption``, executor.go L160-175, synchronous here as the
   single-pod path): a candidate named ``"cluster"``; victims already terminating are skipped; a
   waiting victim is Preempted in memory; events ``"Preempted by podgroup <uid> on node
   cluster"``, DisruptionTarget ``"<scheduler>: preempting to accommodate a higher priority
   podgroup"``. Success → ``"found a placement for podgroup, preempting <n> victims"`` with the
   members' NominatingInfos (``namespace/name`` → node, ModeOverride).

CompositePodGroups (alpha) preempt as one unit of type ``compositepodgroup`` when the
``PodGroupInfo`` carries one; their victim hierarchies are not followed (see
:class:`~kubesched.framework.preemption.PodGroupIndex`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kubesched.api.objects import pod_key
from kubesched.framework.interface import Code, NominatingInfo, NominatingMode, Status, as_status
from kubesched.framework.node_table import TableEdit
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KEY_TYPE,
    POD_GROUP_KEY_TYPE,
    PodGroupInfo,
    PodGroupPostFilterResult,
    PodGroupSchedulingFunc,
    ProposedAssignment,
    pod_group_preemption_policy,
    pod_group_priority,
)
from kubesched.framework.preemption import (
    ERR_NOT_ELIGIBLE_NEVER,
    PREEMPT_NEVER,
    Candidate,
    Evaluator,
    PodGroupIndex,
    Preemptor,
    Victim,
    Victims,
    filter_victims_with_pdb_violation,
    pod_terminating_by_preemption,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod, PodDisruptionBudget
    from kubesched.framework.handle import Handle, ProfileFramework

__all__ = [
    "CLUSTER_DOMAIN",
    "ERR_NO_VICTIMS_FOR_PREEMPTOR",
    "MSG_ONGOING_PREEMPTION",
    "PodGroupEvaluator",
    "PodGroupPreemptor",
    "SelectVictimsResult",
]

ERR_NO_VICTIMS_FOR_PREEMPTOR = "No preemption victims found for incoming preemptor"
MSG_ONGOING_PREEMPTION = "ongoing preemption on nominated nodes"
CLUSTER_DOMAIN = "cluster"
"""The candidate's name in pod-group preemption (events read ``… on node cluster``)."""


@dataclass
class PodGroupPreemptor:
    """Upstream ``podGroupPreemptor`` (types.go L36-110): the group, its members being scheduled,
    its priority and its effective preemption policy."""

    type: str
    group: dict[str, Any]
    members: list[Pod]
    priority: int
    preemption_policy: str

    @staticmethod
    def of(pg_info: PodGroupInfo, enable_pod_group_preemption_policy: bool) -> PodGroupPreemptor:
        """Upstream ``newPodGroupPreemptor`` with ``resolvePreemptionPolicy`` /
        ``resolveCompositePreemptionPolicy``."""
        members = list(pg_info.unscheduled_pods)
        if pg_info.composite_pod_group is not None:
            group, kind = pg_info.composite_pod_group, COMPOSITE_POD_GROUP_KEY_TYPE
        else:
            group, kind = pg_info.pod_group or {}, POD_GROUP_KEY_TYPE
        if enable_pod_group_preemption_policy:
            policy = pod_group_preemption_policy(group)
            if kind == COMPOSITE_POD_GROUP_KEY_TYPE and policy != "PreemptLowerPriority":
                policy = PREEMPT_NEVER
        else:
            policy = "PreemptLowerPriority"
            if any(p.spec.preemption_policy == PREEMPT_NEVER for p in members):
                policy = PREEMPT_NEVER
        return PodGroupPreemptor(kind, group, members, pod_group_priority(group), policy)

    def executor_preemptor(self) -> Preemptor:
        return Preemptor.of_group(self.group, self.members, self.type)


@dataclass
class SelectVictimsResult:
    """Upstream ``selectVictimsResult``: the victims, the NominatingInfo of each member that got a
    node (``namespace/name`` → info) and the number of group units among the victims."""

    victims: Victims
    nominating_infos: dict[str, NominatingInfo]
    num_pod_group_disruptions: int = 0


class PodGroupEvaluator:
    """Upstream ``PodGroupEvaluator``. ``evaluator`` is DefaultPreemption's single-pod
    :class:`~kubesched.framework.preemption.Evaluator`: its Filter-with-nominated-pods run, PDB
    listing, victim eviction (the executor) and hooks are shared. ``fast_reprieve`` (default on)
    lets the reprieve skip Filter runs whose answer cannot have changed (:class:`_NodeLocalReprieve`);
    off, every reprieve re-filters every member as upstream does."""

    def __init__(self, handle: Handle, evaluator: Evaluator, *, fast_reprieve: bool = True) -> None:
        self.handle = handle
        self.evaluator = evaluator
        self.fast_reprieve = fast_reprieve

    @property
    def enable_pod_group_preemption_policy(self) -> bool:
        return self.handle.features.enabled("PodGroupPreemptionPolicy")

    def preempt(self, pg_info: PodGroupInfo, scheduling_func: PodGroupSchedulingFunc
                ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """Upstream ``Preempt``: see the module docstring. The NodeTable is left as found."""
        preemptor = PodGroupPreemptor.of(pg_info, self.enable_pod_group_preemption_policy)
        if preemptor.preemption_policy == PREEMPT_NEVER:
            return None, Status(Code.UNSCHEDULABLE, (ERR_NOT_ELIGIBLE_NEVER,))
        groups = PodGroupIndex(self.handle)
        if self.is_ongoing_preemption(preemptor, groups):
            infos = {pod_key(p): NominatingInfo(p.status.nominated_node_name, NominatingMode.OVERRIDE)
                     for p in preemptor.members}
            return PodGroupPostFilterResult(infos), Status(Code.SUCCESS, (MSG_ONGOING_PREEMPTION,))
        self.evaluator._nominated_cache = None
        t0 = time.perf_counter()
        pdbs = self.evaluator.list_pdbs()
        with TableEdit(self.handle.nodes) as edit:
            res, st = self.select_victims_on_domain(preemptor, groups, pdbs, scheduling_func, edit)
        self.evaluator._observe_duration("observe_preemption_evaluation", preemptor.type, str(st.code), t0)
        if res is None:
            return None, st
        candidate = Candidate(CLUSTER_DOMAIN, res.victims, res.num_pod_group_disruptions)
        err = self.evaluator.prepare_candidate(candidate, preemptor.executor_preemptor())
        result = PodGroupPostFilterResult(res.nominating_infos)
        if err is not None and not err.is_success():
            return result, err
        return result, Status(Code.SUCCESS, (
            f"found a placement for podgroup, preempting {len(res.victims.pods)} victims",))

    def is_ongoing_preemption(self, preemptor: PodGroupPreemptor, groups: PodGroupIndex) -> bool:
        """Upstream ``isOngoingPreemption``: a member's nominated node holds a pod of lower
        (group) priority that is terminating because of preemption."""
        table = self.handle.nodes
        nominated = dict.fromkeys(p.status.nominated_node_name for p in preemptor.members
                                  if p.status.nominated_node_name)
        for name in nominated:
            row = table.row_of.get(name)
            if row is None:
                continue
            for pi in table.pods[row]:
                if groups.pod_priority(pi.pod) < preemptor.priority and pod_terminating_by_preemption(pi.pod):
                    return True
        return False

    def select_victims_on_domain(self, preemptor: PodGroupPreemptor, groups: PodGroupIndex,
                                 pdbs: Sequence[PodDisruptionBudget], scheduling_func: PodGroupSchedulingFunc,
                                 edit: TableEdit) -> tuple[SelectVictimsResult | None, Status]:
        """Upstream ``selectVictimsOnDomain`` on the table through ``edit`` (the caller restores it)."""
        table = self.handle.nodes
        fw = self.evaluator._framework()
        ev = self.evaluator
        domain = groups.victims_on_rows(table.order().tolist())
        potential = [v for v in domain if v.priority < preemptor.priority]
        if not potential:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VICTIMS_FOR_PREEMPTOR,))
        for v in potential:
            for r, pi in v.members:
                edit.remove(pi, r)

        assignments, st = scheduling_func()
        if st is not None and not st.is_success():
            return None, st
        valid: list[ProposedAssignment] = [
            a for a in (assignments.proposed_assignments if assignments is not None else ()) if a.node_name]

        ev._sort_victims(potential)
        violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs)

        def add_victim(v: Victim) -> Status | None:
            for r, pi in v.members:
                edit.add(pi, r)
                ni = table.node_info(r)
                for a in valid:
                    st: Status | None = fw.run_pre_filter_extension_add_pod(a.cycle_state, a.pod, pi, ni)
                    if st is not None:
                        return st
            return None

        def remove_victim(v: Victim) -> Status | None:
            for r, pi in v.members:
                edit.remove(pi, r)
                ni = table.node_info(r)
                for a in valid:
                    st: Status | None = fw.run_pre_filter_extension_remove_pod(a.cycle_state, a.pod, pi, ni)
                    if st is not None:
                        return st
            return None

        def reprieve(v: Victim) -> tuple[bool, Status | None]:
            err = add_victim(v)
            if err is not None:
                return False, err
            placed: list[tuple[ProposedAssignment, int]] = []
            try:
                for a in valid:
                    row = table.row_of[a.node_name]
                    if not ev.filter_row_with_nominated_pods(a.cycle_state, a.pod, row).is_success():
                        return False, remove_victim(v)
                    # simulate assuming the member and reserving the stateful plugins' resources
                    edit.add(a.pod_info, row)
                    placed.append((a, row))
                    fw.run_reserve_plugins_reserve(a.cycle_state, a.pod, a.node_name)
                return True, None
            finally:
                for a, row in reversed(placed):
                    fw.run_reserve_plugins_unreserve(a.cycle_state, a.pod, a.node_name)
                    edit.remove(a.pod_info, row)

        if self.fast_reprieve and _node_local(fw, valid):
            reprieve = _NodeLocalReprieve(ev, edit, valid).reprieve

        to_preempt: list[Victim] = []
        num_violating = 0
        try:
            for v, count in violating:
                fits, err = reprieve(v)
                if err is not None:
                    return None, err
                if not fits:
                    to_preempt.append(v)
                    num_violating += count
            for v in non_violating:
                fits, err = reprieve(v)
                if err is not None:
                    return None, err
                if not fits:
                    to_preempt.append(v)
        except Exception as e:  # noqa: BLE001 - a plugin crash during the reprieve is an Error status
            return None, as_status(e)

        ev._sort_victims(to_preempt)
        pods = [pi.pod for v in to_preempt for pi in v.pods]
        infos = {pod_key(a.pod): NominatingInfo(a.node_name, NominatingMode.OVERRIDE) for a in valid}
        return (SelectVictimsResult(Victims(pods, num_violating), infos, sum(1 for v in to_preempt if v.is_group)),
                Status(Code.SUCCESS))


NODE_LOCAL_FILTERS = frozenset({
    "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
    "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DynamicResources", "NodeDeclaredFeatures",
    "DeferredPodScheduling"})
"""In-tree Filter plugins whose answer for (pod, node) reads only the pod, its CycleState, that
node's NodeInfo and API objects a preemption dry run does not edit (volumes, claims, classes)."""


def _node_local(fw: ProfileFramework, valid: Sequence[ProposedAssignment]) -> bool:
    """Whether every member's Filter result during the reprieve depends only on its own node's
    pods: each Filter plugin not skipped for the member is in :data:`NODE_LOCAL_FILTERS` (an
    in-tree one), and every PreFilter plugin with AddPod/RemovePod extensions and every Reserve
    plugin was skipped at PreFilter (so the extensions and Reserve leave no trace another
    member's Filter could see)."""
    stateful = {pl.name for pl in fw.pre_filter_plugins
                if callable(getattr(pl, "pre_filter_extensions", None)) and pl.pre_filter_extensions() is not None}
    stateful |= {pl.name for pl in fw.reserve_plugins}
    filters = list(fw.filter_plugins)
    for a in valid:
        skipped = a.cycle_state.skip_filter_plugins
        if not stateful <= skipped:
            return False
        for pl in filters:
            if pl.name not in skipped and not (pl.name in NODE_LOCAL_FILTERS and _in_tree(pl)):
                return False
    return True


def _in_tree(pl: Any) -> bool:
    return type(pl).__module__.startswith("kubesched.plugins.")


class _Before:
    """The keys of the members evaluated before member ``i`` (``key in before``)."""

    __slots__ = ("i", "index")

    def __init__(self, index: dict[str, int], i: int) -> None:
        self.index, self.i = index, i

    def __contains__(self, key: object) -> bool:
        j = self.index.get(key) if isinstance(key, str) else None
        return j is not None and j < self.i


class _NodeLocalReprieve:
    """The reprieve of :meth:`PodGroupEvaluator.select_victims_on_domain` when :func:`_node_local`
    holds; every answer equals the plain loop's.

    Upstream re-runs, for every victim, Filter for the members in order up to the first failure,
    each member seeing the victim added back and the members before it placed (``reprieveVictim``,
    podgrouppreemption.go L246-283) — members × victims Filter runs. When a member's Filter reads
    only its own node, its answer under the victims reprieved so far (``B``) changes only when a
    reprieved victim had a pod on that node. So each member's answer under ``B`` is kept; a victim
    is decided by re-filtering only the members on its own nodes (with the members before them on
    the same node placed, and every member before them counted as placed for the nominated-pods
    check, as in the plain loop) and reading the kept answers of the others (computed once when
    first needed). Extensions and Reserve are skipped: :func:`_node_local` guarantees they are
    no-ops for these members."""

    def __init__(self, ev: Evaluator, edit: TableEdit, valid: Sequence[ProposedAssignment]) -> None:
        table = ev.handle.nodes
        self.ev, self.edit, self.valid = ev, edit, valid
        self.rows = [table.row_of[a.node_name] for a in valid]
        index = {pod_key(a.pod): i for i, a in enumerate(valid)}
        self.before = [_Before(index, i) for i in range(len(valid))]
        seen: dict[int, list[int]] = {}
        self.same_row_before: list[list[int]] = []
        for i, r in enumerate(self.rows):
            self.same_row_before.append(list(seen.get(r, ())))
            seen.setdefault(r, []).append(i)
        self.known: dict[int, bool] = {}
        """member → its Filter answer under the victims reprieved so far."""

    def _fits(self, i: int) -> bool:
        a, row, edit = self.valid[i], self.rows[i], self.edit
        placed: list[int] = []
        try:
            for j in self.same_row_before[i]:
                edit.add(self.valid[j].pod_info, row)
                placed.append(j)
            return self.ev.filter_row_with_nominated_pods(a.cycle_state, a.pod, row, self.before[i]).is_success()
        finally:
            for j in reversed(placed):
                edit.remove(self.valid[j].pod_info, row)

    def reprieve(self, v: Victim) -> tuple[bool, Status | None]:
        """``(fits, None)`` as the plain reprieve: a fitting victim stays on the table."""
        for r, pi in v.members:
            self.edit.add(pi, r)
        touched = {r for r, _ in v.members}
        fresh: dict[int, bool] = {}
        fits = True
        for i, row in enumerate(self.rows):
            if row in touched:
                ok = fresh[i] = self._fits(i)
            else:
                ok = self.known.get(i)  # type: ignore[assignment]
                if ok is None:
                    ok = self.known[i] = self._fits(i)
            if not ok:
                fits = False
                break
        if fits:
            self.known.update(fresh)
        else:
            for r, pi in v.members:
                self.edit.remove(pi, r)
        return fits, None
