"""DefaultPreemption + the preemption Evaluator, ported from upstream
``plugins/defaultpreemption/default_preemption_test.go`` (v1.34): TestPostFilter,
TestDryRunPreemption, TestSelectBestCandidate, TestCustomSelection, TestCustomOrdering,
TestPodEligibleToPreemptOthers, TestPreempt; plus end-to-end runs through ``simulate``.

Upstream's quantities are kept: small=100m/100, medium=200m/200, large=300m/300,
veryLarge=500m/500 (cpu/memory); test nodes have ``pods: 32`` unless said otherwise, as
upstream's ``MakeNode().Capacity(...)``. Upstream's ``getOffsetRand`` (seed 4 → offsets 4, 1, 3
for 5 nodes) is reproduced by setting ``evaluator.offset_fn``.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import PodCondition, PodDisruptionBudget, decode
from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, NodeToStatus
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, NominatingInfo, NominatingMode, PostFilterResult, Status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.preemption import (
    ERR_NOT_ELIGIBLE_NEVER,
    ERR_NOT_ELIGIBLE_TERMINATING,
    Evaluator,
    Victims,
    aggregate_message,
    filter_pods_with_pdb_violation,
    get_earliest_pod_start_time,
    more_important_pod,
    pick_one_node_for_preemption,
    pod_start_time_ns,
)
from kubesched.framework.runtime import Framework
from kubesched.plugins import defaultbinder, defaultpreemption, queuesort
from kubesched.plugins.noderesources import fit
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL = {"cpu": "100m", "memory": "100"}
MEDIUM = {"cpu": "200m", "memory": "200"}
LARGE = {"cpu": "300m", "memory": "300"}
VERY_LARGE = {"cpu": "500m", "memory": "500"}
ONE_POD = {"pods": "1"}
NODE_RES = {"cpu": "200m", "memory": "400", "pods": "32"}


def t(n: int) -> str:
    """``epochTimeN`` (upstream: N nanoseconds after the epoch)."""
    return f"1970-01-01T00:00:00.{n:09d}Z"


def mk(name: str, prio: int | None = None, node: str | None = None, req: dict | None = None,
       start: str | None = None, labels: dict | None = None, ns: str = "default") -> Any:
    p = MakePod().name(name).uid(name).namespace(ns)
    if prio is not None:
        p.priority(prio)
    if node:
        p.node(node)
    if req:
        p.req(**req)
    if start:
        p.start_time(start)
    if labels:
        p.labels(labels)
    return p


def node(name: str, cap: dict | None = None, labels: dict | None = None) -> Any:
    n = MakeNode().name(name).capacity(**({"pods": "32"} | (cap if cap is not None else VERY_LARGE)))
    for k, v in (labels or {}).items():
        n.label(k, v)
    return n.obj()


def pdb(match: dict[str, str], allowed: int = 0, disrupted: dict | None = None, name: str = "pdb",
        ns: str = "default") -> PodDisruptionBudget:
    return decode(PodDisruptionBudget, {
        "metadata": {"name": name, "namespace": ns},
        "spec": {"selector": {"matchLabels": match}},
        "status": {"disruptionsAllowed": allowed, "disruptedPods": disrupted or {}}})


class FakeCluster:
    """Lister + client: pods and PDBs; records deletions and events."""

    def __init__(self, pods: list, pdbs: list = ()) -> None:  # type: ignore[assignment]
        self.pods = {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods}
        self.pdbs = list(pdbs)
        self.deleted: list[str] = []
        self.events: list[tuple] = []
        self.conditions: list[tuple[str, PodCondition]] = []
        self.related: list[str | None] = []
        self.fail_delete = False

    def list(self, kind: str, namespace: str | None = None) -> list:
        objs = {"Pod": list(self.pods.values()), "PodDisruptionBudget": self.pdbs}.get(kind, [])
        return [o for o in objs if namespace is None or o.metadata.namespace == namespace]

    def get(self, kind: str, namespace: str, name: str) -> Any:
        return self.pods.get(f"{namespace}/{name}") if kind == "Pod" else None

    def delete_pod(self, pod) -> None:  # noqa: ANN001
        if self.fail_delete:
            raise RuntimeError("the server is unavailable")
        self.deleted.append(pod.metadata.name)
        self.pods.pop(f"{pod.metadata.namespace}/{pod.metadata.name}", None)

    def add_pod_condition(self, pod, cond) -> None:  # noqa: ANN001
        self.conditions.append((pod.metadata.name, decode(PodCondition, cond)))

    def record_event(self, obj, event_type, reason, action, message, related=None) -> None:  # noqa: ANN001
        self.events.append((obj.metadata.name, event_type, reason, action, message))
        self.related.append(related.metadata.name if related is not None else None)

    def clear_nominated_node_name(self, pod) -> None:  # noqa: ANN001
        self.update_pod_condition(pod, "", "", "", "")

    def update_pod_condition(self, pod, status, reason, message, nominated_node_name=None) -> None:  # noqa: ANN001
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        cur = self.pods[key]
        if nominated_node_name is not None:
            self.pods[key] = msgspec.structs.replace(
                cur, status=msgspec.structs.replace(cur.status, nominated_node_name=nominated_node_name))


class ErrOnLabelPlugin:
    """Upstream's TestPlugin: PreFilter with extensions that fail on nodes labelled error=true."""

    name = "test-plugin"

    def pre_filter(self, state, pod, nodes):  # noqa: ANN001, ANN201
        return None, None

    def pre_filter_extensions(self):  # noqa: ANN201
        return self

    def add_pod(self, state, pod, pi, ni):  # noqa: ANN001, ANN201
        if ni.node.metadata.labels.get("error") == "true":
            return Status(Code.ERROR, (f"failed to add pod: {pod.metadata.name}",))
        return None

    def remove_pod(self, state, pod, pi, ni):  # noqa: ANN001, ANN201
        if ni.node.metadata.labels.get("error") == "true":
            return Status(Code.ERROR, (f"failed to remove pod: {pod.metadata.name}",))
        return None


def _registry() -> dict:
    from kubesched.plugins import interpodaffinity, nodeports, nodeunschedulable, podtopologyspread, tainttoleration

    return {"PrioritySort": queuesort.new, "NodeResourcesFit": fit.new, "DefaultBinder": defaultbinder.new,
            "DefaultPreemption": defaultpreemption.new, "test-plugin": lambda a, h: ErrOnLabelPlugin(),
            "PodTopologySpread": podtopologyspread.new, "InterPodAffinity": interpodaffinity.new,
            "NodePorts": nodeports.new, "TaintToleration": tainttoleration.new,
            "NodeUnschedulable": nodeunschedulable.new}


class Env:
    def __init__(self, nodes: list, pods: list, *, preemptor=None, pdbs=(), plugins=("NodeResourcesFit",),  # noqa: ANN001
                 args: dict | None = None, features: FeatureGate | None = None) -> None:
        self.table = build_table(nodes, pods)
        self.cluster = FakeCluster(pods + ([preemptor] if preemptor is not None else []), pdbs)
        self.handle = Handle(nodes=self.table, lister=self.cluster, client=self.cluster,
                             **({"features": features} if features is not None else {}))
        self.handle.rng = np.random.default_rng(0)  # type: ignore[attr-defined]
        enabled = [{"name": "PrioritySort"}, *({"name": p} for p in plugins), {"name": "DefaultPreemption"},
                   {"name": "DefaultBinder"}]
        prof: dict = {"schedulerName": "default-scheduler",
                      "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}}
        if args is not None:
            prof["pluginConfig"] = [{"name": "DefaultPreemption", "args": args}]
        cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                             "profiles": [prof]})
        self.fw = Framework(cfg.profiles[0], _registry(), self.handle)
        self.pl = self.fw.plugins["DefaultPreemption"]
        self.ev = self.pl.evaluator

    def state(self, pod) -> CycleState:  # noqa: ANN001
        st = CycleState(PodInfo(pod))
        _, status, _ = self.fw.run_pre_filter_plugins(st, pod)
        assert status is None or status.is_success(), status
        return st

    def statuses(self, explicit: dict[str, Code]) -> NodeToStatus:
        diag = Diagnosis(extra_statuses={n: Status(c) for n, c in explicit.items()},
                         absent_status=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))
        return NodeToStatus(diag, self.table.names)

    def rows_by_name(self) -> np.ndarray:
        return np.asarray(sorted(self.table.row_of.values(), key=lambda r: self.table.names[r]), np.int64)

    def snapshot(self) -> list:
        t = self.table
        return [(n, [p.key for p in t.pods[r]], t.requested[r].tolist(), t.non_zero_requested[r].tolist(),
                 int(t.generation[r]), t.used_ports[r]) for n, r in sorted(t.row_of.items())]


def nominated(node_name: str) -> PostFilterResult:
    return PostFilterResult(NominatingInfo(node_name, NominatingMode.OVERRIDE))


def found(node_name: str, victims: int) -> Status:
    """v1.37 ``Preempt``'s Success message (preemption.go L196) with DefaultPreemption's prefix."""
    return Status(Code.SUCCESS, (f"preemption: found a potential placement for pod on node {node_name}, "
                                 f"preempting {victims} victims",))


U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# ─────────────────────────────────────── TestPostFilter ───────────────────────────────────────

POST_FILTER_CASES = [
    ("pod with higher priority can be made schedulable",
     mk("p", HIGH), [mk("p1", node="node1")], [node("node1", ONE_POD)], {"node1": U}, [],
     nominated("node1"), found("node1", 1)),
    ("pod with tied priority is still unschedulable",
     mk("p"), [mk("p1", node="node1")], [node("node1", ONE_POD)], {"node1": U}, [],
     nominated(""), Status(U, ("preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",))),
    ("preemption should respect filteredNodesStatuses",
     mk("p", HIGH), [mk("p1", node="node1")], [node("node1", ONE_POD)], {"node1": UU}, [],
     nominated(""), Status(U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",))),
    ("preemption should respect absent NodeToStatusReader entry meaning UnschedulableAndUnresolvable",
     mk("p", HIGH), [mk("p1", node="node1")], [node("node1", ONE_POD)], {}, [],
     nominated(""), Status(U, ("preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",))),
    ("pod can be made schedulable on one node",
     mk("p", MID), [mk("p1", HIGH, "node1"), mk("p2", LOW, "node2")],
     [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U}, [],
     nominated("node2"), found("node2", 1)),
    ("pod can be made schedulable on minHighestPriority node",
     mk("p", VERY_HIGH),
     [mk("p1", HIGH, "node1", labels={"test.kubernetes.io/is-violating-pdb": "non-violating"}),
      mk("p2", LOW, "node1", labels={"test.kubernetes.io/is-violating-pdb": "violating"}),
      mk("p3", MID, "node2", labels={"test.kubernetes.io/is-violating-pdb": "violating"})],
     [node("node1", ONE_POD), node("node2", ONE_POD)], {"node1": U, "node2": U},
     [pdb({"test.kubernetes.io/is-violating-pdb": "violating"}, 0, name="violating-pdb"),
      pdb({"test.kubernetes.io/is-violating-pdb": "non-violating"}, 2**31 - 1, name="non-violating-pdb")],
     nominated("node2"), found("node2", 1)),
    ("no candidate nodes found, no enough resource after removing low priority pods",
     mk("p", HIGH, req=LARGE), [mk("p1", node="node1"), mk("p2", node="node2")],
     [node("node1", NODE_RES), node("node2", NODE_RES)], {"node1": U, "node2": U}, [],
     nominated(""), Status(U, ("preemption: 0/2 nodes are available: 2 Insufficient cpu.",))),
    ("no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU resource",
     mk("p", HIGH, req=LARGE), [mk("p1", HIGH, "node1"), mk("p2", node="node2"), mk("p3", HIGH, "node3")],
     [node("node1", ONE_POD), node("node2", NODE_RES), node("node3", ONE_POD)],
     {"node1": U, "node2": U, "node3": U}, [],
     nominated(""), Status(U, ("preemption: 0/3 nodes are available: 1 Insufficient cpu, "
                               "2 No preemption victims found for incoming pod.",))),
    ("no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and 2 nodes don't have "
     "enough CPU resource",
     mk("p", HIGH, req=LARGE), [mk("p1", node="node1"), mk("p2", node="node2")],
     [node(f"node{i}", NODE_RES) for i in range(1, 5)], {"node1": U, "node2": U, "node4": UU}, [],
     nominated(""), Status(U, ("preemption: 0/4 nodes are available: 2 Insufficient cpu, "
                               "2 Preemption is not helpful for scheduling.",))),
    ("only one node but failed with TestPlugin",
     mk("p", HIGH, req=LARGE), [mk("p1", node="node1")], [node("node1", LARGE, {"error": "true"})],
     {"node1": U}, [],
     None, Status(Code.ERROR, ('preemption: running RemovePod on PreFilter plugin "test-plugin": '
                               "failed to remove pod: p",))),
    ("one failed with TestPlugin and the other pass",
     mk("p", HIGH, req=LARGE), [mk("p1", node="node1"), mk("p2", node="node2", req=MEDIUM)],
     [node("node1", LARGE, {"error": "true"}), node("node2", LARGE)], {"node1": U, "node2": U}, [],
     nominated("node2"), found("node2", 1)),
]


@pytest.mark.parametrize("name,pod,pods,nodes,statuses,pdbs,want_result,want_status", POST_FILTER_CASES,
                         ids=[c[0] for c in POST_FILTER_CASES])
def test_post_filter(name, pod, pods, nodes, statuses, pdbs, want_result, want_status) -> None:  # noqa: ANN001
    pod, pods = pod.obj(), [p.obj() for p in pods]
    env = Env(nodes, pods, preemptor=pod, pdbs=pdbs, plugins=("NodeResourcesFit", "test-plugin"))
    before = env.snapshot()
    result, status = env.pl.post_filter(env.state(pod), pod, env.statuses(statuses))
    assert (status.code, status.reasons) == (want_status.code, want_status.reasons)
    assert result == want_result
    if status.is_success():
        assert env.cluster.deleted  # victims went through the client
    else:
        assert env.snapshot() == before  # dry runs leave the table exactly as it was
        assert not env.cluster.deleted


@pytest.mark.parametrize("version", [(1, 34), (1, 35), (1, 36)])
def test_post_filter_success_has_no_message_before_1_37(version: tuple[int, int]) -> None:
    """Before v1.37 ``Preempt`` returned a bare Success: the FailedScheduling message gets no
    PostFilter part after a successful preemption."""
    name, pod, pods, nodes, statuses, pdbs, want_result, _ = POST_FILTER_CASES[0]
    pod, pods = pod.obj(), [p.obj() for p in pods]
    env = Env(nodes, pods, preemptor=pod, pdbs=pdbs, plugins=("NodeResourcesFit", "test-plugin"),
              features=FeatureGate(emulated_version=version))
    result, status = env.pl.post_filter(env.state(pod), pod, env.statuses(statuses))
    assert (status.code, status.message(), result) == (Code.SUCCESS, "", want_result)


# ─────────────────────────────────────── TestDryRunPreemption ───────────────────────────────────────

def _cands(got) -> list[tuple[str, list[str], int]]:  # noqa: ANN001
    return sorted((c.name, sorted(p.metadata.name for p in c.victims.pods), c.victims.num_pdb_violations)
                  for c in got)


DRY_RUN_CASES = [
    ("a pod that fits on both nodes when lower priority pods are preempted", ["node1", "node2"],
     [mk("p", HIGH, req=LARGE)], [mk("p1", MID, "node1", LARGE), mk("p2", MID, "node2", LARGE)], [], None,
     [[("node1", ["p1"], 0), ("node2", ["p2"], 0)]]),
    ("a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
     ["node1", "node2"], [mk("p", LOW, req=LARGE)],
     [mk("p1", MID, "node1", LARGE), mk("p2", MID, "node2", LARGE)], [], None, [[]]),
    ("medium priority pod is preempted, but lower priority one stays as it is small", ["node1", "node2"],
     [mk("p", HIGH, req=LARGE)],
     [mk("p1.1", LOW, "node1", SMALL), mk("p1.2", MID, "node1", LARGE), mk("p2", MID, "node2", LARGE)], [], None,
     [[("node1", ["p1.2"], 0), ("node2", ["p2"], 0)]]),
    ("mixed priority pods are preempted", ["node1", "node2"], [mk("p", HIGH, req=LARGE)],
     [mk("p1.1", MID, "node1", SMALL), mk("p1.2", LOW, "node1", SMALL), mk("p1.3", MID, "node1", MEDIUM),
      mk("p1.4", HIGH, "node1", SMALL), mk("p2", HIGH, "node2", LARGE)], [], None,
     [[("node1", ["p1.2", "p1.3"], 0)]]),
    ("mixed priority pods are preempted, pick later StartTime one when priorities are equal", ["node1", "node2"],
     [mk("p", HIGH, req=LARGE)],
     [mk("p1.1", LOW, "node1", SMALL, t(5)), mk("p1.2", LOW, "node1", SMALL, t(4)),
      mk("p1.3", MID, "node1", MEDIUM, t(3)), mk("p1.4", HIGH, "node1", SMALL, t(2)),
      mk("p2", HIGH, "node2", LARGE, t(1))], [], None,
     [[("node1", ["p1.1", "p1.3"], 0)]]),
    ("preemption with violation of same pdb", ["node1"], [mk("p", HIGH, req=VERY_LARGE)],
     [mk("p1.1", MID, "node1", MEDIUM, labels={"app": "foo"}), mk("p1.2", MID, "node1", MEDIUM, labels={"app": "foo"})],
     [pdb({"app": "foo"}, 1)], None, [[("node1", ["p1.1", "p1.2"], 1)]]),
    ("preemption with violation of the pdb with pod whose eviction was processed, the victim doesn't belong to "
     "DisruptedPods", ["node1"], [mk("p", HIGH, req=VERY_LARGE)],
     [mk("p1.1", MID, "node1", MEDIUM, labels={"app": "foo"}), mk("p1.2", MID, "node1", MEDIUM, labels={"app": "foo"})],
     [pdb({"app": "foo"}, 1, {"p2": "2024-01-01T00:00:00Z"})], None, [[("node1", ["p1.1", "p1.2"], 1)]]),
    ("preemption with violation of the pdb with pod whose eviction was processed, the victim belongs to "
     "DisruptedPods", ["node1"], [mk("p", HIGH, req=VERY_LARGE)],
     [mk("p1.1", MID, "node1", MEDIUM, labels={"app": "foo"}), mk("p1.2", MID, "node1", MEDIUM, labels={"app": "foo"})],
     [pdb({"app": "foo"}, 1, {"p1.2": "2024-01-01T00:00:00Z"})], None, [[("node1", ["p1.1", "p1.2"], 0)]]),
    ("preemption with violation of the pdb with pod whose eviction was processed, the victim which belongs to "
     "DisruptedPods is treated as 'nonViolating'", ["node1"], [mk("p", HIGH, req=VERY_LARGE)],
     [mk("p1.1", MID, "node1", MEDIUM, labels={"app": "foo"}), mk("p1.2", MID, "node1", MEDIUM, labels={"app": "foo"}),
      mk("p1.3", MID, "node1", MEDIUM, labels={"app": "foo"})],
     [pdb({"app": "foo"}, 1, {"p1.3": "2024-01-01T00:00:00Z"})], None, [[("node1", ["p1.1", "p1.2", "p1.3"], 1)]]),
    ("all nodes are possible candidates, but DefaultPreemptionArgs limits to 2", [f"node{i}" for i in range(1, 6)],
     [mk("p", HIGH, req=LARGE)], [mk(f"p{i}", MID, f"node{i}", LARGE) for i in range(1, 6)], [],
     {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
     [[("node1", ["p1"], 0), ("node5", ["p5"], 0)]]),
    ("some nodes are not possible candidates, DefaultPreemptionArgs limits to 2", [f"node{i}" for i in range(1, 6)],
     [mk("p", HIGH, req=LARGE)],
     [mk("p1", MID, "node1", LARGE), mk("p2", VERY_HIGH, "node2", LARGE), mk("p3", MID, "node3", LARGE),
      mk("p4", MID, "node4", LARGE), mk("p5", VERY_HIGH, "node5", LARGE)], [],
     {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
     [[("node1", ["p1"], 0), ("node3", ["p3"], 0)]]),
    ("preemption offset across multiple scheduling cycles and wrap around", [f"node{i}" for i in range(1, 6)],
     [mk("tp1", HIGH, req=LARGE), mk("tp2", HIGH, req=LARGE), mk("tp3", HIGH, req=LARGE)],
     [mk(f"p{i}", MID, f"node{i}", LARGE) for i in range(1, 6)], [],
     {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1},
     [[("node1", ["p1"], 0), ("node5", ["p5"], 0)], [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
      [("node4", ["p4"], 0), ("node5", ["p5"], 0)]]),
    ("preemption looks past numCandidates until a non-PDB violating node is found", [f"node{i}" for i in range(1, 6)],
     [mk("p", HIGH, req=LARGE)],
     [mk("p1", MID, "node1", LARGE, labels={"app": "foo"}), mk("p2", MID, "node2", LARGE, labels={"app": "foo"}),
      mk("p3", MID, "node3", LARGE), mk("p4", MID, "node4", LARGE), mk("p5", MID, "node5", LARGE, labels={"app": "foo"})],
     [pdb({"app": "foo"}, 0)], {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
     # offset 4 → node5 (pdb), node1 (pdb), node2 (pdb, the violating list is full), node3 → stop
     [[("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)]]),
]


@pytest.mark.parametrize("name,node_names,test_pods,init_pods,pdbs,args,expected", DRY_RUN_CASES,
                         ids=[c[0] for c in DRY_RUN_CASES])
def test_dry_run_preemption(name, node_names, test_pods, init_pods, pdbs, args, expected) -> None:  # noqa: ANN001
    nodes = [node(n) for n in node_names]
    env = Env(nodes, [p.obj() for p in init_pods], args=args)
    offsets = iter([4, 1, 3])  # upstream: rand.New(rand.NewSource(4)).Int31n(5)
    env.ev.offset_fn = lambda n: next(offsets) % n
    before = env.snapshot()
    rows = env.rows_by_name()
    for cycle, tp in enumerate(test_pods):
        pod = tp.obj()
        offset, num = env.ev.get_offset_and_num_candidates(len(rows))
        got, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, rows, pdbs, offset, num)
        assert _cands(got) == sorted(expected[cycle]), f"cycle {cycle}"
    assert env.snapshot() == before


def test_dry_run_topology_spread() -> None:
    # upstream "preemption to resolve pod topology spread filter failure"
    nodes = [node("node-a", labels={"hostname": "node-a", "zone": "zone1"}),
             node("node-b", labels={"hostname": "node-b", "zone": "zone1"}),
             node("node-x", labels={"hostname": "node-x", "zone": "zone2"})]
    sel = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    init = [mk("pod-a1", MID, "node-a", labels={"foo": ""}), mk("pod-a2", LOW, "node-a", labels={"foo": ""}),
            mk("pod-b1", LOW, "node-b", labels={"foo": ""}), mk("pod-x1", HIGH, "node-x", labels={"foo": ""}),
            mk("pod-x2", HIGH, "node-x", labels={"foo": ""})]
    pod = (mk("p", HIGH, labels={"foo": ""}).spread_constraint(1, "zone", "DoNotSchedule", sel)
           .spread_constraint(1, "hostname", "DoNotSchedule", sel).obj())
    env = Env(nodes, [p.obj() for p in init], plugins=("PodTopologySpread",))
    before = env.snapshot()
    rows = env.rows_by_name()
    got, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, rows, [], 0, 3)
    assert _cands(got) == [("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)]
    assert env.snapshot() == before


def test_dry_run_anti_affinity() -> None:
    # upstream "pod with anti-affinity is preempted"
    nodes = [node("node1", labels={"hostname": "node1"}), node("node2", labels={"hostname": "node2"})]
    anti = {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}, "topologyKey": "hostname"}
    init = [mk("p1.1", LOW, "node1", SMALL, labels={"foo": ""}).pod_affinity("podAntiAffinity", anti),
            mk("p1.2", MID, "node1", SMALL), mk("p1.3", HIGH, "node1", SMALL), mk("p2", HIGH, "node2", SMALL)]
    pod = mk("p", HIGH, req=SMALL, labels={"foo": ""}).obj()
    env = Env(nodes, [p.obj() for p in init], plugins=("NodeResourcesFit", "InterPodAffinity"))
    rows = env.rows_by_name()
    got, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, rows, [], 0, 2)
    assert _cands(got) == [("node1", ["p1.1"], 0)]


# ─────────────────────────────────────── TestSelectBestCandidate ───────────────────────────────────────

E = t(0)
SELECT_CASES = [
    ("a pod that fits on both nodes when lower priority pods are preempted", 2, mk("p", HIGH, req=LARGE),
     [mk("p1", MID, "node1", LARGE, E), mk("p2", MID, "node2", LARGE, E)], {"node1", "node2"}),
    ("node with min highest priority pod is picked", 3, mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", MID, "node1", MEDIUM, E), mk("p1.2", MID, "node1", LARGE, E), mk("p2.1", MID, "node2", MEDIUM, E),
      mk("p2.2", LOW, "node2", MEDIUM, E), mk("p3.1", LOW, "node3", MEDIUM, E), mk("p3.2", LOW, "node3", MEDIUM, E)],
     {"node3"}),
    ("when highest priorities are the same, minimum sum of priorities is picked", 3, mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", MID, "node1", MEDIUM, E), mk("p1.2", MID, "node1", LARGE, E), mk("p2.1", MID, "node2", LARGE, E),
      mk("p2.2", LOW, "node2", MEDIUM, E), mk("p3.1", MID, "node3", MEDIUM, E), mk("p3.2", MID, "node3", MEDIUM, E)],
     {"node2"}),
    ("when highest priority and sum are the same, minimum number of pods is picked", 3, mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", MID, "node1", SMALL, E), mk("p1.2", NEG, "node1", SMALL, E), mk("p1.3", MID, "node1", SMALL, E),
      mk("p1.4", NEG, "node1", SMALL, E), mk("p2.1", MID, "node2", LARGE, E), mk("p2.2", NEG, "node2", MEDIUM, E),
      mk("p3.1", MID, "node3", MEDIUM, E), mk("p3.2", NEG, "node3", SMALL, E), mk("p3.3", LOW, "node3", SMALL, E)],
     {"node2"}),
    ("sum of adjusted priorities is considered", 3, mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", MID, "node1", SMALL, E), mk("p1.2", NEG, "node1", SMALL, E), mk("p1.3", NEG, "node1", SMALL, E),
      mk("p2.1", MID, "node2", LARGE, E), mk("p2.2", NEG, "node2", MEDIUM, E), mk("p3.1", MID, "node3", MEDIUM, E),
      mk("p3.2", NEG, "node3", SMALL, E), mk("p3.3", LOW, "node3", SMALL, E)],
     {"node2"}),
    ("non-overlapping lowest high priority, sum priorities, and number of pods", 4, mk("p", VERY_HIGH, req=VERY_LARGE),
     [mk("p1.1", MID, "node1", SMALL, E), mk("p1.2", LOW, "node1", SMALL, E), mk("p1.3", LOW, "node1", SMALL, E),
      mk("p2.1", HIGH, "node2", LARGE, E), mk("p3.1", MID, "node3", MEDIUM, E), mk("p3.2", LOW, "node3", SMALL, E),
      mk("p3.3", LOW, "node3", SMALL, E), mk("p3.4", LOW, "node3", MEDIUM, E), mk("p4.1", MID, "node4", MEDIUM, E),
      mk("p4.2", MID, "node4", SMALL, E), mk("p4.3", MID, "node4", SMALL, E), mk("p4.4", NEG, "node4", SMALL, E)],
     {"node1"}),
    ("same priority, same number of victims, different start time for each node's pod", 3,
     mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", MID, "node1", MEDIUM, t(2)), mk("p1.2", MID, "node1", MEDIUM, t(2)),
      mk("p2.1", MID, "node2", MEDIUM, t(3)), mk("p2.2", MID, "node2", MEDIUM, t(3)),
      mk("p3.1", MID, "node3", MEDIUM, t(1)), mk("p3.2", MID, "node3", MEDIUM, t(1))], {"node2"}),
    ("same priority, same number of victims, different start time for all pods", 3, mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", MID, "node1", MEDIUM, t(4)), mk("p1.2", MID, "node1", MEDIUM, t(2)),
      mk("p2.1", MID, "node2", MEDIUM, t(5)), mk("p2.2", MID, "node2", MEDIUM, t(1)),
      mk("p3.1", MID, "node3", MEDIUM, t(3)), mk("p3.2", MID, "node3", MEDIUM, t(6))], {"node3"}),
    ("different priority, same number of victims, different start time for all pods", 3,
     mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", LOW, "node1", MEDIUM, t(4)), mk("p1.2", MID, "node1", MEDIUM, t(2)),
      mk("p2.1", MID, "node2", MEDIUM, t(6)), mk("p2.2", LOW, "node2", MEDIUM, t(1)),
      mk("p3.1", LOW, "node3", MEDIUM, t(3)), mk("p3.2", MID, "node3", MEDIUM, t(5))], {"node2"}),
]


@pytest.mark.parametrize("name,n,pod,pods,expected", SELECT_CASES, ids=[c[0] for c in SELECT_CASES])
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_select_best_candidate(name, n, pod, pods, expected, offset) -> None:  # noqa: ANN001
    env = Env([node(f"node{i}") for i in range(1, n + 1)], [p.obj() for p in pods])
    pod = pod.obj()
    rows = env.table.order()
    cands, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, rows, [], offset % n, n)
    best = env.ev.select_candidate(cands)
    assert best is not None and best.name in expected


# ─────────────────────────────── TestCustomSelection / TestCustomOrdering ───────────────────────────────

def _label_is(key: str, val: str):  # noqa: ANN202
    return lambda ni, victim, preemptor: victim.pod.metadata.labels.get(key) == val


CUSTOM_SELECTION_CASES = [
    ("filter for matching pod label: high priority", _label_is("preemptible", "yes"), 4, mk("p1", HIGH, req=LARGE),
     [mk("v1", MID, "node1", LARGE, E, {"preemptible": "no"}), mk("v2", MID, "node2", LARGE, E, {"preemptible": "yes"}),
      mk("v3", LOW, "node3", LARGE, E, {"preemptible": "yes"}), mk("v4", LOW, "node4", LARGE, E)],
     {"node2": ["v2"], "node3": ["v3"]}),
    ("filter for matching pod label: mid priority", _label_is("preemptible", "yes"), 4, mk("p2", MID, req=LARGE),
     [mk("v1", MID, "node1", LARGE, E, {"preemptible": "no"}), mk("v2", MID, "node2", LARGE, E, {"preemptible": "yes"}),
      mk("v3", LOW, "node3", LARGE, E, {"preemptible": "yes"}), mk("v4", LOW, "node4", LARGE, E)],
     {"node3": ["v3"]}),
    ("filter for matching victim node: high priority", lambda ni, v, p: ni.name == "node1", 3,
     mk("p3", HIGH, req=LARGE),
     [mk("v1", HIGH, "node1", MEDIUM, E), mk("v2", MID, "node1", SMALL, E), mk("v3", LOW, "node1", SMALL, E),
      mk("v4", MID, "node2", LARGE, E), mk("v5", LOW, "node3", LARGE, E)], {"node1": ["v2", "v3"]}),
    ("only pods at or below specified priority can be preempted: high priority",
     lambda ni, v, p: v.priority <= MID, 3, mk("p1", HIGH, req=LARGE),
     [mk("v1", HIGH, "node1", LARGE, E), mk("v2", MID, "node2", LARGE, E), mk("v3", LOW, "node3", LARGE, E)],
     {"node2": ["v2"], "node3": ["v3"]}),
]


@pytest.mark.parametrize("name,eligible,n,pod,pods,expected", CUSTOM_SELECTION_CASES,
                         ids=[c[0] for c in CUSTOM_SELECTION_CASES])
def test_custom_selection(name, eligible, n, pod, pods, expected) -> None:  # noqa: ANN001
    env = Env([node(f"node{i}") for i in range(1, n + 1)], [p.obj() for p in pods])
    env.ev.is_eligible_pod = eligible
    pod = pod.obj()
    cands, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, env.table.order(), [], 0, n)
    assert len(cands) == len(expected)
    while cands:
        sel = env.ev.select_candidate(cands)
        assert [p.metadata.name for p in sel.victims.pods] == expected[sel.name]
        cands = [c for c in cands if c.name != sel.name]


@pytest.mark.parametrize("order,pods,want", [
    (lambda a, b: pod_start_time_ns(a) < pod_start_time_ns(b),
     [mk("v1", LOW, "node1", MEDIUM, t(2)), mk("v2", LOW, "node1", MEDIUM, t(0)), mk("v3", MID, "node1", MEDIUM, t(1))],
     ["v3", "v1"]),
    (lambda a, b: a.metadata.name < b.metadata.name,
     [mk("foo", LOW, "node1", MEDIUM, E), mk("bar", LOW, "node1", MEDIUM, E), mk("baz", MID, "node1", MEDIUM, E)],
     ["baz", "foo"]),
], ids=["select newest pods", "select alphabetically-last pods"])
def test_custom_ordering(order, pods, want) -> None:  # noqa: ANN001
    env = Env([node("node1")], [p.obj() for p in pods])
    env.ev.more_important_pod = order
    pod = mk("p2", HIGH, req=LARGE).obj()
    cands, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, env.table.order(), [], 0, 1)
    assert len(cands) == 1
    assert [p.metadata.name for p in cands[0].victims.pods] == want


# ─────────────────────────────────────── TestPodEligibleToPreemptOthers ───────────────────────────────────────

def _terminating(p, by_preemption: bool):  # noqa: ANN001, ANN202
    pod = p.terminating().obj()
    if by_preemption:
        cond = PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")
        pod = msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, conditions=[cond]))
    return pod


@pytest.mark.parametrize("pod,pods,nodes,nominated_status,expected", [
    (mk("p_with_nominated_node", HIGH).nominated_node_name("node1"),
     [_terminating(mk("p1", LOW, "node1"), False)], ["node1"],
     Status(UU, ("node(s) had untolerated taint(s)",)), (True, "")),
    (mk("p_without_nominated_node", HIGH), [], [], None, (True, "")),
    (mk("p_with_preempt_never_policy", HIGH).preemption_policy("Never"), [], [], None, (False, ERR_NOT_ELIGIBLE_NEVER)),
    (mk("p_with_nominated_node", HIGH).nominated_node_name("node1"),
     [_terminating(mk("p1", LOW, "node1"), True)], ["node1"], None, (False, ERR_NOT_ELIGIBLE_TERMINATING)),
    (mk("p_with_nominated_node", HIGH).nominated_node_name("node1"),
     [_terminating(mk("p1", LOW, "node1"), False)], ["node1"], None, (True, "")),
], ids=["Pod with nominated node", "Pod without nominated node", "Pod with 'PreemptNever' preemption policy",
        "preemption victim pod terminating, as indicated by the dedicated DisruptionTarget condition",
        "non-victim Pods terminating"])
def test_pod_eligible_to_preempt_others(pod, pods, nodes, nominated_status, expected) -> None:  # noqa: ANN001
    env = Env([node(n) for n in nodes], pods)
    assert env.ev.pod_eligible_to_preempt_others(pod.obj(), nominated_status) == expected


def test_post_filter_not_eligible_messages() -> None:
    env = Env([node("node1", ONE_POD)], [mk("p1", LOW, "node1").obj()])
    pod = mk("p", HIGH).preemption_policy("Never").obj()
    result, st = env.pl.post_filter(env.state(pod), pod, env.statuses({"node1": U}))
    assert result is None
    assert (st.code, st.reasons) == (U, ("preemption: not eligible due to preemptionPolicy=Never.",))

    victim = _terminating(mk("p1", LOW, "node1"), True)
    env = Env([node("node1", ONE_POD)], [victim])
    pod = mk("p", HIGH).nominated_node_name("node1").obj()
    result, st = env.pl.post_filter(env.state(pod), pod, env.statuses({"node1": U}))
    assert result is None
    assert (st.code, st.reasons) == (U, ("preemption: not eligible due to a terminating pod on the nominated node.",))


# ─────────────────────────────────────── TestPreempt ───────────────────────────────────────

@pytest.mark.parametrize("pod,pods,nodes,plugins,want,victims", [
    (mk("p", HIGH, req=VERY_LARGE).preemption_policy("PreemptLowerPriority"),
     [mk("p1.1", LOW, "node1", SMALL), mk("p1.2", LOW, "node1", SMALL), mk("p2.1", HIGH, "node2", LARGE),
      mk("p3.1", MID, "node3", MEDIUM)], ["node1", "node2", "node3"], ("NodeResourcesFit",), "node1",
     ["p1.1", "p1.2"]),
    (mk("p", HIGH, req=VERY_LARGE).preemption_policy("Never"),
     [mk("p1.1", LOW, "node1", SMALL), mk("p1.2", LOW, "node1", SMALL), mk("p2.1", HIGH, "node2", LARGE),
      mk("p3.1", MID, "node3", MEDIUM)], ["node1", "node2", "node3"], ("NodeResourcesFit",), None, []),
    (mk("p", HIGH, req=VERY_LARGE),
     [mk("p1.1", LOW, "node1", SMALL), mk("p1.2", LOW, "node1", SMALL), mk("p2.1", HIGH, "node2", LARGE),
      mk("p3.1", MID, "node3", MEDIUM)], ["node1", "node2", "node3"], ("NodeResourcesFit",), "node1",
     ["p1.1", "p1.2"]),
], ids=["basic preemption logic", "no preempting in pod", "PreemptionPolicy is nil"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_preempt(pod, pods, nodes, plugins, want, victims, seed) -> None:  # noqa: ANN001
    pods = [p.obj() for p in pods]
    pod = pod.obj()
    env = Env([node(n) for n in nodes], pods, preemptor=pod, plugins=plugins)
    env.handle.rng = np.random.default_rng(seed)  # type: ignore[attr-defined]
    m = env.statuses({n: U for n in nodes})
    res, st = env.ev.preempt(env.state(pod), pod, m)
    assert st.is_success() or st.is_rejected()
    assert res == (nominated(want) if want else None)
    assert sorted(env.cluster.deleted) == victims
    assert sorted((c[0], c[1].type, c[1].status, c[1].reason) for c in env.cluster.conditions) == [
        (v, "DisruptionTarget", "True", "PreemptionByScheduler") for v in victims]
    assert sorted(env.cluster.events) == [
        (v, "Normal", "Preempted", "Preempting", f"Preempted by pod p on node {want}") for v in victims]
    if not want:
        return
    # The victims are now terminating because of the preemption: preempting again is not allowed.
    for name in victims:
        pi = next(p for p in env.table.pods[env.table.row_of[want]] if p.pod.metadata.name == name)
        pi.update(_terminating(MakePod().name(name).uid(name).namespace("default").priority(LOW).node(want)
                               .req(**SMALL), True))
    again = msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, nominated_node_name=want))
    env.cluster.pods[f"default/{pod.metadata.name}"] = again
    res, st = env.ev.preempt(env.state(again), again, m)
    assert res is None and st.reasons == (ERR_NOT_ELIGIBLE_TERMINATING,)


def test_preempt_topology_spread() -> None:
    nodes = [node("node-a", labels={"hostname": "node-a", "zone": "zone1"}),
             node("node-b", labels={"hostname": "node-b", "zone": "zone1"}),
             node("node-x", labels={"hostname": "node-x", "zone": "zone2"})]
    sel = {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    pods = [mk("p-a1", HIGH, "node-a", labels={"foo": ""}), mk("p-a2", HIGH, "node-a", labels={"foo": ""}),
            mk("p-b1", LOW, "node-b", labels={"foo": ""}), mk("p-x1", HIGH, "node-x", labels={"foo": ""}),
            mk("p-x2", HIGH, "node-x", labels={"foo": ""})]
    pod = (mk("p", HIGH, labels={"foo": ""}).spread_constraint(1, "zone", "DoNotSchedule", sel)
           .spread_constraint(1, "hostname", "DoNotSchedule", sel).obj())
    env = Env(nodes, [p.obj() for p in pods], preemptor=pod, plugins=("PodTopologySpread",))
    res, st = env.ev.preempt(env.state(pod), pod, env.statuses({"node-a": U, "node-b": U, "node-x": U}))
    assert st.is_success() and res == nominated("node-b")
    assert env.cluster.deleted == ["p-b1"]


def test_preempt_sets_disruption_target_and_clears_lower_priority_nominations() -> None:
    pods = [mk("v", LOW, "node1", LARGE).obj()]
    low_nominated = mk("low", MID, req=SMALL).nominated_node_name("node1").obj()
    high_nominated = mk("other-high", VERY_HIGH, req=SMALL).nominated_node_name("node2").obj()
    pod = mk("p", HIGH, req=VERY_LARGE).obj()
    env = Env([node("node1"), node("node2", NODE_RES)], pods, preemptor=pod)
    env.cluster.pods["default/low"] = low_nominated
    env.cluster.pods["default/other-high"] = high_nominated
    res, st = env.pl.post_filter(env.state(pod), pod, env.statuses({"node1": U, "node2": U}))
    assert st.is_success() and res == nominated("node1")
    (victim, cond), = env.cluster.conditions
    assert victim == "v"
    assert (cond.type, cond.status, cond.reason, cond.message) == (
        "DisruptionTarget", "True", "PreemptionByScheduler", ": preempting to accommodate a higher priority pod")
    assert env.cluster.pods["default/low"].status.nominated_node_name == ""
    assert env.cluster.pods["default/other-high"].status.nominated_node_name == "node2"


def test_nominated_pods_of_higher_priority_count_in_the_dry_run() -> None:
    # node1 has room for the preemptor only if nothing else is nominated there; a pod of higher
    # priority nominated to node1 keeps its room (RunFilterPluginsWithNominatedPods), so node2 is used.
    pods = [mk("v1", LOW, "node1", LARGE).obj(), mk("v2", LOW, "node2", LARGE).obj(), mk("v3", LOW, "node2", SMALL).obj()]
    pod = mk("p", HIGH, req=LARGE).obj()
    env = Env([node("node1"), node("node2")], pods, preemptor=pod)
    env.cluster.pods["default/n"] = mk("n", VERY_HIGH, req=LARGE).nominated_node_name("node1").obj()
    res, st = env.ev.preempt(env.state(pod), pod, env.statuses({"node1": U, "node2": U}))
    assert st.is_success() and res == nominated("node2")
    assert env.cluster.deleted == ["v2"]


def test_client_error_is_an_error_status() -> None:
    pod = mk("p", HIGH).obj()
    env = Env([node("node1", ONE_POD)], [mk("p1", node="node1").obj()], preemptor=pod)
    env.cluster.fail_delete = True
    res, st = env.pl.post_filter(env.state(pod), pod, env.statuses({"node1": U}))
    assert res is None and st.code == Code.ERROR
    assert st.reasons == ("preemption: the server is unavailable",)


# ─────────────────────────────────────── helpers ───────────────────────────────────────

def test_num_candidates_and_args_validation() -> None:
    env = Env([node("n")], [], args={"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1})
    assert [env.ev.calculate_num_candidates(n) for n in (1, 5, 10, 1000)] == [1, 2, 4, 400]
    env = Env([node("n")], [])
    assert [env.ev.calculate_num_candidates(n) for n in (5, 100, 5000)] == [5, 100, 500]
    from kubesched.config.args import DefaultPreemptionArgs
    from kubesched.errors import InputError
    with pytest.raises(InputError, match="cannot be zero"):
        defaultpreemption.new(DefaultPreemptionArgs(min_candidate_nodes_percentage=0,
                                                    min_candidate_nodes_absolute=0), env.handle)
    assert env.pl.events_to_register() == []
    assert env.pl.name == "DefaultPreemption" and not hasattr(env.pl, "pre_enqueue")


def test_more_important_pod_and_earliest_start() -> None:
    a, b = mk("a", 10, start=t(5)).obj(), mk("b", 10, start=t(3)).obj()
    c, d = mk("c", 20).obj(), mk("d", 10).obj()
    assert more_important_pod(b, a) and not more_important_pod(a, b)
    assert more_important_pod(c, a)
    assert more_important_pod(a, d)  # no start time: started "now", so less important
    assert get_earliest_pod_start_time([c, a, b]) == pod_start_time_ns(c)
    assert get_earliest_pod_start_time([a, b]) == 3
    assert get_earliest_pod_start_time([]) is None
    assert pod_start_time_ns(mk("x", start="2024-01-02T03:04:05.5Z").obj()) == 1704164645_500_000_000


def _v(*prios_and_starts: tuple[int, str | None], pdb_viol: int = 0) -> Victims:
    return Victims([mk(f"v{i}", p, start=s).obj() for i, (p, s) in enumerate(prios_and_starts)], pdb_viol)


@pytest.mark.parametrize("victims,want", [
    ({"n1": _v((0, E), pdb_viol=1), "n2": _v((100, E), (100, E))}, "n2"),                   # 1. fewest PDB violations
    ({"n1": _v((100, E)), "n2": _v((50, E), (50, E), (50, E))}, "n2"),                      # 2. lowest highest priority
    ({"n1": _v((100, E), (100, E)), "n2": _v((100, E), (-5, E))}, "n2"),                    # 3. smallest sum
    ({"n1": _v((100, E), (-2**31, E)), "n2": _v((100, E))}, "n2"),                          # 4. fewest victims
    ({"n1": _v((100, E), (-2**31, E), (-2**31, E)), "n2": _v((100, E), (0, E))}, "n1"),     # 3. sum before count
    ({"n1": _v((100, t(1)), (0, t(9))), "n2": _v((100, t(2)), (0, t(0)))}, "n2"),            # 5. latest start
    ({"n1": _v((100, E)), "n2": _v((100, E))}, "n1"),                                       # 6. first
    ({}, ""),
], ids=["pdb", "highest priority", "sum", "count", "sum before count", "start time", "first", "empty"])
def test_pick_one_node_for_preemption(victims, want) -> None:  # noqa: ANN001
    assert pick_one_node_for_preemption(victims) == want


def test_filter_pods_with_pdb_violation() -> None:
    pods = [PodInfo(mk(n, labels={"app": "foo"}).obj()) for n in ("a", "b", "c")]
    other_ns = PodInfo(mk("d", labels={"app": "foo"}, ns="other").obj())
    no_labels = PodInfo(mk("e").obj())
    v, nv = filter_pods_with_pdb_violation([*pods, other_ns, no_labels], [pdb({"app": "foo"}, 1, {"c": "x"})])
    assert [p.key for p in v] == ["default/b"]
    assert [p.key for p in nv] == ["default/a", "default/c", "other/d", "default/e"]
    empty = decode(PodDisruptionBudget, {"metadata": {"name": "e", "namespace": "default"},
                                         "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}})
    v, _ = filter_pods_with_pdb_violation(pods, [empty, decode(PodDisruptionBudget, {
        "metadata": {"name": "nil", "namespace": "default"}, "status": {"disruptionsAllowed": 0}})])
    assert v == []  # nil and empty selectors match nothing


def test_aggregate_message() -> None:
    assert aggregate_message(["a"]) == "a"
    assert aggregate_message(["a", "a"]) == "a"
    assert aggregate_message(["a", "b", "a"]) == "[a, b]"


def test_dry_run_restores_table_with_ports_and_nominated_pods() -> None:
    pods = [MakePod().name(f"v{i}").namespace("default").priority(0).node("node1").req(**SMALL)
            .host_port(8000 + i).obj() for i in range(3)]
    env = Env([node("node1")], pods, plugins=("NodeResourcesFit", "NodePorts"))
    env.cluster.pods["default/n"] = mk("n", VERY_HIGH, req=SMALL).nominated_node_name("node1").obj()
    before = env.snapshot()
    order_before = [p.key for p in env.table.pods[0]]
    pod = MakePod().name("p").namespace("default").priority(HIGH).req(cpu="400m").host_port(8001).obj()
    rows = env.table.order()
    cands, _, _ = env.ev.dry_run_preemption(env.state(pod), pod, rows, [], 0, 1)
    assert env.snapshot() == before
    assert [p.key for p in env.table.pods[0]] == order_before
    assert len(cands) == 1


# ─────────────────────────────────────── end to end (simulate) ───────────────────────────────────────

def _raws(objs: list[dict]) -> list:
    from kubesched.sim.manifests import RawObject

    return [RawObject(o["kind"], o["apiVersion"], o, f"test:{i}", i) for i, o in enumerate(objs)]


def _pod(name: str, prio: int, cpu: str, node_name: str | None = None, **kw: Any) -> dict:
    p = MakePod().name(name).uid(f"uid-{name}").namespace("default").priority(prio).req(cpu=cpu)
    if node_name:
        p.node(node_name)
    for k, v in kw.items():
        getattr(p, k)(v)
    return p.raw()


def test_e2e_failed_scheduling_message_ends_with_preemption_part() -> None:
    from kubesched.sim.simulate import simulate

    objs = [MakeNode().name(f"n{i}").capacity(cpu="1", memory="1Gi", pods="10").raw() for i in range(3)]
    objs += [_pod(f"run{i}", 0, "1", f"n{i}") for i in range(3)]
    objs += [_pod("pending", 0, "1")]
    res = simulate(_raws(objs))
    (out,) = res.outcomes
    assert out.node is None
    dra = ""  # v1.37: DynamicResources' PostFilter adds no text for a pod without claims
    assert out.message == ("0/3 nodes are available: 3 Insufficient cpu. " + dra +
                           "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")

    objs[-1] = _pod("pending", 10, "1", preemption_policy="Never")
    res = simulate(_raws(objs))
    assert res.outcomes[0].message == ("0/3 nodes are available: 3 Insufficient cpu. " + dra +
                                       "preemption: not eligible due to preemptionPolicy=Never.")


@pytest.mark.parametrize("version", [(1, 34), (1, 37)])
def test_e2e_high_priority_pod_preempts_and_binds_to_nominated_node(version: tuple[int, int]) -> None:
    from kubesched.api.objects import pod_key
    from kubesched.framework.clock import ManualClock
    from kubesched.scheduler import Scheduler
    from kubesched.sim.simulate import build_store

    objs = [MakeNode().name("n1").capacity(cpu="2", memory="4Gi", pods="10").raw(),
            MakeNode().name("n2").capacity(cpu="2", memory="4Gi", pods="10").raw()]
    objs += [_pod("lo1", 0, "1", "n1"), _pod("lo2", 0, "1", "n1"),
             _pod("mid1", 500, "1", "n2"), _pod("mid2", 500, "1", "n2"),
             _pod("hi", 1000, "2")]
    store, bound, pending, nodes = build_store(_raws(objs))
    clock = ManualClock()
    sched = Scheduler(None, client=store, lister=store, clock=clock, seed=0,
                      features=FeatureGate(emulated_version=version))
    store.scheduler = sched
    for n, raw in nodes:
        store.add("Node", n, raw)
    for p, raw in bound + pending:
        store.add("Pod", p, raw)
    sched.run_until_idle(after_each=store.flush)  # the store delivers each attempt's writes

    # first attempt: no node fits; lo1+lo2 on n1 (lowest priority) are preempted, hi is nominated to n1
    assert "default/lo1" not in store.pods and "default/lo2" not in store.pods
    assert "default/mid1" in store.pods and "default/mid2" in store.pods
    preempted = sorted(e for e in store.events if e[1] == "Preempted")
    assert preempted == [("Normal", "Preempted", "default/lo1", "Preempted by pod uid-hi on node n1"),
                         ("Normal", "Preempted", "default/lo2", "Preempted by pod uid-hi on node n1")]
    failed = [e for e in store.events if e[1] == "FailedScheduling" and e[2] == "default/hi"]
    if version < (1, 37):
        assert failed[0][3] == "0/2 nodes are available: 2 Insufficient cpu."  # PostFilter success adds nothing
    else:  # schedule_one_test / default_preemption_test v1.37: the Success message is appended
        assert failed[0][3] == ("0/2 nodes are available: 2 Insufficient cpu. preemption: found a potential "
                                "placement for pod on node n1, preempting 2 victims")

    hi = store.pods["default/hi"]
    if not hi.spec.node_name:
        # Without in-flight event tracking the victims' deletions (during hi's own cycle) do not
        # requeue it; upstream's would. The unschedulable-leftover flush retries it anyway.
        assert hi.status.nominated_node_name == "n1"
        assert sched.queue.where(pod_key(hi)) == "unschedulable"
        clock.advance(301)
        sched.queue.flush_unschedulable_leftover()
        sched.run_until_idle(after_each=store.flush)
    hi = store.pods["default/hi"]
    assert hi.spec.node_name == "n1"
    assert [e for e in store.events if e[1] == "Scheduled" and e[2] == "default/hi"] == [
        ("Normal", "Scheduled", "default/hi", "Successfully assigned default/hi to n1")]


# ─────────────────────────────── the dry run's shortcuts decide as the plain algorithm ───────────────────────────────

class _PlainEvaluator(Evaluator):
    """Overrides a hook (same behaviour), which turns the dry-run shortcuts off."""

    def _run_filters(self, state, pod, row):  # noqa: ANN001, ANN202
        return super()._run_filters(state, pod, row)


def _plain(env: Env) -> Evaluator:
    ev = _PlainEvaluator(env.ev.plugin_name, env.handle)
    assert ev._make_plan(env.state(mk("x", HIGH).obj())) is None
    return ev


def _outcome(cands, statuses) -> tuple:  # noqa: ANN001
    return (_cands(cands), None if cands else {n: (s.code, s.message()) for n, s in statuses.items()})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_dry_run_shortcuts_match_the_plain_algorithm(data) -> None:  # noqa: ANN001
    n = data.draw(st.integers(1, 6), "nodes")
    nodes = [node(f"node{i}", {"cpu": f"{data.draw(st.integers(1, 8)) * 100}m", "memory": "1000",
                               "pods": str(data.draw(st.integers(1, 5)))}) for i in range(n)]
    pods = []
    for i in range(data.draw(st.integers(0, 14), "pods")):
        pods.append(mk(f"v{i}", data.draw(st.sampled_from([LOW, MID, HIGH])), f"node{data.draw(st.integers(0, n - 1))}",
                       {"cpu": f"{data.draw(st.integers(0, 4)) * 100}m"}, t(data.draw(st.integers(0, 5)))).obj())
    preemptor = mk("p", data.draw(st.sampled_from([MID, HIGH])),
                   req={"cpu": f"{data.draw(st.integers(0, 6)) * 100}m", "memory": "100"}).obj()
    plugins = data.draw(st.sampled_from([("NodeResourcesFit",), ("NodeResourcesFit", "NodePorts", "InterPodAffinity")]))
    env = Env(nodes, pods, plugins=plugins)
    for i in range(data.draw(st.integers(0, 3), "nominated")):  # pods nominated to a node (lister-derived)
        nom = mk(f"n{i}", data.draw(st.sampled_from([MID, HIGH, VERY_HIGH])),
                 req={"cpu": f"{data.draw(st.integers(0, 4)) * 100}m"}).nominated_node_name(
            f"node{data.draw(st.integers(0, n - 1))}").obj()
        env.cluster.pods[f"default/n{i}"] = nom
    rows = env.table.order()
    offset = data.draw(st.integers(0, n - 1), "offset")
    num = data.draw(st.integers(1, n), "num")
    before = env.snapshot()
    want = _plain(env).dry_run_preemption(env.state(preemptor), preemptor, rows, [], offset, num)
    for needed in (True, False):
        got = env.ev.dry_run_preemption(env.state(preemptor), preemptor, rows, [], offset, num, needed)
        assert _outcome(got[0], got[1]) == _outcome(want[0], want[1])
        if needed or not got[0]:
            assert {k: (s.code, s.message()) for k, s in got[1].items()} == \
                   {k: (s.code, s.message()) for k, s in want[1].items()}
            assert got[2] == want[2]
    assert env.snapshot() == before


# ─────────────── the arithmetic victim selection (Evaluator._fast_victims) decides as the full dry run ───────────────

_FAST_PLUGINS = ("NodeUnschedulable", "TaintToleration", "NodeResourcesFit")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fast_victims_match_the_full_dry_run(data) -> None:  # noqa: ANN001
    """Nodes that pass or fail the pod-independent filters (taints, unschedulable), pod-count
    limits, cpu and memory, PDBs over some victims, nominated pods (one possibly also bound):
    the candidates, their victims in order, the PDB counts and, without candidates, every
    status are those of the plain algorithm; the table is left as found."""
    n = data.draw(st.integers(1, 5), "nodes")
    nodes = []
    for i in range(n):
        mn = MakeNode().name(f"node{i}").capacity(
            cpu=f"{data.draw(st.integers(1, 8)) * 100}m", memory=str(data.draw(st.integers(1, 4)) * 250),
            pods=str(data.draw(st.integers(1, 5))))
        if data.draw(st.integers(0, 5)) == 0:
            mn.taint("dedicated", "x")
        if data.draw(st.integers(0, 5)) == 0:
            mn.unschedulable()
        nodes.append(mn.obj())
    pods = []
    for i in range(data.draw(st.integers(0, 12), "pods")):
        req = {"cpu": f"{data.draw(st.integers(0, 4)) * 100}m", "memory": str(data.draw(st.integers(0, 3)) * 100)}
        pods.append(mk(f"v{i}", data.draw(st.sampled_from([NEG, LOW, MID, HIGH])),
                       f"node{data.draw(st.integers(0, n - 1))}", req, t(data.draw(st.integers(0, 5))),
                       labels={"app": data.draw(st.sampled_from(["a", "b"]))}).obj())
    preemptor = mk("p", data.draw(st.sampled_from([MID, HIGH])),
                   req={"cpu": f"{data.draw(st.integers(0, 6)) * 100}m",
                        "memory": str(data.draw(st.integers(0, 4)) * 100)}).obj()
    pdbs = [pdb({"app": "a"}, data.draw(st.integers(0, 2)))] if data.draw(st.booleans(), "pdb") else []
    env = Env(nodes, pods, plugins=_FAST_PLUGINS, pdbs=pdbs)
    for i in range(data.draw(st.integers(0, 3), "nominated")):
        nom = mk(f"n{i}", data.draw(st.sampled_from([LOW, MID, HIGH, VERY_HIGH])),
                 req={"cpu": f"{data.draw(st.integers(0, 4)) * 100}m"}).nominated_node_name(
            f"node{data.draw(st.integers(0, n - 1))}").obj()
        env.cluster.pods[f"default/n{i}"] = nom
    if pods and data.draw(st.booleans(), "bound pod also nominated"):
        p0 = pods[0]
        nnn = f"node{data.draw(st.integers(0, n - 1))}"
        env.cluster.pods[f"default/{p0.metadata.name}"] = msgspec.structs.replace(
            p0, status=msgspec.structs.replace(p0.status, nominated_node_name=nnn))
    rows = env.table.order()
    offset = data.draw(st.integers(0, n - 1), "offset")
    num = data.draw(st.integers(1, n), "num")
    before = env.snapshot()
    want = _plain(env).dry_run_preemption(env.state(preemptor), preemptor, rows, pdbs, offset, num)
    for needed in (True, False):
        got = env.ev.dry_run_preemption(env.state(preemptor), preemptor, rows, pdbs, offset, num, needed)
        assert _outcome(got[0], got[1]) == _outcome(want[0], want[1])
        if needed or not got[0]:
            assert {k: (s.code, s.message()) for k, s in got[1].items()} == \
                   {k: (s.code, s.message()) for k, s in want[1].items()}
            assert got[2] == want[2]
    assert env.snapshot() == before


def test_fast_victims_used_for_a_resource_only_preemptor() -> None:
    """With only pod-independent filters besides NodeResourcesFit the victims are chosen by
    arithmetic (no row edit): one 3-cpu preemptor over four 900m victims keeps the most
    important one, as the full dry run."""
    nodes = [node("n1", {"cpu": "4", "memory": "4000"})]
    pods = [mk(f"v{i}", LOW, "n1", {"cpu": "900m", "memory": "100"}, t(i)).obj() for i in range(4)]
    pre = mk("p", HIGH, req={"cpu": "3", "memory": "100"}).obj()
    env = Env(nodes, pods, plugins=_FAST_PLUGINS)
    calls: list[Any] = []
    orig = env.ev._fast_victims
    env.ev._fast_victims = lambda *a: calls.append(orig(*a)) or calls[-1]  # type: ignore[method-assign]
    batches: list[Any] = []
    orig_batch = env.ev._batch_victims

    def batch(*a: Any) -> Any:
        got = orig_batch(*a)
        batches.append(dict(got))  # the loop takes its answers out of the dict
        return got

    env.ev._batch_victims = batch  # type: ignore[method-assign]
    got = env.ev.dry_run_preemption(env.state(pre), pre, env.table.order(), [], 0, 1)
    want = _plain(env).dry_run_preemption(env.state(pre), pre, env.table.order(), [], 0, 1)
    assert _cands(got[0]) == _cands(want[0]) == [("n1", ["v1", "v2", "v3"], 0)]
    assert calls == [] and len(batches) == 1 and set(batches[0]) == {0}  # decided in the batch, row 0
    env.ev._batch_nominated_nodes = lambda: None  # type: ignore[method-assign]
    got = env.ev.dry_run_preemption(env.state(pre), pre, env.table.order(), [], 0, 1)
    assert _cands(got[0]) == _cands(want[0])
    assert len(calls) == 1 and calls[0] is not None  # without the batch: one row by arithmetic


# ─────────────── many rows at once (preemption_batch.batch_victims) decides as the per-row paths ───────────────

def _ordered(cands) -> list[tuple[str, list[str], int]]:  # noqa: ANN001
    """Candidates in the dry run's order, victims in their order (no sorting)."""
    return [(c.name, [p.metadata.name for p in c.victims.pods], c.victims.num_pdb_violations) for c in cands]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_batch_victims_match_the_per_row_paths(data) -> None:  # noqa: ANN001
    """Up to 40 nodes (several windows of the loop when few candidates are wanted), many of them
    holding one pod, others several of mixed priorities; taints, pod-count limits, cpu and
    memory, PDBs, nominated pods (one possibly also bound): the candidates in order, their
    victims in order, PDB counts and, without candidates, every status are those of the plain
    algorithm and of the per-row arithmetic (the batch turned off); the table is left as found."""
    n = data.draw(st.integers(1, 40), "nodes")
    nodes = []
    for i in range(n):
        mn = MakeNode().name(f"node{i}").capacity(
            cpu=f"{data.draw(st.integers(1, 8)) * 100}m", memory=str(data.draw(st.integers(1, 4)) * 250),
            pods=str(data.draw(st.integers(1, 4))))
        if data.draw(st.integers(0, 7)) == 0:
            mn.taint("dedicated", "x")
        nodes.append(mn.obj())
    pods = []
    k = 0
    for i in range(n):
        for _ in range(data.draw(st.sampled_from([0, 1, 1, 1, 2, 3]))):
            req = {"cpu": f"{data.draw(st.integers(0, 4)) * 100}m", "memory": str(data.draw(st.integers(0, 3)) * 100)}
            pods.append(mk(f"v{k}", data.draw(st.sampled_from([NEG, LOW, LOW, MID, HIGH])), f"node{i}", req,
                           t(data.draw(st.integers(0, 5))), labels={"app": data.draw(st.sampled_from(["a", "b"]))}).obj())
            k += 1
    preemptor = mk("p", data.draw(st.sampled_from([MID, HIGH])),
                   req={"cpu": f"{data.draw(st.integers(0, 6)) * 100}m",
                        "memory": str(data.draw(st.integers(0, 4)) * 100)}).obj()
    pdbs = [pdb({"app": "a"}, data.draw(st.integers(0, 3)))] if data.draw(st.booleans(), "pdb") else []
    env = Env(nodes, pods, plugins=_FAST_PLUGINS, pdbs=pdbs)
    for i in range(data.draw(st.integers(0, 3), "nominated")):
        nom = mk(f"n{i}", data.draw(st.sampled_from([LOW, MID, HIGH, VERY_HIGH])),
                 req={"cpu": f"{data.draw(st.integers(0, 4)) * 100}m"}).nominated_node_name(
            f"node{data.draw(st.integers(0, n - 1))}").obj()
        env.cluster.pods[f"default/n{i}"] = nom
    if pods and data.draw(st.booleans(), "bound pod also nominated"):
        p0 = pods[0]
        nnn = f"node{data.draw(st.integers(0, n - 1))}"
        env.cluster.pods[f"default/{p0.metadata.name}"] = msgspec.structs.replace(
            p0, status=msgspec.structs.replace(p0.status, nominated_node_name=nnn))
    rows = env.table.order()
    offset = data.draw(st.integers(0, n - 1), "offset")
    num = data.draw(st.integers(1, n), "num")
    before = env.snapshot()
    want = _plain(env).dry_run_preemption(env.state(preemptor), preemptor, rows, pdbs, offset, num)
    per_row = Evaluator(env.ev.plugin_name, env.handle)
    per_row.reprieve_precheck = env.ev.reprieve_precheck
    per_row._batch_nominated_nodes = lambda: None  # type: ignore[method-assign]
    for needed in (True, False):
        for ev in (env.ev, per_row):
            got = ev.dry_run_preemption(env.state(preemptor), preemptor, rows, pdbs, offset, num, needed)
            assert _ordered(got[0]) == _ordered(want[0])
            if needed or not got[0]:
                assert {k: (s.code, s.message()) for k, s in got[1].items()} == \
                       {k: (s.code, s.message()) for k, s in want[1].items()}
                assert got[2] == want[2]
    assert env.snapshot() == before
    if len(want[0]) > 1:
        assert env.ev.select_candidate(want[0]).name == _plain(env).select_candidate(want[0]).name
    # evaluate's own path: the loop's items unmaterialized (one-pod rows as (row, PDB count)),
    # one Candidate built for the pick: the plain algorithm's choice, victims and PDB count
    env.ev._lazy_candidates = True
    try:
        items = env.ev.dry_run_preemption(env.state(preemptor), preemptor, rows, pdbs, offset, num, False)[0]
    finally:
        env.ev._lazy_candidates = False
    assert _ordered(env.ev._materialize(items)) == _ordered(want[0])
    if want[0]:
        assert _ordered([env.ev._pick_items(items)]) == _ordered([_plain(env).select_candidate(want[0])])


def test_pick_one_node_by_default_criteria_matches_the_score_functions() -> None:
    """The one-pass default pick equals the five tie-breaking criteria run in turn (given
    explicitly as score functions), on candidates that tie on all but the last criterion."""
    from kubesched.framework.extender import Victims
    from kubesched.framework.preemption import get_earliest_pod_start_time, pod_priority

    victims = {
        "a": Victims([mk("a1", MID, start=t(1)).obj()], 0),
        "b": Victims([mk("b1", MID, start=t(3)).obj()], 0),
        "c": Victims([mk("c1", MID, start=t(3)).obj(), mk("c2", LOW, start=t(0)).obj()], 0),
        "d": Victims([mk("d1", MID, start=t(3)).obj()], 1),
        "e": Victims([mk("e1", MID, start=t(3)).obj()], 0),
    }
    funcs = [lambda nd: -victims[nd].num_pdb_violations, lambda nd: -pod_priority(victims[nd].pods[0]),
             lambda nd: -sum(pod_priority(p) + (1 << 31) for p in victims[nd].pods),
             lambda nd: -len(victims[nd].pods), lambda nd: get_earliest_pod_start_time(victims[nd].pods) or 0]
    assert pick_one_node_for_preemption(victims) == pick_one_node_for_preemption(victims, funcs) == "b"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_pick_among_unmaterialized_candidates_matches_select_candidate(data) -> None:  # noqa: ANN001
    """``evaluate``'s pick over the dry run's items (one-pod rows as ``(row, PDB count)``, other
    candidates as :class:`Candidate`) chooses the node, victims and PDB count the five
    criteria of ``pickOneNodeForPreemption`` (given as score functions, run in turn) choose over
    the same candidates built in full: ties on priority, start time and PDB count, candidates
    with several victims mixed in."""
    from kubesched.framework.extender import Victims
    from kubesched.framework.preemption import Candidate, get_earliest_pod_start_time, pod_priority

    n = data.draw(st.integers(2, 12), "nodes")
    pods = [mk(f"v{i}", data.draw(st.sampled_from([NEG, LOW, MID])), f"node{i}", SMALL,
               t(data.draw(st.integers(0, 2)))).obj() for i in range(n)]
    env = Env([node(f"node{i}") for i in range(n)], pods)
    items: list[Any] = []
    for i in data.draw(st.permutations(range(n)), "order")[:data.draw(st.integers(2, n), "how many")]:
        nv = data.draw(st.integers(0, 1), "pdb")
        if data.draw(st.integers(0, 3), "full") == 0:
            more = [pods[i]] + ([mk(f"x{i}", data.draw(st.sampled_from([NEG, LOW])), start=t(0)).obj()]
                                if data.draw(st.booleans(), "two victims") else [])
            items.append(Candidate(f"node{i}", Victims(more, nv)))
        else:
            items.append((env.table.row_of[f"node{i}"], nv))
    full = env.ev._materialize(items)
    victims = {c.name: c.victims for c in full}
    funcs = [lambda nd: -victims[nd].num_pdb_violations, lambda nd: -pod_priority(victims[nd].pods[0]),
             lambda nd: -sum(pod_priority(p) + (1 << 31) for p in victims[nd].pods),
             lambda nd: -len(victims[nd].pods), lambda nd: get_earliest_pod_start_time(victims[nd].pods) or 0]
    want = pick_one_node_for_preemption(victims, funcs)
    got = env.ev._pick_items(items)
    assert (got.name, got.victims.pods, got.victims.num_pdb_violations) == \
           (want, victims[want].pods, victims[want].num_pdb_violations)
