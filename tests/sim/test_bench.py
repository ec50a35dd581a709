"""kubesched.sim.bench: scheduler_perf workloads end to end on small clusters, the throughput
collector and percentile rule against hand-computed examples, DataItem shape. No timing asserts."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from kubesched.plugins.registry import in_tree_registry
from kubesched.sim.bench import (
    WORKLOADS,
    BenchResult,
    CreateNodes,
    CreatePods,
    ThroughputCollector,
    Workload,
    execute,
    percentile,
    run_workload,
    throughput_data,
)
from kubesched.sim.bench_dra137 import DRA137_WORKLOADS
from kubesched.sim.bench_events import EVENTS_WORKLOADS
from kubesched.sim.bench_podgroup import V137_WORKLOADS

REGISTRY = dict(in_tree_registry())


# ───────────────────────────── percentile / collector ─────────────────────────────


def test_percentile_upstream_rule():
    s = [float(i) for i in range(1, 11)]  # 1..10
    assert percentile(s, 50) == 5.0   # ceil(10*50/100)=5 → s[4]
    assert percentile(s, 90) == 9.0   # ceil(9)=9 → s[8]
    assert percentile(s, 95) == 10.0  # ceil(9.5)=10 → s[9]
    assert percentile(s, 99) == 10.0  # ceil(9.9)=10
    assert percentile([10.0, 20.0, 30.0], 50) == 20.0  # ceil(1.5)=2 → s[1]
    assert percentile([10.0, 20.0, 30.0], 90) == 30.0  # ceil(2.7)=3
    assert percentile([7.0], 50) == percentile([7.0], 99) == 7.0
    s200 = [float(i) for i in range(200)]
    assert percentile(s200, 99) == 197.0  # ceil(198)=198 → s[197]
    assert percentile(s200, 50) == 99.0   # ceil(100)=100 → s[99]
    with pytest.raises(ValueError):
        percentile([], 50)


def test_throughput_data_average_is_mean_of_samples_and_sorts():
    d = throughput_data([30.0, 10.0, 20.0, 40.0])
    assert d == {"Average": 25.0, "Perc50": 20.0, "Perc90": 40.0, "Perc95": 40.0, "Perc99": 40.0}
    assert throughput_data([]) == {}


def test_collector_skips_first_tick_repeats_skipped_intervals():
    c = ThroughputCollector(start=0.0)
    assert not c.observe(0.5, 0)
    assert not c.observe(0.9, 5)
    # tick 1.0 sees 5 (the count before this observation): starts the collector, no sample
    assert c.observe(1.2, 10)
    assert c.samples == [] and c.started_at == 1.0
    c.observe(2.1, 30)   # tick 2.0 sees 10 → (10-5)/1
    assert c.samples == [5.0]
    c.observe(4.5, 40)   # tick 3.0 sees 30 → 20/1; tick 4.0 sees 30 → nothing new, skipped
    assert c.samples == [5.0, 20.0]
    c.observe(5.0, 50)   # tick 5.0 sees 40 → 10 pods over 2 s, recorded for 2 intervals
    assert c.samples == [5.0, 20.0, 5.0, 5.0]
    assert c.progress == [(2.0, 10), (3.0, 30), (5.0, 40)]
    assert c.data()["Average"] == pytest.approx(35.0 / 4)
    assert c.data()["Perc50"] == 5.0 and c.data()["Perc99"] == 20.0


def test_collector_ignores_ticks_before_anything_is_scheduled():
    c = ThroughputCollector(start=10.0)
    c.observe(12.5, 0)          # ticks 11, 12 with 0 scheduled: ignored
    c.observe(13.0, 4)          # tick 13 sees 0: ignored
    c.observe(14.0, 8)          # tick 14 sees 4: start
    c.observe(15.0, 8)          # tick 15 sees 8: 4 pods/s
    assert c.started_at == 14.0 and c.samples == [4.0]


def test_collector_window_opens_at_the_first_measured_bind(monkeypatch):
    """Upstream samples only once a measured pod is scheduled: ``first`` records the CPU clock and the
    count at the first observation with one, and never moves after."""
    cpu = iter([5.0, 6.0, 7.0])
    monkeypatch.setattr("kubesched.sim.bench_runner.time.process_time", lambda: next(cpu))
    c = ThroughputCollector(start=0.0)
    c.observe(0.1, 0)
    c.observe(0.2, 0)
    assert c.first is None
    c.observe(0.3, 2)
    assert c.first == (5.0, 2)
    c.observe(1.5, 9)
    assert c.first == (5.0, 2)


def test_window_rate_in_the_json_and_back():
    r = BenchResult("SchedulingBasic/5000Nodes_10000Pods", measured_pods=10, scheduled=10, measured_wall_s=2.0,
                    measured_cpu_s=4.0, window_cpu_s=1.5, window_first=1)
    d = r.to_dict()
    assert d["podsPerCPUSecond"] == 2.5 and d["podsPerCPUSecondInWindow"] == 6.0
    assert BenchResult.from_dict(d).per_cpu_window == 6.0
    assert "6 from the first measured bind" in r.summary()
    assert BenchResult("x").per_cpu_window is None and BenchResult("x").to_dict()["podsPerCPUSecondInWindow"] is None


# ───────────────────────────── workloads table ─────────────────────────────


@pytest.mark.parametrize("key,threshold,target,nodes,init,measured", [
    ("SchedulingBasic/5000Nodes_10000Pods", 680, 1500, 5000, 1000, 10000),
    ("SchedulingBasic/5000Nodes_50000Pods", 810, None, 5000, 5000, 50000),
    ("SchedulingNodeAffinity/5000Nodes_10000Pods", 220, 1000, 5000, 5000, 10000),
    ("SchedulingDaemonset/15000Nodes", 1100, 1500, 15001, 0, 30000),
    ("SchedulingPodAntiAffinity/5000Nodes_2000Pods", 60, 600, 5000, 1000, 2000),
    ("SchedulingPodAffinity/5000Nodes_5000Pods", 35, 350, 5000, 5000, 5000),
    ("SchedulingPreferredPodAffinity/5000Nodes_5000Pods", 90, 600, 5000, 5000, 5000),
    ("SchedulingPreferredPodAntiAffinity/5000Nodes_5000Pods", 90, 600, 5000, 5000, 5000),
    ("TopologySpreading/5000Nodes_5000Pods", 460, 1000, 5000, 5000, 5000),
    ("PreferredTopologySpreading/5000Nodes_5000Pods", 340, 1000, 5000, 5000, 5000),
    ("DefaultTopologySpreading/5000Nodes_50000Pods", 160, 800, 5000, 5000, 50000),
    # volumes/performance-config.yaml (issue 9 §5: target 3× the floor)
    ("SchedulingSecrets/5000Nodes_10000Pods", 790, 2370, 5000, 1000, 10000),
    ("SchedulingInTreePVs/5000Nodes_2000Pods", 290, 870, 5000, 1000, 2000),
    ("SchedulingMigratedInTreePVs/5000Nodes_5000Pods", 100, 300, 5000, 5000, 5000),
    ("SchedulingCSIPVs/5000Nodes_5000Pods", 100, 300, 5000, 5000, 5000),
    ("PreemptionPVs/1000Nodes", None, None, 1000, 4000, 1000),
    ("SchedulingPodMatchingAntiAffinity/5000Nodes_5000Pods", 540, None, 5000, 1000, 5000),  # v1.37.2 affinity/
])
def test_issue_workloads_present(key, threshold, target, nodes, init, measured):
    """Node / init / measured counts, upstream floors and kubesched targets from issues 2 and 3."""
    w = WORKLOADS[key]
    assert (w.threshold, w.target) == (threshold, target)
    assert (w.num_nodes, w.num_init_pods, w.num_measured_pods) == (nodes, init, measured)


def test_every_case_has_a_small_variant():
    cases = {w.case for w in WORKLOADS.values()}
    for case in cases - {"PublishResourceSlices"}:  # upstream has only 500 and 5000 nodes there
        assert any(w.case == case and w.num_nodes <= 50 for w in WORKLOADS.values()), case


# ───────────────────────────── end to end ─────────────────────────────

SMALL = [k for k, w in WORKLOADS.items() if w.num_nodes <= 50
         and not k.startswith("SteadyState")  # steady-state DRA cases: tests/sim/test_bench_dra.py
         and k not in V137_WORKLOADS  # v1.37 workload-aware cases: tests/sim/test_bench_podgroup.py
         and k not in EVENTS_WORKLOADS  # event_handling, default_preemption, …: tests/sim/test_bench_events.py
         and k not in DRA137_WORKLOADS]  # v1.37.2 DRA cases: tests/sim/test_bench_dra137.py


@pytest.mark.parametrize("key", SMALL)
def test_small_workload_schedules_every_measured_pod(key):
    w = WORKLOADS[key]
    res = execute(w, seed=1)
    assert res.scheduled == res.measured_pods == w.num_measured_pods
    assert res.unschedulable_pods == 0
    assert res.attempts["scheduled"] == w.num_measured_pods
    # PreemptionPVs: each high-priority pod is first unschedulable, preempts, then binds
    preempting = w.num_measured_pods if w.case.startswith("Preemption") else 0
    assert res.attempts["unschedulable"] == preempting and res.attempts["error"] == 0
    assert res.init_attempts == w.num_init_pods
    assert res.peak_rss_mib > 0
    d = res.to_dict()
    item = d["dataItems"][0]
    assert item["labels"]["Metric"] == "SchedulingThroughput"
    assert item["labels"]["Name"].startswith(f"BenchmarkPerfScheduling/{key}/")
    assert item["unit"] == "pods/s"
    assert d["scheduled"] == w.num_measured_pods
    assert w.case in res.summary()


def test_fifty_node_workload_names_labels_and_namespaces():
    w = Workload("Custom", "50Nodes", (
        CreateNodes(50, label_key="topology.kubernetes.io/zone", label_values=("a", "b", "c")),
        CreatePods(20),
        CreatePods(200, collect_metrics=True),
    ))
    seen = {}
    res = execute(w, seed=3, inspect=lambda store, sched: seen.update(store=store))
    store = seen["store"]
    assert res.scheduled == 200 and res.namespace == "namespace-2"
    assert len(store.nodes) == 50
    zones = Counter()
    for name, node in store.nodes.items():
        assert re.fullmatch(r"scheduler-perf-[bcdfghjklmnpqrstvwxz2456789]{5}", name)
        assert node.metadata.labels["kubernetes.io/hostname"] == name
        zones[node.metadata.labels["topology.kubernetes.io/zone"]] += 1
    assert sorted(zones.values()) == [16, 17, 17]
    ns = Counter(p.metadata.namespace for p in store.pods.values())
    assert ns == {"namespace-1": 20, "namespace-2": 200}
    assert all(p.spec.node_name for p in store.pods.values())
    assert all(re.fullmatch(r"pod-[bcdfghjklmnpqrstvwxz2456789]{5}", p.metadata.name) for p in store.pods.values())
    # pod-default: requests = limits 100m / 500Mi
    c = next(iter(store.pods.values())).spec.containers[0]
    assert c.resources.requests == {"cpu": "100m", "memory": "500Mi"} == c.resources.limits
    # 50 nodes × 110 pods: the 220 pods spread (LeastAllocated) rather than pile up
    per_node = Counter(p.spec.node_name for p in store.pods.values())
    assert max(per_node.values()) <= 10


def test_daemonset_pods_all_land_on_the_named_node():
    seen = {}
    res = execute(WORKLOADS["SchedulingDaemonset/5Nodes"], inspect=lambda store, sched: seen.update(store=store))
    assert res.scheduled == 10
    assert {p.spec.node_name for p in seen["store"].pods.values()} == {"scheduler-perf-node"}
    assert len(seen["store"].nodes) == 6


def test_same_seed_same_placements():
    def placements():
        seen = {}
        execute(WORKLOADS["SchedulingBasic/5Nodes"], seed=7, inspect=lambda store, sched: seen.update(store=store))
        return {k: p.spec.node_name for k, p in seen["store"].pods.items()}

    assert placements() == placements()


def test_dataitem_shape_and_round_trip():
    r = BenchResult("SchedulingBasic/5000Nodes_10000Pods", threshold=680, target=1500, namespace="namespace-2",
                    data=throughput_data([700.0, 800.0, 900.0]), samples=[700.0, 800.0, 900.0],
                    measured_pods=10, scheduled=10, measured_wall_s=2.0,
                    attempts={"scheduled": 10, "unschedulable": 0, "error": 0, "skipped": 0})
    d = r.to_dict()
    item = d["dataItems"][0]
    assert item == {"labels": {"Metric": "SchedulingThroughput",
                               "Name": "BenchmarkPerfScheduling/SchedulingBasic/5000Nodes_10000Pods/namespace-2"},
                    "unit": "pods/s",
                    "data": {"Average": 800.0, "Perc50": 800.0, "Perc90": 900.0, "Perc95": 900.0, "Perc99": 900.0}}
    assert d["dataItems"][1]["labels"]["Metric"] == "PeakRSS" and d["dataItems"][1]["unit"] == "MiB"
    assert d["overallPodsPerSecond"] == 5.0
    back = BenchResult.from_dict(d)
    assert back.to_dict() == d
    s = r.summary()
    assert "Average 800" in s and "upstream floor 680 PASS" in s and "target ≥ 1500 MISSED" in s


def test_run_workload_in_a_subprocess():
    res = run_workload("SchedulingBasic/5Nodes", isolate=True)
    assert res.isolated and res.scheduled == 10 and res.peak_rss_mib > 0


def test_default_spreading_service_selects_the_measured_pods():
    w = WORKLOADS["DefaultTopologySpreading/5Nodes"]
    seen = {}
    res = execute(w, inspect=lambda store, sched: seen.update(store=store))
    store = seen["store"]
    assert res.namespace == "service-ns" and res.scheduled == 10
    (svc,) = store.list("Service", "service-ns")
    assert svc.spec.selector == {"app": "scheduler-perf"} and svc.metadata.name.startswith("service-")
    measured = store.list("Pod", "service-ns")
    # 1.37's API server adds the node's topology labels on binding (PodTopologyLabels admission)
    assert len(measured) == 10 and all(
        p.metadata.labels == {"app": "scheduler-perf", "topology.kubernetes.io/zone":
                              store.nodes[p.spec.node_name].metadata.labels["topology.kubernetes.io/zone"]}
        for p in measured)
    # the init pods (pod-default.yaml, op 2) are in namespace-2, not selected by the Service
    assert len(store.list("Pod", "namespace-2")) == 10
    zones = {n.metadata.labels["topology.kubernetes.io/zone"] for n in store.nodes.values()}
    assert zones == {"moon-1", "moon-2", "moon-3"}


@pytest.mark.parametrize("key,limit", [("SchedulingCSIPVs/5Nodes", 39), ("SchedulingMigratedInTreePVs/5Nodes", 39),
                                       ("SchedulingInTreePVs/5Nodes", None)])
def test_pv_workloads_create_bound_volumes_and_csinodes(key, limit):
    seen = {}

    def inspect(store, sched):
        seen["pvs"] = store.list("PersistentVolume")
        seen["pvcs"] = store.list("PersistentVolumeClaim")
        seen["csinodes"] = store.list("CSINode")
        seen["pods"] = [p for p in store.pods.values() if p.spec.volumes]

    w = WORKLOADS[key]
    res = execute(w, seed=1, inspect=inspect)
    assert res.scheduled == w.num_measured_pods
    n = w.num_init_pods + w.num_measured_pods
    assert len(seen["pvs"]) == len(seen["pvcs"]) == len(seen["pods"]) == n
    for pv in seen["pvs"]:
        assert pv["status"]["phase"] == "Bound" and pv["spec"]["claimRef"]["name"].startswith("pvc-")
    if limit is None:
        assert seen["csinodes"] == []
    else:
        assert len(seen["csinodes"]) == w.num_nodes
        assert all(c["spec"]["drivers"][0]["allocatable"]["count"] == limit for c in seen["csinodes"])
