"""NodeName / NodeUnschedulable / TaintToleration as v1.37.2: the 1.37 PreFilters, the deferred-resize
Skip (alpha gate), toleration operators Lt/Gt (gate TaintTolerationComparisonOperators).

Ported from upstream v1.37.2 node_name_test.go (TestNodeName_PreFilter),
taint_toleration_test.go (TestTaintTolerationScore / TestTaintTolerationFilter /
TestTaintTolerationFilterWithFeatureGate Lt/Gt cases, TestTaintToleration_DeferredResizeSkipped),
node_unschedulable_test.go (TestNodeUnschedulable_DeferredResizeSkipped) and k8s.io/api
toleration_test.go (numeric comparison)."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.api.objects import Taint, Toleration
from kubesched.api.taints import tolerates
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, PreFilterResult, Status
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable
from kubesched.plugins import nodename, nodeunschedulable, tainttoleration
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

V134 = FeatureGate(emulated_version=(1, 34))
V136 = FeatureGate(emulated_version=(1, 36))
V137 = FeatureGate()
CMP_ON = FeatureGate.from_flags(feature_gates="TaintTolerationComparisonOperators=true")
RESIZE_ON = FeatureGate.from_flags(feature_gates="InPlacePodVerticalScalingSchedulerPreemption=true")
UNTOLERATED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node(s) had untolerated taint(s)",))


def handle(fg: FeatureGate) -> Handle:
    return Handle(nodes=NodeTable(), features=fg)


# ─── PreFilter per version ───
@pytest.mark.parametrize("module", [nodename, nodeunschedulable, tainttoleration])
@pytest.mark.parametrize("fg,has", [(V134, False), (V136, False), (V137, True)], ids=["1.34", "1.36", "1.37"])
def test_pre_filter_exists_since_137(module, fg, has):
    assert hasattr(module.new(None, handle(fg)), "pre_filter") == has


@pytest.mark.parametrize("pod,want", [
    (MakePod().node("foo"), PreFilterResult(frozenset({"foo"}))),
    (MakePod(), None),
], ids=["assigned pod with nodeName set, prefilter restricts to assigned node",
        "unassigned pod without nodeName set, prefilter returns nil"])
def test_node_name_pre_filter(pod, want):
    p = pod.obj()
    pl = nodename.new(None, handle(V137))
    assert pl.pre_filter(CycleState(PodInfo(p)), p, None) == (want, None)


@pytest.mark.parametrize("module", [nodeunschedulable, tainttoleration])
def test_pre_filter_is_a_no_op_without_deferred_resize(module):
    deferred = MakePod().name("p").condition("PodResizePending", "True", "Deferred").obj()
    plain = MakePod().name("p").obj()
    pl = module.new(None, handle(V137))  # the alpha gate is off
    assert pl.pre_filter(CycleState(PodInfo(deferred)), deferred, None) == (None, None)
    assert pl.pre_filter(CycleState(PodInfo(plain)), plain, None) == (None, None)


@pytest.mark.parametrize("module,node", [
    (nodeunschedulable, MakeNode().name("node1").unschedulable()),
    (tainttoleration, MakeNode().name("node1").taint("foo", "bar", "NoSchedule")),
], ids=["NodeUnschedulable", "TaintToleration"])
def test_deferred_resize_skipped(module, node):
    pod = MakePod().name("p").uid("p").condition("PodResizePending", "True", "Deferred").obj()
    table = build_table([node.obj()])
    pl = module.new(None, handle(RESIZE_ON))
    res, st = pl.pre_filter(CycleState(PodInfo(pod)), pod, table)
    assert res is None and st.code == Code.SKIP
    assert pl.filter(CycleState(PodInfo(pod)), pod, table.get("node1")) is None
    assert pl.filter_nodes(CycleState(PodInfo(pod)), pod, table, table.order()) is None
    # a resize that is only pending (not deferred) is filtered as usual
    other = MakePod().name("p").condition("PodResizePending", "True", "Infeasible").obj()
    assert pl.filter(CycleState(PodInfo(other)), other, table.get("node1")) is not None


def test_scheduling_a_pod_with_node_name_at_137_evaluates_only_that_node():
    """1.37: NodeName's PreFilterResult leaves only ``spec.nodeName``; the other nodes get the
    framework's absent-node status, so the message names the PreFilter plugin."""
    from kubesched.scheduler import Scheduler
    from kubesched.scheduler.schedule_pod import schedule_pod

    def message(fg: FeatureGate) -> str:
        sched = Scheduler(None, features=fg)
        for n in ("n1", "n2", "n3"):
            sched.on_node_add(MakeNode().name(n).capacity(cpu="1", memory="1Gi", pods="10").obj())
        pod = MakePod().name("p").node("n2").req(cpu="2").obj()
        res = schedule_pod(sched.profiles["default-scheduler"], CycleState(PodInfo(pod)), pod, sched.table,
                           sched.sampler, sched.rng)
        assert isinstance(res, Status) and res.code == Code.UNSCHEDULABLE
        return res.message()

    assert message(V137) == ("0/3 nodes are available: 1 Insufficient cpu, "
                             "2 node(s) didn't satisfy plugin(s) [NodeName].")
    assert message(V134) == ("0/3 nodes are available: 1 Insufficient cpu, "
                             "2 node(s) didn't match the requested node name.")


# ─── Lt / Gt ───
def _tol(key: str, op: str, value: str, effect: str = "NoSchedule") -> Toleration:
    return Toleration(key=key, operator=op, value=value, effect=effect)


def _taint(key: str, value: str, effect: str = "NoSchedule") -> Taint:
    return Taint(key=key, value=value, effect=effect)


@pytest.mark.parametrize("op,tol_value,taint_value,want", [
    ("Gt", "950", "800", False), ("Gt", "750", "950", True),
    ("Lt", "800", "950", False), ("Lt", "950", "800", True),
    ("Gt", "950", "high", False), ("Lt", "high", "1", False),
    ("Gt", "-5", "-4", True), ("Lt", "0", "-1", True), ("Gt", "5", "5", False),
    ("Gt", "01", "5", False), ("Gt", "1", "05", False), ("Gt", "-0", "5", False), ("Gt", "+1", "5", False),
    ("Lt", "9223372036854775808", "1", False), ("Gt", "-9223372036854775808", "0", True),
    ("Gt", "", "5", False),
])
def test_numeric_comparison(op, tol_value, taint_value, want):
    assert tolerates(_tol("k", op, tol_value), _taint("k", taint_value), comparison_operators=True) == want
    assert tolerates(_tol("k", op, tol_value), _taint("k", taint_value)) is False  # gate off


FILTER = [
    ("Gt below threshold", [_tol("node.example.com/priority-level", "Gt", "950")],
     [_taint("node.example.com/priority-level", "800")], True, UNTOLERATED),
    ("Gt above threshold", [_tol("node.kubernetes.io/sla", "Gt", "750")],
     [_taint("node.kubernetes.io/sla", "950")], True, None),
    ("Lt above threshold", [_tol("node.example.com/priority-level", "Lt", "800")],
     [_taint("node.example.com/priority-level", "950")], True, UNTOLERATED),
    ("Lt below threshold", [_tol("node.kubernetes.io/sla", "Lt", "950")],
     [_taint("node.kubernetes.io/sla", "800")], True, None),
    ("Gt non-numeric taint", [_tol("node.kubernetes.io/sla", "Gt", "950")],
     [_taint("node.kubernetes.io/sla", "high")], True, UNTOLERATED),
    ("Gt gate disabled", [_tol("node.kubernetes.io/sla", "Gt", "750")],
     [_taint("node.kubernetes.io/sla", "950")], False, UNTOLERATED),
    ("Lt gate disabled", [_tol("node.kubernetes.io/sla", "Lt", "950")],
     [_taint("node.kubernetes.io/sla", "800")], False, UNTOLERATED),
    ("mixed, gate disabled, only Equal honored", [_tol("dedicated", "Equal", "user1"),
                                                  _tol("node.kubernetes.io/sla", "Gt", "750")],
     [_taint("dedicated", "user1")], False, None),
    ("mixed, Gt needed but gate disabled", [_tol("dedicated", "Equal", "user1"),
                                            _tol("node.kubernetes.io/sla", "Gt", "750")],
     [_taint("dedicated", "user1"), _taint("node.kubernetes.io/sla", "950")], False, UNTOLERATED),
]


def _pod_with(tols: list[Toleration]):
    b = MakePod().name("pod1")
    for t in tols:
        b.toleration(t.key, t.operator, t.value, t.effect)
    return b.obj()


def _node_with(name: str, taints: list[Taint]):
    b = MakeNode().name(name)
    for t in taints:
        b.taint(t.key, t.value, t.effect)
    return b.obj()


@pytest.mark.parametrize("tols,taints,gate,want", [c[1:] for c in FILTER], ids=[c[0] for c in FILTER])
def test_taint_toleration_filter_comparison_operators(tols, taints, gate, want):
    pod = _pod_with(tols)
    table = build_table([_node_with("nodeA", taints)])
    pl = tainttoleration.new(None, handle(CMP_ON if gate else V137))
    assert pl.filter(CycleState(PodInfo(pod)), pod, table.get("nodeA")) == want
    res = pl.filter_nodes(CycleState(PodInfo(pod)), pod, table, table.order())
    assert (None if res is None or not res.failed[0] else res.status_for(int(res.failed[0]))) == want


@pytest.mark.parametrize("op,tol_value,values,want", [
    ("Gt", "950", ["800", "999"], [0, 100]),
    ("Lt", "800", ["950", "700"], [0, 100]),
], ids=["Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
        "Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint"])
def test_taint_toleration_score_comparison_operators(op, tol_value, values, want):
    pod = _pod_with([_tol("node.kubernetes.io/sla", op, tol_value, "PreferNoSchedule")])
    table = build_table([_node_with(f"node{c}", [_taint("node.kubernetes.io/sla", v, "PreferNoSchedule")])
                         for c, v in zip("AB", values, strict=True)])
    for fg, expect in ((CMP_ON, want), (V137, [0, 0])):
        pl = tainttoleration.new(None, handle(fg))
        state = CycleState(PodInfo(pod))
        rows = table.order()
        pl.pre_score(state, pod, table, rows)
        scores = np.asarray(pl.score_nodes(state, pod, table, rows), np.int64)
        assert scores.tolist() == [pl.score(state, pod, table.node_info(r))[0] for r in rows.tolist()]
        pl.normalize_score(state, pod, scores)
        assert scores.tolist() == expect


def test_node_unschedulable_comparison_operators():
    """NodeUnschedulable asks whether the pod tolerates node.kubernetes.io/unschedulable:NoSchedule
    (value ""), which no Lt/Gt toleration does (``""`` is no decimal integer)."""
    pod = _pod_with([_tol("node.kubernetes.io/unschedulable", "Gt", "0")])
    table = build_table([MakeNode().name("n").unschedulable().obj()])
    for fg in (CMP_ON, V137):
        pl = nodeunschedulable.new(None, handle(fg))
        assert pl.filter(CycleState(PodInfo(pod)), pod, table.get("n")) is not None


def test_taint_toleration_node_hint_honours_the_gate():
    pod = _pod_with([_tol("sla", "Gt", "750")])
    old, new = _node_with("n", [_taint("sla", "100")]), _node_with("n", [_taint("sla", "950")])
    from kubesched.framework.events import QueueingHint

    assert tainttoleration.new(None, handle(CMP_ON)).is_schedulable_after_node_change(pod, old, new) == \
        QueueingHint.QUEUE
    assert tainttoleration.new(None, handle(V137)).is_schedulable_after_node_change(pod, old, new) == \
        QueueingHint.SKIP


# ─── NodeResourcesFit: the SidecarContainers rejection (v1.34.12 fit.go L265-272, gone in 1.37) ───
@pytest.mark.parametrize("fg", [V134, V136, V137], ids=["1.34", "1.36", "1.37"])
def test_fit_never_rejects_restartable_init_containers(fg):
    """1.34–1.36 rejected a pod with a restartable init container only with SidecarContainers
    off, but that gate is GA and locked on there; 1.37 removed gate and check. So no version
    rejects, and the 1.37 binary does not know the gate (it cannot be turned off)."""
    from kubesched.errors import ConfigError
    from kubesched.plugins.noderesources import fit

    pod = MakePod().name("p").init_req(sidecar=True, cpu="100m").req(cpu="100m").obj()
    pl = fit.new(None, handle(fg))
    assert pl.pre_filter(CycleState(PodInfo(pod)), pod, None) == (None, None)
    with pytest.raises(ConfigError, match="unrecognized feature gate: SidecarContainers"):
        FeatureGate.from_flags(emulated_version="1.34", feature_gates="SidecarContainers=false")
