"""The preemption Evaluator (upstream ``pkg/scheduler/framework/preemption/preemption.go``, v1.34)
plus the default victim selection of ``plugins/defaultpreemption/default_preemption.go``.

:meth:`Evaluator.preempt` is what a PostFilter plugin calls when no node fits the pod:

1. ``pod_eligible_to_preempt_others``: ``preemptionPolicy: Never`` → ``"not eligible due to
   preemptionPolicy=Never."``; a pod whose nominated node (not UnschedulableAndUnresolvable)
   holds a lower-priority pod terminating *because of preemption* (``DisruptionTarget=True``,
   reason ``PreemptionByScheduler``) → ``"not eligible due to a terminating pod on the
   nominated node."``. Either way the result is ``(None, Unschedulable msg)``.
2. Potential nodes = the nodes whose filter status is **Unschedulable** (in ``NodeTable.order()``
   order). None → a FitError over an empty status map whose absent status is
   UnschedulableAndUnresolvable ``"Preemption is not helpful for scheduling"``, returned with
   ``PostFilterResult(NominatingInfo("", OVERRIDE))`` to clear the nominated node.
3. ``numCandidates = max(n*minCandidateNodesPercentage/100, minCandidateNodesAbsolute)`` capped
   at ``n``; ``offset`` = ``handle.rng.integers(n)``. The dry run visits
   ``potential[(offset+i) % n]`` sequentially and stops once it holds a non-PDB-violating
   candidate and ``#candidates >= numCandidates`` (each of the two lists keeps at most
   ``numCandidates``, as upstream's fixed-size ``candidateList``). Candidates are the
   non-violating ones, then the violating ones.
4. ``select_victims_on_node``: every pod with a lower priority (and ``is_eligible_pod``) is
   removed — from the **real** NodeTable row, then ``RemovePod`` of each PreFilter plugin's
   extensions on a cloned CycleState; the row is restored exactly before returning (pods list
   order, ports, generation). No such pod → UnschedulableAndUnresolvable
   ``"No preemption victims found for incoming pod"``. The Filter plugins run for that one row
   (with the nominated pods of priority ≥ the pod's, as ``RunFilterPluginsWithNominatedPods``);
   a failure is the node's preemption status. The potential victims are sorted by
   :func:`more_important_pod`, split into PDB-violating and non-violating, and reprieved
   (violating first, highest importance first): a pod that still fits stays, the others are
   the victims; ``numPDBViolations`` counts the violating victims.
5. :func:`pick_one_node_for_preemption`: fewest PDB violations; lowest highest-victim priority;
   smallest Σ(priority + 2³¹); fewest victims; latest earliest-start-time of the
   highest-priority victims; then the first remaining candidate.
6. ``prepare_candidate`` — **synchronous** (upstream's ``SchedulerAsyncPreemption``, beta in
   v1.33+, deletes in a goroutine and gates the preemptor with PreEnqueue; the decisions are the
   same, only the timing differs, and that mode is out of scope here): for each victim not
   already terminating, reject it if it waits on Permit (``preempted``), else add the
   ``DisruptionTarget`` condition (``client.add_pod_condition``) and ``client.delete_pod(victim)``;
   record on the **victim** the event ``Normal Preempted`` (action ``Preempting``, related: the
   preemptor) ``"Preempted by pod <preemptor uid> on node <node>"``; then clear
   ``nominatedNodeName`` of lower-priority pods nominated to that node
   (``client.clear_nominated_node_name``).
7. Result: ``(PostFilterResult(NominatingInfo(node, OVERRIDE)), Status(SUCCESS))``; since v1.37
   the Success carries ``"found a potential placement for pod on node <node>, preempting <n>
   victims"`` (``n`` = all victims, terminating ones included), which DefaultPreemption prefixes
   with ``"preemption: "`` and the FitError appends to the FailedScheduling message.

Between 3 and 5, the scheduler extenders that support preemption narrow the candidates
(``call_extenders``, upstream ``callExtenders``; ``handle.extenders``).

Victim units (v1.37 with GenericWorkload; ``preemption/types.go``, ``util.go``,
``default_preemption.go`` ``SelectVictimsOnNode``): on a node holding members of PodGroups the
victims are :class:`Victim` units — a member of a PodGroup whose ``spec.disruptionMode`` is
``all`` brings every scheduled member of the group, on every node; any other member is a unit of
its own typed ``podgroup``; a unit's priority is its PodGroup's ``spec.priority``. A unit is a
potential victim when its priority is lower than the preemptor's and ``is_eligible_victim``
accepts it on each node it touches; units are reprieved in :func:`more_important_victim` order
(priority, then CompositePodGroup > PodGroup > pod, then more pods, then the earlier start),
PDB-violating units first (a unit violates when any member does, and counts each violating
member). The candidate's victims may then include pods on other nodes; all are evicted. On nodes
without group members the units are lone pods and the v1.34 algorithm above (with its
shortcuts) gives the same answer, so it runs there. Pod-group preemption (PodGroupPostFilter) is
:mod:`kubesched.framework.podgrouppreemption`.

Departures, all deliberate: ties that
upstream breaks by Go map order / goroutine timing are broken by candidate order (which starts
at the random offset); pods without ``status.startTime`` count as started "now", i.e. after
every recorded start time (upstream uses ``time.Now()``); the preemptor's UID falls back to
``namespace/name`` when the object has none (an API server always sets one).

Nominated pods: ``handle.nominator.nominated_pods_for_node(name)`` is used when the engine
provides a nominator; otherwise they are derived from ``handle.lister.list("Pod")`` (pods with
``status.nominatedNodeName`` and no ``spec.nodeName``).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.labels import selector_from_label_selector
from kubesched.api.objects import pod_key, pod_priority
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, fit_error_message
from kubesched.framework.extender import Victims
from kubesched.framework.interface import (
    POD_INDEPENDENT_FILTERS,
    Code,
    NominatingInfo,
    NominatingMode,
    PostFilterResult,
    Status,
    as_status,
)
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import RowEdit
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KEY_TYPE,
    POD_GROUP_KEY_TYPE,
    POD_KEY_TYPE,
    pod_group_disruption_mode_all,
    pod_group_name_of,
    pod_group_priority,
)
from kubesched.framework.preemption_batch import alone_victims, batch_victims, single_lower_pod_rows
from kubesched.framework.waiting_pods import waiting_pod_key

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod, PodDisruptionBudget
    from kubesched.framework.handle import Handle, ProfileFramework
    from kubesched.framework.node_table import NodeInfo

__all__ = [
    "Candidate",
    "PodGroupIndex",
    "Preemptor",
    "Victim",
    "ERR_NO_CANDIDATE",
    "ERR_NO_VICTIMS",
    "ERR_NOT_ELIGIBLE_NEVER",
    "ERR_NOT_ELIGIBLE_TERMINATING",
    "ERR_NOT_HELPFUL",
    "Evaluator",
    "ExactPrecheck",
    "RowEdit",
    "Victims",
    "aggregate_message",
    "filter_pods_with_pdb_violation",
    "filter_victims_with_pdb_violation",
    "get_earliest_pod_start_time",
    "more_important_pod",
    "more_important_victim",
    "new_victim",
    "pick_one_node_for_preemption",
    "pod_start_time_ns",
    "pod_terminating_by_preemption",
    "victim_rank",
]

ERR_NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
ERR_NOT_HELPFUL = "Preemption is not helpful for scheduling"
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
ERR_NO_CANDIDATE = "no candidate node for preemption"
PREEMPT_NEVER = "Never"
DISRUPTION_TARGET = "DisruptionTarget"
REASON_PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
MAX_INT32 = (1 << 31) - 1
_NOW_NS = (1 << 63) - 1
"""``status.startTime`` of a pod that has none: "now", later than any recorded start time."""


# ───────────────────────────── pod ordering (pkg/scheduler/util/utils.go) ─────────────────────────────


@functools.lru_cache(maxsize=65536)
def _parse_rfc3339_ns(ts: str) -> int:
    """RFC 3339 timestamp → integer nanoseconds since the epoch (fractions to the nanosecond)."""
    s = ts.strip()
    frac_ns = 0
    dot = s.find(".")
    if dot != -1:
        end = dot + 1
        while end < len(s) and s[end].isdigit():
            end += 1
        digits = s[dot + 1:end]
        frac_ns = int((digits + "000000000")[:9]) if digits else 0
        s = s[:dot] + s[end:]
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp()) * 1_000_000_000 + frac_ns


def pod_start_time_ns(pod: Pod) -> int:
    """Upstream ``GetPodStartTime``: ``status.startTime`` in ns; "now" (the largest value) when
    unset or unparsable."""
    ts = pod.status.start_time
    if not ts:
        return _NOW_NS
    try:
        return _parse_rfc3339_ns(ts)
    except ValueError:
        return _NOW_NS


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """Upstream ``MoreImportantPod``: higher priority, then the earlier start time."""
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return pod_start_time_ns(pod1) < pod_start_time_ns(pod2)


def _importance_key(pod: Pod) -> tuple[int, int]:
    """Sort key equivalent to :func:`more_important_pod` (most important first)."""
    return (-pod_priority(pod), pod_start_time_ns(pod))


def _pod_info_importance(pi: PodInfo) -> tuple[int, int]:
    """:func:`_importance_key` of ``pi.pod`` (inlined: the batch sorts every row's victims)."""
    pod = pi.pod
    p = pod.spec.priority
    return (0 if p is None else -p, pod_start_time_ns(pod))


def get_earliest_pod_start_time(pods: Sequence[Pod]) -> int | None:
    """Upstream ``GetEarliestPodStartTime``: the earliest start time among the victims that have
    the highest priority (ns), None for no pods."""
    if not pods:
        return None
    max_p = pod_priority(pods[0])
    earliest = pod_start_time_ns(pods[0])
    for p in pods:
        pr = pod_priority(p)
        if pr == max_p:
            t = pod_start_time_ns(p)
            if t < earliest:
                earliest = t
        elif pr > max_p:
            max_p = pr
            earliest = pod_start_time_ns(p)
    return earliest


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Upstream ``podTerminatingByPreemption``: being deleted, and its first ``DisruptionTarget``
    condition is True with reason ``PreemptionByScheduler``."""
    if pod.metadata.deletion_timestamp is None:
        return False
    for c in pod.status.conditions:
        if c.type == DISRUPTION_TARGET:
            return c.status == "True" and c.reason == REASON_PREEMPTION_BY_SCHEDULER
    return False


def filter_pods_with_pdb_violation(pod_infos: Iterable[PodInfo], pdbs: Sequence[PodDisruptionBudget]
                                   ) -> tuple[list[PodInfo], list[PodInfo]]:
    """Upstream ``filterPodsWithPDBViolation``: ``(violating, non_violating)``, order kept.

    Each matching PDB (same namespace, non-empty valid selector matching the pod's labels) whose
    ``status.disruptedPods`` does not list the pod is decremented; the pod violates when some
    budget goes below zero. A pod without labels matches no PDB; a nil or empty selector matches
    nothing.
    """
    allowed = [pdb.status.disruptions_allowed for pdb in pdbs]
    selectors: list[Any] = []
    for pdb in pdbs:
        try:
            sel = selector_from_label_selector(pdb.spec.selector)
        except Exception:  # noqa: BLE001 - an invalid selector matches no pod
            sel = None
        selectors.append(sel)
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for pi in pod_infos:
        pod = pi.pod
        violated = False
        labels = pod.metadata.labels
        if labels:
            for i, pdb in enumerate(pdbs):
                if pdb.metadata.namespace != pod.metadata.namespace:
                    continue
                sel = selectors[i]
                if sel is None or sel.is_empty or not sel.matches(labels):
                    continue
                if pod.metadata.name in pdb.status.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def aggregate_message(errors: Sequence[str]) -> str:
    """Upstream ``utilerrors.NewAggregate(errs).Error()``: one error → its message; several →
    ``"[a, b]"`` with duplicate messages dropped."""
    if len(errors) == 1:
        return errors[0]
    seen: list[str] = []
    for e in errors:
        if e not in seen:
            seen.append(e)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


# ───────────────────────────── candidates ─────────────────────────────


@dataclass
class Candidate:
    """A node on which the preemptor fits once ``victims`` are gone (for a pod group: the domain,
    ``"cluster"``). ``num_pod_group_disruptions``: the victim units that are pod groups (or pods
    of one; upstream ``NumPodGroupDisruptions``, set by pod-group preemption only)."""

    name: str
    victims: Victims
    num_pod_group_disruptions: int = 0


def _pick_by_default_criteria(nodes_to_victims: dict[str, Victims]) -> str:
    """:func:`pick_one_node_for_preemption` with the default criteria in one pass (every node
    has victims): the five scores of each node as one tuple, compared lexicographically; the first node with the
    largest tuple is the one the tie-breaking filters keep first."""
    best_node = ""
    best: tuple[int, int, int, int, int] | None = None
    offset = MAX_INT32 + 1
    for node, v in nodes_to_victims.items():
        pods = v.pods  # not empty
        if len(pods) == 1:
            pr = pod_priority(pods[0])
            key = (-v.num_pdb_violations, -pr, -(pr + offset), -1, pod_start_time_ns(pods[0]))
        else:
            prios = [pod_priority(p) for p in pods]
            t = get_earliest_pod_start_time(pods)
            key = (-v.num_pdb_violations, -prios[0], -(sum(prios) + offset * len(prios)), -len(pods),
                   -(1 << 63) if t is None else t)
        if best is None or key > best:
            best = key
            best_node = node
    return best_node


def pick_one_node_for_preemption(nodes_to_victims: dict[str, Victims],
                                 score_funcs: Sequence[Callable[[str], int]] | None = None) -> str:
    """Upstream ``pickOneNodeForPreemption``. Each score function keeps the nodes with the best
    (highest) score; the next one only breaks ties. Default criteria, in order: fewest PDB
    violations; lowest highest-victim priority; smallest Σ(priority + MaxInt32 + 1); fewest
    victims; latest earliest-start-time of the highest-priority victims; then the first
    remaining node (dict order). Victims must be sorted most important first."""
    if not nodes_to_victims:
        return ""
    candidates = list(nodes_to_victims)
    if not score_funcs and all(v.pods for v in nodes_to_victims.values()):
        return _pick_by_default_criteria(nodes_to_victims)
    if not score_funcs:
        def min_pdb(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -pod_priority(nodes_to_victims[node].pods[0])

        def min_sum_priorities(node: str) -> int:
            return -sum(pod_priority(p) + MAX_INT32 + 1 for p in nodes_to_victims[node].pods)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].pods)

        def latest_start_time(node: str) -> int:
            t = get_earliest_pod_start_time(nodes_to_victims[node].pods)
            return -(1 << 63) if t is None else t

        score_funcs = (min_pdb, min_highest_priority, min_sum_priorities, min_num_pods, latest_start_time)
    for f in score_funcs:
        best: list[str] = []
        max_score: int | None = None
        for node in candidates:
            s = f(node)
            if max_score is None or s > max_score:
                max_score = s
                best = [node]
            elif s == max_score:
                best.append(node)
        if len(best) == 1:
            return best[0]
        candidates = best
    return candidates[0]


# ───────────────────────────── victim units (GenericWorkload, v1.37) ─────────────────────────────


@dataclass
class Victim:
    """Upstream ``Victim`` together with ``DomainVictim`` (v1.37.2 ``framework/preemption/types.go``
    L306-470): the pods preempted as one unit — a single pod, or every scheduled member of a
    PodGroup whose ``spec.disruptionMode`` is ``all`` (spanning nodes).

    ``members``: ``(row, PodInfo)`` pairs, the PodInfo as stored in the NodeTable; ``priority``:
    the pod's priority, or for a member of a PodGroup the group's ``spec.priority`` (upstream
    ``GetPodPriority``); ``key_type``: ``pod``, ``podgroup`` (also a pod of a ``single``-mode
    group: upstream ``NewPodVictim`` types it so) or ``compositepodgroup``;
    ``earliest_start_ns``: the earliest ``status.startTime`` of the members (ns; "now" when unset).
    """

    members: list[tuple[int, PodInfo]]
    priority: int
    key_type: str = POD_KEY_TYPE
    earliest_start_ns: int = 0

    @property
    def pods(self) -> list[PodInfo]:
        return [pi for _, pi in self.members]

    @property
    def rows(self) -> list[int]:
        """The affected nodes (upstream ``AffectedNodes``), in order of first appearance."""
        return list(dict.fromkeys(r for r, _ in self.members))

    @property
    def is_group(self) -> bool:
        """Upstream ``IsGroup``: a PodGroup or CompositePodGroup unit (or a pod of a group)."""
        return self.key_type in (POD_GROUP_KEY_TYPE, COMPOSITE_POD_GROUP_KEY_TYPE)


def new_victim(members: list[tuple[int, PodInfo]], priority: int, key_type: str) -> Victim:
    """Upstream ``NewVictim`` (types.go L390-412): the earliest start time of the members."""
    earliest = min((pod_start_time_ns(pi.pod) for _, pi in members), default=_NOW_NS)
    return Victim(list(members), priority, key_type, earliest)


def victim_rank(v: Victim) -> int:
    """Upstream ``victimRank`` (util.go L80-90): CompositePodGroup 3, PodGroup 2, pod 1."""
    if v.key_type == COMPOSITE_POD_GROUP_KEY_TYPE:
        return 3
    if v.key_type == POD_GROUP_KEY_TYPE:
        return 2
    return 1


def more_important_victim(v1: Victim, v2: Victim) -> bool:
    """Upstream ``MoreImportantVictim`` (util.go L50-78): higher priority; then CompositePodGroup >
    PodGroup > pod; then more pods; then the earlier start."""
    if v1.priority != v2.priority:
        return v1.priority > v2.priority
    r1, r2 = victim_rank(v1), victim_rank(v2)
    if r1 != r2:
        return r1 > r2
    if len(v1.members) != len(v2.members):
        return len(v1.members) > len(v2.members)
    return v1.earliest_start_ns < v2.earliest_start_ns


def _victim_key(v: Victim) -> tuple[int, int, int, int]:
    """Sort key equivalent to :func:`more_important_victim` (most important first)."""
    return (-v.priority, -victim_rank(v), -len(v.members), v.earliest_start_ns)


def filter_victims_with_pdb_violation(victims: Iterable[Victim], pdbs: Sequence[PodDisruptionBudget]
                                      ) -> tuple[list[tuple[Victim, int]], list[Victim]]:
    """Upstream ``FilterVictimsWithPDBViolation`` (util.go L185-261): ``([(victim, number of its
    violating pods)], non_violating)``, order kept. A unit violates when any of its pods does
    (the budgets are decremented pod by pod, across units, as :func:`filter_pods_with_pdb_violation`)."""
    victims = list(victims)
    flat = [pi for v in victims for pi in v.pods]
    violating_pods, _ = filter_pods_with_pdb_violation(flat, pdbs)
    bad = {id(pi) for pi in violating_pods}
    violating: list[tuple[Victim, int]] = []
    non_violating: list[Victim] = []
    for v in victims:
        n = sum(1 for pi in v.pods if id(pi) in bad)
        if n:
            violating.append((v, n))
        else:
            non_violating.append(v)
    return violating, non_violating


class PodGroupIndex:
    """The pod-group facts one preemption attempt reads (GenericWorkload): the PodGroup objects
    (``handle.pod_group_manager.pod_group`` when the scheduler has a manager, else
    ``handle.lister.get("PodGroup", …)``; cached for the attempt) and each group's scheduled
    members, taken from the NodeTable (assumed and bound pods with the same
    ``spec.schedulingGroup.podGroupName`` in the namespace: upstream ``PodGroupState.ScheduledPods``).

    CompositePodGroups (alpha) are not followed: a pod's unit is decided by its own PodGroup.
    """

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        self._pgs: dict[tuple[str, str], dict[str, Any] | None] = {}
        self._members: dict[tuple[str, str], list[tuple[int, PodInfo]]] | None = None

    def pod_group(self, namespace: str, name: str) -> dict[str, Any] | None:
        key = (namespace, name)
        if key in self._pgs:
            return self._pgs[key]
        pg: Any = None
        mgr = self.handle.pod_group_manager
        try:
            if mgr is not None:
                pg = mgr.pod_group(namespace, name)
            else:
                pg = self.handle.lister.get("PodGroup", namespace, name)
        except Exception:  # noqa: BLE001 - a lister without PodGroups
            pg = None
        self._pgs[key] = pg if isinstance(pg, dict) else None
        return self._pgs[key]

    def pod_priority(self, pod: Pod) -> int:
        """Upstream ``GetPodPriority`` (util.go L140-180): the PodGroup's priority for a member of a
        known group, else the pod's own."""
        name = pod_group_name_of(pod)
        if name is None:
            return pod_priority(pod)
        pg = self.pod_group(pod.metadata.namespace, name)
        return pod_priority(pod) if pg is None else pod_group_priority(pg)

    def pod_victim(self, row: int, pi: PodInfo) -> Victim:
        """Upstream ``NewPodVictim`` (types.go L370-388)."""
        key_type = POD_GROUP_KEY_TYPE if pod_group_name_of(pi.pod) is not None else POD_KEY_TYPE
        return new_victim([(row, pi)], self.pod_priority(pi.pod), key_type)

    def members(self, namespace: str, name: str) -> list[tuple[int, PodInfo]]:
        """The group's pods in the NodeTable (rows in ``order()``, pods in row order)."""
        if self._members is None:
            table = self.handle.nodes
            idx: dict[tuple[str, str], list[tuple[int, PodInfo]]] = {}
            for row in table.order().tolist():
                for pi in table.pods[row]:
                    g = pod_group_name_of(pi.pod)
                    if g is not None:
                        idx.setdefault((pi.pod.metadata.namespace, g), []).append((row, pi))
            self._members = idx
        return self._members.get((namespace, name), [])

    def row_has_groups(self, row: int) -> bool:
        """Some pod on ``row`` belongs to a PodGroup (then its victims may differ from plain pods)."""
        return any(pod_group_name_of(pi.pod) is not None for pi in self.handle.nodes.pods[row])

    def victims_on_rows(self, rows: Iterable[int]) -> list[Victim]:
        """Upstream ``getCrossNodesVictims`` (types.go L240-270): the pods on ``rows`` as victim
        units; a pod whose PodGroup has ``disruptionMode.all`` brings every scheduled member of the
        group (once), the others are units of their own."""
        table = self.handle.nodes
        seen: set[tuple[str, ...]] = set()
        out: list[Victim] = []
        for row in rows:
            for pi in table.pods[row]:
                pod = pi.pod
                g = pod_group_name_of(pod)
                pg = self.pod_group(pod.metadata.namespace, g) if g is not None else None
                if g is None or not pod_group_disruption_mode_all(pg):
                    if ("pod", pi.key) not in seen:
                        seen.add(("pod", pi.key))
                        out.append(self.pod_victim(row, pi))
                    continue
                gkey = ("podgroup", pod.metadata.namespace, g)
                if gkey in seen:
                    continue
                seen.add(gkey)
                members = self.members(pod.metadata.namespace, g)
                if not members:  # searchCrossNodesVictimPods' fallback (cannot happen from a table row)
                    out.append(self.pod_victim(row, pi))
                    continue
                out.append(new_victim(members, self.pod_priority(pod), POD_GROUP_KEY_TYPE))
        return out


@dataclass(frozen=True)
class Preemptor:
    """Upstream ``ExecutorPreemptor`` (executor.go L55-75, L480-587): who preempts — a pod, a
    PodGroup or a CompositePodGroup. ``obj`` is the Pod, or the raw (Composite)PodGroup mapping
    (the ``related`` object of the victims' ``Preempted`` events); ``pods`` are its members by
    ``namespace/name``."""

    type: str
    uid: str
    scheduler_name: str
    priority: int
    obj: Any
    pods: dict[str, Pod]

    @staticmethod
    def of_pod(pod: Pod) -> Preemptor:
        return Preemptor(POD_KEY_TYPE, pod.metadata.uid or pod_key(pod), pod.spec.scheduler_name,
                         pod_priority(pod), pod, {pod_key(pod): pod})

    @staticmethod
    def of_group(group: dict[str, Any], members: Sequence[Pod], key_type: str = POD_GROUP_KEY_TYPE) -> Preemptor:
        """A (Composite)PodGroup preemptor: UID and priority from the object, the scheduler name
        from its first member (all members share it: validated by the pod-group cycle)."""
        meta = group.get("metadata") or {}
        uid = str(meta.get("uid") or f"{meta.get('namespace', '')}/{meta.get('name', '')}")
        sched = members[0].spec.scheduler_name if members else ""
        return Preemptor(key_type, uid, sched, pod_group_priority(group), group,
                         {pod_key(p): p for p in members})


# ───────────────────────────── the Evaluator ─────────────────────────────


def _status_of(m: Any, name: str) -> Status:
    """``m.Get(name)`` for a :class:`NodeToStatus` or a plain ``{name: Status}`` mapping (absent →
    UnschedulableAndUnresolvable, as ``NewDefaultNodeToStatus``)."""
    if isinstance(m, dict):
        return m.get(name) or Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
    st: Status = m.get(name)
    return st


_REJECTED: tuple[list[Any], int, Status] = ([], 0, Status(Code.UNSCHEDULABLE))
""":meth:`Evaluator._fast_victims`' answer for a row that cannot be a candidate."""


class ExactPrecheck:
    """A :attr:`Evaluator.reprieve_precheck` result that decides the Filter plugins ``decides``
    exactly: ``verdict(row, added, removed)`` is True (one of them rejects the preemptor on the
    row with the pods ``added`` added and ``removed`` removed), False (all pass), None (unknown:
    the real run decides). Calling it is the plain precheck, ``verdict(...) is True``."""

    __slots__ = ("batch", "decides", "reprieve", "verdict")

    def __init__(self, verdict: Callable[[int, Sequence[PodInfo], Sequence[PodInfo]], bool | None],
                 decides: Sequence[Any],
                 reprieve: Callable[[int, Sequence[Sequence[PodInfo]], Sequence[PodInfo], Sequence[PodInfo]],
                                    list[bool] | None] | None = None,
                 batch: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, Callable[[PodInfo], list[int]]] | None]
                 | None = None) -> None:
        self.verdict = verdict
        self.decides = tuple(decides)
        self.reprieve = reprieve
        """Optional: ``reprieve(row, passes, removed, order)`` → for each pod of ``order``, re-added
        in turn to the row with ``removed`` removed, whether every pass (the pods of ``passes[i]``
        added) still passes — a pod that does stays; None: unknown. The verdicts of ``verdict``
        for each step, in one call."""
        self.batch = batch
        """Optional: ``batch(rows)`` → ``(slack int64[len(rows), m], taken int64[len(rows), m], cost)``
        or None (unknown): ``verdict(row, (), removed)`` is False exactly when every entry of
        ``slack[i] + Σ cost(pi) for pi in removed`` is ≥ 0 (``cost(pi)``: ``m`` ints, the amounts
        one pod on the row takes; ``taken[i]``: Σ cost over all the row's pods). Used by
        :func:`~kubesched.framework.preemption_batch.batch_victims`."""

    def __call__(self, row: int, added: Sequence[PodInfo], removed: Sequence[PodInfo]) -> bool:
        return self.verdict(row, added, removed) is True


@dataclass(frozen=True)
class _DryRunPlan:
    """What one dry run may shortcut, derived once from the preemptor's CycleState.

    ``extensions``: whether some PreFilter plugin not skipped in this cycle has AddPod/RemovePod
    extensions (when none has, the framework's RunPreFilterExtension* calls are no-ops and are
    not made). ``reprieve_filters``: ``(plugin, has filter_nodes)`` for the Filter plugins, not
    skipped in this cycle, that the reprieve must re-run (all but
    :data:`POD_INDEPENDENT_FILTERS`)."""

    extensions: bool
    reprieve_filters: tuple[tuple[Any, bool], ...]
    rejects: Callable[[int, Sequence[PodInfo], Sequence[PodInfo]], bool] | None = None
    """From :attr:`Evaluator.reprieve_precheck`: ``rejects(row, added, removed)`` is True when,
    with the pods ``added`` added to the row and ``removed`` removed from it, a Filter plugin
    surely rejects the preemptor."""
    exact: ExactPrecheck | None = None
    """Set when the victims of a row can be chosen by arithmetic alone (:meth:`Evaluator._fast_victims`):
    no PreFilter extension is active, the precheck decides every Filter plugin the reprieve
    re-runs exactly, and each of the other (pod-independent, in-tree) Filter plugins in
    ``independent`` has a batch ``filter_nodes``."""
    independent: tuple[Any, ...] = ()


class Evaluator:
    """Upstream ``preemption.Evaluator`` together with DefaultPreemption's implementation of its
    ``Interface`` (subclass and override the hooks to customise).

    Args:
        plugin_name: the PostFilter plugin using it (error messages, events).
        handle: the profile's :class:`~kubesched.framework.handle.Handle`; ``handle.framework``
            runs the PreFilter extensions and Filter plugins, ``handle.rng`` picks the offset,
            ``handle.client`` deletes victims, ``handle.lister`` gives pods and PDBs.
        min_candidate_nodes_percentage / min_candidate_nodes_absolute: DefaultPreemptionArgs.

    Hooks: ``is_eligible_pod(node_info, victim_pod_info, preemptor) -> bool`` (default: always);
    ``more_important_pod(pod1, pod2) -> bool`` (default :func:`more_important_pod`);
    ``offset_fn(n) -> int`` (default ``handle.rng.integers(n)``);
    ``reprieve_precheck(state, filter_plugins) -> rejects(row, added, removed) -> bool | None``
    (default None; DefaultPreemption installs NodeResourcesFit's arithmetic): a sure "does not
    fit" for the row with the pods ``added`` added and ``removed`` removed; it must never answer
    True where the Filter plugins would pass. ``RunFilterPluginsWithNominatedPods`` fails when
    either of its passes (with the nominated pods of priority ≥ the preemptor's, without them)
    fails, so it is asked for both. It is asked (a) for a victim about to be re-added during
    the reprieve, when no PreFilter extension is active (then no row edit), and (b) for a node
    with every potential victim removed: such a node cannot be a candidate, and its exact
    dry-run status is computed only if the dry run ends without candidates (the statuses are
    used only then). When it is an :class:`ExactPrecheck` deciding every Filter plugin whose
    verdict depends on the row's pods, and no PreFilter extension is active, a row's victims are
    chosen by its arithmetic alone (:meth:`_fast_victims`: no row edit, no state clone).
    """

    def __init__(self, plugin_name: str, handle: Handle, *, min_candidate_nodes_percentage: int = 10,
                 min_candidate_nodes_absolute: int = 100) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.min_candidate_nodes_percentage = min_candidate_nodes_percentage
        self.min_candidate_nodes_absolute = min_candidate_nodes_absolute
        self.is_eligible_pod: Callable[[NodeInfo, PodInfo, Pod], bool] = lambda node, victim, preemptor: True
        self.more_important_pod: Callable[[Pod, Pod], bool] = more_important_pod
        self.offset_fn: Callable[[int], int] | None = None
        self._fallback_rng = np.random.default_rng(0)
        self._nominated_cache: dict[str, list[PodInfo]] | None = None
        self._plan: _DryRunPlan | None = None
        self._lazy_candidates = False
        """Set by :meth:`evaluate` while the dry run may return :meth:`_dry_run_loop`'s items
        unmaterialized (the default pick follows, no extender reads them)."""
        self.reprieve_precheck: Callable[[CycleState, Sequence[Any]], Callable[
            [int, Sequence[PodInfo], Sequence[PodInfo]], bool] | None] | None = None
        self._default_is_eligible_pod = self.is_eligible_pod
        self.is_eligible_victim: Callable[[NodeInfo, Victim, Pod], bool] = self._default_is_eligible_victim
        """GenericWorkload (v1.37) hook, upstream ``IsEligiblePod(nodeInfo, victim, preemptor)``:
        asked once per node the victim unit has pods on; the unit is eligible only if every answer
        is True. Default: ``is_eligible_pod`` for each of the unit's pods on that node."""
        self.more_important_victim: Callable[[Victim, Victim], bool] = more_important_victim
        """GenericWorkload (v1.37) hook, upstream ``MoreImportantVictim``."""
        self._groups: PodGroupIndex | None = None

    @property
    def workload_aware(self) -> bool:
        """Victims are units (upstream ``GetVictimsOnNode`` with GenericWorkload; v1.37)."""
        fg = self.handle.features
        return fg.enabled("GenericWorkload") and fg.at_least(1, 37)

    def _default_is_eligible_victim(self, node_info: NodeInfo, victim: Victim, preemptor: Pod) -> bool:
        if self.is_eligible_pod is self._default_is_eligible_pod:
            return True
        row = node_info.row
        return all(self.is_eligible_pod(node_info, pi, preemptor) for r, pi in victim.members if r == row)

    def _victim_hooks_customised(self) -> bool:
        return (self.more_important_victim is not more_important_victim
                or self.is_eligible_victim != self._default_is_eligible_victim)

    def _group_index(self) -> PodGroupIndex:
        if self._groups is None:
            return PodGroupIndex(self.handle)
        return self._groups

    def is_unit_preemption_allowed(self, victim: Victim, preemptor: Pod) -> bool:
        """Upstream ``isPreemptionAllowedAcrossAllVictimNodes`` (default_preemption.go L468-481):
        lower priority than the preemptor and eligible on every affected node."""
        if victim.priority >= pod_priority(preemptor):
            return False
        table = self.handle.nodes
        return all(self.is_eligible_victim(table.node_info(r), victim, preemptor) for r in victim.rows)

    # ─────────────── Interface (DefaultPreemption's implementation) ───────────────

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """Upstream ``calculateNumCandidates``."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        if n < self.min_candidate_nodes_absolute:
            n = self.min_candidate_nodes_absolute
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset in ``[0, num_nodes)`` and the number of candidates to look for."""
        if self.offset_fn is not None:
            offset = int(self.offset_fn(num_nodes))
        else:
            rng = self.handle.rng or self._fallback_rng
            offset = int(rng.integers(num_nodes)) if num_nodes > 0 else 0
        return offset, self.calculate_num_candidates(num_nodes)

    def is_preemption_allowed(self, node_info: NodeInfo, victim: PodInfo, preemptor: Pod) -> bool:
        """Lower priority than the preemptor and accepted by ``is_eligible_pod``."""
        return victim.priority < pod_priority(preemptor) and self.is_eligible_pod(node_info, victim, preemptor)

    def pod_eligible_to_preempt_others(self, pod: Pod, nominated_node_status: Status | None) -> tuple[bool, str]:
        """Upstream ``PodEligibleToPreemptOthers``."""
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, ERR_NOT_ELIGIBLE_NEVER
        nnn = pod.status.nominated_node_name
        if nnn:
            if nominated_node_status is not None and nominated_node_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            table = self.handle.nodes
            row = table.row_of.get(nnn)
            if row is not None:
                ni = table.node_info(row)
                if self.workload_aware:
                    # default_preemption.go L440-452: each pod as NewPodVictim (its group's priority)
                    groups = self._group_index()
                    prio = pod_priority(pod)
                    for p in table.pods[row]:
                        v = groups.pod_victim(row, p)
                        if (v.priority < prio and self.is_eligible_victim(ni, v, pod)
                                and pod_terminating_by_preemption(p.pod)):
                            return False, ERR_NOT_ELIGIBLE_TERMINATING
                    return True, ""
                for p in table.pods[row]:
                    if self.is_preemption_allowed(ni, p, pod) and pod_terminating_by_preemption(p.pod):
                        return False, ERR_NOT_ELIGIBLE_TERMINATING
        return True, ""

    def ordered_score_funcs(self, nodes_to_victims: dict[str, Victims]) -> list[Callable[[str], int]] | None:
        """Custom node-picking criteria; None → the default ones."""
        return None

    def candidates_to_victims_map(self, candidates: Sequence[Candidate]) -> dict[str, Victims]:
        return {c.name: c.victims for c in candidates}

    def _sort_importance(self, pod_infos: list[PodInfo]) -> None:
        if self.more_important_pod is more_important_pod:
            pod_infos.sort(key=lambda pi: _importance_key(pi.pod))
        else:
            less = self.more_important_pod
            pod_infos.sort(key=functools.cmp_to_key(
                lambda a, b: -1 if less(a.pod, b.pod) else (1 if less(b.pod, a.pod) else 0)))

    def select_victims_on_node(self, state: CycleState, pod: Pod, row: int,
                               pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int, Status]:
        """Upstream ``SelectVictimsOnNode`` on table row ``row`` with a cloned ``state``.

        Returns ``(victims most important first, number of PDB-violating victims, status)``.
        With GenericWorkload (v1.37) a row holding members of PodGroups (every row, once
        ``is_eligible_victim`` or ``more_important_victim`` is replaced) is handled by
        :meth:`select_victim_units_on_node`; on other rows every victim is a lone pod and the
        two agree.
        """
        if self.workload_aware and (self._victim_hooks_customised() or self._group_index().row_has_groups(row)):
            return self.select_victim_units_on_node(state, pod, row, pdbs)
        table = self.handle.nodes
        plan = self._plan
        extensions = plan is None or plan.extensions
        rejects = plan.rejects if plan is not None and not plan.extensions else None
        nominated = self._stable_nominated_on(pod, row) if rejects is not None else []
        with RowEdit(table, row) as edit:
            ni = edit.node_info
            potential = [pi for pi in table.pods[row] if self.is_preemption_allowed(ni, pi, pod)]
            for pi in potential:
                edit.remove(pi)
                if extensions:
                    st = self.run_pre_filter_extension_remove_pod(state, pod, pi, ni)
                    if st is not None:
                        return [], 0, st
            if not potential:
                return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VICTIMS,))
            st = self.run_filter_plugins_with_nominated_pods(state, pod, edit)
            if not st.is_success():
                return [], 0, st
            self._sort_importance(potential)
            violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
            victims: list[PodInfo] = []

            def reprieve(pi: PodInfo) -> tuple[bool, Status | None]:
                if rejects is not None and (rejects(row, (pi,), ()) or (
                        nominated and rejects(row, (pi, *nominated), ()))):
                    victims.append(pi)  # as re-adding it, failing the Filters and removing it again
                    return False, None
                edit.add(pi)
                if extensions:
                    err = self.run_pre_filter_extension_add_pod(state, pod, pi, ni)
                    if err is not None:
                        return False, err
                if plan is None:
                    fits = self.run_filter_plugins_with_nominated_pods(state, pod, edit).is_success()
                else:
                    fits = self._reprieve_fits(plan, state, pod, edit)
                if not fits:
                    edit.remove(pi)
                    if extensions:
                        err = self.run_pre_filter_extension_remove_pod(state, pod, pi, ni)
                        if err is not None:
                            return False, err
                    victims.append(pi)
                return fits, None

            num_violating = 0
            for pi in violating:
                fits, err = reprieve(pi)
                if err is not None:
                    return [], 0, err
                if not fits:
                    num_violating += 1
            for pi in non_violating:
                _, err = reprieve(pi)
                if err is not None:
                    return [], 0, err
            if violating and non_violating:
                self._sort_importance(victims)
            return [pi.pod for pi in victims], num_violating, Status(Code.SUCCESS)

    def select_victim_units_on_node(self, state: CycleState, pod: Pod, row: int,
                                    pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int, Status]:
        """Upstream ``SelectVictimsOnNode`` with victim units (v1.37.2 default_preemption.go
        L297-420). The victims are :meth:`PodGroupIndex.victims_on_rows` of the row; a unit is a
        potential victim when :meth:`is_unit_preemption_allowed`. Removing or re-adding a unit
        edits only this row of the table (its pods here) but runs the PreFilter extensions for
        every member, with the NodeInfo of the member's own node. Reprieve in
        ``more_important_victim`` order, PDB-violating units first; the count of PDB violations
        adds each violating unit's violating pods. Returns the victims' pods unit by unit (most
        important unit first), which may include pods on other nodes."""
        table = self.handle.nodes
        groups = self._group_index()
        potential = [v for v in groups.victims_on_rows([row]) if self.is_unit_preemption_allowed(v, pod)]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VICTIMS,))
        with RowEdit(table, row) as edit:
            ni = edit.node_info

            def remove_unit(v: Victim) -> Status | None:
                for r, pi in v.members:
                    if r == row:
                        edit.remove(pi)
                    at = ni if r == row else table.node_info(r)
                    st = self.run_pre_filter_extension_remove_pod(state, pod, pi, at)
                    if st is not None:
                        return st
                return None

            def add_unit(v: Victim) -> Status | None:
                for r, pi in v.members:
                    if r == row:
                        edit.add(pi)
                    at = ni if r == row else table.node_info(r)
                    st = self.run_pre_filter_extension_add_pod(state, pod, pi, at)
                    if st is not None:
                        return st
                return None

            for v in potential:
                st = remove_unit(v)
                if st is not None:
                    return [], 0, st
            st = self.run_filter_plugins_with_nominated_pods(state, pod, edit)
            if not st.is_success():
                return [], 0, st
            self._sort_victims(potential)
            violating, non_violating = filter_victims_with_pdb_violation(potential, pdbs)
            victims: list[Victim] = []

            def reprieve(v: Victim) -> tuple[bool, Status | None]:
                err = add_unit(v)
                if err is not None:
                    return False, err
                fits = self.run_filter_plugins_with_nominated_pods(state, pod, edit).is_success()
                if not fits:
                    err = remove_unit(v)
                    if err is not None:
                        return False, err
                    victims.append(v)
                return fits, None

            num_violating = 0
            for v, count in violating:
                fits, err = reprieve(v)
                if err is not None:
                    return [], 0, err
                if not fits:
                    num_violating += count
            for v in non_violating:
                _, err = reprieve(v)
                if err is not None:
                    return [], 0, err
            if violating and non_violating:
                self._sort_victims(victims)
            return [pi.pod for v in victims for pi in v.pods], num_violating, Status(Code.SUCCESS)

    def _sort_victims(self, victims: list[Victim]) -> None:
        if self.more_important_victim is more_important_victim:
            victims.sort(key=_victim_key)
        else:
            more = self.more_important_victim
            victims.sort(key=functools.cmp_to_key(
                lambda a, b: -1 if more(a, b) else (1 if more(b, a) else 0)))

    # ─────────────── dry-run shortcuts (same verdicts, fewer plugin calls) ───────────────

    def _make_plan(self, state: CycleState) -> _DryRunPlan | None:
        """The :class:`_DryRunPlan` for this cycle, or None when a hook is overridden or the
        framework does not expose its plugin lists (then everything runs as written)."""
        cls = type(self)
        for hook in ("run_pre_filter_extension_add_pod", "run_pre_filter_extension_remove_pod",
                     "run_filter_plugins_with_nominated_pods", "_run_filters", "nominated_pods_for_node"):
            if getattr(cls, hook) is not getattr(Evaluator, hook):
                return None
        fw = self.handle.framework
        pre_filter = getattr(fw, "pre_filter_plugins", None)
        filters = getattr(fw, "filter_plugins", None)
        if pre_filter is None or filters is None:
            return None
        skip = state.skip_filter_plugins
        extensions = False
        for pl in pre_filter:
            getter = getattr(pl, "pre_filter_extensions", None)
            if callable(getter) and getter() is not None and pl.name not in skip:
                extensions = True
                break
        reprieve = tuple(
            (pl, callable(getattr(pl, "filter_nodes", None))) for pl in filters
            if pl.name not in skip and not (pl.name in POD_INDEPENDENT_FILTERS
                                            and type(pl).__module__.startswith("kubesched.plugins."))
        )
        rejects = None
        if self.reprieve_precheck is not None:
            rejects = self.reprieve_precheck(state, [pl for pl in filters if pl.name not in skip])
        independent = tuple(pl for pl in filters if pl.name not in skip and not any(pl is p for p, _ in reprieve))
        exact = None
        if (isinstance(rejects, ExactPrecheck) and not extensions and reprieve
                and all(any(pl is d for d in rejects.decides) for pl, _ in reprieve)
                and all(callable(getattr(pl, "filter_nodes", None)) for pl in independent)
                and cls.select_victims_on_node is Evaluator.select_victims_on_node):
            exact = rejects
        return _DryRunPlan(extensions, reprieve, rejects, exact, independent)

    def _reprieve_fits(self, plan: _DryRunPlan, state: CycleState, pod: Pod, edit: RowEdit) -> bool:
        """Whether the pod still fits the edited row during the reprieve: the verdict of
        :meth:`run_filter_plugins_with_nominated_pods` (pods of priority ≥ the pod's nominated to
        the node added first, on a cloned state; then without), running only
        ``plan.reprieve_filters``: the node passed the others, with and without those nominated
        pods, once every potential victim was removed, and re-adding victims cannot change
        their verdict."""
        table, row = edit.table, edit.row
        nominated = self._nominated_on(pod, row)
        if nominated:
            state_n = state.clone()
            fw = self._framework()
            with RowEdit(table, row) as with_nominated:
                ni = table.node_info(row)
                for pi in nominated:
                    with_nominated.add(pi)
                    if plan.extensions and fw.run_pre_filter_extension_add_pod(state_n, pod, pi, ni) is not None:
                        return False  # an Error status
                if not self._filters_pass(plan, state_n, pod, row):
                    return False
        return self._filters_pass(plan, state, pod, row)

    def _filters_pass(self, plan: _DryRunPlan, state: CycleState, pod: Pod, row: int) -> bool:
        """``plan.reprieve_filters`` all pass ``row`` (an Error is not a pass)."""
        table = self.handle.nodes
        rows = np.asarray([row], np.int64)
        try:
            for pl, batch in plan.reprieve_filters:
                if batch:
                    res = pl.filter_nodes(state, pod, table, rows)
                    if res is not None and res.failed[0] != 0:
                        return False
                else:
                    st = pl.filter(state, pod, table.node_info(row))
                    if st is not None and not st.is_success():
                        return False
        except Exception:  # noqa: BLE001 - a Filter error: the full run's Error status, not a fit
            return False
        return True

    # ─────────────── framework helpers (RunPreFilterExtension*, RunFilterPluginsWithNominatedPods) ───────────────

    def _framework(self) -> ProfileFramework:
        fw = self.handle.framework
        if fw is None:
            raise RuntimeError("preemption: the handle has no framework")
        return fw

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pi: PodInfo,
                                         ni: NodeInfo) -> Status | None:
        """Upstream ``RunPreFilterExtensionAddPod``: None or an Error status."""
        return self._framework().run_pre_filter_extension_add_pod(state, pod, pi, ni)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pi: PodInfo,
                                            ni: NodeInfo) -> Status | None:
        """Upstream ``RunPreFilterExtensionRemovePod``: None or an Error status."""
        return self._framework().run_pre_filter_extension_remove_pod(state, pod, pi, ni)

    def _run_filters(self, state: CycleState, pod: Pod, row: int) -> Status:
        chunk = self._framework().run_filter_plugins(state, pod, np.asarray([row], np.int64))
        if isinstance(chunk, Status):  # an Error
            return chunk
        if chunk.fail_plugin[0] < 0:
            return Status(Code.SUCCESS)
        st: Status = next(chunk.statuses(self.handle.nodes.names))[1]
        return st

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to ``node_name`` (the engine's nominator when it has one)."""
        nominator = self.handle.nominator
        if nominator is not None:
            return list(nominator.nominated_pods_for_node(node_name))
        if self._nominated_cache is None:
            cache: dict[str, list[PodInfo]] = {}
            try:
                pods = self.handle.lister.list("Pod")
            except Exception:  # noqa: BLE001 - a lister without pods
                pods = []
            for p in pods:
                nnn = p.status.nominated_node_name
                if nnn and not p.spec.node_name and p.metadata.deletion_timestamp is None:
                    cache.setdefault(nnn, []).append(PodInfo(p))
            self._nominated_cache = cache
        return self._nominated_cache.get(node_name, [])

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: Pod, edit: RowEdit) -> Status:
        """Upstream ``RunFilterPluginsWithNominatedPods`` for one row: if pods of priority ≥ the
        pod's are nominated to the node, run the filters with them added first (on a cloned
        state); only if that passes, run them again without."""
        return self.filter_row_with_nominated_pods(state, pod, edit.row)

    def filter_row_with_nominated_pods(self, state: CycleState, pod: Pod, row: int,
                                       placed: Container[str] = ()) -> Status:
        """:meth:`run_filter_plugins_with_nominated_pods` for table row ``row`` as it is now
        (pod-group preemption's reprieve, which edits many rows). ``placed``: keys of pods to
        treat as already on the table (placed elsewhere: not nominated pods any more), as if added."""
        table = self.handle.nodes
        key = pod_key(pod)
        prio = pod_priority(pod)
        nominated = [pi for pi in self.nominated_pods_for_node(table.names[row])
                     if pi.priority >= prio and pi.key != key and pi.key not in table.pod_row
                     and pi.key not in placed]
        if nominated:
            chunk = self._framework().filter_with_nominated_pods(state, pod, row, nominated)
            if isinstance(chunk, Status):  # an Error
                return chunk
            if chunk is not None:
                st: Status = next(chunk.statuses(table.names))[1]
                return st
        return self._run_filters(state, pod, row)

    # ─────────────── the algorithm ───────────────

    def preempt(self, state: CycleState, pod: Pod, m: Any) -> tuple[PostFilterResult | None, Status]:
        """Upstream ``Evaluator.Preempt``; ``m`` is the NodeToStatus of the failed cycle.

        ``(None, Error)``: transient failure; ``(None, Unschedulable)``: not eligible;
        ``(PostFilterResult(""), Unschedulable)``: preemption cannot help (clears the nominated
        node); ``(PostFilterResult(node), Success)``: victims are being deleted.
        """
        t0 = time.perf_counter()
        best, result, status = self.evaluate(state, pod, m)
        self._observe_duration("observe_preemption_evaluation", POD_KEY_TYPE, str(status.code), t0)
        if best is None:
            return result, status
        st = self.prepare_candidate(best, pod)
        if st is not None and not st.is_success():
            return None, st
        result = PostFilterResult(NominatingInfo(best.name, NominatingMode.OVERRIDE))
        if self.handle.features.at_least(1, 37):
            # preemption.go L196: the message ends up in the FailedScheduling event (PostFilterMsg)
            return result, Status(Code.SUCCESS, (f"found a potential placement for pod on node {best.name}, "
                                                 f"preempting {len(best.victims.pods)} victims",))
        return result, Status(Code.SUCCESS)

    def _observe_duration(self, method: str, preemptor: str, result: str, t0: float) -> None:
        """``preemption_evaluation_duration_seconds`` / ``preemption_execution_duration_seconds``
        ``{preemptor, result}`` (v1.37 with GenericWorkload) through the recorder's optional
        ``observe_preemption_evaluation`` / ``observe_preemption_execution``."""
        fw = self.handle.framework
        recorder = fw.metrics if fw is not None else None
        f = getattr(recorder, method, None) if recorder is not None else None
        if f is not None and self.handle.features.enabled("GenericWorkload"):
            f(preemptor, result, time.perf_counter() - t0)

    def evaluate(self, state: CycleState, pod: Pod, m: Any
                 ) -> tuple[Candidate | None, PostFilterResult | None, Status]:
        """Upstream ``Evaluator.evaluate`` (v1.37.2 preemption.go L95-160): the victims, without
        actuation — ``(best candidate, None, Success)`` or ``(None, result, failure)``."""
        self._nominated_cache = None
        try:
            latest = self.handle.lister.get("Pod", pod.metadata.namespace, pod.metadata.name)
        except Exception:  # noqa: BLE001 - a lister without pods
            latest = None
        if latest is not None and not latest.spec.node_name:
            pod = latest

        ok, msg = self.pod_eligible_to_preempt_others(pod, _status_of(m, pod.status.nominated_node_name))
        if not ok:
            return None, None, Status(Code.UNSCHEDULABLE, (msg,))

        table = self.handle.nodes
        all_rows = table.order()
        if len(all_rows) == 0:
            return None, None, Status(Code.ERROR, ("no nodes available",))
        lazy = self._default_pick(pod)
        self._lazy_candidates = lazy
        try:
            candidates, statuses, errors = self.find_candidates(state, pod, m, statuses_needed=False)
        finally:
            self._lazy_candidates = False
        if errors and not candidates:
            return None, None, Status(Code.ERROR, (aggregate_message(errors),))
        if not candidates:
            diag = Diagnosis(extra_statuses=statuses,
                             absent_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NOT_HELPFUL,)))
            return (None, PostFilterResult(NominatingInfo("", NominatingMode.OVERRIDE)),
                    Status(Code.UNSCHEDULABLE, (fit_error_message(len(all_rows), diag),)))

        if lazy:  # no extender to ask, the default pick: one Candidate built, the winner
            return self._pick_items(candidates), None, Status(Code.SUCCESS)
        candidates, est = self.call_extenders(pod, candidates)
        if est is not None:
            return None, None, est

        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, None, Status(Code.UNSCHEDULABLE, (ERR_NO_CANDIDATE,))
        return best, None, Status(Code.SUCCESS)

    def _default_pick(self, pod: Pod) -> bool:
        """The candidates go straight to the default ``SelectCandidate`` (no extender that
        supports preemption is interested in ``pod``; the dry run, the extenders' call and the
        pick not overridden): :meth:`_pick_items` may choose among them unmaterialized."""
        cls = type(self)
        for hook in ("find_candidates", "dry_run_preemption", "call_extenders", "select_candidate",
                     "candidates_to_victims_map", "ordered_score_funcs", "_dry_run_loop"):
            if getattr(cls, hook) is not getattr(Evaluator, hook):
                return False
        return not any(e.supports_preemption() and e.is_interested(pod) for e in (self.handle.extenders or ()))

    def potential_rows(self, m: Any) -> np.ndarray:
        """Rows whose status in ``m`` is Unschedulable, in ``NodeTable.order()`` order
        (upstream ``NodesForStatusCode(Unschedulable)``)."""
        table = self.handle.nodes
        order = table.order()
        rows_with_code = getattr(m, "rows_with_code", None)
        if callable(rows_with_code):
            rows: np.ndarray = rows_with_code(order, Code.UNSCHEDULABLE)
            return rows
        names = table.names
        return np.asarray([r for r in order.tolist() if _status_of(m, names[r]).code == Code.UNSCHEDULABLE],
                          np.int64)

    def list_pdbs(self) -> list[PodDisruptionBudget]:
        try:
            return list(self.handle.lister.list("PodDisruptionBudget"))
        except Exception:  # noqa: BLE001 - a lister that knows no PDBs
            return []

    def find_candidates(self, state: CycleState, pod: Pod, m: Any, statuses_needed: bool = True
                        ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Upstream ``findCandidates``: ``(candidates, dry-run statuses by node, error messages)``
        (``statuses_needed``: see :meth:`dry_run_preemption`)."""
        potential = self.potential_rows(m)
        if len(potential) == 0:
            return [], {}, []
        pdbs = self.list_pdbs()
        offset, num = self.get_offset_and_num_candidates(len(potential))
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num, statuses_needed)

    def dry_run_preemption(self, state: CycleState, pod: Pod, potential: np.ndarray,
                           pdbs: Sequence[PodDisruptionBudget], offset: int,
                           num_candidates: int, statuses_needed: bool = True
                           ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Upstream ``DryRunPreemption``, sequentially over ``potential[(offset+i) % n]``.

        Returns the non-violating candidates then the violating ones (each list capped at
        ``num_candidates``), the statuses of the nodes that are not candidates, and the messages
        of Error statuses. With ``statuses_needed`` False (``preempt``, which reads them only
        when there is no candidate) the statuses and errors are complete only when there is no
        candidate: the nodes that ``reprieve_precheck`` rules out are not dry-run otherwise.
        """
        table = self.handle.nodes
        prio = pod_priority(pod)
        has_lower: Any = table.min_pod_priority[potential] < prio
        no_victims = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VICTIMS,))
        self._plan = self._make_plan(state)
        if self.workload_aware:
            self._groups = groups = PodGroupIndex(self.handle)
            # a row with group members: the victims' priorities are their groups' (may be lower)
            has_lower = [h or groups.row_has_groups(r) for h, r in zip(has_lower.tolist(), potential.tolist(),
                                                                       strict=True)]
        try:
            items, statuses, errors = self._dry_run_loop(state, pod, potential, pdbs, offset, num_candidates,
                                                         has_lower, no_victims, statuses_needed)
            if self._lazy_candidates:
                return items, statuses, errors  # type: ignore[return-value]
            return self._materialize(items), statuses, errors
        finally:
            self._plan = None
            self._groups = None

    def _surely_not_candidate(self, pod: Pod, row: int) -> bool:
        """``plan.rejects`` says the pod cannot fit ``row`` even with every lower-priority pod
        removed (only with the default ``is_eligible_pod``)."""
        plan = self._plan
        if plan is None or plan.rejects is None or self.is_eligible_pod is not self._default_is_eligible_pod:
            return False
        if self._groups is not None and self._groups.row_has_groups(row):
            return False
        prio = pod_priority(pod)
        lower = [pi for pi in self.handle.nodes.pods[row] if pi.priority < prio]
        if not lower:
            return False
        if plan.rejects(row, (), lower):
            return True
        nominated = self._stable_nominated_on(pod, row)
        return bool(nominated) and plan.rejects(row, nominated, lower)

    def _stable_nominated_on(self, pod: Pod, row: int) -> list[PodInfo]:
        """:meth:`_nominated_on`, or empty when one of those pods is also assigned somewhere
        (then the list would change as the dry run edits rows: no shortcut relies on it)."""
        table = self.handle.nodes
        key = pod_key(pod)
        prio = pod_priority(pod)
        got = [pi for pi in self.nominated_pods_for_node(table.names[row]) if pi.priority >= prio and pi.key != key]
        return [] if any(pi.key in table.pod_row for pi in got) else got

    def _nominated_on(self, pod: Pod, row: int) -> list[PodInfo]:
        """The pods of priority ≥ the pod's nominated to ``row`` and not assigned (those that
        ``RunFilterPluginsWithNominatedPods`` adds)."""
        table = self.handle.nodes
        key = pod_key(pod)
        prio = pod_priority(pod)
        return [pi for pi in self.nominated_pods_for_node(table.names[row])
                if pi.priority >= prio and pi.key != key and pi.key not in table.pod_row]

    def _independent_pass(self, state: CycleState, pod: Pod, rows: np.ndarray) -> np.ndarray | None:
        """``bool[len(rows)]``: the rows every one of ``plan.independent`` passes (their verdict
        does not depend on the pods on the row); None when the fast path is off or one raises."""
        plan = self._plan
        if plan is None or plan.exact is None:
            return None
        table = self.handle.nodes
        ok = np.ones(len(rows), bool)
        try:
            for pl in plan.independent:
                res = pl.filter_nodes(state, pod, table, rows)
                if res is not None:
                    ok &= res.failed == 0
        except Exception:  # noqa: BLE001 - an Error status: the full dry run reports it
            return None
        return ok

    def _fast_victims(self, pod: Pod, row: int, pdbs: Sequence[PodDisruptionBudget]
                      ) -> tuple[list[Pod], int, Status] | None:
        """:meth:`select_victims_on_node` by arithmetic, without editing the table, for a row that
        passes the pod-independent Filter plugins (``plan.exact`` set): the same victims in the
        same order and PDB count, or None when the full dry run must decide (a Filter rejects
        the row with every potential victim removed — its status is needed —, an answer is
        unknown, a nominated pod is also assigned, or the row holds pod-group members);
        :data:`_REJECTED` when a Filter surely rejects the row with every potential victim
        removed (not a candidate; its status comes from the full dry run if it is needed)."""
        plan = self._plan
        assert plan is not None and plan.exact is not None
        verdict = plan.exact.verdict
        if self.workload_aware and (self._victim_hooks_customised() or self._group_index().row_has_groups(row)):
            return None
        table = self.handle.nodes
        ni = table.node_info(row)
        potential = [pi for pi in table.pods[row] if self.is_preemption_allowed(ni, pi, pod)]
        if not potential:
            return [], 0, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_NO_VICTIMS,))
        key = pod_key(pod)
        prio = pod_priority(pod)
        nominated = [pi for pi in self.nominated_pods_for_node(table.names[row])
                     if pi.priority >= prio and pi.key != key]
        if any(pi.key in table.pod_row for pi in nominated):
            return None  # RunFilterPluginsWithNominatedPods' list would change as victims leave the row
        # RunFilterPluginsWithNominatedPods: with the nominated pods (if any), then without
        passes: tuple[Sequence[PodInfo], ...] = ((nominated, ()) if nominated else ((),))
        removed = list(potential)
        for added in passes:
            v = verdict(row, added, removed)
            if v is not False:
                return None if v is None else _REJECTED
        self._sort_importance(potential)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[PodInfo] = []
        num_violating = 0
        if plan.exact.reprieve is not None:
            order = [*violating, *non_violating]
            kept = plan.exact.reprieve(row, passes, removed, order)
            if kept is None:
                return None
            for i, (pi, stays) in enumerate(zip(order, kept, strict=True)):
                if not stays:
                    victims.append(pi)
                    num_violating += int(i < len(violating))
            if violating and non_violating:
                self._sort_importance(victims)
            return [pi.pod for pi in victims], num_violating, Status(Code.SUCCESS)
        for group, counts in ((violating, True), (non_violating, False)):
            for pi in group:
                rest = [p for p in removed if p is not pi]
                fits = True
                for added in passes:
                    v = verdict(row, added, rest)
                    if v is None:
                        return None
                    if v:
                        fits = False
                        break
                if fits:
                    removed = rest
                else:
                    victims.append(pi)
                    num_violating += counts
        if violating and non_violating:
            self._sort_importance(victims)
        return [pi.pod for pi in victims], num_violating, Status(Code.SUCCESS)

    def _batch_nominated_nodes(self) -> set[str] | None:
        """Names of the nodes with nominated pods when :meth:`_batch_victims` may decide the
        others (default hooks, the plan's precheck has a ``batch``), else None."""
        plan = self._plan
        if (plan is None or plan.exact is None or plan.exact.batch is None
                or self.is_eligible_pod is not self._default_is_eligible_pod
                or self.more_important_pod is not more_important_pod
                or type(self).is_preemption_allowed is not Evaluator.is_preemption_allowed
                or type(self)._fast_victims is not Evaluator._fast_victims
                or (self.workload_aware and self._victim_hooks_customised())):
            return None
        nominator = self.handle.nominator
        if nominator is not None:
            names = getattr(nominator, "nominated_nodes", None)
            return set(names()) if callable(names) else None
        self.nominated_pods_for_node("")  # fills the lister-derived cache
        return set(self._nominated_cache or ())

    def _batch_victims(self, pod: Pod, potential: np.ndarray, offset: int, begin: int, end: int,
                       batch_ok: np.ndarray, nominated_nodes: set[str],
                       pdbs: Sequence[PodDisruptionBudget], alone: np.ndarray | None = None
                       ) -> dict[int, Any] | None:
        """:meth:`_fast_victims` of the loop's steps ``begin..end-1`` in one
        :func:`~kubesched.framework.preemption_batch.batch_victims` call, for the rows it may
        decide (``batch_ok``: pods of lower priority, passing the pod-independent filters; no
        nominated pod, no pod-group member); the others are left to :meth:`_fast_victims`.
        ``alone``: ``bool[end - begin]``, steps already decided by :meth:`_alone_window` (left
        out). None: not available."""
        plan = self._plan
        assert plan is not None and plan.exact is not None and plan.exact.batch is not None
        table = self.handle.nodes
        names = table.names
        n = len(potential)
        idx = (np.arange(begin, end) + offset) % n
        ok = batch_ok[idx]
        if alone is not None:
            ok = ok & ~alone
        groups = self._groups if self.workload_aware else None
        rows = [r for r in potential[idx[ok]].tolist()
                if names[r] not in nominated_nodes and (groups is None or not groups.row_has_groups(r))]
        split = (lambda pis: filter_pods_with_pdb_violation(pis, pdbs)) if pdbs else None
        return batch_victims(table, rows, pod_priority(pod), plan.exact.batch, _pod_info_importance, split,
                             Status(Code.SUCCESS), _REJECTED)

    def _alone_window(self, pod: Pod, wrows: np.ndarray, decidable: np.ndarray,
                      pdbs: Sequence[PodDisruptionBudget], statuses_needed: bool
                      ) -> np.ndarray | None:
        """The window's steps whose row holds exactly one pod, of lower priority than the
        preemptor (that pod is the row's only potential victim), among ``decidable``: their
        ``int8[len(wrows)]`` kind — 1: a candidate evicting that pod, not violating a PDB;
        2: the same, violating one; 3: not a candidate (the preemptor does not fit even with the
        pod gone; deferred as the loop defers it, only when ``statuses_needed`` is False); 0:
        left to the per-step path. None: the batch cannot answer (then no batch at all)."""
        plan = self._plan
        assert plan is not None and plan.exact is not None and plan.exact.batch is not None
        alone = decidable & single_lower_pod_rows(self.handle.nodes, wrows, pod_priority(pod))
        kind = np.zeros(len(wrows), np.int8)
        if not alone.any():
            return kind
        at = np.flatnonzero(alone)
        got = alone_victims(wrows[at], plan.exact.batch)
        if got is None:
            return None
        fits, evicts = got
        cand = fits & evicts
        if pdbs:
            pods_of = self.handle.nodes.pods
            viol = np.asarray([bool(filter_pods_with_pdb_violation(pods_of[r], pdbs)[0])
                               for r in wrows[at[cand]].tolist()], bool)
            k = np.where(viol, 2, 1).astype(np.int8)
            kind[at[cand]] = k
        else:
            kind[at[cand]] = 1
        if not statuses_needed:
            kind[at[~fits]] = 3
        return kind

    def _dry_run_loop(self, state: CycleState, pod: Pod, potential: np.ndarray,
                      pdbs: Sequence[PodDisruptionBudget], offset: int, num_candidates: int,
                      has_lower: Sequence[bool] | np.ndarray, no_victims: Status, statuses_needed: bool
                      ) -> tuple[list[Candidate | tuple[int, int]], dict[str, Status], list[str]]:
        """The dry run's loop. Candidates decided in a window by :meth:`_alone_window` are
        ``(row, number of PDB violations)`` (one victim: the row's one pod) until
        :meth:`_materialize` turns them into :class:`Candidate` objects."""
        table = self.handle.nodes
        n = len(potential)
        fast_ok = self._independent_pass(state, pod, potential)
        non_violating: list[Candidate | tuple[int, int]] = []
        violating: list[Candidate | tuple[int, int]] = []
        statuses: dict[str, Status | None] = {}
        errors: list[str] = []
        deferred = 0
        batched: dict[int, Any] = {}
        nominated_nodes = self._batch_nominated_nodes() if fast_ok is not None else None
        batch_ok = fast_ok & np.asarray(has_lower, bool) if nominated_nodes is not None else None
        decidable_rows: np.ndarray | None = None
        if batch_ok is not None:
            # rows batch_victims may decide: no nominated pod, no pod-group member
            decidable_rows = np.ones(len(table.names), bool)
            row_of = table.row_of
            for nm in nominated_nodes or ():
                r = row_of.get(nm)
                if r is not None:
                    decidable_rows[r] = False
            if self.workload_aware and self._groups is not None:
                groups = self._groups
                for r in potential.tolist():
                    if groups.row_has_groups(r):
                        decidable_rows[r] = False
        batch_end = 0  # the loop's steps up to here were handed to batch_victims
        win_start = 0
        kinds: list[int] = []  # per step of the window: _alone_window's kind
        next_slow: list[int] = []  # per step of the window: the next step (relative) of kind 0
        wrows_l: list[int] = []  # per step of the window: its row
        names = table.names
        i = 0
        while i < n:
            if batch_ok is not None and i >= batch_end:
                # the next steps, about as many as candidates are still wanted
                batch_end = min(n, i + max(num_candidates - len(non_violating) - len(violating), 16))
                win_start = i
                idx = (np.arange(i, batch_end) + offset) % n
                wrows = potential[idx]
                assert decidable_rows is not None
                got = self._alone_window(pod, wrows, batch_ok[idx] & decidable_rows[wrows], pdbs, statuses_needed)
                window = None
                if got is not None:
                    kind = got
                    window = self._batch_victims(pod, potential, offset, i, batch_end, batch_ok,
                                                 nominated_nodes or set(), pdbs, kind != 0)
                if window is None:
                    batch_ok = None
                    kinds = []
                else:
                    batched = window
                    kinds = kind.tolist()
                    wrows_l = wrows.tolist()
                    slow_at = np.flatnonzero(kind == 0)
                    # next_slow[k]: the first step >= k whose kind is 0 (len(kind) if none)
                    nxt = np.full(len(kind) + 1, len(kind), np.int64)
                    nxt[slow_at] = slow_at
                    nxt = np.minimum.accumulate(nxt[::-1])[::-1]
                    next_slow = nxt.tolist()
            k = i - win_start
            if kinds and k < len(kinds) and kinds[k]:
                # a run of steps decided by _alone_window: taken together
                stop = next_slow[k]
                seg = kinds[k:stop]
                done = False
                for t, kd in enumerate(seg, k):
                    if kd == 3:
                        statuses[names[wrows_l[t]]] = None
                        deferred += 1
                        continue
                    row = wrows_l[t]
                    target = non_violating if kd == 1 else violating
                    if len(target) < num_candidates:
                        target.append((row, kd - 1))
                    if non_violating and len(non_violating) + len(violating) >= num_candidates:
                        done = True
                        break
                if done:
                    break
                i += len(seg)
                continue
            j = (offset + i) % n
            row = int(potential[j])
            name = names[row]
            i += 1
            if not has_lower[j]:
                # no pod of lower priority: nothing to evict (skips cloning the state)
                statuses[name] = no_victims
                continue
            fast = batched.pop(row, None)
            if fast is not None and fast is not _REJECTED and fast[0]:
                # decided in the batch with victims: a candidate (the general path below, shortened)
                c = Candidate(name, Victims(fast[0], fast[1]))
                target = non_violating if fast[1] == 0 else violating
                if len(target) < num_candidates:
                    target.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if fast is None:
                fast = self._fast_victims(pod, row, pdbs) if fast_ok is not None and fast_ok[j] else None
            if fast is _REJECTED:
                fast = None
                surely_not = True
            else:
                surely_not = fast is None and not statuses_needed and self._surely_not_candidate(pod, row)
            if surely_not and not statuses_needed:
                statuses[name] = None  # its status, only if there is no candidate in the end
                deferred += 1
                continue
            pods, num_pdb, st = fast if fast is not None else self.select_victims_on_node(state.clone(), pod, row, pdbs)
            if st.is_success() and pods:
                c = Candidate(name, Victims(pods, num_pdb))
                target = non_violating if num_pdb == 0 else violating
                if len(target) < num_candidates:
                    target.append(c)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if st.is_success():
                st = Status(Code.ERROR, (f'expected at least one victim pod on node "{name}"',))
            if st.code == Code.ERROR:
                errors.append(st.message())
            statuses[name] = st
        if deferred and not non_violating and not violating:
            # no candidate: the statuses (and errors) are needed; dry-run the deferred nodes, in order
            errors = []
            for name, got_st in statuses.items():
                if got_st is None:
                    _, _, got_st = self.select_victims_on_node(state.clone(), pod, table.row_of[name], pdbs)
                    statuses[name] = got_st
                if got_st.code == Code.ERROR:
                    errors.append(got_st.message())
        return non_violating + violating, statuses, errors  # type: ignore[return-value]

    def _materialize(self, items: Sequence[Candidate | tuple[int, int]]) -> list[Candidate]:
        """:class:`Candidate` objects for :meth:`_dry_run_loop`'s candidates."""
        table = self.handle.nodes
        names, pods_of = table.names, table.pods
        return [c if isinstance(c, Candidate) else Candidate(names[c[0]], Victims([pods_of[c[0]][0].pod], c[1]))
                for c in items]

    def _pick_items(self, items: Sequence[Candidate | tuple[int, int]]) -> Candidate:
        """``select_candidate(self._materialize(items))`` with the default criteria, building one
        :class:`Candidate` (``items`` not empty): the keys of :func:`_pick_by_default_criteria`,
        a one-victim candidate's from its row's pod; the first item with the largest key wins."""
        if len(items) == 1:
            return self._materialize(items)[0]
        table = self.handle.nodes
        pods_of = table.pods
        if set(map(type, items)) == {tuple}:
            # one victim each, the row's only pod: fewest PDB violations, then the lowest victim
            # priority (the sum and the count follow from it), then the latest start; first wins
            pairs = np.asarray(items, np.int64).reshape(len(items), 2)
            rows, nv = pairs[:, 0], pairs[:, 1]
            left = np.flatnonzero(nv == nv.min())
            lowest = table.min_pod_priority[rows[left]]
            left = left[lowest == lowest.min()]
            if len(left) > 1:
                starts = [pod_start_time_ns(pods_of[r][0].pod) for r in rows[left].tolist()]
                left = left[starts.index(max(starts)):]
            return self._materialize([items[int(left[0])]])[0]
        offset = MAX_INT32 + 1
        best_i = 0
        best: tuple[int, int, int, int, int] | None = None
        for i, c in enumerate(items):
            if isinstance(c, Candidate):
                pods = c.victims.pods
                if len(pods) == 1:
                    pr = pod_priority(pods[0])
                    key = (-c.victims.num_pdb_violations, -pr, -(pr + offset), -1, pod_start_time_ns(pods[0]))
                else:
                    prios = [pod_priority(p) for p in pods]
                    t = get_earliest_pod_start_time(pods)
                    key = (-c.victims.num_pdb_violations, -prios[0], -(sum(prios) + offset * len(prios)),
                           -len(pods), -(1 << 63) if t is None else t)
            else:
                pi = pods_of[c[0]][0]
                pr = pi.priority
                key = (-c[1], -pr, -(pr + offset), -1, pod_start_time_ns(pi.pod))
            if best is None or key > best:
                best = key
                best_i = i
        return self._materialize([items[best_i]])[0]

    def call_extenders(self, pod: Pod, candidates: list[Candidate]) -> tuple[list[Candidate], Status | None]:
        """Upstream ``callExtenders``: every extender that supports preemption and is interested
        in the pod narrows the candidates (node → victims) in turn; an ignorable one that fails
        is skipped, and so are the nodes for which it reports no victims; any other failure is
        an Error status (``expected at least one victim pod on node "<n>"`` for a node without
        victims). The result keeps the order of the nodes as given (upstream: map order)."""
        extenders = [e for e in (self.handle.extenders or ())
                     if e.supports_preemption() and e.is_interested(pod)]
        if not extenders or not candidates:
            return candidates, None
        victims = self.candidates_to_victims_map(candidates)
        if not victims:
            return candidates, None
        table = self.handle.nodes
        for ext in extenders:
            try:
                out = ext.process_preemption(pod, victims, table.get)
            except Exception as e:  # noqa: BLE001 - ExtenderError, or a crash of the extender client
                if ext.is_ignorable():
                    continue
                return [], as_status(e)
            for name in list(out):
                v = out[name]
                if v is None or not v.pods:
                    if ext.is_ignorable():
                        del out[name]
                        continue
                    return [], Status(Code.ERROR, (f'expected at least one victim pod on node "{name}"',))
            order = {name: i for i, name in enumerate(victims)}
            victims = dict(sorted(out.items(), key=lambda kv: order.get(kv[0], len(order))))
            if not victims:
                break
        return [Candidate(name, v) for name, v in victims.items()], None

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """Upstream ``SelectCandidate``."""
        if not candidates:
            return None
        if len(candidates) == 1:
            return candidates[0]
        victims = self.candidates_to_victims_map(candidates)
        node = pick_one_node_for_preemption(victims, self.ordered_score_funcs(victims))
        if node in victims:
            return Candidate(node, victims[node])
        return candidates[0]

    def preempt_pod(self, candidate: Candidate, preemptor: Pod | Preemptor, victim: Pod) -> None:
        """Upstream ``PreemptPod`` (sync; v1.37 ``framework/preemption/executor.go`` L98-160):
        a victim waiting on Permit is rejected (``preempted``; v1.36+ ``Preempt``: an Error
        status, so it is retried after the error backoff) instead of deleted; v1.36+ a victim in
        PreBind is cancelled (``preempted by <plugin>``); otherwise the DisruptionTarget
        condition ``"<scheduler>: preempting to accommodate a higher priority pod"``, then the
        delete. Either way the ``Preempted`` event on the victim (related: the preemptor)
        ``"Preempted by pod <uid> on node <node>"`` — v1.36+ with `` (in kube-scheduler
        memory).`` appended when no API call was made. Raises on client errors.

        ``preemptor`` may be a :class:`Preemptor` (v1.37 pod-group preemption): the texts then
        name its type, ``"Preempted by podgroup <uid> on node cluster"`` and ``"…preempting to
        accommodate a higher priority podgroup"``, and the event's related object is the group."""
        p = preemptor if isinstance(preemptor, Preemptor) else Preemptor.of_pod(preemptor)
        client = self.handle.client
        if client is None:
            raise RuntimeError("preemption: the handle has no client to delete victims with")
        framework = self.handle.framework
        uid = waiting_pod_key(victim)
        wp = framework.waiting_pods.get(uid) if framework is not None else None
        in_memory = False
        if self.handle.features.at_least(1, 36):
            # executor.go L102-123: a waiting victim is Preempt'ed (Error: back to the error
            # backoff, not unschedulable), one in PreBind cancelled; no API call for either
            if wp is not None:
                in_memory = wp.preempt(self.plugin_name, "preempted")
            elif framework is not None:
                in_pre_bind = framework.pods_in_pre_bind.get(uid)
                if in_pre_bind is not None:
                    in_memory = in_pre_bind.cancel_pod(f"preempted by {self.plugin_name}")
        elif wp is not None:
            wp.reject(self.plugin_name, "preempted")
            in_memory = True
        if not in_memory:
            client.add_pod_condition(victim, {
                "type": DISRUPTION_TARGET, "status": "True", "reason": REASON_PREEMPTION_BY_SCHEDULER,
                "message": f"{p.scheduler_name}: preempting to accommodate a higher priority {p.type}",
                # CalculatePodConditionObservedGeneration with PodObservedGenerationTracking
                # (beta, on in v1.34): the victim's metadata.generation
                "observedGeneration": victim.metadata.generation})
            client.delete_pod(victim)
        note = f"Preempted by {p.type} {p.uid} on node {candidate.name}"
        if in_memory and self.handle.features.at_least(1, 36):
            note += " (in kube-scheduler memory)."
        client.record_event(victim, "Normal", "Preempted", "Preempting", note, p.obj)

    def lower_priority_nominated_pods(self, pod: Pod | Preemptor, node_name: str) -> list[Pod]:
        """Upstream ``getLowerPriorityNominatedPods``."""
        prio = pod.priority if isinstance(pod, Preemptor) else pod_priority(pod)
        self._nominated_cache = None
        return [pi.pod for pi in self.nominated_pods_for_node(node_name) if pi.priority < prio]

    def clear_nominated_node_name(self, pods: Iterable[Pod]) -> None:
        """Clear ``status.nominatedNodeName`` of ``pods`` (upstream ``clearNominatedNodeName``);
        errors are ignored (not critical, as upstream)."""
        client = self.handle.client
        if client is None:
            return
        for p in pods:
            if not p.status.nominated_node_name:
                continue
            try:
                client.clear_nominated_node_name(p)
            except Exception:  # noqa: BLE001 - not critical, as upstream
                continue

    def prepare_candidate(self, candidate: Candidate, pod: Pod | Preemptor) -> Status | None:
        """Upstream ``prepareCandidate`` (synchronous): evict the victims, then clear the
        nomination of lower-priority pods nominated to the node.

        v1.37 ``observeVictims`` (executor.go L340-360), with GenericWorkload: a pod-group
        preemptor feeds ``workload_preemption_victims`` instead of ``preemption_victims`` (at the
        start, as upstream), and either kind ``preemption_workload_disruptions{preemptor}`` (when
        group units are disrupted) and ``preemption_pdb_violations_total{preemptor}`` — through the
        recorder's optional ``observe_workload_preemption_victims``,
        ``observe_preemption_workload_disruptions`` and ``observe_preemption_pdb_violations``."""
        fw = self.handle.framework
        recorder = fw.metrics if fw is not None else None
        group = isinstance(pod, Preemptor) and pod.type != POD_KEY_TYPE
        kind = pod.type if isinstance(pod, Preemptor) else POD_KEY_TYPE
        if recorder is not None and self.handle.features.enabled("GenericWorkload"):
            self._observe_workload_victims(recorder, candidate, pod)
        t0 = time.perf_counter()
        for victim in candidate.victims.pods:
            if victim.metadata.deletion_timestamp is not None:
                continue  # graceful deletion already started
            try:
                self.preempt_pod(candidate, pod, victim)
            except Exception as e:  # noqa: BLE001 - an API error is a status
                self._observe_duration("observe_preemption_execution", kind, "error", t0)
                return as_status(e)
        self._observe_duration("observe_preemption_execution", kind, "success", t0)
        if recorder is not None and not group:  # upstream PreemptionVictims, once every victim is evicted
            recorder.observe_preemption_victims(len(candidate.victims.pods))
        self.clear_nominated_node_name(self.lower_priority_nominated_pods(pod, candidate.name))
        return None

    @staticmethod
    def _observe_workload_victims(recorder: Any, candidate: Candidate, pod: Pod | Preemptor) -> None:
        kind = pod.type if isinstance(pod, Preemptor) else POD_KEY_TYPE
        if kind != POD_KEY_TYPE:
            f = getattr(recorder, "observe_workload_preemption_victims", None)
            if f is not None:
                f(len(candidate.victims.pods))
        if candidate.num_pod_group_disruptions > 0:
            f = getattr(recorder, "observe_preemption_workload_disruptions", None)
            if f is not None:
                f(kind, candidate.num_pod_group_disruptions)
        if candidate.victims.num_pdb_violations > 0:
            f = getattr(recorder, "observe_preemption_pdb_violations", None)
            if f is not None:
                f(kind, candidate.victims.num_pdb_violations)

