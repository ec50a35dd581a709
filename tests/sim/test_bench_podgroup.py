"""scheduler_perf's v1.37 workload-aware, batching and starvation test cases (``kubesched.sim.bench_podgroup``).

The tables are checked against upstream's own ``performance-config.yaml`` files and templates (when
the v1.37.2 module source is on this machine); the ops are checked for what upstream's executor
creates (with GenericWorkload forced off, each pod on its own); the small sizes run end to end
through the pod-group engine.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
import yaml

from kubesched.features import FeatureGate
from kubesched.sim.bench import WORKLOADS, CreateNamespaces, Workload, execute
from kubesched.sim.bench_podgroup import (
    _CASES,
    TEMPLATES_137,
    V137_WORKLOADS,
    Barrier,
    Churn,
    CreatePodGroups,
    NodesOp,
    PodsOp,
    VirtualTimer,
    _Case,
    render_template,
    workload_features,
)

PERF = Path(os.environ.get("KUBESCHED_UPSTREAM_K8S", "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2")) / \
    "test/integration/scheduler_perf"
needs_upstream = pytest.mark.skipif(not PERF.is_dir(), reason="k8s.io/kubernetes@v1.37.2 module source not present")

TOPICS = ["podgroup/basicscheduling", "podgroup/gangscheduling", "podgroup/tas", "workload_preemption",
          "batching", "starvation"]

GW_OFF = FeatureGate().with_overrides(GenericWorkload=False)
"""The pod-group workloads with the gate forced off: the ops run, each pod is scheduled on its own."""


# ───────────────────────────── the tables are upstream's ─────────────────────────────


@needs_upstream
@pytest.mark.parametrize("path", sorted(TEMPLATES_137))
def test_templates_are_upstream_verbatim(path):
    want = [ln.rstrip() for ln in (PERF / path).read_text().splitlines()]
    assert [ln.rstrip() for ln in TEMPLATES_137[path].splitlines()] == want


def _resolve(v, params):
    return params[v[1:]] if isinstance(v, str) and v.startswith("$") else v


@needs_upstream
@pytest.mark.parametrize("topic", TOPICS)
def test_workloads_match_performance_config(topic):
    """Every test case and workload of the topic is here, with upstream's labels, feature gates,
    op sequence, counts, namespaces, templates and template params."""
    cases = yaml.safe_load((PERF / topic / "performance-config.yaml").read_text())
    for case in cases:
        for wl in case["workloads"]:
            key = f"{case['name']}/{wl['name']}"
            assert key in V137_WORKLOADS, key
            w = V137_WORKLOADS[key]
            params = wl.get("params") or {}
            assert set(w.labels) == set(wl.get("labels") or []), key
            gates = {**(case.get("featureGates") or {}), **(wl.get("featureGates") or {})}
            assert dict(_CASES[key].gates) == gates, key
            cfg = case.get("schedulerConfigPath")
            assert _CASES[key].config == (f"{topic}/{cfg}" if cfg else None), key
            ops = [op for op in case["workloadTemplate"]
                   if op["opcode"] not in ("startCollectingMetrics", "stopCollectingMetrics")]
            assert len(ops) == len(w.ops), key
            for up, mine in zip(ops, w.ops, strict=True):
                _check_op(topic, case, up, mine, params, key)


def _count(up, params):
    return up["count"] if "count" in up else params[up["countParam"][1:]]


def _tpl(topic, rel):
    return os.path.normpath(f"{topic}/{rel}")


def _check_op(topic, case, up, mine, params, key):
    code = up["opcode"]
    tparams = {k: _resolve(v, params) for k, v in (up.get("templateParams") or {}).items()}
    if code == "createNodes":
        assert isinstance(mine, NodesOp) and mine.count == _count(up, params), key
        assert mine.path == (_tpl(topic, up["nodeTemplatePath"]) if "nodeTemplatePath" in up else None), key
    elif code == "createNamespaces":
        assert isinstance(mine, CreateNamespaces) and (mine.prefix, mine.count) == (up["prefix"], up["count"]), key
    elif code == "createPodGroups":
        assert isinstance(mine, CreatePodGroups), key
        assert (mine.count, mine.namespace, mine.path) == (_count(up, params), up["namespace"],
                                                           _tpl(topic, up["templatePath"])), key
        assert dict(mine.params) == tparams, key
    elif code == "createPods":
        assert isinstance(mine, PodsOp), key
        n = _count(up, params) * (params[up["countMultiplierParam"][1:]] if "countMultiplierParam" in up else 1)
        path = up.get("podTemplatePath") or case.get("defaultPodTemplatePath")
        assert (mine.count, mine.namespace, mine.path) == (n, up.get("namespace"), _tpl(topic, path)), key
        assert dict(mine.params) == tparams, key
        assert mine.collect_metrics == bool(up.get("collectMetrics")) or bool(mine.collect_namespaces), key
        assert mine.skip_wait == bool(up.get("skipWaitToCompletion")), key
        batch = _resolve(up.get("signatureBatchSizeParam"), params) or up.get("signatureBatchSize") or 1
        assert mine.signature_batch_size == batch, key
    elif code == "churn":
        assert isinstance(mine, Churn) and up["mode"] == "recreate", key
        assert (mine.number, mine.interval_ms, mine.namespace) == (up["number"], up["intervalMilliseconds"],
                                                                   up["namespace"]), key
        assert [mine.path] == [_tpl(topic, p) for p in up["templatePaths"]], key
    elif code == "barrier":
        assert isinstance(mine, Barrier) and mine.stage == up.get("stageRequirement", "Scheduled"), key
    else:  # pragma: no cover
        pytest.fail(f"{key}: opcode {code} not expected")


def test_registered_in_bench():
    for key in V137_WORKLOADS:
        assert WORKLOADS[key] is V137_WORKLOADS[key]
    assert "SchedulingBasic/5000Nodes_10000Pods" in WORKLOADS  # the existing table is untouched


# ───────────────────────────── template rendering ─────────────────────────────


@pytest.mark.parametrize("text,env,want", [
    ("gang-{{DivideInt .Index .podsPerGroup}}", {"Index": 7, "podsPerGroup": 3}, "gang-2"),
    ("{{AddInt 8000 (Mod .Index (DivideInt .podsCount .nodesCount))}}",
     {"Index": 7, "podsCount": 10, "nodesCount": 2}, "8002"),
    ("{{if .priority}}{{AddInt 0 .priority}}{{else}}8888888{{end}}", {"priority": 1000}, "1000"),
    ("{{if .priority}}{{AddInt 0 .priority}}{{else}}8888888{{end}}", {}, "8888888"),
    ("a{{if .hostPortBase}}\n  port: {{AddInt .hostPortBase (DivideInt .Index 2)}}{{end}}b",
     {"hostPortBase": 9000, "Index": 5}, "a\n  port: 9002b"),
    ("a{{if .hostPortBase}}x{{end}}b", {}, "ab"),
    ("minCount: {{.minCount}}", {"minCount": 100}, "minCount: 100"),
    ("cpu: {{.cpuRequest}}", {"cpuRequest": "3970m"}, "cpu: 3970m"),
    ("{{.missing}}", {}, "<no value>"),
    ("{{DivideInt -7 2}}", {}, "-3"),  # Go integer division truncates toward zero
])
def test_render_template(text, env, want):
    assert render_template(text, env) == want


@pytest.mark.parametrize("text", ["{{if .a}}x", "{{end}}", "{{Nope 1 2}}", "{{(DivideInt 1 1}}"])
def test_render_template_errors(text):
    with pytest.raises(ValueError, match="template"):
        render_template(text, {"a": 1})


def test_workload_gates():
    assert workload_features("GangScheduling/10Nodes_3Gangs").enabled("GenericWorkload")
    tas = workload_features("TopologyAwareScheduling/10Nodes_3Gangs")
    assert tas.enabled("GenericWorkload") and tas.enabled("TopologyAwareWorkloadScheduling")
    assert not workload_features("HostPortConflict/20000Nodes_20000Pods_OpportunisticBatchingDisabled").enabled(
        "OpportunisticBatching")
    # a gate given explicitly wins over the workload's
    assert not workload_features("GangScheduling/10Nodes_3Gangs", GW_OFF).enabled("GenericWorkload")


# ───────────────────────────── ops, end to end without the pod-group engine ─────────────────────────────


def test_podgroup_ops_create_groups_and_member_pods():
    """createPodGroups + createPods (gangscheduling templates): groups gang-0..2 with minCount 3 in
    gang-ns-0, pods 0-2 → gang-0, 3-5 → gang-1, 6-8 → gang-2, each with its signature label."""
    seen = {}

    def inspect(store, sched):
        seen["groups"] = {pg["metadata"]["name"]: pg for pg in store.list("PodGroup", "gang-ns-0")}
        seen["pods"] = {p.metadata.name: p for p in store.list("Pod", "gang-ns-0")}

    res = execute(WORKLOADS["GangScheduling/10Nodes_3Gangs"], seed=1, inspect=inspect, features=GW_OFF)
    assert sorted(seen["groups"]) == ["gang-0", "gang-1", "gang-2"]
    for pg in seen["groups"].values():
        assert pg["apiVersion"] == "scheduling.k8s.io/v1beta1" and pg["kind"] == "PodGroup"
        assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}
    assert sorted(seen["pods"]) == [f"test-gang-scheduling-{i}" for i in range(9)]
    for i in range(9):
        p = seen["pods"][f"test-gang-scheduling-{i}"]
        assert p.spec.scheduling_group.pod_group_name == f"gang-{i // 3}"
        assert p.metadata.labels["signature"] == f"signature-label-{i}"
    assert res.scheduled == 9 and res.measured_pods == 9 and res.namespace == "gang-ns-0"


def test_tas_nodes_from_template():
    """podgroup/tas node.yaml: node-<i> in rack/zone <i // 100>; groups constrained to the rack key."""
    seen = {}

    def inspect(store, sched):
        seen["nodes"] = {n.metadata.name: n.metadata.labels for n in store.list("Node")}
        seen["pg"] = store.get("PodGroup", "tas-ns-0", "gang-0")

    execute(WORKLOADS["TopologyAwareScheduling/100Nodes_10Gangs"], seed=1, inspect=inspect,
            features=FeatureGate().with_overrides(GenericWorkload=False, TopologyAwareWorkloadScheduling=False))
    assert sorted(seen["nodes"]) == sorted(f"node-{i}" for i in range(100))
    assert seen["nodes"]["node-42"]["topology.kubernetes.io/rack"] == "rack-0"
    assert seen["nodes"]["node-42"]["kubernetes.io/hostname"] == "node-42"
    assert seen["pg"]["spec"]["schedulingConstraints"] == {"topology": [{"key": "topology.kubernetes.io/rack"}]}


def test_gang_preemption_basic_without_groups_preempts_per_pod():
    """GangPreemptionBasic small: 10 low-priority pods (40m, hostPort 8000 + i % 5) spread 5 per node;
    the two 3970m preemptors can only fit by evicting every low-priority pod of their node."""
    seen = {}

    def inspect(store, sched):
        seen["low"] = store.list("Pod", "gang-preempt-1")
        seen["preemptions"] = len(store.preemptions)

    res = execute(WORKLOADS["GangPreemptionBasic/2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods"], seed=1,
                  inspect=inspect, features=GW_OFF)
    assert res.init_pods == 10 and res.scheduled == 2
    assert seen["low"] == [] and seen["preemptions"] == 10


@pytest.mark.parametrize("key", ["HostPortConflict/10Nodes_10Pods_10BatchSize",
                                 "ResourceSaturation/10Nodes_10Pods_10BatchSize"])
def test_batching_one_pod_per_node(key):
    """Both batching scenarios force one pod per node (hostPort 80; 3 of 4 CPUs)."""
    seen = {}

    def inspect(store, sched):
        seen["nodes"] = [p.spec.node_name for p in store.list("Pod")]
        seen["labels"] = sorted({p.metadata.labels["signature"] for p in store.list("Pod")})
        seen["pts"] = sched.profiles["default-scheduler"].plugins["PodTopologySpread"]

    res = execute(WORKLOADS[key], seed=1, inspect=inspect)
    assert res.scheduled == 10 and len(set(seen["nodes"])) == 10
    assert seen["labels"] == ["signature-label-0"]  # signatureBatchSize 10: one signature for all ten
    # scheduler-config-no-topology.yaml: PodTopologySpread with no (system) default constraints
    assert not seen["pts"].system_defaulted and seen["pts"].default_constraints == ()


def test_churn_and_attempted_barrier():
    """A small starvation-shaped workload on a virtual clock (1 ms per scheduling attempt, so the
    churn ticks fall between the same attempts whatever the machine's load): the barrier waits until
    every clogger carries a PodScheduled condition; a churn pod is created every 10 ms of virtual
    time (600 slots: none is deleted in so short a run), named from the template, scheduled, and
    counted in the namespace."""
    key = "StarvationIndependent/test-small"
    w = dataclasses.replace(WORKLOADS["StarvationIndependent/10Nodes_100Cloggers"], name="test-small", ops=(
        NodesOp(2, path="starvation/templates/node.yaml"), CreateNamespaces("starvation", 1),
        Churn(600, 10, "starvation-0", "starvation/templates/churn-pod.yaml"),
        PodsOp(5, namespace="starvation-0", path="starvation/templates/clogger-pod.yaml", skip_wait=True),
        Barrier("Attempted"),
        PodsOp(10, namespace="starvation-0", path="starvation/templates/victim-pod.yaml", collect_metrics=True,
               collect_namespaces=("starvation-0",))))
    assert isinstance(w, Workload)
    _CASES[key] = _Case()
    runs = []

    def inspect(store, sched):
        pods = store.list("Pod", "starvation-0")
        runs.append({"cloggers": [p for p in pods if p.metadata.name.startswith("pod-clogger-")],
                     "churn": sorted(p.metadata.name for p in pods if p.metadata.name.startswith("pod-churn-")),
                     "churn_bound": [p.spec.node_name for p in pods if p.metadata.name.startswith("pod-churn-")]})

    try:
        res = execute(w, seed=1, inspect=inspect, timer=VirtualTimer(attempt_s=0.001))
        again = execute(w, seed=1, inspect=inspect, timer=VirtualTimer(attempt_s=0.001))
    finally:
        del _CASES[key]
    seen = runs[0]
    assert len(seen["cloggers"]) == 5
    for p in seen["cloggers"]:  # never schedulable (affinity and anti-affinity to the same pods)
        assert not p.spec.node_name
        assert any(c.type == "PodScheduled" and c.status == "False" for c in p.status.conditions)
    assert seen["churn"] and all(re.fullmatch(r"pod-churn-[a-z0-9]{5}", n) for n in seen["churn"])
    assert all(seen["churn_bound"])  # priority 10000, 10m: each fits at once
    assert res.init_pods == 5 and res.measured_pods == 10 and res.scheduled == 10
    assert runs[1]["churn"] == seen["churn"] and again.attempts == res.attempts  # deterministic


def test_churn_recreate_alternates_per_slot():
    """``recreate`` mode with one slot: tick 1 creates the pod, tick 2 deletes it, tick 3 creates a
    new one (upstream ``runChurnOp``: ``retVals[i][count%number] = churnFn(retVals[…])``); ``create``
    mode stops after ``number`` ticks."""
    from kubesched.sim.bench_podgroup import WorkloadRun, _ChurnState

    key = "StarvationIndependent/test-churn"
    w = dataclasses.replace(WORKLOADS["StarvationIndependent/10Nodes_100Cloggers"], name="test-churn",
                            ops=(NodesOp(1, path="starvation/templates/node.yaml"),
                                 PodsOp(1, namespace="c", path="starvation/templates/victim-pod.yaml",
                                        collect_metrics=True)))
    _CASES[key] = _Case()
    try:
        run = WorkloadRun(w, 1, None, None, False, VirtualTimer())
    finally:
        del _CASES[key]
    run.ensure_ns("c")
    tpl = "starvation/templates/churn-pod.yaml"
    rec = _ChurnState(Churn(1, 100, "c", tpl), [[None]], 0, 0.1)
    names = []
    for _ in range(3):
        run.churn_tick(rec)
        names.append(sorted(run.store.pods))
    assert len(names[0]) == 1 and names[1] == [] and len(names[2]) == 1 and names[2] != names[0]
    assert rec.next_tick == pytest.approx(0.4)
    create = _ChurnState(Churn(2, 100, "c", tpl, mode="create"), [[None, None]], 0, 0.1)
    for _ in range(4):
        run.churn_tick(create)
    assert len(run.store.pods) == 3 and create.next_tick == float("inf")


# ───────────────────────────── pod groups end to end ─────────────────────────────


@pytest.mark.parametrize("key", ["BasicScheduling/10Nodes_3Groups", "GangScheduling/10Nodes_3Gangs",
                                 "TopologyAwareScheduling/10Nodes_3Gangs",
                                 "GangPreemptionBasic/2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods",
                                 "GangPreemptionPodGroups/2Nodes_1PreemptorGang_2Pods_Evicting_2LowPriorityGangs",
                                 "GangPreemptionAffinity/2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods"])
def test_podgroup_workloads_end_to_end(key):
    res = execute(WORKLOADS[key], seed=1)
    assert res.scheduled == res.measured_pods and res.attempts.get("error", 0) == 0


def test_tas_gangs_land_in_one_rack():
    """10 gangs of 3 on 100 nodes in one rack (rack-<i // 100>): trivially rack-local; on 5000 nodes
    (50 racks) each gang's pods share a rack."""
    w = WORKLOADS["TopologyAwareScheduling/100Nodes_10Gangs"]
    seen = {}

    def inspect(store, sched):
        racks = {n.metadata.name: n.metadata.labels["topology.kubernetes.io/rack"] for n in store.list("Node")}
        by_group = {}
        for p in store.list("Pod", "tas-ns-0"):
            by_group.setdefault(p.spec.scheduling_group.pod_group_name, set()).add(racks[p.spec.node_name])
        seen["racks"] = by_group

    res = execute(w, seed=1, inspect=inspect)
    assert res.scheduled == 30 and all(len(r) == 1 for r in seen["racks"].values())
