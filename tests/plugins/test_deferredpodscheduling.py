"""DeferredPodScheduling and NodeResourcesFit's deferred-resize delta (alpha gate
InPlacePodVerticalScalingSchedulerPreemption, v1.37.2).

Ported from upstream v1.37.2 deferred_pod_scheduling_test.go (TestDeferredPodScheduling_PreFilter,
_Filter, _isSchedulableAfterNodeChange, _isSchedulableAfterNodeAdd, _Permit) and the fit.go
``adjustDeltasToAccomodateCacheDiscrepancy`` behaviour (the Filter compares only the delta of the
request over the node's cached copy of the same pod; "Unresolvable" still uses the whole request)."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from kubesched.api.objects import Node, NodePodPreemptionPolicy
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable
from kubesched.plugins import deferredpodscheduling as dps
from kubesched.plugins.noderesources import fit
from kubesched.plugins.registry import IN_TREE
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

ON = FeatureGate.from_flags(feature_gates="InPlacePodVerticalScalingSchedulerPreemption=true")
OFF = FeatureGate()


def _handle(fg: FeatureGate) -> Handle:
    return Handle(nodes=NodeTable(), features=fg)


def _deferred(name: str = "pod1", node: str = "node1") -> MakePod:
    return MakePod().name(name).uid(name).node(node).condition("PodResizePending", "True", "Deferred")


def _with_policy(node: Node, disable: list[str] | None) -> Node:
    pol = None if disable is None else NodePodPreemptionPolicy(disable_resize_preemption=disable)
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, pod_preemption_policy=pol))


def _plugin(gate_on: bool) -> dps.DeferredPodScheduling:
    return dps.new(None, _handle(ON if gate_on else OFF))


def test_registered_and_inserted_before_fit():
    from kubesched.config import default_config

    assert "DeferredPodScheduling" in IN_TREE
    names = [p.name for p in default_config(ON).profiles[0].plugins.multi_point.enabled]
    assert names.index("DeferredPodScheduling") == names.index("NodeResourcesFit") - 1
    assert "DeferredPodScheduling" not in [p.name for p in default_config(OFF).profiles[0].plugins.multi_point.enabled]


@pytest.mark.parametrize("pod,gate_on,skip", [
    (_deferred(), False, True),
    (MakePod().name("pod1").node("node1"), True, True),
    (_deferred(), True, False),
], ids=["feature gate off, deferred pod -> skip", "feature gate on, non-deferred pod -> skip",
        "feature gate on, deferred pod -> success/nil"])
def test_pre_filter(pod, gate_on, skip):
    p = pod.obj()
    res, st = _plugin(gate_on).pre_filter(CycleState(PodInfo(p)), p, None)
    assert res is None
    assert (st == Status(Code.SKIP)) if skip else st is None


DISABLED = ["policy1"]
FILTER_CASES = [
    ("feature gate off -> success (ignore disabled policy)", _deferred(), "node1", DISABLED, False, None),
    ("feature gate on, non-deferred pod -> success (ignore disabled policy)",
     MakePod().name("pod1").node("node1"), "node1", DISABLED, True, None),
    ("node has nil preemption policy -> success", _deferred(), "node1", None, True, None),
    ("node has empty disable preemption policy -> success", _deferred(), "node1", [], True, None),
    ("node has disabled preemption policy -> unschedulable", _deferred(), "node1", DISABLED, True,
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (dps.ERR_REASON_NODE_DISABLES_RESIZE_PREEMPTION,))),
    ("node name does not match pod assigned node -> unschedulable", _deferred(), "node2", None, True,
     Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("pod assigned to different node",))),
]


@pytest.mark.parametrize("pod,node_name,disable,gate_on,want", [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_filter(pod, node_name, disable, gate_on, want):
    p = pod.obj()
    node = _with_policy(MakeNode().name(node_name).obj(), disable)
    table = build_table([node])
    pl = _plugin(gate_on)
    assert pl.filter(CycleState(PodInfo(p)), p, table.get(node_name)) == want
    # the batch shape agrees with the per-node one
    res = pl.filter_nodes(CycleState(PodInfo(p)), p, table, table.order())
    got = None if res is None or res.failed[0] == 0 else res.status_for(int(res.failed[0]))
    assert got == want


def test_filter_nodes_many_nodes():
    nodes = [MakeNode().name(f"node{i}").obj() for i in range(1, 5)]
    nodes[1] = _with_policy(nodes[1], DISABLED)  # node2 disables resize preemption
    table = build_table(nodes)
    pl = _plugin(True)
    for own in ("node1", "node2"):
        p = _deferred(node=own).obj()
        rows = table.order()
        res = pl.filter_nodes(CycleState(PodInfo(p)), p, table, rows)
        want = [pl.filter(CycleState(PodInfo(p)), p, table.node_info(int(r))) for r in rows]
        got = [None if b == 0 else res.status_for(int(b)) for b in res.failed.tolist()]
        assert got == want


N_ENABLED = MakeNode().name("node1").obj()
N_DISABLED = _with_policy(MakeNode().name("node1").obj(), DISABLED)
N_OTHER = MakeNode().name("node2").obj()
CHANGE_CASES = [
    ("gate off, deferred pod, transition to enabled -> skip", _deferred(), N_DISABLED, N_ENABLED, False,
     QueueingHint.SKIP),
    ("gate on, non-deferred pod, transition to enabled -> skip", MakePod().name("pod1").node("node1"),
     N_DISABLED, N_ENABLED, True, QueueingHint.SKIP),
    ("gate on, deferred pod, node is not pod's assigned node -> skip", _deferred(), N_OTHER, N_OTHER, True,
     QueueingHint.SKIP),
    ("gate on, deferred pod, policy transition disabled -> enabled -> queue", _deferred(), N_DISABLED, N_ENABLED,
     True, QueueingHint.QUEUE),
    ("gate on, deferred pod, policy transition enabled -> disabled -> skip", _deferred(), N_ENABLED, N_DISABLED,
     True, QueueingHint.SKIP),
    ("gate on, deferred pod, other node field updated -> skip", _deferred(), N_ENABLED, N_ENABLED, True,
     QueueingHint.SKIP),
]


@pytest.mark.parametrize("pod,old,new,gate_on,want", [c[1:] for c in CHANGE_CASES], ids=[c[0] for c in CHANGE_CASES])
def test_is_schedulable_after_node_change(pod, old, new, gate_on, want):
    assert _plugin(gate_on).is_schedulable_after_node_change(pod.obj(), old, new) == want


ADD_CASES = [
    ("gate off -> skip", _deferred(), N_ENABLED, False, QueueingHint.SKIP),
    ("non-deferred pod -> skip", MakePod().name("pod1").node("node1"), N_ENABLED, True, QueueingHint.SKIP),
    ("other node added -> skip", _deferred(), N_OTHER, True, QueueingHint.SKIP),
    ("own node added with preemption enabled -> queue", _deferred(), N_ENABLED, True, QueueingHint.QUEUE),
    ("own node added with preemption disabled -> skip", _deferred(), N_DISABLED, True, QueueingHint.SKIP),
]


@pytest.mark.parametrize("pod,new,gate_on,want", [c[1:] for c in ADD_CASES], ids=[c[0] for c in ADD_CASES])
def test_is_schedulable_after_node_add(pod, new, gate_on, want):
    assert _plugin(gate_on).is_schedulable_after_node_add(pod.obj(), None, new) == want


@pytest.mark.parametrize("pod,gate_on,want", [
    (_deferred(), True, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                               ("pod resize fits, waiting for Kubelet actuation",))),
    (_deferred(), False, None),
    (MakePod().name("pod1").node("node1"), True, None),
], ids=["deferred pod -> unschedulable and unresolvable", "gate off -> success", "non-deferred pod -> success"])
def test_permit(pod, gate_on, want):
    p = pod.obj()
    assert _plugin(gate_on).permit(CycleState(PodInfo(p)), p, "node1") == (want, 0.0)


def test_events_to_register():
    from kubesched.framework.events import ActionType, EventResource

    evs = [(e.event.resource, e.event.action) for e in _plugin(True).events_to_register()]
    assert evs == [(EventResource.NODE, ActionType.UPDATE_NODE_PREEMPTION_POLICY), (EventResource.NODE, ActionType.ADD)]


# ─── NodeResourcesFit: the delta over the cached copy of the same pod ───


def _fit_status(gate: FeatureGate, want_cpu: str, cached_cpu: str, other_cpu: str, node_cpu: str = "200m",
                node: str = "node1"):
    """The resizing pod wants ``want_cpu``; the node's cache holds it at ``cached_cpu`` next to
    another pod of ``other_cpu``. Returns (per-node status, batch status) on ``node``."""
    p = _deferred().req(cpu=want_cpu, memory="100").obj()
    cached = _deferred().req(cpu=cached_cpu, memory="100").obj()
    other = MakePod().name("p1").uid("p1").node("node1").req(cpu=other_cpu, memory="100").obj()
    n1 = MakeNode().name("node1").capacity(cpu=node_cpu, memory="400", pods="10").obj()
    n2 = MakeNode().name("node2").capacity(cpu=node_cpu, memory="400", pods="10").obj()
    table = build_table([n1, n2], [cached, other])
    pl = fit.new(None, Handle(nodes=table, features=gate))
    state = CycleState(PodInfo(p))
    pl.pre_filter(state, p, table)
    row = table.row_of[node]
    single = pl.filter(state, p, table.node_info(row))
    res = pl.filter_nodes(state, p, table, np.asarray([row], np.int64))
    batch = None if res is None or res.failed[0] == 0 else res.status_for(int(res.failed[0]))
    return single, batch


INSUFFICIENT_CPU = Status(Code.UNSCHEDULABLE, ("Insufficient cpu",))


@pytest.mark.parametrize("gate,want_cpu,cached_cpu,other_cpu,node,want", [
    # upstream TestPostFilter "deferred pod resize preemption success (mitigates double counting)":
    # 200m wanted, 100m cached, a 100m victim on a 200m node: the delta (100m) does not fit
    (ON, "200m", "100m", "100m", "node1", INSUFFICIENT_CPU),
    # ... and fits once the node has the room for the delta only
    (ON, "200m", "100m", "0", "node1", None),
    # without the gate the whole request is compared (double counting)
    (OFF, "200m", "100m", "0", "node1", INSUFFICIENT_CPU),
    # the cache already holds the desired size (max(desired, allocated)): delta 0 fits unless overcommitted
    (ON, "100m", "100m", "100m", "node1", None),
    (ON, "150m", "150m", "100m", "node1", INSUFFICIENT_CPU),
    # a scale-down never gets a negative delta: 0 > free fails on an overcommitted node
    (ON, "50m", "150m", "100m", "node1", INSUFFICIENT_CPU),
    # another node than the pod's: the whole request
    (ON, "200m", "100m", "0", "node2", None),
    # the whole request beyond the node's allocatable is unresolvable
    (ON, "300m", "100m", "0", "node1", Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("Insufficient cpu",))),
], ids=["delta-short", "delta-fits", "gate-off-whole-request", "same-size-fits", "same-size-overcommitted",
        "scale-down-overcommitted", "other-node", "unresolvable"])
def test_fit_delta(gate, want_cpu, cached_cpu, other_cpu, node, want):
    single, batch = _fit_status(gate, want_cpu, cached_cpu, other_cpu, node=node)
    assert single == want
    assert batch == want


def test_fit_scalar_zero_delta_is_not_checked():
    """fit.go L767-770: a scalar resource whose delta is 0 is skipped even on an overcommitted node."""
    p = _deferred().req(**{"example.com/gpu": "2"}).obj()
    other = MakePod().name("p1").uid("p1").node("node1").req(**{"example.com/gpu": "1"}).obj()
    n1 = MakeNode().name("node1").capacity(cpu="1", memory="1Gi", pods="10", **{"example.com/gpu": "2"}).obj()
    table = build_table([n1], [p, other])  # overcommitted: 3 of 2 requested
    for gate, want in ((ON, None), (OFF, Status(Code.UNSCHEDULABLE, ("Insufficient example.com/gpu",)))):
        pl = fit.new(None, Handle(nodes=table, features=gate))
        state = CycleState(PodInfo(p))
        pl.pre_filter(state, p, table)
        assert pl.filter(state, p, table.node_info(0)) == want
        res = pl.filter_nodes(state, p, table, np.asarray([0], np.int64))
        assert (None if res is None or res.failed[0] == 0 else res.status_for(int(res.failed[0]))) == want


def test_fit_registers_scale_up_with_the_gate():
    from kubesched.framework.events import ActionType, EventResource

    def scale_up(fg: FeatureGate) -> list[EventResource]:
        return [e.event.resource for e in fit.new(None, _handle(fg)).events_to_register()
                if e.event.action == ActionType.UPDATE_POD_SCALE_UP]

    assert scale_up(ON) == [EventResource.ASSIGNED_POD, EventResource.TARGET_POD]
    assert scale_up(OFF) == []


def test_fit_hints_for_deferred_pods():
    pl = fit.new(None, _handle(ON))
    pod = _deferred().req(cpu="200m").obj()
    plain = MakePod().name("x").req(cpu="200m").obj()
    same = MakePod().name("o").uid("o").node("node1").req(cpu="100m").obj()
    other = MakePod().name("o").uid("o").node("node2").req(cpu="100m").obj()
    # isSchedulableAfterAssignedPodDelete: another node than the deferred pod's -> skip
    assert pl.is_schedulable_after_pod_event(pod, other, None) == QueueingHint.SKIP
    assert pl.is_schedulable_after_pod_event(pod, same, None) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_pod_event(plain, other, None) == QueueingHint.QUEUE
    # isSchedulableAfterTargetPodScaleUp / AssignedPodScaleUp
    assert pl.is_schedulable_after_target_pod_scale_up(pod, pod, pod) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_target_pod_scale_up(plain, plain, plain) == QueueingHint.SKIP
    assert pl.is_schedulable_after_assigned_pod_scale_up(pod, same, same) == QueueingHint.QUEUE
    assert pl.is_schedulable_after_assigned_pod_scale_up(pod, other, other) == QueueingHint.SKIP
    assert pl.is_schedulable_after_assigned_pod_scale_up(plain, same, same) == QueueingHint.SKIP
    # a scaled-down pod on another node cannot help the deferred pod
    smaller = MakePod().name("o").uid("o").node("node2").req(cpu="50m").obj()
    assert pl.is_schedulable_after_pod_event(pod, other, smaller) == QueueingHint.SKIP
    # isSchedulableAfterNodeChange: another node than the pod's -> skip
    big = MakeNode().name("node2").capacity(cpu="4", memory="1Gi", pods="10").obj()
    assert pl.is_schedulable_after_node_change(pod, None, big) == QueueingHint.SKIP
    own = MakeNode().name("node1").capacity(cpu="4", memory="1Gi", pods="10").obj()
    assert pl.is_schedulable_after_node_change(pod, None, own) == QueueingHint.QUEUE
