"""scheduler_perf's v1.37.2 event_handling, default_preemption and remaining misc/affinity test cases
(``kubesched.sim.bench_events``).

The tables are checked against upstream's own ``performance-config.yaml`` files and templates (when the
v1.37.2 module source is on this machine); the new ops are checked for what upstream's executor does
(``executor.go`` ``runDeletePodsOp``/``runChurnOp``/``runBarrierOp``, ``update.go``, the throughput
collector's label selector) and for the API server's behaviour they rely on (deletion with finalizers,
the SchedulingGated condition); the small workloads run end to end on a virtual clock, with the outcome
each test case is designed for (every ``type: unsched`` pod blocked at the Attempted barrier, then
scheduled after the events that unblock it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from kubesched.sim.bench import WORKLOADS, execute
from kubesched.sim.bench_events import (
    EVENTS_WORKLOADS,
    DeletePods,
    EventsRun,
    StartCollecting,
    StopCollecting,
    UpdateAny,
)
from kubesched.sim.bench_events_templates import EVENTS_TEMPLATES
from kubesched.sim.bench_podgroup import _CASES, Barrier, Churn, CreatePodGroups, NodesOp, PodsOp, VirtualTimer

PERF = Path(os.environ.get("KUBESCHED_UPSTREAM_K8S", "/root/go/pkg/mod/k8s.io/kubernetes@v1.37.2")) / \
    "test/integration/scheduler_perf"
needs_upstream = pytest.mark.skipif(not PERF.is_dir(), reason="k8s.io/kubernetes@v1.37.2 module source not present")

CASES = {
    "event_handling": ["EventHandlingPodDelete", "EventHandlingPodUpdate", "EventHandlingNodeAdd",
                       "EventHandlingPodAdd", "EventHandlingNodeUpdate"],
    "default_preemption": ["PreemptionBasic", "PreemptionAsync", "Unschedulable", "PreemptionPodGroupDisruptionMode"],
    "misc": ["SchedulingBasic", "SchedulingWithMixedChurn", "SchedulingWhileGated",
             "SchedulingDeletedPodsWithFinalizers", "SchedulingWithExtendedResource"],
    "affinity": ["SchedulingGatedPodsWithPodAffinityImpactForThroughput"],
}


# ───────────────────────────── the tables are upstream's ─────────────────────────────


@needs_upstream
@pytest.mark.parametrize("path", sorted(EVENTS_TEMPLATES))
def test_templates_are_upstream_verbatim(path):
    assert EVENTS_TEMPLATES[path] == (PERF / path).read_text()


def _norm(topic, rel):
    return os.path.normpath(f"{topic}/{rel}") if rel else None


def _count(up, params):
    if "count" in up:
        return up["count"]
    if "countParam" in up:
        return params[up["countParam"][1:]]
    return 1


def _tparams(up, params):
    return {k: params[v[1:]] if isinstance(v, str) and v.startswith("$") else v
            for k, v in (up.get("templateParams") or {}).items()}


def _sel(up):
    return tuple((up.get("labelSelector") or {}).items())


def _check_op(topic, case, i, up, mine, params, key):
    code = up["opcode"]
    if code == "createNodes":
        assert isinstance(mine, NodesOp) and mine.count == _count(up, params), key
        assert mine.path == _norm(topic, up.get("nodeTemplatePath")), key
        strat = up.get("nodeAllocatableStrategy") or {}
        assert dict(mine.node_allocatable) == (strat.get("nodeAllocatable") or {}), key
        assert dict(mine.csi_node_allocatable) == {d: v["count"] for d, v in
                                                    (strat.get("csiNodeAllocatable") or {}).items()}, key
    elif code == "createPodGroups":
        assert isinstance(mine, CreatePodGroups), key
        assert (mine.count, mine.namespace, mine.path) == (_count(up, params), up["namespace"],
                                                           _norm(topic, up["templatePath"])), key
        assert dict(mine.params) == _tparams(up, params), key
    elif code == "createPods":
        assert isinstance(mine, PodsOp), key
        path = up.get("podTemplatePath") or case.get("defaultPodTemplatePath")
        n = _count(up, params) * (params[up["countMultiplierParam"][1:]] if "countMultiplierParam" in up else 1)
        assert (mine.count, mine.namespace, mine.path) == (n, up.get("namespace"), _norm(topic, path) or ""), key
        assert dict(mine.params) == _tparams(up, params), key
        assert mine.collect_metrics == bool(up.get("collectMetrics")), key
        assert mine.skip_wait == bool(up.get("skipWaitToCompletion")), key
        assert mine.pv_template == _norm(topic, up.get("persistentVolumeTemplatePath")), key
        assert mine.pvc_template == _norm(topic, up.get("persistentVolumeClaimTemplatePath")), key
    elif code == "startCollectingMetrics":
        assert isinstance(mine, StartCollecting), key
        assert (mine.namespaces, mine.label_selector, mine.name) == (tuple(up["namespaces"]), _sel(up),
                                                                     up.get("name", "")), key
    elif code == "stopCollectingMetrics":
        assert isinstance(mine, StopCollecting), key
    elif code == "barrier":
        assert isinstance(mine, Barrier), key
        assert (mine.stage, mine.namespaces, mine.label_selector) == (
            up.get("stageRequirement", "Scheduled"), tuple(up.get("namespaces") or ()), _sel(up)), key
    elif code == "deletePods":
        assert isinstance(mine, DeletePods), key
        assert (mine.namespace, mine.label_selector, mine.per_second, mine.skip_wait) == (
            up["namespace"], _sel(up), up.get("deletePodsPerSecond", 0), bool(up.get("skipWaitToCompletion"))), key
    elif code == "updateAny":
        assert isinstance(mine, UpdateAny), key
        assert (mine.path, mine.count, mine.namespace, mine.per_second, mine.subresources) == (
            _norm(topic, up["templatePath"]), _count(up, params), up.get("namespace", ""),
            up.get("updatePerSecond", 0), tuple(up.get("subresources") or ())), key
    elif code == "churn":
        assert isinstance(mine, Churn), key
        assert (mine.mode, mine.paths, mine.interval_ms, mine.number, mine.namespace) == (
            up["mode"], tuple(_norm(topic, p) for p in up["templatePaths"]), up.get("intervalMilliseconds", 500),
            up.get("number", 0), up.get("namespace", f"namespace-{i}")), key
    else:  # pragma: no cover
        pytest.fail(f"{key}: opcode {code} not expected")


@needs_upstream
@pytest.mark.parametrize("topic", sorted(CASES))
def test_workloads_match_performance_config(topic):
    """Every workload of the listed test cases (of SchedulingBasic: the gate variants this module adds)
    is here with upstream's labels, feature gates, op sequence (one op per upstream op), counts,
    namespaces, templates, selectors, rates and modes."""
    cases = {c["name"]: c for c in yaml.safe_load((PERF / topic / "performance-config.yaml").read_text())}
    for name in CASES[topic]:
        case = cases[name]
        for wl in case["workloads"]:
            key = f"{name}/{wl['name']}"
            if name == "SchedulingBasic" and key not in EVENTS_WORKLOADS:
                assert key in WORKLOADS, key  # the plain runner's (bench.py)
                continue
            assert key in EVENTS_WORKLOADS, key
            w = EVENTS_WORKLOADS[key]
            assert WORKLOADS[key] is w
            params = wl.get("params") or {}
            assert set(w.labels) == set(wl.get("labels") or []), key
            assert dict(_CASES[key].gates) == {**(case.get("featureGates") or {}), **(wl.get("featureGates") or {})}
            assert len(case["workloadTemplate"]) == len(w.ops), key
            for i, (up, mine) in enumerate(zip(case["workloadTemplate"], w.ops, strict=True)):
                _check_op(topic, case, i, up, mine, params, key)


def test_list_groups_each_case():
    """``--list`` reads case by case: a case's workloads are contiguous (the SchedulingBasic gate
    variants of this module sit with the others)."""
    cases = [w.case for w in WORKLOADS.values()]
    seen = []
    for c in cases:
        if not seen or seen[-1] != c:
            assert c not in seen, c
            seen.append(c)


def test_span_counts():
    """A span's measured pods: those created inside it, in its namespaces, matching its selector
    (EventHandlingPodDelete: 4 × measurePods + 2 × blockerPods; the blockers are init pods)."""
    w = EVENTS_WORKLOADS["EventHandlingPodDelete/50Nodes_500Pods"]
    assert (w.num_measured_pods, w.num_init_pods) == (4 * 500 + 2 * 480, 2 * 480)
    w = EVENTS_WORKLOADS["EventHandlingPodAdd/1000Pods"]  # the unblockers carry no `type: unsched`
    assert (w.num_measured_pods, w.num_init_pods) == (2000, 2001)


# ───────────────────────────── end to end, virtual time ─────────────────────────────


def _unsched_pods(store):
    return [p for p in store.pods.values() if p.metadata.labels.get("type") == "unsched"]


@pytest.mark.parametrize("key", [k for k, w in EVENTS_WORKLOADS.items() if w.case.startswith("EventHandling")
                                 and "integration-test" in w.labels])
def test_event_handling_schedules_every_unschedulable_pod(key):
    """Each event_handling case ends with every measured pod scheduled by the events the case
    generates (its last barrier); the collector counts exactly those."""
    seen = {}

    def inspect(store, sched):
        seen["unbound"] = [p.metadata.name for p in store.pods.values()
                           if p.metadata.namespace in store.collect and not p.spec.node_name]

    res = execute(WORKLOADS[key], seed=1, inspect=inspect, timer=VirtualTimer())
    assert res.scheduled == res.measured_pods == WORKLOADS[key].num_measured_pods
    assert seen["unbound"] == [] and res.attempts["error"] == 0


def _until_first_attempted_barrier(key, extra=()):
    w = WORKLOADS[key]
    k = next(i for i, op in enumerate(w.ops) if isinstance(op, Barrier) and op.stage == "Attempted")
    return w.__class__(w.case, w.name, w.ops[:k + 1] + tuple(extra), runner=w.runner, measured_count=0,
                       init_count=0)


def test_pod_delete_blockers_block_by_the_numbers():
    """EventHandlingPodDelete on 2 nodes, up to its Attempted barrier: every ``type: unsched`` pod has
    been tried; those left unbound carry PodScheduled=False. What fits beside the 15 + 15 blockers
    is arithmetic: PodTopologySpread maxSkew 11 with minDomains 10000 (global minimum 0) → 2 × 11 − 15
    = 7; 12 host ports × 2 nodes − 15 = 9; CPU left by 8 + 7 blockers of 0.35 → 6 + 7 pods of 0.2;
    the EBS limit 20 × 2 − 30 blocker volumes = 10; none of the ReadWriteOncePod claims' pods and
    none of the anti-affinity pods (a ``color: green`` blocker on each node)."""
    bound = {}

    def inspect(store, sched):
        for p in store.pods.values():
            ns = p.metadata.namespace
            bound.setdefault(ns, [0, 0])[bool(p.spec.node_name)] += 1
            if not p.spec.node_name:
                assert any(c.type == "PodScheduled" and c.status == "False" for c in p.status.conditions)

    w = _until_first_attempted_barrier("EventHandlingPodDelete/2Nodes_20Pods", (StopCollecting(),))
    execute(w, seed=1, inspect=inspect, timer=VirtualTimer())
    assert {ns: b for ns, (_, b) in bound.items()} == {
        "blockertopologyportsresources": 15 + 7, "blockeraffinity": 15, "nodeports": 9, "noderesources": 13,
        "nodevolumelimits": 10, "interpodaffinity": 0}
    assert bound["blockeraffinity"][0] == 15 and bound["interpodaffinity"][0] == 20


def test_pod_delete_volumes_are_upstreams():
    """createPods with a PV template: PVC ``pvc-<i>`` bound to PV ``<namespace>-vol-<i>`` whose CSI
    volumeHandle is the PV's name (so two namespaces' volumes never share a handle), and the pod's
    only volume is the claim; nodes carry the EBS attach limit 20 and a CSINode."""
    seen = {}

    def inspect(store, sched):
        seen["pv"] = {pv["metadata"]["name"]: pv for pv in store.list("PersistentVolume")}
        seen["pvc"] = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in
                       store.list("PersistentVolumeClaim")}
        seen["csinode"] = store.list("CSINode")
        seen["nodes"] = list(store.nodes.values())
        seen["pods"] = store.list("Pod", "nodevolumelimits")

    execute(WORKLOADS["EventHandlingPodDelete/2Nodes_20Pods"], seed=1, inspect=inspect, timer=VirtualTimer())
    pv = seen["pv"]["nodevolumelimits-vol-3"]
    assert pv["spec"]["csi"]["volumeHandle"] == "nodevolumelimits-vol-3"
    assert pv["spec"]["claimRef"]["name"] == "pvc-3" and pv["status"]["phase"] == "Bound"
    assert seen["pvc"][("nodevolumelimits", "pvc-3")]["spec"]["volumeName"] == "nodevolumelimits-vol-3"
    assert seen["pvc"][("blockeraffinity", "pvc-0")]["spec"]["accessModes"] == ["ReadWriteOncePod"]
    assert len(seen["pv"]) == 3 * 15 and len(seen["csinode"]) == 2
    for n in seen["nodes"]:
        assert str(n.status.allocatable["attachable-volumes-csi-ebs.csi.aws.com"]) == "20"
    claims = sorted(p.spec.volumes[0].persistent_volume_claim.claim_name for p in seen["pods"])
    assert claims == sorted(f"pvc-{i}" for i in range(15))


# ───────────────────────────── the ops ─────────────────────────────


def _run(key="SchedulingDeletedPodsWithFinalizers/10Node_100DeletingPods", timer=None):
    return EventsRun(WORKLOADS[key], 1, None, None, False, timer or VirtualTimer())


def test_delete_pods_is_the_api_servers_delete():
    """A pod with finalizers only gets a deletionTimestamp (and stays unscheduled: the scheduler
    skips a pod being deleted); a bound pod with the default 30 s grace period too (no kubelet
    confirms it); an unbound pod without finalizers, or a bound one with grace period 0, goes."""
    run = _run()
    run.nodes(NodesOp(1), 0)
    fin = run.pods(PodsOp(2, path="templates/pod-with-finalizer.yaml", skip_wait=True), "fin")
    light = run.pods(PodsOp(2, path="templates/light-pod.yaml"), "light")  # grace 0
    dflt = run.pods(PodsOp(1, path="templates/pod-default.yaml"), "dflt")  # grace 30 (default)
    run.delete_pod(fin[0])
    run.wait_scheduled({"light": 2, "dflt": 1})
    assert run.store.pods[fin[0]].metadata.deletion_timestamp is not None
    assert not run.store.pods[fin[0]].spec.node_name and run.store.pods[fin[1]].spec.node_name
    for k in (*light, *dflt):
        run.delete_pod(k)
    assert light[0] not in run.store.pods and light[1] not in run.store.pods
    assert run.store.pods[dflt[0]].metadata.deletion_timestamp is not None


def test_delete_pods_rate_and_selector():
    """``deletePodsPerSecond: 10``: the selected pods (label selector) go one per 100 ms, the first
    after one interval (a ticker); unselected pods stay."""
    run = _run()
    run.ensure_ns("d")
    keys = run.pods(PodsOp(3, path="event_handling/templates/poddelete-pod-blocker-affinity.yaml",
                           skip_wait=True), "d")
    other = run.pods(PodsOp(1, path="templates/light-pod.yaml", skip_wait=True), "d")
    ticker = run.delete_pods(DeletePods("d", (("type", "blocker"),), per_second=10, skip_wait=True))
    assert ticker is not None
    timer = run.timer
    left = []
    for _ in range(4):
        timer.sleep(0.1)
        run.tick()
        left.append(sum(k in run.store.pods for k in keys))
    assert left == [2, 1, 0, 0] and ticker.done and other[0] in run.store.pods


def test_update_any_node_takes_the_templates_labels_spec_and_status():
    """updateAny of a Node (``Update`` then ``UpdateStatus``): labels, spec and status are the
    template's — nodeupdate-node-without-labels-update adds the zone/affinity/topology labels."""
    run = _run()
    run.nodes(NodesOp(2, path="event_handling/templates/nodeupdate-node-without-labels.yaml"), 0)
    assert "affinity" not in run.store.nodes["node-without-labels-1"].metadata.labels
    run.wait_ticker(run.update_any(UpdateAny("event_handling/templates/nodeupdate-node-without-labels-update.yaml",
                                             2, per_second=100)), "updates")
    node = run.store.nodes["node-without-labels-1"]
    assert node.metadata.labels == {"topology.kubernetes.io/zone": "zone1", "affinity": "allow", "topology": "allow"}
    assert [t.key for t in node.spec.taints] == ["allow"] and str(node.status.capacity["pods"]) == "3000"


def test_update_any_pod_fields_and_resize():
    """updateAny of a Pod changes what a pod update may change (labels, tolerations, removing
    scheduling gates); with ``subresources: [resize]`` only the containers' resources."""
    run = _run("EventHandlingPodUpdate/1Node_10Pods")
    run.nodes(NodesOp(1, path="templates/node-with-name.yaml"), 0)
    gated = run.pods(PodsOp(1, path="event_handling/templates/podupdate-pod-schedulinggates.yaml",
                            skip_wait=True), "g")
    pod = run.store.pods[gated[0]]
    assert [c.reason for c in pod.status.conditions] == ["SchedulingGated"]  # the API server's condition
    run.update_any(UpdateAny("event_handling/templates/podupdate-pod-schedulinggates-update.yaml", 1, "g"))
    assert run.store.pods[gated[0]].spec.scheduling_gates == []
    run.wait_scheduled({"g": 1})
    blockers = run.pods(PodsOp(2, path="event_handling/templates/podupdate-pod-blocker.yaml"), "blocker")
    run.update_any(UpdateAny("event_handling/templates/podupdate-pod-blocker-scale-down.yaml", 2, "blocker",
                             subresources=("resize",)))
    b = run.store.pods[blockers[1]]
    assert b.metadata.labels["topology"] == "blue"  # resize leaves the labels alone
    assert str(b.spec.containers[0].resources.requests["memory"]) == "1Mi"
    run.update_any(UpdateAny("event_handling/templates/podupdate-pod-blocker-update.yaml", 2, "blocker"))
    assert run.store.pods[blockers[1]].metadata.labels == {}


def test_churn_of_nodes_pods_and_services():
    """SchedulingWithMixedChurn's churn: one tick creates a node, a high-priority pod and a service;
    the next deletes all three."""
    run = _run("SchedulingWithMixedChurn/10Nodes")
    op = WORKLOADS["SchedulingWithMixedChurn/10Nodes"].ops[1]
    assert isinstance(op, Churn)
    run.start_churn(op)
    state = run.churns[0]
    run.churn_tick(state)
    assert [n for n in run.store.nodes if n.startswith("node-churn-")]
    assert [k for k in run.store.pods if k.startswith("namespace-1/pod-h-")]
    assert len(run.store.list("Service", "namespace-1")) == 1
    run.churn_tick(state)
    assert not [n for n in run.store.nodes if n.startswith("node-churn-")]
    assert not run.store.pods and not run.store.list("Service", "namespace-1")


def test_gated_and_finalizer_workloads():
    """SchedulingWhileGated: the gated pods stay unscheduled to the end; the measured pods all bind.
    SchedulingDeletedPodsWithFinalizers: the deleted pods stay (finalizers), marked for deletion."""
    seen = {}

    def gated(store, sched):
        seen["gated"] = [p for p in store.list("Pod", "namespace-1")]

    res = execute(WORKLOADS["SchedulingWhileGated/1Node_10GatedPods"], seed=1, inspect=gated, timer=VirtualTimer())
    assert len(seen["gated"]) == 10 and not any(p.spec.node_name for p in seen["gated"])
    assert res.scheduled == res.measured_pods == 10

    def fin(store, sched):
        seen["fin"] = store.list("Pod", "namespace-1")

    res = execute(WORKLOADS["SchedulingDeletedPodsWithFinalizers/10Node_100DeletingPods"], seed=1, inspect=fin,
                  timer=VirtualTimer(attempt_s=0.02))
    assert len(seen["fin"]) == 10 and res.scheduled == 10
    assert all(p.spec.node_name or p.metadata.deletion_timestamp for p in seen["fin"])
    assert any(p.metadata.deletion_timestamp for p in seen["fin"])


def test_extended_resource_pods_find_their_node():
    """misc/SchedulingWithExtendedResource: pod i requests ``foo.com/bar-i``, which only node i of
    the extended-resource nodes has."""
    seen = {}

    def inspect(store, sched):
        seen["pairs"] = [(p.metadata.name, store.nodes[p.spec.node_name]) for p in store.list("Pod", "test")]

    res = execute(WORKLOADS["SchedulingWithExtendedResource/fast_DRAExtendedResourceEnabled"], seed=1,
                  inspect=inspect)
    assert res.scheduled == 10
    for name, node in seen["pairs"]:
        i = name.rsplit("-", 1)[1]
        assert f"foo.com/bar-{i}" in node.status.capacity




@pytest.mark.parametrize("mode", ["", "single", "all"])
def test_disruption_mode_victims(mode):
    """PreemptionPodGroupDisruptionMode on 2 nodes: 4 low-priority pods of 1500m (2 groups of 2, or
    plain pods), one 3970m preemptor. Plain pods and ``single``: only the chosen node's two pods
    go; ``all``: every scheduled member of each victim's group goes (upstream
    ``podgrouppreemption``: a group with disruptionMode all is one victim unit)."""
    seen = {}

    def inspect(store, sched):
        seen["victims"] = [pr.victim for pr in store.preemptions]
        seen["node"] = [p.spec.node_name for p in store.list("Pod", "gang-preempt-0")]
        seen["left"] = store.list("Pod", "gang-preempt-1")

    name = {"": "FastTest_NoPodGroup", "single": "FastTest_PodGroupDisruptionMode_Single",
            "all": "FastTest_PodGroupDisruptionMode_All"}[mode]
    groups = {}

    def before(store, sched):  # the groups' members as placed before the preemption
        for p in store.list("Pod", "gang-preempt-1"):
            groups[p.metadata.name] = (p.spec.scheduling_group.pod_group_name if p.spec.scheduling_group else None,
                                       p.spec.node_name)

    w = WORKLOADS[f"PreemptionPodGroupDisruptionMode/{name}"]
    init = w.__class__(w.case, w.name, w.ops[:-1], runner=w.runner, measured_count=0, init_count=0)
    execute(init, seed=1, inspect=before, timer=VirtualTimer())
    res = execute(w, seed=1, inspect=inspect, timer=VirtualTimer())
    assert res.scheduled == 1 and len(seen["node"]) == 1 and seen["node"][0]
    victims = {v.split("/", 1)[1] for v in seen["victims"]}
    (node,) = seen["node"]
    on_node = {n for n, (_, nn) in groups.items() if nn == node}
    if mode == "all":
        hit = {groups[v][0] for v in victims}
        assert victims == {n for n, (g, _) in groups.items() if g in hit} and victims >= on_node
        assert all(g is not None for g in hit)
    else:
        assert victims == on_node and len(victims) == 2
    assert len(seen["left"]) == 4 - len(victims)


@needs_upstream
def test_coverage_script_lists_these_topics_as_covered():
    """benchmarks/scheduler_perf_coverage.py counts the topics of this module as fully covered."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "scheduler_perf_coverage.py"
    out = subprocess.run([sys.executable, str(script), "--missing"], capture_output=True, text=True,
                         check=True).stdout
    rows = ["| event_handling | EventHandlingPodUpdate | 2/2 | – |", "| default_preemption | Unschedulable | 8/8 | – |",
            "| misc | SchedulingBasic | 8/8 | – |", "| misc | SchedulingWithMixedChurn | 4/4 | – |",
            "| affinity | SchedulingGatedPodsWithPodAffinityImpactForThroughput | 2/2 | – |"]
    for row in rows:
        assert row in out


def test_node_declared_features_disabled_runs_the_harness_gates_with_137_behaviour():
    """SchedulingBasic/5000Nodes_50000Pods_NodeDeclaredFeaturesDisabled (scaled down to 5 nodes): as upstream's
    harness (scheduler_perf.go, v1.37.2), the gate registry emulates 1.36 because the workload disables the
    gate locked at 1.37, the gates depending on it are turned off, and the code is still 1.37's — the
    profile is v1.37's plugin order without NodeDeclaredFeatures, the threshold v1.37's."""
    from kubesched.sim.bench_events import _basic_variant, _p3
    from kubesched.sim.bench_podgroup import workload_features

    key = "SchedulingBasic/5000Nodes_50000Pods_NodeDeclaredFeaturesDisabled"
    fg = workload_features(key)
    assert (fg.emulated_version, fg.gate_emulation_version, fg.min_compatibility_version) == ((1, 37), (1, 36), (1, 35))
    assert not fg.enabled("NodeDeclaredFeatures") and not fg.enabled("InPlacePodVerticalScalingInitContainers")
    assert fg.at_least(1, 37) and not fg.enabled("StorageCapacityScoring")  # alpha at 1.36, beta on at 1.37
    # an emulated 1.35 is left at 1.35 (the harness only ever lowers 1.37 to 1.36)
    from kubesched.features import FeatureGate

    assert workload_features(key, FeatureGate.from_flags("1.35")).gate_emulation_version == (1, 35)
    w = WORKLOADS[key]
    small = w.__class__(w.case, w.name, tuple(_basic_variant(_p3(5, 5, 10))), w.threshold, labels=w.labels,
                        runner=w.runner)
    seen = {}

    def inspect(store, sched):
        prof = next(iter(sched.profiles.values()))
        seen["filters"] = [p.name for p in prof.filter_plugins]
        seen["features"] = sched.features

    res = execute(small, seed=1, inspect=inspect)
    assert res.scheduled == res.measured_pods == 10 and res.threshold == 790
    assert "NodeDeclaredFeatures" not in seen["filters"]
    assert seen["filters"].index("NodeName") < seen["filters"].index("NodeUnschedulable")  # v1.37's order
    assert seen["features"] == fg

def test_deleting_pods_scheduled_ahead_are_outside_the_window(monkeypatch):
    """SchedulingDeletedPodsWithFinalizers queues the deleting pods ahead of the measured ones; upstream's
    collector starts at the first measured pod scheduled, so the window's CPU leaves their cycles out.
    The CPU clock here counts scheduling attempts."""
    from kubesched.scheduler import scheduler as sm

    n = [0]
    orig = sm.Scheduler.schedule_one

    def counted(self, *a, **k):
        n[0] += 1
        return orig(self, *a, **k)

    monkeypatch.setattr(sm.Scheduler, "schedule_one", counted)
    monkeypatch.setattr("kubesched.sim.bench_runner.time.process_time", lambda: float(n[0]))
    res = execute(WORKLOADS["SchedulingDeletedPodsWithFinalizers/10Node_100DeletingPods"], seed=1)
    assert res.scheduled == 10 and res.window_first == 1
    # 10 deleting pods and 10 measured pods attempted in the loop; the window holds the 9 after the first bind
    assert res.measured_cpu_s == 20.0 and res.window_cpu_s == 9.0
    assert res.per_cpu_window == 1.0 and res.per_cpu == 0.5
