"""NodeResourcesFit: Filter tables ported from upstream fit_test.go (TestEnoughRequests,
TestNotEnoughRequests, TestStorageRequests; v1.34 codes incl. UnschedulableAndUnresolvable when a
request exceeds the node's allocatable), scoring tables from least_allocated_test.go,
most_allocated_test.go and requested_to_capacity_ratio_test.go, queueing hints, and hypothesis
checks that the batch shape equals the per-node reference on random clusters."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config.args import (
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.errors import MissingStateError
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_table import NodeTable
from kubesched.framework.events import ActionType, EventResource, QueueingHint
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.noderesources import fit as fitmod
from kubesched.plugins.noderesources.fit import Fit, InsufficientResource, fits
from kubesched.plugins.noderesources.resource_allocation import (
    broken_linear,
    go_div,
    go_round,
    is_extended_resource_name,
    is_scalar_resource_name,
)
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
A, B = "example.com/aaa", "example.com/bbb"
KA, KB = "kubernetes.io/something", "subdomain.kubernetes.io/something"
H = "hugepages-2Mi"
XYZ = "abc.com/xyz"


# ───────────────────────────── helpers ─────────────────────────────


def _q(cpu_m=None, mem=None, **extra):
    out = {}
    if cpu_m is not None:
        out["cpu"] = f"{cpu_m}m"
    if mem is not None:
        out["memory"] = str(mem)
    out.update({k: str(v) for k, v in extra.items()})
    return out


def rpod(*containers, init=(), overhead=None, name="p"):
    """Like upstream newResourcePod / newResourceInitPod: one container per request dict."""
    mp = MakePod().name(name).uid(name)
    for c in containers:
        mp.container(requests=c)
    for c in init:
        mp.container(requests=c, init=True)
    if overhead:
        mp.overhead(**overhead)
    return mp


def run_filter(plugin, pod, table):
    """(per-node statuses, batch statuses) for every row of ``table``."""
    state = CycleState(PodInfo(pod))
    _, st_ = plugin.pre_filter(state, pod, table)
    assert st_ is None
    rows = table.order()
    ref = [plugin.filter(state, pod, table.node_info(int(r))) for r in rows]
    res = plugin.filter_nodes(state, pod, table, rows)
    batch = [None if res is None or res.failed[i] == 0 else res.status_for(int(res.failed[i]))
             for i in range(len(rows))]
    return ref, batch


def fit_node(**alloc):
    return MakeNode().name("n1").capacity(**alloc).obj()


ENOUGH_NODE = {"cpu": "10m", "memory": "20", "pods": "32", A: "5", "ephemeral-storage": "20", H: "5"}


def enough_case(name, pod, existing, want=None, insufficient=(), args=None):
    return pytest.param(pod, existing, want, list(insufficient), args, id=name)


IR = InsufficientResource
ENOUGH = [
    enough_case("no resources requested always fits", MakePod(), _q(10, 20)),
    enough_case("too many resources fails", rpod(_q(1, 1)), _q(10, 20),
                Status.of(U, "Insufficient cpu", "Insufficient memory"),
                [IR("cpu", "Insufficient cpu", 1, 10, 10), IR("memory", "Insufficient memory", 1, 20, 20)]),
    enough_case("too many resources fails due to init container cpu", rpod(_q(1, 1), init=[_q(3, 1)]), _q(8, 19),
                Status.of(U, "Insufficient cpu"), [IR("cpu", "Insufficient cpu", 3, 8, 10)]),
    enough_case("too many resources fails due to highest init container cpu",
                rpod(_q(1, 1), init=[_q(3, 1), _q(2, 1)]), _q(8, 19),
                Status.of(U, "Insufficient cpu"), [IR("cpu", "Insufficient cpu", 3, 8, 10)]),
    enough_case("too many resources fails due to init container memory", rpod(_q(1, 1), init=[_q(1, 3)]), _q(9, 19),
                Status.of(U, "Insufficient memory"), [IR("memory", "Insufficient memory", 3, 19, 20)]),
    enough_case("too many resources fails due to highest init container memory",
                rpod(_q(1, 1), init=[_q(1, 3), _q(1, 2)]), _q(9, 19),
                Status.of(U, "Insufficient memory"), [IR("memory", "Insufficient memory", 3, 19, 20)]),
    enough_case("init container fits because it's the max, not sum", rpod(_q(1, 1), init=[_q(1, 1)]), _q(9, 19)),
    enough_case("multiple init containers fit because it's the max, not sum",
                rpod(_q(1, 1), init=[_q(1, 1), _q(1, 1)]), _q(9, 19)),
    enough_case("both resources fit", rpod(_q(1, 1)), _q(5, 5)),
    enough_case("one resource memory fits", rpod(_q(2, 1)), _q(9, 5),
                Status.of(U, "Insufficient cpu"), [IR("cpu", "Insufficient cpu", 2, 9, 10)]),
    enough_case("one resource cpu fits", rpod(_q(1, 2)), _q(5, 19),
                Status.of(U, "Insufficient memory"), [IR("memory", "Insufficient memory", 2, 19, 20)]),
    enough_case("equal edge case", rpod(_q(5, 1)), _q(5, 19)),
    enough_case("equal edge case for init container", rpod(_q(4, 1), init=[_q(5, 1)]), _q(5, 19)),
    enough_case("extended resource fits", rpod({A: "1"}), {}),
    enough_case("extended resource fits for init container", rpod({}, init=[{A: "1"}]), {}),
    enough_case("extended resource capacity enforced", rpod(_q(1, 1, **{A: 10})), _q(0, 0, **{A: 0}),
                Status.of(UU, f"Insufficient {A}"), [IR(A, f"Insufficient {A}", 10, 0, 5, True)]),
    enough_case("extended resource capacity enforced for init container",
                rpod({}, init=[_q(1, 1, **{A: 10})]), _q(0, 0, **{A: 0}),
                Status.of(UU, f"Insufficient {A}"), [IR(A, f"Insufficient {A}", 10, 0, 5, True)]),
    enough_case("extended resource allocatable enforced", rpod(_q(1, 1, **{A: 1})), _q(0, 0, **{A: 5}),
                Status.of(U, f"Insufficient {A}"), [IR(A, f"Insufficient {A}", 1, 5, 5)]),
    enough_case("extended resource allocatable enforced for init container",
                rpod({}, init=[_q(1, 1, **{A: 1})]), _q(0, 0, **{A: 5}),
                Status.of(U, f"Insufficient {A}"), [IR(A, f"Insufficient {A}", 1, 5, 5)]),
    enough_case("extended resource allocatable enforced for multiple containers",
                rpod(_q(1, 1, **{A: 3}), _q(1, 1, **{A: 3})), _q(0, 0, **{A: 2}),
                Status.of(UU, f"Insufficient {A}"), [IR(A, f"Insufficient {A}", 6, 2, 5, True)]),
    enough_case("extended resource allocatable admits multiple init containers",
                rpod({}, init=[_q(1, 1, **{A: 3}), _q(1, 1, **{A: 3})]), _q(0, 0, **{A: 2})),
    enough_case("extended resource allocatable enforced for multiple init containers",
                rpod({}, init=[_q(1, 1, **{A: 6}), _q(1, 1, **{A: 3})]), _q(0, 0, **{A: 2}),
                Status.of(UU, f"Insufficient {A}"), [IR(A, f"Insufficient {A}", 6, 2, 5, True)]),
    enough_case("extended resource allocatable enforced for unknown resource", rpod(_q(1, 1, **{B: 1})), _q(0, 0),
                Status.of(UU, f"Insufficient {B}"), [IR(B, f"Insufficient {B}", 1, 0, 0, True)]),
    enough_case("extended resource allocatable enforced for unknown resource for init container",
                rpod({}, init=[_q(1, 1, **{B: 1})]), _q(0, 0),
                Status.of(UU, f"Insufficient {B}"), [IR(B, f"Insufficient {B}", 1, 0, 0, True)]),
    enough_case("kubernetes.io resource capacity enforced", rpod(_q(1, 1, **{KA: 10})), _q(0, 0),
                Status.of(UU, f"Insufficient {KA}"), [IR(KA, f"Insufficient {KA}", 10, 0, 0, True)]),
    enough_case("kubernetes.io resource capacity enforced for init container",
                rpod({}, init=[_q(1, 1, **{KB: 10})]), _q(0, 0),
                Status.of(UU, f"Insufficient {KB}"), [IR(KB, f"Insufficient {KB}", 10, 0, 0, True)]),
    enough_case("hugepages resource capacity enforced", rpod(_q(1, 1, **{H: 10})), _q(0, 0, **{H: 0}),
                Status.of(UU, f"Insufficient {H}"), [IR(H, f"Insufficient {H}", 10, 0, 5, True)]),
    enough_case("hugepages resource capacity enforced for init container",
                rpod({}, init=[_q(1, 1, **{H: 10})]), _q(0, 0, **{H: 0}),
                Status.of(UU, f"Insufficient {H}"), [IR(H, f"Insufficient {H}", 10, 0, 5, True)]),
    enough_case("hugepages resource allocatable enforced for multiple containers",
                rpod(_q(1, 1, **{H: 3}), _q(1, 1, **{H: 3})), _q(0, 0, **{H: 2}),
                Status.of(UU, f"Insufficient {H}"), [IR(H, f"Insufficient {H}", 6, 2, 5, True)]),
    enough_case("skip checking ignored extended resource", rpod(_q(1, 1, **{B: 1})), _q(0, 0),
                args=NodeResourcesFitArgs(ignored_resources=[B])),
    enough_case("resources + pod overhead fits", rpod(_q(1, 1), overhead={"cpu": "3m", "memory": "13"}), _q(5, 5)),
    enough_case("requests + overhead does not fit for memory",
                rpod(_q(1, 1), overhead={"cpu": "1m", "memory": "15"}), _q(5, 5),
                Status.of(U, "Insufficient memory"), [IR("memory", "Insufficient memory", 16, 5, 20)]),
    enough_case("skip checking ignored extended resource via resource groups",
                rpod(_q(1, 1, **{B: 1, KA: 1})), _q(0, 0),
                Status.of(UU, f"Insufficient {KA}"), [IR(KA, f"Insufficient {KA}", 1, 0, 0, True)],
                args=NodeResourcesFitArgs(ignored_resource_groups=["example.com"])),
    enough_case("skip checking extended resource request with quantity zero", rpod(_q(1, 1, **{A: 0})),
                _q(0, 0, **{A: 6})),
    enough_case("skip checking resource request with quantity zero", rpod({A: "1"}), _q(20, 30, **{A: 1})),
    enough_case("ignoredResources does not apply to non-extended (hugepages) names",
                rpod(_q(1, 1, **{H: 10})), _q(0, 0), Status.of(UU, f"Insufficient {H}"),
                [IR(H, f"Insufficient {H}", 10, 0, 5, True)], args=NodeResourcesFitArgs(ignored_resources=[H])),
    enough_case("cpu, memory, storage and scalars in upstream order, worst code wins",
                rpod(_q(1, 21, **{"ephemeral-storage": 1, A: 1, H: 1})), _q(10, 0, **{"ephemeral-storage": 20, A: 5, H: 5}),
                Status.of(UU, "Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
                          f"Insufficient {A}", f"Insufficient {H}"),
                [IR("cpu", "Insufficient cpu", 1, 10, 10), IR("memory", "Insufficient memory", 21, 0, 20, True),
                 IR("ephemeral-storage", "Insufficient ephemeral-storage", 1, 20, 20),
                 IR(A, f"Insufficient {A}", 1, 5, 5), IR(H, f"Insufficient {H}", 1, 5, 5)]),
]


@pytest.mark.parametrize(("mp", "existing", "want", "want_insufficient", "args"), ENOUGH)
def test_enough_requests(mp, existing, want, want_insufficient, args):
    node = fit_node(**ENOUGH_NODE)
    ex = rpod(existing, name="existing").node("n1").obj()
    table = build_table([node], [ex])
    pod = mp.obj()
    plugin = Fit(args)
    ref, batch = run_filter(plugin, pod, table)
    assert ref == [want]
    assert batch == [want]
    got = fitmod.fits_request(fitmod.compute_fit_request(PodInfo(pod).requests, plugin.ignored_resources,
                                                         plugin.ignored_resource_groups),
                              table.node_info(0).allocatable, table.node_info(0).requested, 1)
    assert got == want_insufficient


@pytest.mark.parametrize(("mp", "existing"), [
    pytest.param(MakePod(), _q(10, 20), id="even without specified resources"),
    pytest.param(rpod(_q(1, 1)), _q(5, 5), id="even if both resources fit"),
    pytest.param(rpod(_q(5, 1)), _q(5, 19), id="even for equal edge case"),
    pytest.param(rpod(_q(5, 1), init=[_q(5, 1)]), _q(5, 19), id="even for equal edge case due to init container"),
])
def test_not_enough_requests_too_many_pods(mp, existing):
    table = build_table([fit_node(cpu="10m", memory="20", pods="1")], [rpod(existing, name="e").node("n1").obj()])
    ref, batch = run_filter(Fit(), mp.obj(), table)
    assert ref == batch == [Status.of(U, "Too many pods")]


def test_too_many_pods_comes_first_with_other_reasons():
    table = build_table([fit_node(cpu="10m", memory="20", pods="1")], [rpod(_q(10, 1), name="e").node("n1").obj()])
    ref, batch = run_filter(Fit(), rpod(_q(1, 1)).obj(), table)
    assert ref == batch == [Status.of(U, "Too many pods", "Insufficient cpu")]


def test_node_without_pods_allocatable_rejects_everything():
    table = build_table([fit_node(cpu="10m", memory="20")])
    ref, batch = run_filter(Fit(), MakePod().obj(), table)
    assert ref == batch == [Status.of(U, "Too many pods")]


@pytest.mark.parametrize(("mp", "existing", "want"), [
    pytest.param(rpod(_q(1, 1)), _q(2, 10), None, id="empty storage requested, and pod fits"),
    pytest.param(rpod({"ephemeral-storage": "25"}), _q(2, 2), Status.of(UU, "Insufficient ephemeral-storage"),
                 id="storage ephemeral local storage request exceeds allocatable"),
    pytest.param(rpod({"ephemeral-storage": "5"}), _q(2, 2, **{"ephemeral-storage": 10}), None,
                 id="ephemeral local storage is sufficient"),
    pytest.param(rpod({"ephemeral-storage": "11"}), _q(2, 2, **{"ephemeral-storage": 10}),
                 Status.of(U, "Insufficient ephemeral-storage"), id="ephemeral local storage is insufficient"),
    pytest.param(rpod({"ephemeral-storage": "10"}), _q(2, 2), None, id="pod fits"),
])
def test_storage_requests(mp, existing, want):
    table = build_table([fit_node(**ENOUGH_NODE)], [rpod(existing, name="e").node("n1").obj()])
    ref, batch = run_filter(Fit(), mp.obj(), table)
    assert ref == batch == [want]


def test_filter_without_prefilter_state_is_an_error():
    table = build_table([fit_node(**ENOUGH_NODE)])
    pod = MakePod().obj()
    with pytest.raises(MissingStateError):
        Fit().filter(CycleState(PodInfo(pod)), pod, table.node_info(0))
    with pytest.raises(MissingStateError):
        Fit().filter_nodes(CycleState(PodInfo(pod)), pod, table, table.order())


def test_filter_nodes_returns_none_when_all_fit_and_uses_rows_order():
    nodes = [MakeNode().name(f"n{i}").capacity(cpu=f"{i}", memory="1Gi", pods="10").obj() for i in range(1, 5)]
    table = build_table(nodes)
    pod = rpod({"cpu": "2500m"}).obj()
    plugin = Fit()
    state = CycleState(PodInfo(pod))
    plugin.pre_filter(state, pod, table)
    rows = np.array([table.row_of["n4"], table.row_of["n1"], table.row_of["n3"]], np.int64)
    res = plugin.filter_nodes(state, pod, table, rows)
    assert [res.status_for(int(b)) if b else None for b in res.failed] == [
        None, Status.of(UU, "Insufficient cpu"), None]
    assert plugin.filter_nodes(state, pod, table, rows[[0, 2]]) is None


def test_fits_helper_is_upstream_Fits():
    table = build_table([fit_node(cpu="1", memory="1Gi", pods="2", **{A: "1"})],
                        [rpod({"cpu": "500m"}, name="e").node("n1").obj()])
    ni = table.node_info(0)
    assert fits({"cpu": 500}, ni) == []
    assert fits({"cpu": 501, A: 2}, ni) == [IR("cpu", "Insufficient cpu", 501, 500, 1000),
                                           IR(A, f"Insufficient {A}", 2, 0, 1, True)]


def test_resource_name_helpers():
    assert is_extended_resource_name(A) and is_extended_resource_name("nvidia.com/gpu")
    assert not is_extended_resource_name(KA) and not is_extended_resource_name("cpu")
    assert not is_extended_resource_name("foo") and not is_extended_resource_name("requests.foo/bar")
    assert is_scalar_resource_name(KA) and is_scalar_resource_name(KB) and is_scalar_resource_name(H)
    assert is_scalar_resource_name("attachable-volumes-csi-x") and is_scalar_resource_name(A)
    assert not is_scalar_resource_name("pods") and not is_scalar_resource_name("foo")


# ───────────────────────────── scoring ─────────────────────────────

DEFAULT_RES = [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
EXT_RES = DEFAULT_RES + [ResourceSpec(name=XYZ, weight=1)]


def snode(name, **cap):
    mn = MakeNode().name(name)
    if cap:
        mn.capacity(**cap)
    return mn.obj()


def spod(*containers, node=None, name="p"):
    mp = MakePod().name(name).uid(name)
    for c in containers:
        mp.container(requests=c)
    if node:
        mp.node(node)
    return mp.obj()


def scores_both(plugin, pod, nodes, existing=()):
    table = build_table(nodes, list(existing))
    state = CycleState(PodInfo(pod))
    rows = np.asarray([table.row_of[n.metadata.name] for n in nodes], np.int64)
    st_ = plugin.pre_score(state, pod, table, rows)
    ref = []
    for r in rows:
        s, status = plugin.score(state, pod, table.node_info(int(r)))
        assert status is None
        ref.append(s)
    batch = plugin.score_nodes(state, pod, table, rows)
    assert batch.dtype == np.int64
    return st_, ref, batch.tolist()


def fit_args(kind, resources, shape=None):
    rtcr = RequestedToCapacityRatioParam(shape=[UtilizationShapePoint(utilization=u, score=s) for u, s in shape]) \
        if shape else None
    return NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type=kind, resources=resources,
                                                                 requested_to_capacity_ratio=rtcr))


C12 = ({"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"})
N4_10 = [snode("node1", cpu="4000", memory="10000"), snode("node2", cpu="4000", memory="10000")]
N4_6 = [snode("node1", cpu="4000", memory="10000"), snode("node2", cpu="6000", memory="10000")]
N10_20 = [snode("node1", cpu="10000", memory="20000"), snode("node2", cpu="10000", memory="20000")]
N10_50 = [snode("node1", cpu="10000", memory="20000"), snode("node2", cpu="10000", memory="50000")]
NEXT = [snode("node1", cpu="6000", memory="10000"), snode("node2", cpu="6000", memory="10000", **{XYZ: "4"})]
NEXT2 = [snode("node1", cpu="6000", memory="10000", **{XYZ: "4"}),
         snode("node2", cpu="6000", memory="10000", **{XYZ: "10"})]
EMPTY2 = [spod(node="node1", name="e1"), spod(node="node1", name="e2"), spod(node="node2", name="e3"),
          spod(node="node2", name="e4")]
CPU_ONLY_4 = [spod({"cpu": "3000", "memory": "0"}, node="node1", name="e1"),
              spod({"cpu": "3000", "memory": "0"}, node="node1", name="e2"),
              spod({"cpu": "3000", "memory": "0"}, node="node2", name="e3"),
              spod({"cpu": "3000", "memory": "5000"}, node="node2", name="e4")]
ONE_EACH = [spod({"cpu": "3000", "memory": "0"}, node="node1", name="e1"),
            spod({"cpu": "3000", "memory": "5000"}, node="node2", name="e2")]

LEAST = [
    pytest.param(spod(), N4_10, (), DEFAULT_RES, [100, 100], id="nothing scheduled, nothing requested"),
    pytest.param(spod(*C12), N4_6, (), DEFAULT_RES, [37, 50], id="resources requested, differently sized nodes"),
    pytest.param(spod(), N4_10, EMPTY2, DEFAULT_RES, [100, 100], id="no resources requested, pods scheduled"),
    pytest.param(spod(), N10_20, CPU_ONLY_4, DEFAULT_RES, [70, 57],
                 id="no resources requested, pods scheduled with resources"),
    pytest.param(spod(*C12), N10_20, ONE_EACH, DEFAULT_RES, [57, 45],
                 id="resources requested, pods scheduled with resources"),
    pytest.param(spod(*C12), N10_50, ONE_EACH, DEFAULT_RES, [57, 60],
                 id="resources requested, pods scheduled with resources, differently sized nodes"),
    pytest.param(spod({"cpu": "3000", "memory": "0"}), N4_10, ONE_EACH, DEFAULT_RES, [50, 25],
                 id="requested resources exceed node capacity"),
    pytest.param(spod(), [snode("node1"), snode("node2")], ONE_EACH, DEFAULT_RES, [0, 0],
                 id="zero node resources, pods scheduled with resources"),
    pytest.param(spod(*C12), N4_6, (), [ResourceSpec(name="memory", weight=2), ResourceSpec(name="cpu", weight=1)],
                 [41, 50], id="different weight on CPU and memory"),
    pytest.param(spod(*C12), NEXT, (), EXT_RES, [50, 50], id="bypass extended resource if the pod does not request"),
    pytest.param(spod({"cpu": "3000", "memory": "5000", XYZ: "2"}), NEXT2, (), EXT_RES, [50, 60],
                 id="honor extended resource if the pod requests"),
    pytest.param(spod({"cpu": "3000", "memory": "4000"}), NEXT, (),
                 [ResourceSpec(name=XYZ, weight=2)] + DEFAULT_RES, [55, 55], id="if the node doesn't have a resource"),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "want"), LEAST)
def test_least_allocated(pod, nodes, existing, resources, want):
    st_, ref, batch = scores_both(Fit(fit_args("LeastAllocated", resources)), pod, nodes, existing)
    assert st_ is None
    assert ref == batch == want


MOST = [
    pytest.param(spod(), N4_10, (), DEFAULT_RES, [0, 0], id="nothing scheduled, nothing requested"),
    pytest.param(spod(*C12), N4_6, (), DEFAULT_RES, [62, 50], id="resources requested, differently sized nodes"),
    pytest.param(spod(), N10_20, CPU_ONLY_4, DEFAULT_RES, [30, 42],
                 id="no resources requested, pods scheduled with resources"),
    pytest.param(spod(*C12), N10_20, ONE_EACH, DEFAULT_RES, [42, 55],
                 id="resources requested, pods scheduled with resources"),
    pytest.param(spod({"cpu": "2000", "memory": "4000"}, {"cpu": "3000", "memory": "5000"}),
                 [snode("node1", cpu="5000", memory="10000"), snode("node2", cpu="10000", memory="9000")], (),
                 DEFAULT_RES, [95, 75], id="resources requested equal node capacity"),
    pytest.param(spod(*C12), N4_6, (), [ResourceSpec(name="memory", weight=2), ResourceSpec(name="cpu", weight=1)],
                 [58, 50], id="different weight on CPU and memory"),
    pytest.param(spod({}), [snode("node1", cpu="250m", memory="1000Mi"), snode("node2", cpu="250m", memory="1000Mi")],
                 [spod({}, node="node1", name="e1"), spod({}, node="node1", name="e2")], DEFAULT_RES, [80, 30],
                 id="no resources requested, pods scheduled, nonzero request for resource"),
    pytest.param(spod(*C12), NEXT, (), EXT_RES, [50, 50], id="bypass extended resource if the pod does not request"),
    pytest.param(spod({"cpu": "3000", "memory": "5000", XYZ: "2"}), NEXT2, (), EXT_RES, [50, 40],
                 id="honor extended resource if the pod request"),
    pytest.param(spod({"cpu": "3000", "memory": "4000"}), NEXT, (),
                 [ResourceSpec(name=XYZ, weight=2)] + DEFAULT_RES, [45, 45], id="if the node doesn't have a resource"),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "want"), MOST)
def test_most_allocated(pod, nodes, existing, resources, want):
    _, ref, batch = scores_both(Fit(fit_args("MostAllocated", resources)), pod, nodes, existing)
    assert ref == batch == want


def _mk(name, milli, mem, ext=None):
    cap = {"cpu": f"{milli}m", "memory": str(mem)}
    cap.update({k: str(v) for k, v in (ext or {}).items()})
    return snode(name, **cap)


FOO, BAR = "intel.com/foo", "intel.com/bar"
SINGLE = [_mk("node1", 4000, 10000 * 1024 * 1024, {FOO: 8}), _mk("node2", 4000, 10000 * 1024 * 1024, {FOO: 4})]
MULTI = [_mk("node1", 4000, 10000 * 1024 * 1024, {FOO: 8, BAR: 4}),
         _mk("node2", 4000, 10000 * 1024 * 1024, {FOO: 4, BAR: 8})]
SHAPE_DOWN = [(0, 10), (100, 0)]
SHAPE_UP = [(0, 0), (100, 1)]

RTCR = [
    pytest.param(spod(), N4_10, [spod(node="node1", name="e1"), spod(node="node1", name="e2")], DEFAULT_RES,
                 SHAPE_DOWN, [100, 100], id="nothing scheduled, nothing requested"),
    pytest.param(spod(*C12), N4_6, [spod(node="node1", name="e1"), spod(node="node1", name="e2")], DEFAULT_RES,
                 SHAPE_DOWN, [38, 50], id="resources requested, differently sized nodes (round half away from zero)"),
    pytest.param(spod(), N4_6, [spod({"cpu": "3000", "memory": "5000"}, node="node1", name="e1"),
                                spod({"cpu": "3000", "memory": "5000"}, node="node2", name="e2")], DEFAULT_RES,
                 SHAPE_DOWN, [38, 50], id="no resources requested, pods scheduled with resources"),
    pytest.param(spod(), SINGLE, (), [ResourceSpec(name=FOO, weight=1)], SHAPE_UP, [0, 0],
                 id="single extended: nothing requested"),
    pytest.param(spod({FOO: "2"}), SINGLE, [spod()], [ResourceSpec(name=FOO, weight=1)], SHAPE_UP, [2, 5],
                 id="single extended: pods scheduled with less resources"),
    pytest.param(spod({FOO: "2"}), SINGLE, [spod({FOO: "2"}, node="node2", name="e")],
                 [ResourceSpec(name=FOO, weight=1)], SHAPE_UP, [2, 10], id="single extended: existing pod running"),
    pytest.param(spod({FOO: "4"}), SINGLE, [spod()], [ResourceSpec(name=FOO, weight=1)], SHAPE_UP, [5, 10],
                 id="single extended: pods scheduled with more resources"),
    pytest.param(spod(), MULTI, (), [ResourceSpec(name=FOO, weight=3), ResourceSpec(name=BAR, weight=5)], SHAPE_UP,
                 [0, 0], id="multiple extended: nothing requested"),
    pytest.param(spod({FOO: "2", BAR: "2"}), MULTI, (),
                 [ResourceSpec(name=FOO, weight=3), ResourceSpec(name=BAR, weight=5)], SHAPE_UP, [4, 3],
                 id="multiple extended: less resources"),
    pytest.param(spod({FOO: "2", BAR: "2"}), MULTI, [spod({FOO: "4", BAR: "2"}, node="node2", name="e")],
                 [ResourceSpec(name=FOO, weight=3), ResourceSpec(name=BAR, weight=5)], SHAPE_UP, [4, 7],
                 id="multiple extended: existing pod running"),
    pytest.param(spod({FOO: "4", BAR: "2"}), MULTI, (),
                 [ResourceSpec(name=FOO, weight=3), ResourceSpec(name=BAR, weight=5)], SHAPE_UP, [5, 5],
                 id="multiple extended: more resources"),
]


def _norm_existing(existing, nodes):
    # pods without spec.nodeName are not on any node (upstream's snapshot ignores them)
    return [p for p in existing if p.spec.node_name]


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "shape", "want"), RTCR)
def test_requested_to_capacity_ratio(pod, nodes, existing, resources, shape, want):
    plugin = Fit(fit_args("RequestedToCapacityRatio", resources, shape))
    _, ref, batch = scores_both(plugin, pod, nodes, _norm_existing(existing, nodes))
    assert ref == batch == want


@pytest.mark.parametrize(("points", "checks"), [
    ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9),
                          (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
    # decreasing segment: Go truncates the negative quotient toward zero (-33/40 → 0, not -1)
    ([(0, 10), (40, 9)], [(33, 10), (40, 9)]),
], ids=["case_0", "case_1", "case_2", "truncation"])
def test_broken_linear_function(points, checks):
    from kubesched.plugins.noderesources.resource_allocation import _broken_linear_array

    for p, want in checks:
        assert broken_linear(points, p) == want
    arr = _broken_linear_array(points, np.array([p for p, _ in checks], np.int64))
    assert arr.tolist() == [w for _, w in checks]


def test_go_arithmetic():
    assert go_div(-7, 2) == -3 and go_div(7, -2) == -3 and go_div(7, 2) == 3
    assert go_div(np.array([-7, 7, -8]), np.array([2, 2, 3])).tolist() == [-3, 3, -2]
    assert go_round(37.5) == 38 and go_round(2.5) == 3 and go_round(-2.5) == -3 and go_round(0.49999999999999994) == 0
    assert go_round(np.array([37.5, 2.5, 0.49999999999999994, 3.875])).tolist() == [38, 3, 0, 4]


def test_resources_not_set_is_an_error():
    plugin = Fit(fit_args("LeastAllocated", []))
    pod = spod(*C12)
    table = build_table(N4_6)
    state = CycleState(PodInfo(pod))
    rows = table.order()
    assert plugin.pre_score(state, pod, table, rows) is None
    s, status = plugin.score(state, pod, table.node_info(int(rows[0])))
    assert (s, status.code, status.reasons) == (0, Code.ERROR, ("resources not found",))
    with pytest.raises(ValueError, match="resources not found"):
        plugin.score_nodes(state, pod, table, rows)


def test_score_without_pre_score_state_computes_it():
    plugin = Fit(fit_args("LeastAllocated", DEFAULT_RES))
    pod = spod(*C12)
    table = build_table(N4_6)
    state = CycleState(PodInfo(pod))
    rows = np.asarray([table.row_of["node1"], table.row_of["node2"]])
    assert plugin.score_nodes(state, pod, table, rows).tolist() == [37, 50]
    assert plugin.score(state, pod, table.node_info(int(rows[0])))[0] == 37


def test_default_args_and_registry_reference():
    mod, _, attr = "kubesched.plugins.noderesources.fit:new".partition(":")
    plugin = getattr(importlib.import_module(mod), attr)(None, None)
    assert plugin.name == "NodeResourcesFit" and plugin.strategy == "LeastAllocated"
    assert [n for n in plugin.scorer.names] == ["cpu", "memory"]


# ───────────────────────────── queueing hints ─────────────────────────────


def test_events_to_register():
    """1.34 registrations (the 1.37 table is tests/plugins/test_events_to_register.py)."""
    evs = Fit(None, Handle(NodeTable(), features=FeatureGate(emulated_version=(1, 34)))).events_to_register()
    assert [(e.event.resource, e.event.action) for e in evs] == [
        (EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
    ]
    assert all(e.hint is not None for e in evs)


def test_pod_event_hints():
    fit = Fit()
    target = spod({"cpu": "1"}, name="target")
    assigned = spod({"cpu": "1", "memory": "1Gi"}, node="n1", name="other")
    unassigned = spod({"cpu": "1"}, name="other")
    nominated = MakePod().name("other").uid("other").req(cpu="1").nominated_node_name("n1").obj()
    hint = fit.is_schedulable_after_pod_event
    assert hint(target, assigned, None) == QueueingHint.QUEUE
    assert hint(target, unassigned, None) == QueueingHint.SKIP
    assert hint(target, nominated, None) == QueueingHint.QUEUE
    # scale-down
    assert hint(target, target, spod({"cpu": "500m"}, name="target")) == QueueingHint.QUEUE
    assert hint(target, unassigned, spod({"cpu": "500m"}, name="other")) == QueueingHint.SKIP
    assert hint(target, assigned, spod({"cpu": "500m", "memory": "1Gi"}, node="n1", name="other")) == QueueingHint.QUEUE
    assert hint(target, assigned, spod({"cpu": "1", "memory": "512Mi"}, node="n1", name="other")) == QueueingHint.SKIP


def test_node_event_hints():
    fit = Fit()
    pod = spod({"cpu": "2", "memory": "1Gi"})
    small = MakeNode().name("n").capacity(cpu="1", memory="8Gi", pods="10").obj()
    big = MakeNode().name("n").capacity(cpu="4", memory="8Gi", pods="10").obj()
    big_labelled = MakeNode().name("n").capacity(cpu="4", memory="8Gi", pods="10").label("a", "b").obj()
    no_pods = MakeNode().name("n").capacity(cpu="4", memory="8Gi").obj()
    more_pods = MakeNode().name("n").capacity(cpu="4", memory="8Gi", pods="20").obj()
    hint = fit.is_schedulable_after_node_change
    assert hint(pod, None, big) == QueueingHint.QUEUE
    assert hint(pod, None, small) == QueueingHint.SKIP
    assert hint(pod, None, no_pods) == QueueingHint.SKIP
    assert hint(pod, small, big) == QueueingHint.QUEUE
    assert hint(pod, big, big_labelled) == QueueingHint.SKIP
    assert hint(pod, big, more_pods) == QueueingHint.QUEUE
    # a best-effort pod only cares about the pod limit
    assert hint(spod(), big, big_labelled) == QueueingHint.SKIP


# ───────────────────────────── batch == per-node reference (hypothesis) ─────────────────────────────

GPU = "example.com/gpu"
SCALAR_POOL = [GPU, H, KA]


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 10))
    nodes = []
    for i in range(n):
        cap = {"cpu": f"{draw(st.integers(0, 8000))}m", "memory": str(draw(st.integers(0, 10_000))),
               "pods": str(draw(st.integers(0, 6)))}
        if draw(st.booleans()):
            cap["ephemeral-storage"] = str(draw(st.integers(0, 1000)))
        for r in SCALAR_POOL:
            if draw(st.integers(0, 2)) == 0:
                cap[r] = str(draw(st.integers(0, 6)))
        nodes.append(MakeNode().name(f"n{i}").capacity(**cap).obj())
    pods = []
    for j in range(draw(st.integers(0, 15))):
        pods.append(spod(draw(requests()), node=f"n{draw(st.integers(0, n - 1))}", name=f"e{j}"))
    return nodes, pods


@st.composite
def requests(draw):
    req = {}
    if draw(st.booleans()):
        req["cpu"] = f"{draw(st.integers(0, 4000))}m"
    if draw(st.booleans()):
        req["memory"] = str(draw(st.integers(0, 6000)))
    if draw(st.integers(0, 3)) == 0:
        req["ephemeral-storage"] = str(draw(st.integers(0, 500)))
    for r in SCALAR_POOL:
        if draw(st.integers(0, 2)) == 0:
            req[r] = str(draw(st.integers(0, 4)))
    return req


shapes = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 10)), min_size=1, max_size=4,
                  unique_by=lambda t: t[0]).map(sorted)
resource_lists = st.lists(st.sampled_from(["cpu", "memory", "ephemeral-storage", "pods", "foo", *SCALAR_POOL]),
                          min_size=1, max_size=5, unique=True)
CFG = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@CFG
@given(clusters(), st.lists(requests(), min_size=1, max_size=2), st.sampled_from([[], [GPU]]),
       st.sampled_from([[], ["example.com"]]))
def test_filter_nodes_equals_filter(cluster, pod_reqs, ignored, groups):
    nodes, existing = cluster
    table = build_table(nodes, existing)
    pod = spod(*pod_reqs)
    ref, batch = run_filter(Fit(NodeResourcesFitArgs(ignored_resources=ignored, ignored_resource_groups=groups)),
                            pod, table)
    assert batch == ref


@CFG
@given(clusters(), st.lists(requests(), min_size=0, max_size=2),
       st.sampled_from(["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]), resource_lists,
       st.lists(st.integers(1, 100), min_size=5, max_size=5), shapes)
def test_score_nodes_equals_score(cluster, pod_reqs, kind, names, weights, shape):
    nodes, existing = cluster
    resources = [ResourceSpec(name=n, weight=w) for n, w in zip(names, weights)]
    plugin = Fit(fit_args(kind, resources, shape if kind == "RequestedToCapacityRatio" else None))
    pod = spod(*pod_reqs)
    _, ref, batch = scores_both(plugin, pod, nodes, existing)
    assert batch == ref
    assert all(0 <= s <= 100 for s in batch)


# ───────────────────────────── more checks than a reason bit set holds ─────────────────────────────


@pytest.mark.parametrize("ghost", [False, True], ids=["all-known", "one-unknown-resource"])
def test_filter_reports_every_insufficient_resource_beyond_31(ghost):
    """40 extended resources requested (> 31, the bit-set form's limit): every node reports its
    own ``Insufficient <name>`` reasons, in upstream order and with upstream's codes."""
    from kubesched.framework.diagnosis import Diagnosis, FilterChunk, PluginReasons, fit_error_message

    res_names = [f"example.com/r{i:02d}" for i in range(40)]
    req = {n: "2" for n in res_names}
    if ghost:
        req["example.com/ghost"] = "1"  # no node has it: UU everywhere
    nodes, pods = [], []
    for i in range(40):  # node i: r_i allocatable 1 < request 2 → UU
        cap = {n: ("1" if j == i else "2") for j, n in enumerate(res_names)}
        nodes.append(MakeNode().name(f"n{i:02d}").capacity(cpu="4", memory="1Gi", pods="10", **cap).obj())
    nodes.append(MakeNode().name("n40").capacity(cpu="4", memory="1Gi", pods="10", **{n: "4" for n in res_names}).obj())
    pods.append(rpod({res_names[35]: "3", res_names[10]: "3"}, name="used").node("n40").obj())  # U, U
    nodes.append(MakeNode().name("n41").capacity(cpu="4", memory="1Gi", pods="1", **{n: "2" for n in res_names}).obj())
    pods.append(rpod({}, name="full").node("n41").obj())  # Too many pods
    nodes.append(MakeNode().name("n42").capacity(cpu="4", memory="1Gi", pods="10", **{n: "2" for n in res_names}).obj())
    nodes.append(MakeNode().name("n43").capacity(cpu="4", memory="1Gi", pods="10",
                                                 **{n: "2" for n in res_names[1:-1]}).obj())  # r00, r39 absent
    table = build_table(nodes, pods)
    pod = rpod(req).obj()
    ref, batch = run_filter(Fit(), pod, table)
    assert batch == ref
    by_name = dict(zip([table.names[r] for r in table.order().tolist()], batch))
    g = ("Insufficient example.com/ghost",) if ghost else ()  # scalars are checked sorted by name
    for i in range(40):
        assert by_name[f"n{i:02d}"] == Status(UU, (*g, f"Insufficient {res_names[i]}"))
    assert by_name["n40"] == Status(UU if ghost else U, (*g, f"Insufficient {res_names[10]}",
                                                         f"Insufficient {res_names[35]}"))
    assert by_name["n41"] == Status(UU if ghost else U, ("Too many pods", *g))
    assert by_name["n42"] == (Status(UU, g) if ghost else None)
    assert by_name["n43"] == Status(UU, (*g, f"Insufficient {res_names[0]}", f"Insufficient {res_names[39]}"))

    plugin = Fit()
    state = CycleState(PodInfo(pod))
    plugin.pre_filter(state, pod, table)
    rows = table.order()
    res = plugin.filter_nodes(state, pod, table, rows)
    failed = res.failed != 0
    chunk = FilterChunk(rows, np.where(failed, 0, -1).astype(np.int16), res.failed, [Fit.name],
                        [PluginReasons.of(res)])
    msg = fit_error_message(len(rows), Diagnosis(chunks=[chunk]))
    for n in res_names:
        assert f" Insufficient {n}" in msg
    assert "1 Insufficient example.com/r05" in msg and "2 Insufficient example.com/r39" in msg


MANY = [f"example.com/m{i:02d}" for i in range(34)]


@st.composite
def many_resource_clusters(draw):
    """Nodes with 34 extended resources each (some absent), some already used by a pod."""
    nodes, pods = [], []
    for i in range(draw(st.integers(1, 8))):
        cap = {n: str(v) for n in MANY if (v := draw(st.integers(-1, 3))) >= 0}
        nodes.append(MakeNode().name(f"n{i}").capacity(cpu="4", memory="1Gi", pods=str(draw(st.integers(1, 3))),
                                                       **cap).obj())
        used = {n: str(draw(st.integers(0, 2))) for n in MANY[: draw(st.integers(0, len(MANY)))]}
        if draw(st.booleans()):
            pods.append(rpod(used, name=f"e{i}").node(f"n{i}").obj())
    req = {n: str(draw(st.integers(1, 2))) for n in MANY}  # 34 checks > 31: the interned form
    return nodes, pods, req


@CFG
@given(many_resource_clusters())
def test_filter_nodes_equals_filter_beyond_the_bit_set(cluster):
    nodes, pods, req = cluster
    ref, batch = run_filter(Fit(), rpod(req).obj(), build_table(nodes, pods))
    assert batch == ref


# ───────────────────────────── quirk: the score ignores the pod's pod-level requests ─────────────────────────────
# upstream v1.37.2 fit.go L65-89 / L207-259 (same in v1.34.12): the scorer Fit embeds never gets
# enablePodLevelResources, so calculatePodResourceRequest runs with SkipPodLevelResources: the
# incoming pod is scored on its containers (+ overhead, 100m/200Mi defaults); nodes' requested
# sums (NodeInfo) and Filter honour pod-level requests.


def _pod_level_pod(name="p", pod_req=None, containers=({"cpu": "100m", "memory": "1Gi"},), node=None):
    mp = MakePod().name(name).uid(name)
    for c in containers:
        mp.container(requests=c)
    if pod_req is not None:
        mp.spec(resources={"requests": pod_req})
    if node:
        mp.node(node)
    return mp.obj()


ISSUE_NODES = [snode("a", cpu="2", memory="4Gi", pods="110"), snode("b", cpu="32", memory="2Gi", pods="110")]
ISSUE_POD = {"cpu": "1500m", "memory": "1Gi"}


def test_least_allocated_score_uses_container_requests_not_pod_level():
    """The issue's input: a: cpu (2000-100)/2000 → 95, memory 3/4 → 75 → 85; b: 99 and 50 → 74
    (with the pod-level 1500m it would be 50 / 72)."""
    _, ref, batch = scores_both(Fit(fit_args("LeastAllocated", DEFAULT_RES)), _pod_level_pod(pod_req=ISSUE_POD),
                                ISSUE_NODES)
    assert ref == batch == [85, 74]


def test_score_default_cpu_memory_per_container_when_pod_level_is_set():
    # a container without requests counts 100m / 200Mi even though the pod-level requests name cpu
    p = _pod_level_pod(pod_req={"cpu": "1", "memory": "1Gi"}, containers=({},))
    _, ref, batch = scores_both(Fit(fit_args("MostAllocated", DEFAULT_RES)), p,
                                [snode("n1", cpu="1", memory=str(1000 * 1024 * 1024))])
    # cpu 100/1000 → 10, memory 200Mi/1000Mi → 20 → 15
    assert ref == batch == [15]


def test_nodes_requested_side_keeps_pod_level_requests():
    # the existing pod's pod-level 1500m counts on the node: cpu (2000-1500-100)/2000 → 20
    existing = [_pod_level_pod(name="e", pod_req=ISSUE_POD, node="a")]
    _, ref, batch = scores_both(Fit(fit_args("LeastAllocated", [ResourceSpec(name="cpu", weight=1)])),
                                _pod_level_pod(pod_req=ISSUE_POD), ISSUE_NODES[:1], existing)
    assert ref == batch == [20]


def test_filter_honours_pod_level_requests():
    # pod-level 1500m twice does not fit a 2-cpu node even though the containers ask 100m each
    existing = [_pod_level_pod(name="e", pod_req=ISSUE_POD, node="a")]
    table = build_table(ISSUE_NODES[:1], existing)
    p = _pod_level_pod(pod_req=ISSUE_POD)
    plugin = Fit(NodeResourcesFitArgs())
    state = CycleState(PodInfo(p))
    plugin.pre_filter(state, p, table)
    st_ = plugin.filter(state, p, table.get("a"))
    assert st_ is not None and st_.reasons == ("Insufficient cpu",)


@pytest.mark.parametrize("version", [(1, 34), (1, 37)])
def test_issue_pod_level_resources_picks_node_a(version):
    """End to end with the default profile: upstream picks a (Fit 85 vs 74 decides, BalancedAllocation
    is close either way), at v1.34.12 as at v1.37.2."""
    from kubesched.features import FeatureGate
    from kubesched.scheduler import Scheduler
    from kubesched.sim.store import ClusterStore

    fg = FeatureGate(emulated_version=version)
    store = ClusterStore()
    sched = Scheduler(None, client=store, lister=store, features=fg, record=True)
    store.scheduler = sched
    for n in ISSUE_NODES:
        store.add("Node", n)
    store.add("Pod", _pod_level_pod(pod_req=ISSUE_POD))
    a = sched.schedule_one()
    assert a.result == "scheduled" and a.node == "a"
    assert {n: s["NodeResourcesFit"] for n, s in a.record.score.items()} == {"a": 85, "b": 74}
