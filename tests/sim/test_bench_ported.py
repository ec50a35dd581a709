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
@pytest.mark.parametrize("name", ["node-with-taint.yaml", "pod-with-node-inclusion-policy.yaml"])
def test_templates_are_upstream_modulo_field_case(name):
    """Verbatim but for ``NodeAffinityPolicy``/``NodeTaintsPolicy``, which upstream's
    case-insensitive JSON decoding reads as ``nodeAffinityPolicy``/``nodeTaintsPolicy``."""
    up = (PERF / "templates" / name).read_text()
    up = up.replace("NodeAffinityPolicy:", "nodeAffinityPolicy:").replace("NodeTaintsPolicy:", "nodeTaintsPolicy:")
    assert TEMPLATES[name].strip().splitlines() == up.strip().splitlines()


def _name(path: str | None, default: str) -> str:
    return Path(path).name if path else default


@needs_upstream
@pytest.mark.parametrize(("topic", "case_name"), [("topology_spreading", CASE), ("affinity", "MixedSchedulingBasePod")])
def test_workloads_match_performance_config(topic, case_name):
    """Every workload of the case: upstream's labels, threshold, ops, counts, templates, node
    labels and namespaces (a createPods op without one: ``namespace-<op index>``)."""
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
        ops = case["workloadTemplate"]
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
