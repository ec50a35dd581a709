"""NodeResourcesFit with DRAExtendedResource (on from 1.36): an extended resource a DeviceClass maps
is left to DynamicResources on a node with 0 allocatable of it. Cases ported from upstream v1.37.2
``fit_test.go`` (TestEnoughRequests, the ``draExtendedResourceEnabled`` rows), the DeviceClass
mapping rules of ``extendedresourcecache.go``, the node-change hint, and a hypothesis check that
the batch Filter equals the per-node one with DRA-mapped names."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import QueueingHint
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.defaultpreemption import DefaultPreemption
from kubesched.plugins.helper.extendedresources import device_class_mapping, is_dra_extended_resource_name
from kubesched.plugins.noderesources import fit as fitmod
from kubesched.plugins.noderesources.fit import Fit, InsufficientResource
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
A, B = "example.com/aaa", "example.com/bbb"
DRA_RES = "extended.resource.dra.io/something"
CLASS = "device-class-name"
ENOUGH_NODE = {"cpu": "10m", "memory": "20", "pods": "32", A: "5", "ephemeral-storage": "20", "hugepages-2Mi": "5"}


class Lister:
    def __init__(self, *classes: dict[str, Any]) -> None:
        self.classes = list(classes)

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return self.classes if kind == "DeviceClass" else []

    def get(self, kind: str, namespace: str, name: str) -> Any:
        return next((c for c in self.list(kind) if c["metadata"]["name"] == name), None)


def device_class(name: str = CLASS, ext: str | None = DRA_RES, created: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    return {"metadata": meta, "spec": {"extendedResourceName": ext} if ext else {}}


def plugin(table, version=(1, 37), classes=None):
    classes = (device_class(),) if classes is None else classes
    return Fit(None, Handle(table, lister=Lister(*classes), features=FeatureGate(emulated_version=version)))


def run(pl, pod, table):
    state = CycleState(PodInfo(pod))
    _, st_ = pl.pre_filter(state, pod, table)
    assert st_ is None
    rows = table.order()
    ref = [pl.filter(state, pod, table.node_info(int(r))) for r in rows]
    res = pl.filter_nodes(state, pod, table, rows)
    batch = [None if res is None or res.failed[i] == 0 else res.status_for(int(res.failed[i]))
             for i in range(len(rows))]
    assert batch == ref
    return ref


def rpod(req: dict[str, str]):
    return MakePod().name("p").uid("p").container(requests=req).obj()


def one_node_table(alloc=ENOUGH_NODE):
    node = MakeNode().name("n1").capacity(**alloc).obj()
    return build_table([node], [MakePod().name("existing").uid("existing").container(requests={}).node("n1").obj()])


# upstream fit_test.go (v1.37.2) L626-697
@pytest.mark.parametrize(("name", "enabled", "classes", "req", "want", "insufficient"), [
    ("extended resource backed by device plugin", True, [device_class()], {A: "1"}, None, []),
    ("extended resource backed by DRA", True, [device_class()], {"cpu": "1m", "memory": "1", DRA_RES: "1"},
     None, []),
    ("extended resource backed by DRA, nil draManager", True, [], {"cpu": "1m", "memory": "1", A: "1"}, None, []),
    ("extended resource backed by DRA not enabled", False, [device_class()],
     {"cpu": "1m", "memory": "1", DRA_RES: "1"}, Status.of(UU, f"Insufficient {DRA_RES}"),
     [InsufficientResource(DRA_RES, f"Insufficient {DRA_RES}", 1, 0, 0, True)]),
    ("extended resource NOT backed by DRA", True, [device_class()], {"cpu": "1m", "memory": "1", B: "1"},
     Status.of(UU, f"Insufficient {B}"), [InsufficientResource(B, f"Insufficient {B}", 1, 0, 0, True)]),
    ("extended resource was backed by Device Plugin (Allocatable: 0)", True, [device_class()], {DRA_RES: "1"},
     None, []),
])
def test_enough_requests_dra_extended_resource(name, enabled, classes, req, want, insufficient):
    table = one_node_table()
    pl = plugin(table, (1, 37) if enabled else (1, 35), classes)
    pod = rpod(req)
    assert run(pl, pod, table) == [want]
    mapping = device_class_mapping(pl.handle.lister) if enabled else None
    assert fitmod.fits(PodInfo(pod).requests, table.node_info(0), mapping) == insufficient


def test_node_with_allocatable_of_a_mapped_resource_checks_it_itself():
    """shouldDelegateResourceToDRA: allocatable > 0 → the device plugin's count is enforced."""
    table = one_node_table({**ENOUGH_NODE, DRA_RES: "1"})
    pl = plugin(table)
    assert run(pl, rpod({DRA_RES: "2"}), table) == [Status.of(UU, f"Insufficient {DRA_RES}")]
    assert run(pl, rpod({DRA_RES: "1"}), table) == [None]


def test_implicit_device_class_name_is_delegated():
    table = one_node_table()
    pl = plugin(table, classes=[device_class("gpu", ext=None)])
    assert run(pl, rpod({"deviceclass.resource.kubernetes.io/gpu": "1"}), table) == [None]
    assert run(pl, rpod({"deviceclass.resource.kubernetes.io/other": "1"}), table) == [
        Status.of(UU, "Insufficient deviceclass.resource.kubernetes.io/other")]


@pytest.mark.parametrize("version, delegated", [((1, 34), False), ((1, 35), False), ((1, 36), True),
                                                ((1, 37), True)])
def test_gate_follows_the_emulated_version(version, delegated):
    table = one_node_table()
    pl = plugin(table, version)
    assert run(pl, rpod({DRA_RES: "1"}), table) == [None if delegated else Status.of(UU, f"Insufficient {DRA_RES}")]


def test_device_class_mapping_rules():
    """extendedresourcecache.go: implicit name per class; an explicit name goes to the oldest class,
    ties to the smaller name."""
    classes = [device_class("b", "example.com/gpu", "2025-01-01T00:00:00Z"),
               device_class("a", "example.com/gpu", "2025-01-01T00:00:00Z"),
               device_class("c", "example.com/gpu", "2025-01-02T00:00:00Z"),
               device_class("d", "example.com/fpga", "2025-01-03T00:00:00Z")]
    m = device_class_mapping(Lister(*classes))
    assert m["example.com/gpu"]["metadata"]["name"] == "a"
    assert m["example.com/fpga"]["metadata"]["name"] == "d"
    assert {k for k in m if k.startswith("deviceclass.")} == {f"deviceclass.resource.kubernetes.io/{n}"
                                                              for n in "abcd"}
    older = device_class("z", "example.com/gpu", "2024-12-31T00:00:00Z")
    assert device_class_mapping(Lister(*classes, older))["example.com/gpu"]["metadata"]["name"] == "z"
    assert is_dra_extended_resource_name("example.com/gpu")
    assert is_dra_extended_resource_name("deviceclass.resource.kubernetes.io/x")
    assert not is_dra_extended_resource_name("cpu") and not is_dra_extended_resource_name("kubernetes.io/x")


def test_node_change_hint_queues_for_a_node_dra_serves():
    """isSchedulableAfterNodeChange with the DRA manager: a new node without the resource fits (DRA
    provides it); an update counts the mapped resource as increased (haveAnyRequestedResourcesIncreased)."""
    table = one_node_table()
    pod = rpod({DRA_RES: "1"})
    old = MakeNode().name("n2").capacity(cpu="1", memory="1Gi", pods="10").obj()
    new = MakeNode().name("n2").capacity(cpu="1", memory="1Gi", pods="10").label("x", "y").obj()
    assert plugin(table).is_schedulable_after_node_change(pod, None, new) == QueueingHint.QUEUE
    assert plugin(table).is_schedulable_after_node_change(pod, old, new) == QueueingHint.QUEUE
    assert plugin(table, (1, 35)).is_schedulable_after_node_change(pod, None, new) == QueueingHint.SKIP


def test_preemption_precheck_leaves_dra_resources_to_dra():
    table = one_node_table()
    pl = plugin(table)
    pod = rpod({DRA_RES: "1"})
    state = CycleState(PodInfo(pod))
    pl.pre_filter(state, pod, table)
    dp = DefaultPreemption(None, pl.handle)
    rejects = dp._fit_reprieve_precheck(state, [pl])
    assert rejects is not None and not rejects(0, [], [])


POOL = [A, B, DRA_RES]


@st.composite
def cluster(draw):
    nodes = []
    for i in range(draw(st.integers(1, 5))):
        alloc = {"cpu": "4", "memory": "8Gi", "pods": "10"}
        for r in POOL:
            k = draw(st.integers(0, 2))
            if k == 1:
                alloc[r] = "0"
            elif k == 2:
                alloc[r] = str(draw(st.integers(1, 3)))
        nodes.append(MakeNode().name(f"n{i}").capacity(**alloc).obj())
    existing = []
    for j in range(draw(st.integers(0, 4))):
        node = nodes[draw(st.integers(0, len(nodes) - 1))]
        req = {r: str(draw(st.integers(0, 2))) for r in POOL if draw(st.booleans())}
        existing.append(MakePod().name(f"e{j}").uid(f"e{j}").container(requests=req).node(node.metadata.name).obj())
    return nodes, existing


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cluster(), st.dictionaries(st.sampled_from(POOL), st.integers(0, 3).map(str), min_size=1),
       st.sets(st.sampled_from(POOL)))
def test_filter_nodes_equals_filter_with_dra_names(cl, req, mapped):
    nodes, existing = cl
    table = build_table(nodes, existing)
    classes = [device_class(f"c{i}", r) for i, r in enumerate(sorted(mapped))]
    pl = plugin(table, classes=classes)
    pod = rpod(req)
    ref = run(pl, pod, table)
    for row, st_ in zip(table.order().tolist(), ref, strict=True):
        ni = table.node_info(int(row))
        for name, q in req.items():
            if int(q) == 0:
                continue
            cap = ni.allocatable.get(name)
            short = f"Insufficient {name}" in (st_.reasons if st_ is not None else ())
            if name in mapped and cap == 0:
                assert not short  # left to DRA
            else:
                assert short == (int(q) > cap - ni.requested.get(name))
