"""scheduler_perf test cases ported from v1.37.2's coverage gaps — topology_spreading/
``SchedulingWithNodeInclusionPolicy`` and affinity/ ``MixedSchedulingBasePod``: the workloads
checked against upstream's own ``performance-config.yaml`` and templates (when the v1.37.2 module
source is present), and the node inclusion policies at work (upstream
``pkg/scheduler/framework/plugins/podtopologyspread``: with ``nodeTaintsPolicy: Honor`` a node
whose taints the pod does not tolerate is no spreading domain)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kubesched.sim.bench import WORKLOADS, CreateNodes, CreatePods, Workload, execute
from kubesched.sim.bench_runner import TEMPLATES, CreateNamespaces

PERF = Path(os.environ.get("KUBESCHED_UPSTREAM_K8S", "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2")) / \
    "test/integration/scheduler_perf"
needs_upstream = pytest.mark.skipif(not PERF.is_dir(), reason="k8s.io/kubernetes@v1.37.2 module source not present")
CASE = "SchedulingWithNodeInclusionPolicy"


@needs_upstream
@pytest.mark.parametrize("name", [
    "node-with-taint.yaml", "pod-with-node-inclusion-policy.yaml", "namespace-with-labels.yaml",
    "pod-anti-affinity-ns-selector.yaml", "pod-preferred-anti-affinity-ns-selector.yaml",
    "pod-affinity-ns-selector.yaml", "pod-preferred-affinity-ns-selector.yaml"])
def test_templates_are_upstream_modulo_field_case(name):
    """Verbatim but for ``NodeAffinityPolicy``/``NodeTaintsPolicy``, which upstream's
    case-insensitive JSON decoding reads as ``nodeAffinityPolicy``/``nodeTaintsPolicy``."""
    up = (PERF / "templates" / name).read_text()
    up = up.replace("NodeAffinityPolicy:", "nodeAffinityPolicy:").replace("NodeTaintsPolicy:", "nodeTaintsPolicy:")
    assert TEMPLATES[name].strip().splitlines() == up.strip().splitlines()


def _name(path: str | None, default: str | None) -> str | None:
    return Path(path).name if path else default


@needs_upstream
@pytest.mark.parametrize(("topic", "case_name"), [
    ("topology_spreading", CASE), ("affinity", "MixedSchedulingBasePod"),
    ("affinity", "SchedulingRequiredPodAntiAffinityWithNSSelector"),
    ("affinity", "SchedulingPreferredAntiAffinityWithNSSelector"),
    ("affinity", "SchedulingRequiredPodAffinityWithNSSelector"),
    ("affinity", "SchedulingPreferredAffinityWithNSSelector"),
])
def test_workloads_match_performance_config(topic, case_name):
    """Every workload of the case: upstream's labels, threshold, ops, counts, templates, node
    labels and namespaces (a createPods op without one: ``namespace-<op index>``; ``createPodSets``
    is one createPods op per namespace ``<namespacePrefix>-<i>``, as upstream's executor runs it)."""
    cases = yaml.safe_load((PERF / topic / "performance-config.yaml").read_text())
    (case,) = [c for c in cases if c["name"] == case_name]
    # the only gate upstream sets here is GA (on at every emulated version)
    assert case.get("featureGates", {}) in ({}, {"NodeInclusionPolicyInPodTopologySpread": True})
    mine = {k: w for k, w in WORKLOADS.items() if w.case == case_name}
    assert set(mine) == {f"{case_name}/{wl['name']}" for wl in case["workloads"]}
    default_pod = _name(case.get("defaultPodTemplatePath"), "pod-default.yaml")
    for wl in case["workloads"]:
        w = mine[f"{case_name}/{wl['name']}"]
        assert set(w.labels) == set(wl.get("labels") or [])
        assert w.threshold == wl.get("threshold")
        ops = []
        for up in case["workloadTemplate"]:
            if up["opcode"] == "createPodSets":
                inner = up["createPodsOp"]
                for i in range(wl["params"][up["countParam"][1:]]):
                    ops.append({**inner, "namespace": f"{up['namespacePrefix']}-{i}"})
            else:
                ops.append(up)
        assert len(ops) == len(w.ops)
        for i, (up, op) in enumerate(zip(ops, w.ops, strict=True)):
            count = up["count"] if "count" in up else wl["params"][up["countParam"][1:]]
            if up["opcode"] == "createNodes":
                assert isinstance(op, CreateNodes) and op.count == count
                assert op.template == _name(up.get("nodeTemplatePath"), "node-default.yaml")
                strategy = up.get("labelNodePrepareStrategy") or {}
                assert (op.label_key, op.label_values) == (strategy.get("labelKey"),
                                                            tuple(strategy.get("labelValues") or ()))
            elif up["opcode"] == "createNamespaces":
                assert isinstance(op, CreateNamespaces) and (op.prefix, op.count) == (up["prefix"], count)
                assert op.template == _name(up.get("namespaceTemplatePath"), None)
            else:
                assert up["opcode"] == "createPods" and isinstance(op, CreatePods)
                assert (op.count, op.template) == (count, _name(up.get("podTemplatePath"), default_pod))
                assert (op.namespace or f"namespace-{i}") == up.get("namespace", f"namespace-{i}")
                assert op.collect_metrics == bool(up.get("collectMetrics"))


def test_tainted_nodes_are_not_domains():
    """4 plain + 1 tainted node, 8 spread pods (maxSkew 1 over hostnames): with taints honoured
    the tainted node is no domain, so every plain node takes 2 pods and all 8 schedule; the
    tainted node gets none."""
    w = Workload(CASE, "test", (CreateNodes(4), CreateNodes(1, "node-with-taint.yaml"),
                                CreatePods(8, "pod-with-node-inclusion-policy.yaml", collect_metrics=True)))
    placed: dict[str, int] = {}

    def inspect(store, sched):
        for p in store.pods.values():
            placed[p.spec.node_name] = placed.get(p.spec.node_name, 0) + 1

    res = execute(w, seed=3, inspect=inspect)
    assert res.scheduled == 8 and res.unschedulable_pods == 0
    assert sorted(placed.values()) == [2, 2, 2, 2]
    assert not any(n.startswith("taint-node-") for n in placed)


def test_ns_selector_anti_affinity_sees_pods_of_labelled_namespaces():
    """Required anti-affinity with ``namespaceSelector: team=devops``: the measured pods
    (measure-ns-0) avoid the nodes of the ``color: green`` pods in the other labelled namespaces
    (init-ns-*), so on 10 nodes with 4 init pods the 6 measured pods take the 6 other nodes and a
    7th would have nowhere to go (without the namespace labels the selector would match nothing
    and all 7 would fit)."""
    w = WORKLOADS["SchedulingRequiredPodAntiAffinityWithNSSelector/10Nodes"]
    by_ns: dict[str, set[str]] = {}

    def inspect(store, sched):
        for p in store.pods.values():
            by_ns.setdefault(p.metadata.namespace, set()).add(p.spec.node_name)

    res = execute(w, seed=2, inspect=inspect)
    assert res.scheduled == 6 and res.unschedulable_pods == 0
    init_nodes = by_ns["init-ns-0"] | by_ns["init-ns-1"]
    assert len(init_nodes) == 4 and not init_nodes & by_ns["measure-ns-0"]
    assert len(by_ns["measure-ns-0"]) == 6
    over = Workload(w.case, "over", w.ops[:-1] + (CreatePods(7, "pod-anti-affinity-ns-selector.yaml", "measure-ns-0",
                                                             collect_metrics=True),))
    res = execute(over, seed=2)
    assert (res.scheduled, res.unschedulable_pods) == (6, 1)
