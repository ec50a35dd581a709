"""The "with nominated pods" pass decided by arithmetic, and the columnar diagnosis.

Upstream ``RunFilterPluginsWithNominatedPods`` (v1.37.2 framework/runtime/framework.go) runs the
Filter plugins on a node with the pods of priority ≥ the pod's nominated to it added; a node that
pass rejects keeps that pass's status. ``Framework.apply_nominated_pods`` decides it without row
edits when NodeResourcesFit is the only Filter plugin reading a node's pods; these tests compare
it, on random clusters, with the plain pass (row edit + every Filter plugin), and the diagnosis
built from its chunks (FailedScheduling message, plugins, per-node statuses and codes) with the
definitions upstream gives them (types.go ``FitError.Error``: one count per node and reason).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config import decode_config
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.diagnosis import Diagnosis, NodeToStatus, fit_error_message
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.framework.record import filter_results
from kubesched.framework.runtime import Framework
from kubesched.plugins import defaultbinder, nodeports, nodeunschedulable, queuesort, tainttoleration
from kubesched.plugins.noderesources import fit
from kubesched.scheduler.schedule_pod import _apply_nominated_pods
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

GPU = "example.com/gpu"
REGISTRY = {"PrioritySort": queuesort.new, "NodeResourcesFit": fit.new, "DefaultBinder": defaultbinder.new,
            "NodePorts": nodeports.new, "TaintToleration": tainttoleration.new,
            "NodeUnschedulable": nodeunschedulable.new}


class PlainFramework(Framework):
    """Overrides the plain pass (same behaviour), which turns the arithmetic off."""

    def filter_with_nominated_pods(self, state, pod, row, nominated):
        return super().filter_with_nominated_pods(state, pod, row, nominated)


class FakeNominator:
    """The queue's nominated pods by node name."""

    def __init__(self, by_node: dict[str, list[PodInfo]]) -> None:
        self.by_node = by_node

    def has_nominated_pods(self) -> bool:
        return bool(self.by_node)

    def nominated_nodes(self) -> list[str]:
        return list(self.by_node)

    def nominated_pods_for_node(self, name: str) -> list[PodInfo]:
        return self.by_node.get(name, [])


def _framework(cls: type[Framework], nodes: list, pods: list, plugins: tuple[str, ...]) -> Framework:
    table = build_table(nodes, pods)
    handle = Handle(nodes=table)
    enabled = [{"name": "PrioritySort"}, *({"name": p} for p in plugins), {"name": "DefaultBinder"}]
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler",
                                       "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}}}]})
    return cls(cfg.profiles[0], REGISTRY, handle)


def _req(data: Any, resources: list[str]) -> dict[str, str]:
    out = {"cpu": f"{data.draw(st.integers(0, 4)) * 100}m", "memory": str(data.draw(st.integers(0, 3)) * 100)}
    for r in resources:
        if data.draw(st.booleans()):
            out[r] = str(data.draw(st.integers(0, 2)))
    return out


def _snapshot(fw: Framework) -> list:
    """Each row's pods, requested vector (trailing zero columns dropped: the plain pass adds a
    column for a resource no node had) and generation."""
    t = fw.handle.nodes
    out = []
    for n, r in sorted(t.row_of.items()):
        req = t.requested[r].tolist()
        while req and req[-1] == 0:
            req.pop()
        out.append((n, [p.key for p in t.pods[r]], req, int(t.generation[r])))
    return out


def _observed(fw: Framework, chunk: Any, names: list[str]) -> tuple:
    diag = Diagnosis(chunks=[chunk])
    diag.collect_plugins()
    nts = NodeToStatus(diag, names, {n: i for i, n in enumerate(names)})
    order = np.arange(len(names), dtype=np.int64)
    return (sorted((n, s.code, s.message(), s.plugin) for n, s in chunk.statuses(names)),
            filter_results(fw.handle.nodes, [chunk]),
            fit_error_message(len(names), diag), sorted(diag.unschedulable_plugins), sorted(diag.pending_plugins),
            {c: nts.rows_with_code(order, c).tolist() for c in (Code.SUCCESS, Code.UNSCHEDULABLE,
                                                                 Code.UNSCHEDULABLE_AND_UNRESOLVABLE)},
            [(n, nts.get(n).code, nts.get(n).message()) for n in names])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_nominated_pass_by_arithmetic_matches_the_plain_pass(data) -> None:
    """Taints, unschedulable nodes, pod-count limits, cpu/memory/extended resources (one no node
    has), nominated pods of various priorities on some nodes (a bound pod also nominated), with
    and without a pod-dependent plugin besides Fit (NodePorts: then everything runs the plain
    pass): same per-node statuses, per-plugin Filter results (the decision record's), message,
    plugins and codes; the table is left as found."""
    n = data.draw(st.integers(1, 6), "nodes")
    nodes = []
    for i in range(n):
        cap = {"cpu": f"{data.draw(st.integers(1, 8)) * 100}m", "memory": str(data.draw(st.integers(1, 4)) * 250),
               "pods": str(data.draw(st.integers(1, 5)))}
        if data.draw(st.booleans()):
            cap[GPU] = str(data.draw(st.integers(0, 3)))
        mn = MakeNode().name(f"node{i}").capacity(**cap)
        if data.draw(st.integers(0, 4)) == 0:
            mn.taint("dedicated", "x")
        if data.draw(st.integers(0, 4)) == 0:
            mn.unschedulable()
        nodes.append(mn.obj())
    pods = [MakePod().name(f"v{i}").uid(f"v{i}").node(f"node{data.draw(st.integers(0, n - 1))}")
            .req(**_req(data, [GPU])).obj() for i in range(data.draw(st.integers(0, 12), "pods"))]
    preemptor = MakePod().name("p").uid("p").priority(100).req(**_req(data, [GPU, "example.com/none"]))
    if data.draw(st.booleans(), "tolerates"):
        preemptor.toleration("dedicated", "Exists")
    plugins = data.draw(st.sampled_from([("NodeUnschedulable", "TaintToleration", "NodeResourcesFit"),
                                         ("NodeResourcesFit", "NodeUnschedulable"),
                                         ("NodeUnschedulable", "NodeResourcesFit", "NodePorts")]), "plugins")
    pod = preemptor.obj()
    nominated: dict[str, list[PodInfo]] = {}
    for i in range(n):
        for j in range(data.draw(st.integers(0, 3))):
            nominated.setdefault(f"node{i}", []).append(PodInfo(
                MakePod().name(f"n{i}-{j}").uid(f"n{i}-{j}").priority(data.draw(st.sampled_from([50, 100, 200])))
                .req(**_req(data, [GPU, "example.com/other"])).obj()))
    if pods and data.draw(st.booleans(), "bound pod also nominated"):
        nominated.setdefault(f"node{data.draw(st.integers(0, n - 1))}", []).append(PodInfo(pods[0]))
    got = []
    for cls in (Framework, PlainFramework):
        fw = _framework(cls, nodes, pods, plugins)
        fw.handle.nominator = FakeNominator(nominated)
        before = _snapshot(fw)
        state = CycleState(PodInfo(pod))
        fw.run_pre_filter_plugins(state, pod)
        chunk = fw.run_filter_plugins(state, pod, fw.handle.nodes.order())
        _apply_nominated_pods(fw, state, pod, chunk)  # priority ≥ the pod's, bound ones left out
        assert _snapshot(fw) == before
        got.append(_observed(fw, chunk, list(fw.handle.nodes.names)))
    assert got[0] == got[1]


def test_arithmetic_is_used_only_when_fit_is_the_one_pod_dependent_filter() -> None:
    nodes = [MakeNode().name("n").capacity(cpu="1", memory="1000", pods="4").obj()]
    pod = MakePod().name("p").uid("p").req(cpu="500m").obj()
    fw = _framework(Framework, nodes, [], ("NodeUnschedulable", "NodeResourcesFit"))
    state = CycleState(PodInfo(pod))
    fw.run_pre_filter_plugins(state, pod)
    assert fw._nominated_arithmetic(state) == (1, fw.plugins["NodeResourcesFit"])
    fw = _framework(Framework, nodes, [], ("NodeResourcesFit", "NodePorts"))
    ported = MakePod().name("q").uid("q").host_port(80).obj()
    state = CycleState(PodInfo(ported))
    fw.run_pre_filter_plugins(state, ported)
    assert fw._nominated_arithmetic(state) is None  # NodePorts reads the node's pods
    assert _framework(PlainFramework, nodes, [], ("NodeResourcesFit",))._nominated_arithmetic(state) is None


def test_nominated_pod_taking_the_room_rejects_the_node_with_fit_reasons() -> None:
    """A 600m pod nominated to a 1-cpu node: a 500m pod of lower priority does not fit there
    (Insufficient cpu), the message counts that node once."""
    nodes = [MakeNode().name("n").capacity(cpu="1", memory="1000", pods="4").obj()]
    pod = MakePod().name("p").uid("p").req(cpu="500m").obj()
    fw = _framework(Framework, nodes, [], ("NodeResourcesFit",))
    state = CycleState(PodInfo(pod))
    fw.run_pre_filter_plugins(state, pod)
    chunk = fw.run_filter_plugins(state, pod, fw.handle.nodes.order())
    assert chunk.fail_plugin.tolist() == [-1]
    fw.apply_nominated_pods(state, pod, chunk, [(0, [PodInfo(MakePod().name("h").uid("h").req(cpu="600m").obj())])])
    assert [(n, s.message(), s.plugin) for n, s in chunk.statuses(["n"])] == [
        ("n", "Insufficient cpu", "NodeResourcesFit")]
    assert fit_error_message(1, Diagnosis(chunks=[chunk])) == "0/1 nodes are available: 1 Insufficient cpu."
