"""Pod-group preemption (GenericWorkload), ported from upstream v1.37.2
``framework/preemption/podgrouppreemption_test.go``: TestPodGroupEvaluator_SelectVictimsOnDomain
(every case), …_SelectVictimsOnDomain_NominatedNodes and TestPodGroupEvaluator_Preempt; plus
``framework/runtime`` RunPodGroupPostFilterPlugins' status handling and DefaultPreemption's
PodGroupPostFilter end to end (prefix, actuation texts, NominatingInfos, metrics, the table
left as found).

As upstream, a mock Filter plugin gives every node a capacity (pods count their ``size`` label,
default 1) and a mock scheduling function places the preemptor's members round-robin over the
nodes in order (node capacities taken by index, as upstream — which matters for the case whose
capacity table names node1 twice), succeeding when at least the gang's ``minCount`` (else 1)
members got a node. Priorities as upstream's preemption_test.go: low 10, mid 100, high 1000.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kubesched.api.objects import PodDisruptionBudget, decode
from kubesched.config import decode_config
from kubesched.features import default_feature_gate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, NominatingInfo, NominatingMode, Status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import TableEdit
from kubesched.framework.podgroup import (
    PodGroupAssignments,
    PodGroupCycleState,
    PodGroupInfo,
    PodGroupPostFilterResult,
    ProposedAssignment,
)
from kubesched.framework.podgrouppreemption import PodGroupEvaluator, PodGroupPreemptor
from kubesched.framework.preemption import PodGroupIndex
from kubesched.framework.runtime import Framework
from kubesched.plugins import defaultbinder, defaultpreemption, queuesort
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

LOW, MID, HIGH = 10, 100, 1000
NS = "default"
GATES = default_feature_gate().with_overrides(GenericWorkload=True)
GATES_POLICY = default_feature_gate().with_overrides(GenericWorkload=True, PodGroupPreemptionPolicy=True)


def P(name: str, node: str | None = None, prio: int | None = None, pg: str | None = None, *,  # noqa: N802
      size: int | None = None, labels: dict[str, str] | None = None, start: int | None = None,
      terminating: bool = False, nnn: str | None = None, never: bool = False) -> Any:
    p = MakePod().name(name).uid(name).namespace(NS).scheduler_name("default-scheduler")
    if node:
        p.node(node)
    if prio is not None:
        p.priority(prio)
    if pg:
        p.spec(schedulingGroup={"podGroupName": pg})
    lab = dict(labels or {})
    if size is not None:
        lab["size"] = str(size)
    if lab:
        p.labels(lab)
    if start is not None:
        p.start_time(f"1970-01-01T00:00:{start:02d}Z")
    if terminating:
        p.condition("DisruptionTarget", "True", "PreemptionByScheduler").terminating()
    if nnn:
        p.nominated_node_name(nnn)
    if never:
        p.preemption_policy("Never")
    return p.obj()


def PG(name: str, prio: int | None = None, mode: str | None = None, *, min_count: int | None = None,  # noqa: N802
       basic: bool = False, policy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if min_count is not None:
        spec["schedulingPolicy"] = {"gang": {"minCount": min_count}}
    elif basic:
        spec["schedulingPolicy"] = {"basic": {}}
    if mode:
        spec["disruptionMode"] = {mode: {}}
    if prio is not None:
        spec["priority"] = prio
    if policy:
        spec["preemptionPolicy"] = policy
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"}, "spec": spec}


def PDB(match: dict[str, str], allowed: int = 0) -> PodDisruptionBudget:  # noqa: N802
    return decode(PodDisruptionBudget, {"metadata": {"name": "pdb", "namespace": NS},
                                        "spec": {"selector": {"matchLabels": match}},
                                        "status": {"disruptionsAllowed": allowed}})


def size_of(pod: Any) -> int:
    v = pod.metadata.labels.get("size")
    return int(v) if v is not None and v.isdigit() else 1


class MockFilter:
    """Upstream ``mockFilterPlugin``: the node's capacity (first entry with its name, else 0)
    against the sizes of its pods plus the incoming one."""

    name = "mockFilterPlugin"

    def __init__(self, caps: list[tuple[str, int]]) -> None:
        self.caps = caps

    def filter(self, state: Any, pod: Any, ni: Any) -> Status | None:
        cap = next((c for n, c in self.caps if n == ni.name), 0)
        used = sum(size_of(pi.pod) for pi in ni.pods)
        if used + size_of(pod) > cap:
            return Status(Code.UNSCHEDULABLE, ("not enough capacity",))
        return None


class NoNominator:
    def nominated_pods_for_node(self, name: str) -> list:
        return []


class Cluster:
    """Lister + client: pods, PodGroups and PDBs; records the evaluator's writes."""

    def __init__(self, pods: list, pgs: list, pdbs: list) -> None:
        self.pods = {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods}
        self.pgs = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in pgs}
        self.pdbs = list(pdbs)
        self.deleted: list[str] = []
        self.conditions: list[tuple[str, dict]] = []
        self.events: list[tuple[str, str, Any]] = []

    def list(self, kind: str, namespace: str | None = None) -> list:
        return {"Pod": list(self.pods.values()), "PodDisruptionBudget": self.pdbs,
                "PodGroup": list(self.pgs.values())}.get(kind, [])

    def get(self, kind: str, namespace: str, name: str) -> Any:
        if kind == "PodGroup":
            return self.pgs.get((namespace, name))
        return self.pods.get(f"{namespace}/{name}") if kind == "Pod" else None

    def delete_pod(self, pod: Any) -> None:
        self.deleted.append(pod.metadata.name)

    def add_pod_condition(self, pod: Any, cond: dict) -> None:
        self.conditions.append((pod.metadata.name, cond))

    def record_event(self, obj: Any, event_type: str, reason: str, action: str, note: str, related: Any = None) -> None:
        self.events.append((obj.metadata.name, note, related))

    def clear_nominated_node_name(self, pod: Any) -> None:
        pass


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("observe_"):
            raise AttributeError(name)
        return lambda *a: self.calls.append((name, *a))


class Env:
    def __init__(self, nodes: list[str], pods: list, pgs: list = (), pdbs: list = (),  # type: ignore[assignment]
                 caps: list[tuple[str, int]] = (), preemptor_pods: list = (),  # type: ignore[assignment]
                 features: Any = GATES, post_filter: list[str] | None = None, extra: dict | None = None) -> None:
        self.node_names = nodes
        self.caps = list(caps)
        self.table = build_table([MakeNode().name(n).capacity(pods="110").obj() for n in nodes], pods)
        self.cluster = Cluster(list(pods) + list(preemptor_pods), list(pgs), list(pdbs))
        self.handle = Handle(nodes=self.table, lister=self.cluster, client=self.cluster, features=features)
        self.handle.rng = np.random.default_rng(0)
        self.handle.nominator = NoNominator()
        registry = {"PrioritySort": queuesort.new, "DefaultBinder": defaultbinder.new,
                    "DefaultPreemption": defaultpreemption.new,
                    "mockFilterPlugin": lambda a, h: MockFilter(self.caps), **(extra or {})}
        enabled = [{"name": "PrioritySort"}, {"name": "mockFilterPlugin"}, {"name": "DefaultPreemption"},
                   {"name": "DefaultBinder"}, *({"name": n} for n in (extra or {}))]
        plugins: dict[str, Any] = {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}
        if post_filter is not None:
            plugins["podGroupPostFilter"] = {"enabled": [{"name": n} for n in post_filter],
                                             "disabled": [{"name": "*"}]}
        cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                             "profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]})
        self.fw = Framework(cfg.profiles[0], registry, self.handle)
        self.pl = self.fw.plugins["DefaultPreemption"]
        self.pge: PodGroupEvaluator = self.pl.pod_group_evaluator
        self.calls = 0

    def scheduling_func(self, preemptor: PodGroupPreemptor) -> Any:
        """Upstream ``mockSchedulingFunc``: members round-robin over the nodes (capacities by
        index), sizes from the table as it is now; success with ≥ minCount (else 1) placed."""
        def run() -> tuple[PodGroupAssignments | None, Status]:
            self.calls += 1
            gang = ((preemptor.group.get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
            min_count = gang["minCount"] if gang else 1
            t = self.table
            used = {n: sum(size_of(pi.pod) for pi in t.pods[t.row_of[n]]) for n in self.node_names}
            out: list[ProposedAssignment] = []
            idx = 0
            n = len(self.node_names)
            for p in preemptor.members:
                for step in range(n):
                    i = (idx + step) % n
                    name = self.node_names[i]
                    if used[name] + size_of(p) <= self.caps[i][1]:
                        out.append(ProposedAssignment(p, PodInfo(p), name, CycleState(PodInfo(p))))
                        used[name] += size_of(p)
                        idx = (i + 1) % n
                        break
            if len(out) >= min_count:
                return PodGroupAssignments(None, out), Status(Code.SUCCESS)
            return None, Status(Code.UNSCHEDULABLE)
        return run

    def snapshot(self) -> list:
        t = self.table
        return [(n, [p.key for p in t.pods[r]], t.requested[r].tolist(), int(t.generation[r]))
                for n, r in sorted(t.row_of.items())] + [t.mutations]


def preemptor_of(group: dict, members: list, policy: str = "PreemptLowerPriority") -> PodGroupPreemptor:
    """Upstream ``makePodGroupPreemptorWithPreemptionPolicy``."""
    return PodGroupPreemptor("podgroup", group, members, group["spec"].get("priority", 0), policy)


# ───────────────────── TestPodGroupEvaluator_SelectVictimsOnDomain ─────────────────────

CASES: list[tuple[Any, ...]] = [
    # name, nodes, init pods, init pod groups, preemptor (group, members[, policy]), pdbs, caps,
    # expected victims, expected code, expected pod-group disruptions, expected PDB violations
    ("Priority: mix of no groups and pod groups", ["node1"],
     [P("p1", "node1", LOW, size=1), P("p2", "node1", LOW, "pg1", size=1)], [PG("pg1", LOW, "single")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH, size=1)]), [], [("node1", 2)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("Priority: StartTime of pods from same group with disruption mode single ", ["node1"],
     [P("p1", "node1", LOW, "pg1", start=1), P("p2", "node1", LOW, "pg1", start=0)], [PG("pg1", LOW, "single")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 2)],
     {"p1"}, Code.SUCCESS, 1, 0),
    ("Pod group with disruption mode group not reprieved", ["node1", "node2"],
     [P("p1", "node1", LOW, "pg1"), P("p2", "node2", LOW, "pg1")], [PG("pg1", LOW, "all")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 1), ("node2", 1)],
     {"p1", "p2"}, Code.SUCCESS, 1, 0),
    ("Complex Mixed: Shared, different, and no groups", ["node1", "node2", "node3", "node4", "node5"],
     [P("p1", "node1", LOW, "pg1", start=2), P("p2", "node2", LOW, "pg1", start=1),
      P("p3", "node3", LOW, "pg2", start=0), P("p4", "node4", MID), P("p5", "node5", HIGH, "pg3", start=0)],
     [PG("pg1", LOW, "single"), PG("pg2", LOW, "single"), PG("pg3", HIGH, "single")],
     (PG("preemptor-pg", HIGH), [P("p-1", prio=HIGH), P("p-2", prio=HIGH), P("p-3", prio=HIGH)]), [],
     [("node1", 2), ("node2", 1), ("node3", 2), ("node4", 2), ("node5", 2)],
     {"p2"}, Code.SUCCESS, 1, 0),
    ("PDB: Mixed groups", ["node1"],
     [P("victim-pdb", "node1", LOW, "pg1", labels={"app": "foo"}), P("victim-no-pdb", "node1", LOW, "pg1")], [],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [PDB({"app": "foo"})], [("node1", 2)],
     {"victim-no-pdb"}, Code.SUCCESS, 1, 0),
    ("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption",
     ["node1", "node2", "node3"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW, "pg1"), P("p3", "node3", LOW, "pg2")], [],
     (PG("preemptor-pg", HIGH), [P("p-1", prio=HIGH)]), [], [("node1", 1), ("node2", 1), ("node3", 1)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption, ignoring member pod "
     "preemption policy", ["node1", "node2", "node3"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW, "pg1"), P("p3", "node3", LOW, "pg2")], [],
     (PG("preemptor-pg", HIGH, policy="PreemptLowerPriority"), [P("p-1", prio=HIGH, never=True)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("Preemptor group is eligible if terminating pods are on non-nominated nodes", ["node1", "node2"],
     [P("victim", "node2", LOW, terminating=True), P("other-victim", "node1", LOW)], [],
     (PG("preemptor-pg", HIGH), [P("p1", prio=HIGH), P("p2", prio=HIGH, nnn="node1")]), [],
     [("node1", 1), ("node2", 1)],
     {"other-victim", "victim"}, Code.SUCCESS, 0, 0),
    ("Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher "
     "priority", ["node1", "node2"],
     [P("victim", "node1", LOW, "victim-pg", terminating=True), P("other-victim", "node1", LOW)],
     [PG("victim-pg", HIGH, "all")],
     (PG("preemptor-pg", MID), [P("p1", prio=MID), P("p2", prio=MID, nnn="node1")]), [],
     [("node1", 2), ("node2", 1)],
     {"other-victim"}, Code.SUCCESS, 0, 0),
    ("Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher "
     "priority with nil DisruptionMode", ["node1", "node2"],
     [P("victim", "node1", LOW, "victim-pg", terminating=True), P("other-victim", "node1", LOW)],
     [PG("victim-pg", HIGH, "single")],
     (PG("preemptor-pg", MID), [P("p1", prio=MID), P("p2", prio=MID, nnn="node1")]), [],
     [("node1", 2), ("node2", 1)],
     {"other-victim"}, Code.SUCCESS, 0, 0),
    ("Preempt single lower priority pod", ["node1"], [P("p1", "node1", LOW)], [],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 1)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("Priority: Prefer lower priority victim", ["node1"],
     [P("p1", "node1", LOW), P("p2", "node1", MID), P("p3", "node1", HIGH)], [],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 2)],
     {"p1", "p2"}, Code.SUCCESS, 0, 0),
    ("Efficiency: Preempt minimum number of victims", ["node1"],
     [P("p1", "node1", LOW), P("p2", "node1", LOW), P("p3", "node1", LOW), P("p4", "node1", LOW)], [],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 3)],
     {"p3", "p4"}, Code.SUCCESS, 0, 0),
    ("PDB: Prefer non-violating victim", ["node1"],
     [P("victim-pdb", "node1", LOW, labels={"app": "foo"}), P("victim-no-pdb", "node1", LOW)], [],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [PDB({"app": "foo"})], [("node1", 2)],
     {"victim-no-pdb"}, Code.SUCCESS, 0, 0),
    ("PDB: Prefer removing non-violating victim over lower priority violating victim", ["node1"],
     [P("victim-pdb", "node1", LOW, labels={"app": "foo"}), P("victim-no-pdb", "node1", MID)], [],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [PDB({"app": "foo"})], [("node1", 2)],
     {"victim-no-pdb"}, Code.SUCCESS, 0, 0),
    ("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims",
     ["node1", "node2", "node3"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW, "pg1"), P("p3", "node3", LOW, "pg2")],
     [PG("pg1", LOW, "single"), PG("pg2", LOW, "single")],
     (PG("preemptor-pg", HIGH), [P("p-1", prio=HIGH)]), [], [("node1", 1), ("node2", 1), ("node3", 1)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims, "
     "ignoring member pod preemption policy", ["node1", "node2", "node3"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW, "pg1"), P("p3", "node3", LOW, "pg2")],
     [PG("pg1", LOW, "single"), PG("pg2", LOW, "single")],
     (PG("preemptor-pg", HIGH), [P("p-1", prio=HIGH, never=True)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible",
     ["node1"],
     [P("p1", "node1", LOW, labels={"app": "foo"}), P("p2", "node1", MID, labels={"app": "foo"})], [],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [PDB({"app": "foo"})], [("node1", 2)],
     {"p1"}, Code.SUCCESS, 0, 1),
    ("PodGroup: Preempt group as a whole", ["node1", "node2"],
     [P("p1", "node1", LOW, "pg1"), P("p2", "node2", LOW, "pg1")], [PG("pg1", LOW, "all")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 1), ("node1", 2)],
     {"p1", "p2"}, Code.SUCCESS, 1, 0),
    ("PodGroup: Prefer single pod over podGroup for preemption candidate", ["node1"],
     [P("p1", "node1", LOW), P("g1-1", "node1", LOW, "pg1"), P("g1-2", "node1", LOW, "pg1")],
     [PG("pg1", LOW, "all")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 3)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("PodGroup: Preempt group as a whole on single node", ["node1"],
     [P("g1-1", "node1", LOW, "pg1"), P("g1-2", "node1", LOW, "pg1"), P("p1", "node1", MID)],
     [PG("pg1", LOW, "all")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 3)],
     {"g1-1", "g1-2"}, Code.SUCCESS, 1, 0),
    ("PDB: Unit violation if any member violates", ["node1"],
     [P("g1-1", "node1", LOW, "pg1", labels={"app": "foo"}), P("g1-2", "node1", LOW, "pg1"),
      P("p1", "node1", LOW)], [PG("pg1", LOW, "all")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [PDB({"app": "foo"})], [("node1", 3)],
     {"p1"}, Code.SUCCESS, 0, 0),
    ("Failure: Cannot preempt the victim with higher priority", ["node1"], [P("p1", "node1", HIGH)], [],
     (PG("preemptor-pg", MID), [P("p", prio=MID)]), [], [("node1", 100)],
     set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0, 0),
    ("Failure: Cannot preempt the victim with equal priority", ["node1"], [P("p1", "node1", MID)], [],
     (PG("preemptor-pg", MID), [P("p", prio=MID)]), [], [("node1", 100)],
     set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0, 0),
    ("Failure: Cannot preempt if node is empty", ["node1"], [], [],
     (PG("preemptor-pg", MID), [P("p", prio=MID)]), [], [("node1", 100)],
     set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0, 0),
    ("Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group",
     ["node1", "node2"], [P("p1", "node1", HIGH, "pg1"), P("p2", "node2", HIGH, "pg1")], [PG("pg1", MID, "all")],
     (PG("preemptor-pg", HIGH), [P("p", prio=HIGH)]), [], [("node1", 1), ("node2", 1)],
     {"p1", "p2"}, Code.SUCCESS, 1, 0),
    ("Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group",
     ["node1", "node2"], [P("p1", "node1", LOW, "pg1"), P("p2", "node2", LOW, "pg1")], [PG("pg1", MID, "all")],
     (PG("preemptor-pg", MID), [P("p", prio=MID)]), [], [("node1", 1), ("node2", 1)],
     set(), Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 0, 0),
    ("Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still more "
     "than minCount", ["node1", "node2", "node3", "node4"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW), P("p3", "node3", HIGH), P("p4", "node4", HIGH)], [],
     (PG("preemptor-pg", HIGH, min_count=1), [P("p-a", prio=HIGH), P("p-b", prio=HIGH), P("p-c", prio=HIGH)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
     {"p1", "p2"}, Code.SUCCESS, 0, 0),
    ("Gang scheduling: do not reprieve victim pod group of lower priority", ["node1", "node2", "node3"],
     [P("v1", "node1", MID, "victim-pg"), P("v2", "node2", MID, "victim-pg"), P("v3", "node3", LOW)],
     [PG("victim-pg", MID, "all", min_count=1)],
     (PG("preemptor-pg", HIGH, min_count=1), [P("p-a", prio=HIGH), P("p-b", prio=HIGH), P("p-c", prio=HIGH)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1)],
     {"v1", "v2", "v3"}, Code.SUCCESS, 1, 0),
    ("Gang scheduling: preempt a pod group victim but do not schedule full pod group",
     ["node1", "node2", "node3", "node4"],
     [P("v1", "node1", MID, "victim-pg"), P("v2", "node2", MID, "victim-pg"),
      P("v3", "node3", HIGH, "victim-pg2"), P("v4", "node4", HIGH, "victim-pg2")],
     [PG("victim-pg", MID, "all", min_count=2), PG("victim-pg2", HIGH, "all", min_count=2)],
     (PG("preemptor-pg", HIGH, "all", min_count=1), [P("p-a", prio=HIGH), P("p-b", prio=HIGH),
                                                      P("p-c", prio=HIGH)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
     {"v1", "v2"}, Code.SUCCESS, 1, 0),
    ("Basic scheduling: schedule as many pods as possible without preempting higher priority pods",
     ["node1", "node2", "node3", "node4"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW), P("p3", "node3", HIGH), P("p4", "node4", HIGH)], [],
     (PG("preemptor-pg", HIGH, basic=True), [P("p-a", prio=HIGH), P("p-b", prio=HIGH), P("p-c", prio=HIGH)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
     {"p1", "p2"}, Code.SUCCESS, 0, 0),
    ("Basic scheduling: do not reprieve victim pod group of lower priority", ["node1", "node2", "node3"],
     [P("v1", "node1", MID, "victim-pg"), P("v2", "node2", MID, "victim-pg"), P("v3", "node3", LOW)],
     [PG("victim-pg", MID, "all", min_count=1)],
     (PG("preemptor-pg", HIGH, basic=True), [P("p-a", prio=HIGH), P("p-b", prio=HIGH), P("p-c", prio=HIGH)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1)],
     {"v1", "v2", "v3"}, Code.SUCCESS, 1, 0),
    ("Basic scheduling: preempt a pod group victim but do not schedule full pod group",
     ["node1", "node2", "node3", "node4"],
     [P("v1", "node1", MID, "victim-pg"), P("v2", "node2", MID, "victim-pg"),
      P("v3", "node3", HIGH, "victim-pg2"), P("v4", "node4", HIGH, "victim-pg2")],
     [PG("victim-pg", MID, "all", min_count=2), PG("victim-pg2", HIGH, "all", min_count=2)],
     (PG("preemptor-pg", HIGH, "all", basic=True), [P("p-a", prio=HIGH), P("p-b", prio=HIGH),
                                                     P("p-c", prio=HIGH)]), [],
     [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
     {"v1", "v2"}, Code.SUCCESS, 1, 0),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_select_victims_on_domain(case: tuple) -> None:
    _, nodes, pods, pgs, (group, members), pdbs, caps, want_victims, want_code, want_disruptions, want_pdb = case
    env = Env(nodes, pods, pgs, pdbs, caps, members)
    before = env.snapshot()
    preemptor = preemptor_of(group, members)
    with TableEdit(env.table) as edit:
        res, st = env.pge.select_victims_on_domain(preemptor, PodGroupIndex(env.handle), pdbs,
                                                   env.scheduling_func(preemptor), edit)
    assert env.snapshot() == before  # the dry run left the table exactly as it was
    assert st.code == want_code, st
    if want_code != Code.SUCCESS:
        assert res is None
        return
    assert res is not None
    assert {p.metadata.name for p in res.victims.pods} == want_victims
    assert res.num_pod_group_disruptions == want_disruptions
    assert res.victims.num_pdb_violations == want_pdb


def test_no_victims_message_and_no_scheduling_call() -> None:
    env = Env(["node1"], [P("p1", "node1", HIGH)], caps=[("node1", 1)])
    pre = preemptor_of(PG("preemptor-pg", MID), [P("p", prio=MID)])
    with TableEdit(env.table) as edit:
        res, st = env.pge.select_victims_on_domain(pre, PodGroupIndex(env.handle), [], env.scheduling_func(pre), edit)
    assert (res, st.code, st.message()) == (
        None, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "No preemption victims found for incoming preemptor")
    assert env.calls == 0


def test_scheduling_failure_status_is_returned() -> None:
    """The group does not fit even without every lower-priority pod: the algorithm's status."""
    env = Env(["node1"], [P("p1", "node1", LOW)], caps=[("node1", 1)])
    pre = preemptor_of(PG("preemptor-pg", HIGH, min_count=2), [P("a", prio=HIGH), P("b", prio=HIGH)])
    with TableEdit(env.table) as edit:
        res, st = env.pge.select_victims_on_domain(pre, PodGroupIndex(env.handle), [], env.scheduling_func(pre), edit)
    assert res is None and st.code == Code.UNSCHEDULABLE and env.calls == 1


def test_select_victims_on_domain_nominated_nodes() -> None:
    """TestPodGroupEvaluator_SelectVictimsOnDomain_NominatedNodes: only members with a node get
    a NominatingInfo (ModeOverride)."""
    p1, p2 = P("p1"), P("p2")
    env = Env(["node1"], [P("p3", "node1", LOW)], caps=[("node1", 10)], preemptor_pods=[p1, p2])
    pre = preemptor_of(PG("preemptor-pg", HIGH), [p1, p2])

    def sched() -> tuple[PodGroupAssignments, Status]:
        return PodGroupAssignments(None, [ProposedAssignment(p1, PodInfo(p1), "node1", CycleState(PodInfo(p1))),
                                          ProposedAssignment(p2, PodInfo(p2), "", CycleState(PodInfo(p2)))]), \
            Status(Code.SUCCESS)

    with TableEdit(env.table) as edit:
        res, st = env.pge.select_victims_on_domain(pre, PodGroupIndex(env.handle), [], sched, edit)
    assert st.is_success() and res is not None
    assert res.nominating_infos == {"default/p1": NominatingInfo("node1", NominatingMode.OVERRIDE)}


# ───────────────────────────── TestPodGroupEvaluator_Preempt ─────────────────────────────

PREEMPT_CASES = [
    ("Preemptor group returns success with current nominating infos if member has nominated node with terminating "
     "pods", ["node1"], [P("victim", "node1", LOW, terminating=True)], [],
     PG("preemptor-pg", HIGH), [P("p1", prio=HIGH), P("p2", prio=HIGH, nnn="node1")],
     Status(Code.SUCCESS, ("ongoing preemption on nominated nodes",)),
     {"default/p1": NominatingInfo("", NominatingMode.OVERRIDE),
      "default/p2": NominatingInfo("node1", NominatingMode.OVERRIDE)}),
    ("Preemptor group returns success with current nominating infos if nominated node has terminating pod "
     "belonging to a pod group of lower priority", ["node1"],
     [P("victim", "node1", HIGH, "victim-pg", terminating=True)], [PG("victim-pg", LOW, "all")],
     PG("preemptor-pg", HIGH), [P("p1", prio=HIGH), P("p2", prio=HIGH, nnn="node1")],
     Status(Code.SUCCESS, ("ongoing preemption on nominated nodes",)),
     {"default/p1": NominatingInfo("", NominatingMode.OVERRIDE),
      "default/p2": NominatingInfo("node1", NominatingMode.OVERRIDE)}),
    ("Preemptor group returns success with current nominating infos if nominated node has terminating pod "
     "belonging to a pod group of lower priority with DisruptionModePod", ["node1"],
     [P("victim", "node1", HIGH, "victim-pg", terminating=True)], [PG("victim-pg", LOW, "single")],
     PG("preemptor-pg", HIGH), [P("p1", prio=HIGH), P("p2", prio=HIGH, nnn="node1")],
     Status(Code.SUCCESS, ("ongoing preemption on nominated nodes",)),
     {"default/p1": NominatingInfo("", NominatingMode.OVERRIDE),
      "default/p2": NominatingInfo("node1", NominatingMode.OVERRIDE)}),
    ("PodGroup preemptor with PreemptNever policy does not perform preemption", ["node1", "node2", "node3"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW, "pg1"), P("p3", "node3", LOW, "pg2")], [],
     PG("preemptor-pg", HIGH, policy="Never"), [P("p-1", prio=HIGH), P("p-2", prio=HIGH)],
     Status(Code.UNSCHEDULABLE, ("not eligible due to preemptionPolicy=Never.",)), None),
    ("PodGroup preemptor with PreemptNever preemption policy does not perform preemption with PodGroup victims",
     ["node1", "node2", "node3"],
     [P("p1", "node1", LOW), P("p2", "node2", LOW, "pg1"), P("p3", "node3", LOW, "pg2")],
     [PG("pg1", LOW, "single"), PG("pg2", LOW, "single")],
     PG("preemptor-pg", HIGH, policy="Never"), [P("p-1", prio=HIGH), P("p-2", prio=HIGH)],
     Status(Code.UNSCHEDULABLE, ("not eligible due to preemptionPolicy=Never.",)), None),
]


@pytest.mark.parametrize("case", PREEMPT_CASES, ids=[c[0] for c in PREEMPT_CASES])
def test_preempt(case: tuple) -> None:
    _, nodes, pods, pgs, group, members, want_status, want_infos = case
    env = Env(nodes, pods, pgs, [], [(n, 10) for n in nodes], members, features=GATES_POLICY)

    def must_not_run() -> Any:
        raise AssertionError("podGroupSchedulingFunc should not be called")

    res, st = env.pge.preempt(PodGroupInfo("preemptor-pg", NS, pod_group=group, unscheduled_pods=members),
                              must_not_run)
    assert (st.code, st.message()) == (want_status.code, want_status.message())
    if want_infos is not None:
        assert res is not None and res.nominating_infos == want_infos
    assert env.cluster.deleted == []


@pytest.mark.parametrize(("gates", "group_policy", "member_never", "want"), [
    # TestNewPodGroupPreemptorResolvesPreemptionPolicy: the gate decides where the policy comes from
    (GATES_POLICY, None, True, "PreemptLowerPriority"),
    (GATES_POLICY, "Never", False, "Never"),
    (GATES_POLICY, "PreemptLowerPriority", True, "PreemptLowerPriority"),
    (GATES, "Never", False, "PreemptLowerPriority"),
    (GATES, None, True, "Never"),
    (GATES, None, False, "PreemptLowerPriority"),
])
def test_preemptor_preemption_policy(gates: Any, group_policy: str | None, member_never: bool, want: str) -> None:
    members = [P("a", prio=HIGH), P("b", prio=HIGH, never=member_never)]
    info = PodGroupInfo("pg", NS, pod_group=PG("pg", HIGH, policy=group_policy), unscheduled_pods=members)
    pre = PodGroupPreemptor.of(info, gates.enabled("PodGroupPreemptionPolicy"))
    assert (pre.preemption_policy, pre.priority, pre.type) == (want, HIGH, "podgroup")


# ───────────────────────────── DefaultPreemption.PodGroupPostFilter ─────────────────────────────


def test_pod_group_post_filter_end_to_end() -> None:
    """Victims evicted as upstream's executor does for a group, NominatingInfos per member, the
    "pod group preemption: " prefix, the workload metrics, and the table left as found."""
    members = [P("m1", prio=HIGH), P("m2", prio=HIGH)]
    pods = [P("v1", "node1", LOW, "vpg"), P("v2", "node2", LOW, "vpg"), P("x", "node3", HIGH)]
    env = Env(["node1", "node2", "node3"], pods, [PG("vpg", LOW, "all")], [],
              [("node1", 1), ("node2", 1), ("node3", 1)], members)
    rec = Recorder()
    env.fw.metrics = rec
    group = PG("gang", HIGH, min_count=2)
    info = PodGroupInfo("gang", NS, pod_group=group, unscheduled_pods=members)
    before = env.snapshot()
    res, st = env.fw.run_pod_group_post_filter_plugins(PodGroupCycleState(), info,
                                                       env.scheduling_func(preemptor_of(group, members)))
    assert env.snapshot() == before
    assert (st.code, st.message()) == (Code.SUCCESS, "pod group preemption: found a placement for podgroup, "
                                                     "preempting 2 victims")
    assert res == PodGroupPostFilterResult({"default/m1": NominatingInfo("node1", NominatingMode.OVERRIDE),
                                            "default/m2": NominatingInfo("node2", NominatingMode.OVERRIDE)})
    assert sorted(env.cluster.deleted) == ["v1", "v2"]
    assert {c["message"] for _, c in env.cluster.conditions} == {
        "default-scheduler: preempting to accommodate a higher priority podgroup"}
    note = "Preempted by podgroup uid-gang on node cluster"
    assert {(n, text) for n, text, _ in env.cluster.events} == {("v1", note), ("v2", note)}
    assert all(rel is group for _, _, rel in env.cluster.events)
    calls = [c for c in rec.calls if c[0] != "observe_extension_point"]
    assert ("observe_workload_preemption_victims", 2) in calls
    assert ("observe_preemption_workload_disruptions", "podgroup", 1) in calls
    assert ("observe_workload_preemption_attempt", "Success") in calls
    assert not any(c[0] == "observe_preemption_victims" for c in calls)  # pod preemptors only
    assert any(c[:3] == ("observe_extension_point", "PodGroupPostFilter", "Success") for c in rec.calls)
    assert any(c[:3] == ("observe_preemption_evaluation", "podgroup", "Success") for c in calls)
    assert any(c[:3] == ("observe_preemption_execution", "podgroup", "success") for c in calls)
    assert env.pl.preempting == set()


def test_pod_group_post_filter_prefixes_failures() -> None:
    env = Env(["node1"], [P("p1", "node1", HIGH)], caps=[("node1", 1)])
    members = [P("m", prio=MID)]
    info = PodGroupInfo("g", NS, pod_group=PG("g", MID), unscheduled_pods=members)
    res, st = env.pl.pod_group_post_filter(PodGroupCycleState(), info, lambda: (None, None))
    assert (res, st.code, st.message()) == (
        None, Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "pod group preemption: No preemption victims found for incoming preemptor")


def test_pre_enqueue_holds_members_while_preempting() -> None:
    """Upstream PreEnqueue for a group member while its group's preemption is being actuated."""
    env = Env(["node1"], [], [PG("g", HIGH)], caps=[("node1", 1)])
    member = P("m", prio=HIGH, pg="g")
    assert env.pl in env.fw.pre_enqueue_plugins
    assert env.pl.pre_enqueue(member) is None
    env.pl.preempting.add("uid-g")
    st = env.pl.pre_enqueue(member)
    assert (st.code, st.message()) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                       "waiting for the preemption for this pod group to be finished")
    assert env.pl.pre_enqueue(P("other", prio=HIGH)) is None


def test_no_pre_enqueue_without_generic_workload() -> None:
    env = Env(["node1"], [], caps=[("node1", 1)], features=default_feature_gate())
    assert env.pl not in env.fw.pre_enqueue_plugins


# ───────────────────────────── RunPodGroupPostFilterPlugins ─────────────────────────────


class Fixed:
    def __init__(self, name: str, code: Code | None, msg: str = "", raises: bool = False) -> None:
        self.name, self.code, self.msg, self.raises, self.ran = name, code, msg, raises, 0

    def pod_group_post_filter(self, state: Any, info: Any, func: Any) -> tuple[Any, Status | None]:
        self.ran += 1
        if self.raises:
            raise RuntimeError(self.msg)
        if self.code is None:
            return PodGroupPostFilterResult({"default/a": NominatingInfo("n", NominatingMode.OVERRIDE)}), None
        return None, Status(self.code, (self.msg,) if self.msg else ())


def _run(plugins: list[Fixed], features: Any = GATES) -> tuple[Any, Status]:
    env = Env(["node1"], [], caps=[("node1", 1)], features=features)
    return env.fw.run_pod_group_post_filter_plugins(PodGroupCycleState(), PodGroupInfo("g", NS), lambda: (None, None),
                                                    plugins=plugins)


def test_run_pod_group_post_filter_gate_off() -> None:
    a = Fixed("A", Code.SUCCESS)
    res, st = _run([a], default_feature_gate())
    assert (res, st.code, st.message(), a.ran) == (
        None, Code.UNSCHEDULABLE, "generic workload feature is disabled, cannot perform PodGroupPostFilter", 0)


def test_run_pod_group_post_filter_success_stops() -> None:
    a, b = Fixed("A", None), Fixed("B", Code.SUCCESS)
    res, st = _run([a, b])
    assert st.is_success() and res is not None and b.ran == 0


def test_run_pod_group_post_filter_unresolvable_stops() -> None:
    a, b = Fixed("A", Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "no"), Fixed("B", Code.SUCCESS)
    _, st = _run([a, b])
    assert (st.code, st.plugin, b.ran) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "A", 0)


def test_run_pod_group_post_filter_unschedulable_tries_next() -> None:
    a, b = Fixed("A", Code.UNSCHEDULABLE, "a says no"), Fixed("B", Code.UNSCHEDULABLE, "b says no")
    res, st = _run([a, b])
    assert (res, st.code, st.reasons, st.plugin) == (None, Code.UNSCHEDULABLE, ("a says no", "b says no"), "A")
    c = Fixed("C", None)
    res, st = _run([Fixed("A", Code.UNSCHEDULABLE, "x"), c])
    assert st.is_success() and c.ran == 1


@pytest.mark.parametrize("plugin", [Fixed("A", Code.ERROR, "boom"), Fixed("A", None, "boom", raises=True),
                                    Fixed("A", Code.WAIT, "boom")])
def test_run_pod_group_post_filter_error(plugin: Fixed) -> None:
    b = Fixed("B", Code.SUCCESS)
    res, st = _run([plugin, b])
    assert (res, st.code, st.message(), st.plugin, b.ran) == (
        None, Code.ERROR, 'error in "A" PodGroupPostFilter plugins: boom', "A", 0)
