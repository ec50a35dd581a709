"""Workload-aware preemption end to end in the simulator's store (GenericWorkload on), through the
pod-group cycle: a gang of 2 high-priority pods of 3 CPU on 3 nodes of 4 CPU, all taken by
lower-priority pods — a ``disruptionMode: all`` PodGroup over node-0 and node-1 (priority 10) and a
lone pod on node-2 (priority 100). Upstream v1.37.2 (podgrouppreemption.go): the lower-priority
units are removed, the gang placed, then the victims reprieved most important first — the lone pod
stays, the whole batch group is evicted; the members are nominated, then bound once the victims'
deletions arrive. Needs the pod-group cycle (skipped until GangScheduling is in the tree)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api import objects as o
from kubesched.features import FeatureGate
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore

pytest.importorskip("kubesched.plugins.gangscheduling")


def _node(n: str) -> dict[str, Any]:
    cap = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
            "status": {"capacity": cap, "allocatable": cap}}


def _pod(name: str, prio: int, group: str | None = None, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "3"}}}],
                            "priority": prio, "schedulerName": "default-scheduler"}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
            "spec": spec, "status": {"startTime": "2024-01-01T00:00:00Z"} if node else {}}


def _pg(name: str, prio: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid", "generation": 1,
                         "resourceVersion": "1"}, "spec": {"priority": prio, **spec}}


def test_gang_preempts_a_whole_disruption_mode_all_group() -> None:
    store = ClusterStore()
    store.keep_events = True
    sched = Scheduler(client=store, lister=store, seed=1, features=FeatureGate(overrides={"GenericWorkload": True}))
    store.scheduler = sched
    for n in ("node-0", "node-1", "node-2"):
        d = _node(n)
        store.add("Node", o.decode(o.Node, d), d)
    store.put_object("PodGroup", _pg("batch", 10, {"schedulingPolicy": {"basic": {}}, "disruptionMode": {"all": {}}}))
    store.put_object("PodGroup", _pg("trainer", 1000, {"schedulingPolicy": {"gang": {"minCount": 2}}}))
    store.flush()
    running = (_pod("b-0", 10, "batch", "node-0"), _pod("b-1", 10, "batch", "node-1"), _pod("lone", 100, None, "node-2"))
    for d in running:
        store.add("Pod", o.decode(o.Pod, d), d)
    store.flush()
    for d in (_pod("t-0", 1000, "trainer"), _pod("t-1", 1000, "trainer")):
        store.add("Pod", o.decode(o.Pod, d), d)
    for _ in range(10):  # the victims' deletions come back as events; the gang is retried after its backoff
        sched.run_until_idle(after_each=store.flush)
        store.flush()
        sched.clock.advance(5.0)
    assert sorted(store.pods) == ["default/lone", "default/t-0", "default/t-1"]
    assert store.pods["default/lone"].spec.node_name == "node-2"
    assert sorted(store.pods[f"default/t-{i}"].spec.node_name for i in range(2)) == ["node-0", "node-1"]
    assert sorted((p.victim, p.preemptor) for p in store.preemptions) == [
        ("default/b-0", "podgroup/default/trainer"), ("default/b-1", "podgroup/default/trainer")]
    notes = {msg for _t, reason, _k, msg in store.events if reason == "Preempted"}
    assert notes == {"Preempted by podgroup trainer-uid on node cluster"}
