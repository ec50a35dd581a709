"""NodeResourcesFit / BalancedAllocation scoring of DRA-backed extended resources (DRAExtendedResource):
a scored resource the node has 0 allocatable of is scored on the devices of its DeviceClass there.
Cases ported from upstream v1.37.2 ``resource_allocation_test.go`` (TestCalculateResourceAllocatableRequest)
and ``balanced_allocation_test.go`` (the "include DRA resource ..." rows); per-node and batch scores agree."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config.args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.helper.extendedresources import dra_score_state
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import Fit
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

EXT = "extended.resource.dra.io/something"
CLASS = "device-class-name"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
DRIVER = "test-driver"
NODE = "resource-node"


class Lister:
    def __init__(self, *objs: tuple[str, dict[str, Any]]) -> None:
        self.objs = list(objs)

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return [o for k, o in self.objs if k == kind]

    def get(self, kind: str, namespace: str, name: str) -> Any:
        return next((o for o in self.list(kind) if o["metadata"]["name"] == name), None)


def device_class(ext: str | None = EXT, selectors: list[str] = ()) -> tuple[str, dict]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if ext:
        spec["extendedResourceName"] = ext
    return "DeviceClass", {"metadata": {"name": CLASS}, "spec": spec}


def slice_(node: str, *devices: str) -> tuple[str, dict]:
    return "ResourceSlice", {"metadata": {"name": f"{node}-slice"}, "spec": {
        "driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": d} for d in devices]}}


def allocated(name: str, pool: str, device: str, share: str | None = None) -> tuple[str, dict]:
    r: dict[str, Any] = {"request": "req-1", "driver": DRIVER, "pool": pool, "device": device}
    if share:
        r["shareID"] = share
    req = {"name": "req-1", "exactly": {"deviceClassName": CLASS}}
    return "ResourceClaim", {"metadata": {"name": name, "namespace": "default"},
                             "spec": {"devices": {"requests": [req]}},
                             "status": {"allocation": {"devices": {"results": [r]}}}}


PER_DEVICE = ("ResourceSlice", {"metadata": {"name": "per-device-slice"}, "spec": {
    "driver": DRIVER, "pool": {"name": "per-device-pool", "resourceSliceCount": 1}, "perDeviceNodeSelection": True,
    "devices": [
        {"name": "device-1", "nodeName": NODE, "attributes": {"model": {"string": "SOME-XYZ"}},
         "capacity": {"memory": {"value": "16Gi"}}},
        {"name": "device-2", "nodeName": "other-node", "attributes": {"model": {"string": "SOME-ZYX"}},
         "capacity": {"memory": {"value": "12Gi"}}},
        {"name": "device-3", "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["us-east-1a"]}]}]},
         "attributes": {"model": {"string": "SOME-XZY"}}, "capacity": {"memory": {"value": "24Gi"}}}]}})
CEL = ('device.driver == "test-driver" && device.capacity["test-driver"].memory.compareTo(quantity("8Gi")) >= 0 '
       '&& device.attributes["test-driver"].model.startsWith("SOME-")')


# resource_allocation_test.go TestCalculateResourceAllocatableRequest (the DRA rows)
@pytest.mark.parametrize(("resource", "objs", "want"), [
    pytest.param(EXT, [device_class(), slice_(NODE, "device-1")], (1, 0), id="DRA-backed-resource-explicit"),
    pytest.param(IMPLICIT, [device_class(None), slice_(NODE, "device-1")], (1, 0), id="DRA-backed-resource-implicit"),
    pytest.param(EXT, [device_class()], (0, 0), id="DRA-backed-resource-no-slices"),
    pytest.param(EXT, [device_class(), slice_(NODE, "device-1", "device-2"), allocated("c", NODE, "device-1")], (2, 1),
                 id="DRA-backed-resource-with-allocated-device"),
    pytest.param(EXT, [device_class(), slice_(NODE, "device-1", "device-2"),
                       allocated("c", NODE, "device-1", "share-123")], (2, 1),
                 id="DRA-backed-resource-with-shared-device-allocation"),
    pytest.param(EXT, [device_class(), slice_(NODE, "device-1", "device-2", "device-3"),
                       allocated("c1", NODE, "device-1"), allocated("c2", NODE, "device-2", "share-456")], (3, 2),
                 id="DRA-backed-resource-multiple-devices-mixed-allocation"),
    pytest.param(EXT, [device_class(selectors=[CEL]), PER_DEVICE, allocated("c", "per-device-pool", "device-1")],
                 (2, 1), id="DRA-backed-resource-with-per-device-node-selection"),
])
def test_dra_totals(resource, objs, want):
    node = MakeNode().name(NODE).label("zone", "us-east-1a").obj()
    handle = Handle(build_table([node]), lister=Lister(*objs))
    state = dra_score_state(handle, ["cpu", resource])
    assert state is not None
    assert state.totals(node, resource) == want


def test_no_state_without_a_mapped_scored_resource():
    handle = Handle(build_table([]), lister=Lister(device_class()))
    assert dra_score_state(handle, ["cpu", "memory", "example.com/other"]) is None


def _node(name, milli, mem):
    return MakeNode().name(name).capacity(cpu=f"{milli}m", memory=str(mem), pods="32").obj()


def _pod(*containers, on=None, name="p"):
    m = MakePod().name(name).uid(name)
    for c in containers:
        m.container(requests=c)
    if on:
        m.node(on)
    return m.obj()


def _scores(plugin, table, p, nodes, pre_score=True):
    state = CycleState(PodInfo(p))
    rows = np.asarray([table.row_of[n.metadata.name] for n in nodes], np.int64)
    if pre_score:
        plugin.pre_score(state, p, table, rows)
    ref = [plugin.score(state, p, table.node_info(int(r)))[0] for r in rows]
    batch = plugin.score_nodes(state, p, table, rows).tolist()
    assert batch == ref
    return ref


# balanced_allocation_test.go: "include DRA resource on a node for balanced resource allocation
# (if PreScore not called)"; at 1.35 (gate off, pre-1.36 formula) the DRA resource is not scored
@pytest.mark.parametrize("pre_score", [True, False])
@pytest.mark.parametrize("version, want", [((1, 37), [76, 75]), ((1, 35), [57, 63])])
def test_balanced_allocation_includes_dra_resource(pre_score, version, want):
    nodes = [_node("node1", 3500, 40000), _node("node2", 3500, 40000)]
    existing = [_pod({"cpu": "1000m"}, {"cpu": "2000m"}, on="node1", name="e1"),
                _pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"}, on="node2", name="e2")]
    table = build_table(nodes, existing)
    lister = Lister(device_class(), slice_("node1", *[f"device-{i}" for i in range(1, 9)]))
    args = NodeResourcesBalancedAllocationArgs(resources=[ResourceSpec(name="cpu", weight=1),
                                                          ResourceSpec(name="memory", weight=1),
                                                          ResourceSpec(name=EXT, weight=1)])
    plugin = BalancedAllocation(args, Handle(table, lister=lister, features=FeatureGate(emulated_version=version)))
    assert _scores(plugin, table, _pod({EXT: "1"}), nodes, pre_score) == want


@pytest.mark.parametrize("strategy, want", [("LeastAllocated", [75, 0]), ("MostAllocated", [25, 0])])
def test_fit_scores_dra_resource(strategy, want):
    """node1 offers 8 devices (1 allocated): the pod's 1 more makes 2/8 — least (8-2)·100/8 = 75,
    most 2·100/8 = 25; node2 has none (the resource is skipped → 0)."""
    nodes = [_node("node1", 3500, 40000), _node("node2", 3500, 40000)]
    table = build_table(nodes)
    lister = Lister(device_class(), slice_("node1", *[f"device-{i}" for i in range(1, 9)]),
                    allocated("c", "node1", "device-1"))
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type=strategy,
                                                                 resources=[ResourceSpec(name=EXT, weight=1)]))
    plugin = Fit(args, Handle(table, lister=lister, features=FeatureGate()))
    assert _scores(plugin, table, _pod({EXT: "1"}), nodes) == want
    off = Fit(args, Handle(table, lister=lister, features=FeatureGate(emulated_version=(1, 35))))
    assert _scores(off, table, _pod({EXT: "1"}), nodes) == [0, 0]


@st.composite
def dra_cluster(draw):
    nodes, objs = [], [device_class()]
    for i in range(draw(st.integers(1, 5))):
        cap = {"cpu": f"{draw(st.integers(1, 8)) * 1000}m", "memory": str(draw(st.integers(1, 8)) * 1000), "pods": "32"}
        k = draw(st.integers(0, 2))
        if k:
            cap[EXT] = str(draw(st.integers(0, 3)) if k == 2 else 0)
        nodes.append(MakeNode().name(f"n{i}").capacity(**cap).obj())
        n_dev = draw(st.integers(0, 4))
        if n_dev:
            objs.append(slice_(f"n{i}", *[f"d{j}" for j in range(n_dev)]))
            for j in range(n_dev):
                if draw(st.booleans()):
                    objs.append(allocated(f"c-{i}-{j}", f"n{i}", f"d{j}"))
    return nodes, objs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dra_cluster(), st.integers(0, 3), st.sampled_from(["LeastAllocated", "MostAllocated", "Balanced"]))
def test_score_nodes_equals_score_with_dra(cl, q, kind):
    nodes, objs = cl
    table = build_table(nodes)
    handle = Handle(table, lister=Lister(*objs), features=FeatureGate())
    res = [ResourceSpec(name="cpu", weight=1), ResourceSpec(name=EXT, weight=2)]
    if kind == "Balanced":
        plugin: Any = BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources=res), handle)
    else:
        plugin = Fit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type=kind, resources=res)), handle)
    _scores(plugin, table, _pod({"cpu": "500m", EXT: str(q)}), nodes)
