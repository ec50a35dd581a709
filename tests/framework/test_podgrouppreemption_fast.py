"""Pod-group preemption's node-local reprieve (``PodGroupEvaluator(fast_reprieve=True)``) decides
exactly as the plain reprieve of upstream v1.37.2 ``selectVictimsOnDomain``
(podgrouppreemption.go L246-283: every victim re-filters the members in order): hypothesis draws
clusters of in-tree Filter plugins (NodeResourcesFit, NodePorts), victims (single pods and pod
groups in both disruption modes, PDBs), members sharing nodes and pods nominated to nodes
(members among them), and compares victims, PDB violations, group disruptions, NominatingInfos,
status and the table left as found; and the fast path is only taken when every Filter is
node-local (a cross-node plugin such as InterPodAffinity falls back to the plain loop).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import PodDisruptionBudget, decode
from kubesched.config import decode_config
from kubesched.features import default_feature_gate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import TableEdit
from kubesched.framework.podgroup import PodGroupAssignments, ProposedAssignment
from kubesched.framework.podgrouppreemption import PodGroupPreemptor, _node_local
from kubesched.framework.preemption import PodGroupIndex
from kubesched.framework.runtime import Framework
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

NS = "default"
GATES = default_feature_gate().with_overrides(GenericWorkload=True)
HIGH = 1000


class Cluster:
    def __init__(self, pods: list[Any], pgs: list[dict[str, Any]], pdbs: list[Any]) -> None:
        self.pods = {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods}
        self.pgs = {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in pgs}
        self.pdbs = pdbs

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return {"Pod": list(self.pods.values()), "PodDisruptionBudget": self.pdbs,
                "PodGroup": list(self.pgs.values())}.get(kind, [])

    def get(self, kind: str, namespace: str, name: str) -> Any:
        if kind == "PodGroup":
            return self.pgs.get((namespace, name))
        return self.pods.get(f"{namespace}/{name}") if kind == "Pod" else None


class Nominator:
    def __init__(self, by_node: dict[str, list[Any]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, name: str) -> list[PodInfo]:
        return [PodInfo(p) for p in self.by_node.get(name, [])]


def pod(name: str, cpu: int, prio: int, node: str | None = None, *, group: str | None = None,
        port: int | None = None, app: str | None = None, nnn: str | None = None, affinity: bool = False) -> Any:
    p = MakePod().name(name).uid(name).namespace(NS).scheduler_name("default-scheduler").priority(prio)
    p.req(cpu=f"{cpu}m")
    if node:
        p.node(node)
    if group:
        p.spec(schedulingGroup={"podGroupName": group})
    if port:
        p.host_port(port)
    if app:
        p.label("app", app)
    if nnn:
        p.nominated_node_name(nnn)
    if affinity:
        p.pod_affinity("podAntiAffinity", {"labelSelector": {"matchLabels": {"app": "x"}},
                                                "topologyKey": "kubernetes.io/hostname"})
    return p.obj()


def pod_group(name: str, prio: int, mode: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
            "spec": {"priority": prio, "disruptionMode": {mode: {}}}}


class Env:
    def __init__(self, nodes: list[str], cpu: int, pods: list[Any], pgs: list[dict[str, Any]], pdbs: list[Any],
                 nominated: dict[str, list[Any]], plugins: list[str]) -> None:
        self.nodes = nodes
        self.table = build_table([MakeNode().name(n).label("kubernetes.io/hostname", n)
                                  .capacity(cpu=f"{cpu}m", pods="110").obj() for n in nodes], pods)
        self.handle = Handle(nodes=self.table, lister=Cluster(pods, pgs, pdbs), client=None, features=GATES)
        self.handle.rng = np.random.default_rng(0)
        self.handle.nominator = Nominator(nominated)
        enabled = [{"name": n} for n in ("PrioritySort", *plugins, "DefaultPreemption", "DefaultBinder")]
        cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                             "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                                 "multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}}]})
        self.fw = Framework(cfg.profiles[0], in_tree_registry(), self.handle)
        self.pge = self.fw.plugins["DefaultPreemption"].pod_group_evaluator

    def scheduling_func(self, members: list[Any], spread: bool) -> Any:
        """Each member in order on the first node (from a rotating start when ``spread``) that
        passes Filter with the members before it placed; PreFilter run on a fresh CycleState."""
        def run() -> tuple[PodGroupAssignments | None, Status]:
            out: list[ProposedAssignment] = []
            with TableEdit(self.table) as edit:
                for i, p in enumerate(members):
                    pi = PodInfo(p)
                    state = CycleState(pi)
                    self.fw.run_pre_filter_plugins(state, p)
                    n = len(self.nodes)
                    for k in range(n):
                        name = self.nodes[(i + k) % n if spread else k]
                        row = self.table.row_of[name]
                        chunk = self.fw.run_filter_plugins(state, p, np.asarray([row], np.int64))
                        if chunk.fail_plugin[0] < 0:
                            out.append(ProposedAssignment(p, pi, name, state))
                            edit.add(pi, row)
                            break
            if not out:
                return None, Status(Code.UNSCHEDULABLE)
            return PodGroupAssignments(None, out), Status(Code.SUCCESS)
        return run

    def snapshot(self) -> list[Any]:
        t = self.table
        return [(n, [p.key for p in t.pods[r]], t.requested[r].tolist(), int(t.generation[r]))
                for n, r in sorted(t.row_of.items())] + [t.mutations]

    def select(self, members: list[Any], pdbs: list[Any], spread: bool, fast: bool) -> Any:
        self.pge.fast_reprieve = fast
        pre = PodGroupPreemptor("podgroup", pod_group("preemptor", HIGH, "single"), members, HIGH,
                                "PreemptLowerPriority")
        before = self.snapshot()
        with TableEdit(self.table) as edit:
            res, st = self.pge.select_victims_on_domain(pre, PodGroupIndex(self.handle), pdbs,
                                                        self.scheduling_func(members, spread), edit)
        assert self.snapshot() == before
        if res is None:
            return None, st.code, st.reasons
        infos = {k: (v.nominated_node_name, v.mode) for k, v in res.nominating_infos.items()}
        return ([p.metadata.name for p in res.victims.pods], res.victims.num_pdb_violations,
                res.num_pod_group_disruptions, infos, st.code)


@st.composite
def clusters(draw: Any) -> dict[str, Any]:
    n_nodes = draw(st.integers(1, 5))
    nodes = [f"n{i}" for i in range(n_nodes)]
    cpu = draw(st.sampled_from([1000, 2000, 4000]))
    groups = [pod_group(f"g{i}", draw(st.sampled_from([10, 100, 2000])), draw(st.sampled_from(["single", "all"])))
              for i in range(draw(st.integers(0, 3)))]
    gprio = {g["metadata"]["name"]: g["spec"]["priority"] for g in groups}
    victims = []
    for i in range(draw(st.integers(0, 12))):
        group = draw(st.sampled_from([None, *gprio])) if gprio else None
        prio = gprio[group] if group else draw(st.sampled_from([10, 100, 2000]))
        victims.append(pod(f"v{i}", draw(st.sampled_from([100, 300, 500, 900])), prio, draw(st.sampled_from(nodes)),
                           group=group, port=draw(st.sampled_from([None, None, 80])),
                           app=draw(st.sampled_from([None, "a"]))))
    members = []
    for i in range(draw(st.integers(1, 6))):
        nnn = draw(st.sampled_from([None, None, *nodes]))
        members.append(pod(f"m{i}", draw(st.sampled_from([100, 400, 800])), HIGH, group="preemptor",
                           port=draw(st.sampled_from([None, None, 80, 81])), nnn=nnn))
    nominated: dict[str, list[Any]] = {}
    for m in members:
        if m.status.nominated_node_name:
            nominated.setdefault(m.status.nominated_node_name, []).append(m)
    for i in range(draw(st.integers(0, 2))):
        node = draw(st.sampled_from(nodes))
        nominated.setdefault(node, []).append(pod(f"x{i}", draw(st.sampled_from([200, 600])),
                                                  draw(st.sampled_from([10, HIGH, 5000])), nnn=node))
    pdbs = []
    if draw(st.booleans()):
        pdbs.append(decode(PodDisruptionBudget, {"metadata": {"name": "pdb", "namespace": NS},
                                                 "spec": {"selector": {"matchLabels": {"app": "a"}}},
                                                 "status": {"disruptionsAllowed": draw(st.integers(0, 2))}}))
    return {"nodes": nodes, "cpu": cpu, "victims": victims, "groups": groups, "members": members,
            "nominated": nominated, "pdbs": pdbs, "spread": draw(st.booleans())}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_fast_reprieve_decides_as_the_plain_one(c: dict[str, Any]) -> None:
    def run(fast: bool) -> Any:
        env = Env(c["nodes"], c["cpu"], c["victims"], c["groups"], c["pdbs"], c["nominated"],
                  ["NodeResourcesFit", "NodePorts"])
        return env.select(c["members"], c["pdbs"], c["spread"], fast)
    assert run(True) == run(False)


def test_fast_path_taken_only_with_node_local_filters() -> None:
    members = [pod("m0", 100, HIGH, group="preemptor"), pod("m1", 100, HIGH, group="preemptor", affinity=True)]
    env = Env(["n0"], 1000, [], [], [], {}, ["NodeResourcesFit", "NodePorts", "InterPodAffinity"])
    assignments = []
    for p in members:
        state = CycleState(PodInfo(p))
        env.fw.run_pre_filter_plugins(state, p)
        assignments.append(ProposedAssignment(p, PodInfo(p), "n0", state))
    assert _node_local(env.fw, assignments[:1])  # InterPodAffinity skipped: nothing to match
    assert not _node_local(env.fw, assignments)  # required anti-affinity: InterPodAffinity filters across nodes
