"""Deferred-resize pods in the scheduler (alpha gate InPlacePodVerticalScalingSchedulerPreemption,
v1.37.2): the event handlers admit an assigned pod whose resize the kubelet deferred to the queue
(eventhandlers_test.go TestEventHandlers_DeferredResize), ``handleSchedulingFailure`` requeues it
and returns early (schedule_one_test.go TestHandleSchedulingFailureForDeferredResizePod), and a
simulation preempts lower-priority pods on its node so the resize fits, as upstream's integration
test TestDeferredResizePodPreemption decides (preemption/deferred_resize_preemption_test.go):
victims evicted, the resizing pod keeps ``PodScheduled=True``, gets no nominated node and stays
queued; no eviction when it already fits, under ``preemptionPolicy: Never`` or on a node with
``spec.podPreemptionPolicy.disableResizePreemption``. Nothing changes with the gate off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.api.objects import pod_key
from kubesched.config import default_config
from kubesched.features import FeatureGate
from kubesched.framework.interface import Code, Status
from kubesched.scheduler import Scheduler
from kubesched.scheduler.attempt import handle_scheduling_failure
from kubesched.sim.manifests import load_manifests
from kubesched.sim.simulate import simulate
from kubesched.testing.wrappers import MakeNode, MakePod

ON = FeatureGate.from_flags(feature_gates="InPlacePodVerticalScalingSchedulerPreemption=true")
OFF = FeatureGate()


def _sched(fg: FeatureGate) -> Scheduler:
    s = Scheduler(features=fg)
    s.on_node_add(MakeNode().name("node1").capacity(cpu="4", memory="8Gi", pods="10").obj())
    return s


def _assigned(deferred: bool, cpu: str = "1") -> Any:
    p = MakePod().name("pod1").namespace("ns").uid("pod1").node("node1").req(cpu=cpu)
    if deferred:
        p = p.condition("PodResizePending", "True", "Deferred")
    return p.obj()


# ─── event handlers (TestEventHandlers_DeferredResize) ───


@pytest.mark.parametrize("fg,in_queue", [(ON, True), (OFF, False)], ids=["gate enabled", "gate disabled"])
def test_add_assigned_pod_with_deferred_resize(fg, in_queue):
    s = _sched(fg)
    p = _assigned(True)
    s.on_pod_add(p)
    assert (s.queue.where(pod_key(p)) is not None) == in_queue
    assert pod_key(p) in s.cache.pod_states


@pytest.mark.parametrize("fg,old_deferred,new_deferred,new_cpu,in_queue", [
    (ON, False, True, "1", True),
    (ON, True, False, "1", False),
    (ON, True, True, "2", True),
    (OFF, False, True, "1", False),
    (OFF, True, True, "2", False),
], ids=["gate enabled, transitions to deferred resize", "gate enabled, transitions out of deferred resize",
        "gate enabled, requests change while remaining deferred", "gate disabled, transitions to deferred resize",
        "gate disabled, requests change while remaining deferred"])
def test_update_assigned_pod(fg, old_deferred, new_deferred, new_cpu, in_queue):
    s = _sched(fg)
    old = _assigned(old_deferred)
    s.on_pod_add(old)
    new = _assigned(new_deferred, new_cpu)
    s.on_pod_update(old, new)
    key = pod_key(new)
    assert (s.queue.where(key) is not None) == in_queue
    assert key in s.cache.pod_states
    if in_queue:
        assert s.queue._entries[key].pod.spec.containers[0].resources.requests["cpu"] == new_cpu
    assert s.cache.pod_states[key].pod_info.requests["cpu"] == int(float(new_cpu) * 1000)


def test_delete_assigned_deferred_pod_leaves_the_queue():
    s = _sched(ON)
    p = _assigned(True)
    s.on_pod_add(p)
    s.on_pod_delete(p)
    assert s.queue.where(pod_key(p)) is None
    assert pod_key(p) not in s.cache.pod_states


# ─── simulation (TestDeferredResizePodPreemption) ───


def _node(name: str, cpu: str, disable: list[str] | None = None) -> dict[str, Any]:
    cap = {"cpu": cpu, "memory": "300", "pods": "110"}
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Node",
                            "metadata": {"name": name, "uid": "u-" + name, "labels": {"kubernetes.io/hostname": name}},
                            "status": {"allocatable": cap, "capacity": cap}}
    if disable is not None:
        body["spec"] = {"podPreemptionPolicy": {"disableResizePreemption": disable}}
    return body


def _pod(name: str, cpu: str, priority: int, node: str, deferred: bool = False,
         policy: str | None = None) -> dict[str, Any]:
    conds = [{"type": "PodScheduled", "status": "True"}]
    if deferred:
        conds.append({"type": "PodResizePending", "status": "True", "reason": "Deferred"})
    spec: dict[str, Any] = {"priority": priority, "nodeName": node, "containers": [
        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu, "memory": "100"}}}]}
    if policy:
        spec["preemptionPolicy"] = policy
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": "u-" + name},
            "spec": spec, "status": {"phase": "Running", "conditions": conds}}


def _simulate(tmp_path: Path, items: list[dict[str, Any]], fg: FeatureGate):
    f = tmp_path / "in.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    res = simulate(load_manifests([str(f)]), default_config(fg), seed=1, features=fg)
    return res


# The resizing pod wants 300m (its cached copy holds the desired size, as the cache's
# max(desired, allocated, actual)), the node has 300m.
CASES = [
    ("preempt single low priority pod", [_pod("victim-1", "200m", 0, "node1")], None, None, ["victim-1"]),
    ("preempt multiple low priority pods",
     [_pod("victim-1", "100m", 0, "node1"), _pod("victim-2", "100m", 0, "node1")], None, None,
     ["victim-1", "victim-2"]),
    ("no preemption when preemptor policy is PreemptNever", [_pod("victim-1", "200m", 0, "node1")], "Never", None, []),
    ("parking strategy when deferred resize fits on node", [], None, None, []),
    ("node-level preemption policy disables preemption", [_pod("victim-1", "200m", 0, "node1")], None,
     ["test-operator"], []),
]


@pytest.mark.parametrize("existing,policy,disable,evicted", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_deferred_resize_preemption(tmp_path, existing, policy, disable, evicted):
    items = [_node("node1", "300m", disable), _node("node2", "4"), *existing,
             _pod("preemptor-pod", "300m", 1000, "node1", deferred=True, policy=policy),
             _pod("bystander", "100m", 0, "node2")]
    res = _simulate(tmp_path, items, ON)
    pods = res.store.pods
    for p in existing:
        name = p["metadata"]["name"]
        assert (f"default/{name}" not in pods) == (name in evicted), name
    assert "default/bystander" in pods  # a lower-priority pod on another node is never a victim
    pre = pods["default/preemptor-pod"]
    assert pre.spec.node_name == "node1"
    assert pre.status.nominated_node_name == ""
    assert [(c.type, c.status) for c in pre.status.conditions if c.type == "PodScheduled"] == [("PodScheduled", "True")]
    # parked in the scheduling queue (kubelet actuates the resize; the scheduler never binds it)
    assert res.scheduler.queue.where("default/preemptor-pod") is not None


def test_gate_off_nothing_happens(tmp_path):
    items = [_node("node1", "300m"), _pod("victim-1", "200m", 0, "node1"),
             _pod("preemptor-pod", "300m", 1000, "node1", deferred=True)]
    res = _simulate(tmp_path, items, OFF)
    assert "default/victim-1" in res.store.pods
    assert res.scheduler.queue.where("default/preemptor-pod") is None
    assert sum(res.scheduler.stats.attempts.values()) == 0


# ─── handleSchedulingFailure (TestHandleSchedulingFailureForDeferredResizePod) ───


def test_handle_scheduling_failure_returns_early_for_deferred_pod(tmp_path):
    items = [_node("node1", "4"), _pod("foo", "100m", 0, "node1", deferred=True)]
    res = _simulate(tmp_path, items, ON)
    s = res.scheduler
    key = "default/foo"
    qpi = s.queue.pop() if s.queue.where(key) == "active" else None
    if qpi is None:  # flush it back to activeQ, as a retry would
        qpi = s.queue._entries[key]
        s.queue.delete(qpi.pod)
        s.queue.add(qpi.pod)
        qpi = s.queue.pop()
    assert qpi is not None and qpi.key == key
    fw = s.profiles["default-scheduler"]
    a = handle_scheduling_failure(s, fw, qpi, Status(Code.UNSCHEDULABLE, ("no fit",)), "node1", 0.0)
    assert a.result == "unschedulable"
    assert s.queue.where(key) is not None  # added back to the queue
    live = res.store.pods[key]
    scheduled = [(c.type, c.status) for c in live.status.conditions if c.type == "PodScheduled"]
    assert scheduled == [("PodScheduled", "True")]
    assert live.status.nominated_node_name == ""
    assert s.queue.nominated_node(key) is None  # no AddNominatedPod


# ─── PreFilter Skips (TestScheduler_DeferredResizePluginSkipping) ───

IRRELEVANT = {"NodeAffinity", "PodTopologySpread", "NodeVolumeLimits", "NodePorts", "VolumeBinding", "VolumeZone",
              "VolumeRestrictions", "InterPodAffinity", "NodeDeclaredFeatures", "DynamicResources", "TaintToleration",
              "NodeUnschedulable"}


def test_plugins_irrelevant_to_a_deferred_resize_are_skipped():
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import PodInfo
    from kubesched.scheduler.schedule_pod import schedule_pod

    fg = FeatureGate.from_flags(feature_gates=["InPlacePodVerticalScalingSchedulerPreemption=true",
                                               "NodeDeclaredFeatures=true"])
    s = _sched(fg)
    fw = s.profiles["default-scheduler"]
    pre_filter = {pl.name for pl in fw.pre_filter_plugins}
    assert IRRELEVANT <= pre_filter
    pod = _assigned(True)
    state = CycleState(PodInfo(pod))
    schedule_pod(fw, state, pod, s.table, s.sampler, s.rng)
    assert set(state.skip_filter_plugins) == IRRELEVANT
    # NodeName, NodeResourcesFit and DeferredPodScheduling stay relevant


def test_dynamic_resources_post_filter_for_a_deferred_pod():
    """TestScheduler_DeferredResizePostFilterPluginSkipping: with the gate DynamicResources'
    PostFilter is Unschedulable (so preemption runs); without it the missing PreFilter state is an Error."""
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import PodInfo

    pod = _assigned(True)
    for fg, code, msg in ((ON, Code.UNSCHEDULABLE, ""), (OFF, Code.ERROR, "not found")):
        fw = _sched(fg).profiles["default-scheduler"]
        dra = next(pl for pl in fw.post_filter_plugins if pl.name == "DynamicResources")
        _, st = dra.post_filter(CycleState(PodInfo(pod)), pod, None)
        assert st.code == code and st.message() == msg
