"""DRAOptionalNodeOperations (α 1.37, off by default).

Ported from v1.37.2: the allocator table cases ``optional-node-operations`` /
``optional-node-operations-missing-feature`` (dynamic-resource-allocation
``structured/internal/allocatortesting/allocator_testing.go`` L1455-1475),
``Test_allocationResultRequiresDRAOptionalNodeOperations`` and the plugin cases
``allocated-skip-node-operations-missing-feature`` / ``-with-feature``
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go`` L2121-2160,
L5201-5295). The Filter check of allocated claims is ungated upstream (the data decides); in
kubesched it applies from 1.37 on.
"""

from __future__ import annotations

import copy

import pytest
from test_dra_structured import CA, D1, DA, N1, P1, alloc, claim, cls, local, node, req, result, slice_
from test_dynamicresources import (
    DRIVER,
    V136,
    V137,
    Harness,
    device,
    device_class,
    pod_with,
    resource_slice,
)
from test_dynamicresources import claim as plugin_claim

from kubesched.features import FeatureGate
from kubesched.framework.interface import Code
from kubesched.plugins import dynamicresources as dra
from kubesched.plugins.dra_structured import Features
from kubesched.testing.wrappers import MakeNode

FEATURE = "DRAOptionalNodeOperations"
ONF = Features(optional_node_operations=True)


def skip_slice() -> dict:
    s = slice_("slice-1", N1, P1, DA)
    s["spec"]["skipNodeOperations"] = ["*"]
    return s


def declaring(n):  # noqa: ANN001, ANN201
    n.status.declared_features = [FEATURE]
    return n


# ───────────────────────────── the allocator ─────────────────────────────

def test_allocator_optional_node_operations() -> None:
    got = alloc([claim("claim-0", req("req-0"))], [cls(CA, DA)], [skip_slice()], n=declaring(node()), features=ONF)
    want = result(local(), ("req-0", DA, P1, D1))
    want["devices"]["results"][0]["skipNodeOperations"] = ["*"]
    assert got == [want]


def test_allocator_optional_node_operations_missing_feature() -> None:
    assert alloc([claim("claim-0", req("req-0"))], [cls(CA, DA)], [skip_slice()], n=node(), features=ONF) is None


def test_allocator_gate_off_ignores_the_field() -> None:
    # off: upstream's incubating allocator (1.37's default pick) does not look at the field
    got = alloc([claim("claim-0", req("req-0"))], [cls(CA, DA)], [skip_slice()], n=node(), features=Features())
    assert got == [result(local(), ("req-0", DA, P1, D1))]


@pytest.mark.parametrize("alloc_,want", [
    (None, False),
    ({"devices": {"results": []}}, False),
    ({"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "x"}]}}, False),
    ({"devices": {"results": [{"request": "r", "skipNodeOperations": ["*"]}]}}, True),
    ({"devices": {"results": [{"request": "r", "skipNodeOperations": []}]}}, False),
    ({"devices": {"results": [{"request": "a"}, {"request": "b", "skipNodeOperations": ["*"]}]}}, True),
], ids=["nil", "no results", "without", "with", "empty list", "second result"])
def test_allocationResultRequiresDRAOptionalNodeOperations(alloc_, want) -> None:  # noqa: ANN001
    assert dra.allocation_requires_optional_node_operations(alloc_) is want


# ───────────────────────────── the plugin ─────────────────────────────

def allocated_claim_with_skip() -> tuple[str, dict]:
    kind, c = plugin_claim(allocation={
        "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "instance-1",
                                 "skipNodeOperations": ["*"]}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}})
    return kind, c


WORKER = MakeNode().name("worker").label("nodename", "worker").obj()


def test_allocated_skip_node_operations_missing_feature() -> None:
    h = Harness(device_class(), allocated_claim_with_skip(), nodes=[WORKER])
    state, st, filt = h.run(pod_with("my-claim"))
    assert st is None
    assert filt["worker"].code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert filt["worker"].reasons == ("resourceclaim not available on the node",)
    # PostFilter deallocates it (not reserved by anyone)
    _, post = h.pl.post_filter(state, pod_with("my-claim"), {})
    assert post.reasons == ("deallocation of ResourceClaim completed",)
    assert h.claim()["status"].get("allocation") is None


def test_allocated_skip_node_operations_with_feature() -> None:
    h = Harness(device_class(), allocated_claim_with_skip(), nodes=[declaring(copy.deepcopy(WORKER))])
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None and filt["worker"] is None


def test_allocated_skip_node_operations_before_137() -> None:
    # 1.36 code has no such check
    h = Harness(device_class(), allocated_claim_with_skip(), nodes=[WORKER], features=V136)
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None and filt["worker"] is None


@pytest.mark.parametrize("declared,want_ok", [(False, False), (True, True)])
def test_filter_allocates_on_declaring_nodes_with_the_gate(declared, want_ok) -> None:  # noqa: ANN001
    sl = resource_slice("s", [device("d0")], node="worker")
    sl[1]["spec"]["skipNodeOperations"] = ["*"]
    n = copy.deepcopy(WORKER)
    if declared:
        declaring(n)
    fg = FeatureGate(overrides={FEATURE: True})
    h = Harness(device_class(), plugin_claim(), sl, nodes=[n], features=fg)
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None
    assert (filt["worker"] is None) is want_ok
    if not want_ok:
        assert filt["worker"].reasons == ("cannot allocate all claims",)
    # gate off (1.37 default): the field is ignored and the device is allocated anywhere
    h = Harness(device_class(), plugin_claim(), sl, nodes=[n], features=V137)
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None and filt["worker"] is None


def test_reserve_records_skip_node_operations_with_the_gate() -> None:
    sl = resource_slice("s", [device("d0")], node="worker")
    sl[1]["spec"]["skipNodeOperations"] = ["NodePrepareResources"]
    fg = FeatureGate(overrides={FEATURE: True})
    h = Harness(device_class(), plugin_claim(), sl, nodes=[declaring(copy.deepcopy(WORKER))], features=fg)
    h.schedule(pod_with("my-claim"))
    results = h.claim()["status"]["allocation"]["devices"]["results"]
    assert results[0]["skipNodeOperations"] == ["NodePrepareResources"]
