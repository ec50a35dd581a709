"""NodeResourcesBalancedAllocation: the v1.34 table of upstream balanced_allocation_test.go
(std of min(req/alloc, 1), real requests, Skip for best-effort pods) and a hypothesis check that
``score_nodes`` equals the per-node ``score`` on random clusters."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.config.args import NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.resource_allocation import balanced_resource_score
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

GPU = "nvidia.com/gpu"


def node(name, milli, mem, ext=None):
    cap = {"cpu": f"{milli}m", "memory": str(mem)}
    cap.update({k: str(v) for k, v in (ext or {}).items()})
    return MakeNode().name(name).capacity(**cap).obj()


def pod(*containers, on=None, name="p"):
    mp = MakePod().name(name).uid(name)
    for c in containers:
        mp.container(requests=c)
    if on:
        mp.node(on)
    return mp.obj()


CPU_ONLY = ({"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})
CPU_AND_MEMORY = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})
CPU_MEM_GPU = ({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"})
DEFAULT = [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]
WITH_GPU = DEFAULT + [ResourceSpec(name=GPU, weight=1)]


def run(args, p, nodes, existing, pre_score=True):
    plugin = BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources=args))
    table = build_table(nodes, existing)
    state = CycleState(PodInfo(p))
    rows = np.asarray([table.row_of[n.metadata.name] for n in nodes], np.int64)
    status = plugin.pre_score(state, p, table, rows) if pre_score else None
    ref = []
    for r in rows:
        s, st_ = plugin.score(state, p, table.node_info(int(r)))
        assert st_ is None
        ref.append(s)
    batch = plugin.score_nodes(state, p, table, rows).tolist()
    return status, ref, batch


CASES = [
    # CPU 3000/4000 = .75, memory 5000/10000 = .5 → std .125 → 87; node2 .5/.5 → 100
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY), [node("node1", 4000, 10000), node("node2", 6000, 10000)], [],
                 [87, 100], True, id="nothing scheduled, resources requested, differently sized nodes"),
    # node1 6000/10000 vs 5000/20000 → std .175 → 82; node2 .6 vs .5 → 95
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY),
                 [node("node1", 10000, 20000), node("node2", 10000, 20000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [82, 95], True, id="resources requested, pods scheduled with resources"),
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY),
                 [node("node1", 10000, 20000), node("node2", 10000, 50000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [82, 80], True, id="resources requested, pods scheduled with resources, differently sized nodes"),
    # cpu 6000/6000 = 1 vs 0 → 50; 1 vs .5 → 75
    pytest.param(DEFAULT, pod(*CPU_ONLY), [node("node1", 6000, 10000), node("node2", 6000, 10000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [50, 75], True, id="requested resources at node capacity"),
    # over capacity is capped at 1: cpu 6000/4000 → 1
    pytest.param(DEFAULT, pod(*CPU_ONLY), [node("node1", 4000, 10000), node("node2", 4000, 10000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [50, 75], True, id="requested resources exceed node capacity are capped"),
    # three fractions: population std
    pytest.param(WITH_GPU, pod({"memory": "0", GPU: "1"}),
                 [node("node1", 3500, 40000, {GPU: 8}), node("node2", 3500, 40000, {GPU: 8})],
                 [pod(*CPU_AND_MEMORY, on="node2", name="e1"), pod(*CPU_MEM_GPU, on="node1", name="e2")],
                 [70, 65], True, id="include scalar resource on a node for balanced resource allocation"),
    pytest.param(WITH_GPU, pod(*CPU_AND_MEMORY),
                 [node("node1", 3500, 40000, {GPU: 8}), node("node2", 3500, 40000)], [],
                 [63, 63], True, id="node without the scalar resource should skip the scalar resource"),
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY),
                 [node("node1", 10000, 20000), node("node2", 10000, 20000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [82, 95], False, id="resources requested, pods scheduled with resources if PreScore not called"),
    # allocatable 0 everywhere → no fractions → std 0 → 100
    pytest.param(DEFAULT, pod({"cpu": "1"}), [node("node1", 0, 0), node("node2", 0, 0)], [],
                 [100, 100], True, id="zero node resources"),
    # one fraction only → std 0
    pytest.param(DEFAULT, pod({"cpu": "1"}), [node("node1", 4000, 0), node("node2", 0, 10000)], [],
                 [100, 100], True, id="a single resource with allocatable"),
]


@pytest.mark.parametrize(("resources", "p", "nodes", "existing", "want", "pre_score"), CASES)
def test_balanced_allocation(resources, p, nodes, existing, want, pre_score):
    status, ref, batch = run(resources, p, nodes, existing, pre_score)
    assert status is None
    assert ref == batch == want


def test_best_effort_pod_is_skipped_in_pre_score():
    p = pod()
    status, ref, batch = run(DEFAULT, p, [node("node1", 4000, 10000), node("node2", 4000, 10000)], [])
    assert status is not None and status.code == Code.SKIP
    # without PreScore state, Score gives best-effort pods 0 (upstream)
    assert ref == batch == [0, 0]


def test_best_effort_is_about_the_configured_requests_not_qos():
    # requests only ephemeral-storage: cpu/memory requests are 0 → skipped
    p = pod({"ephemeral-storage": "1Gi"})
    status, _, _ = run(DEFAULT, p, [node("node1", 4000, 10000)], [])
    assert status.code == Code.SKIP
    # a GPU-only pod with GPU configured is scored
    status, _, _ = run(WITH_GPU, pod({GPU: "1"}), [node("node1", 4000, 10000, {GPU: 2})], [])
    assert status is None


def test_uses_real_requests_not_non_zero_defaults():
    # the existing pod has no requests: BalancedAllocation counts 0 (Fit scoring would count 100m/200Mi)
    status, ref, batch = run(DEFAULT, pod({"cpu": "1", "memory": "500"}), [node("node1", 2000, 2000)],
                             [pod({}, on="node1", name="e")])
    assert ref == batch == [87]  # .5 vs .25


def test_formula_reference():
    assert balanced_resource_score([3000, 5000], [4000, 10000]) == 87
    assert balanced_resource_score([0, 0], [0, 0]) == 100
    assert balanced_resource_score([3000, 5000, 4], [3500, 40000, 8]) == 70


def test_registry_reference_and_defaults():
    mod, _, attr = "kubesched.plugins.noderesources.balanced_allocation:new".partition(":")
    plugin = getattr(importlib.import_module(mod), attr)(None, None)
    assert plugin.name == "NodeResourcesBalancedAllocation"
    assert plugin.scorer.names == ["cpu", "memory"]


# ───────────────────────────── batch == per-node (hypothesis) ─────────────────────────────

POOL = [GPU, "hugepages-2Mi", "kubernetes.io/x"]


@st.composite
def clusters(draw):
    n = draw(st.integers(1, 10))
    nodes = []
    for i in range(n):
        cap = {"cpu": f"{draw(st.integers(0, 8000))}m", "memory": str(draw(st.integers(0, 10_000))), "pods": "50"}
        if draw(st.booleans()):
            cap["ephemeral-storage"] = str(draw(st.integers(0, 1000)))
        for r in POOL:
            if draw(st.integers(0, 2)) == 0:
                cap[r] = str(draw(st.integers(0, 6)))
        nodes.append(MakeNode().name(f"n{i}").capacity(**cap).obj())
    existing = [pod(draw(reqs()), on=f"n{draw(st.integers(0, n - 1))}", name=f"e{j}")
                for j in range(draw(st.integers(0, 12)))]
    return nodes, existing


@st.composite
def reqs(draw):
    out = {}
    if draw(st.booleans()):
        out["cpu"] = f"{draw(st.integers(0, 4000))}m"
    if draw(st.booleans()):
        out["memory"] = str(draw(st.integers(0, 6000)))
    if draw(st.integers(0, 3)) == 0:
        out["ephemeral-storage"] = str(draw(st.integers(0, 500)))
    for r in POOL:
        if draw(st.integers(0, 2)) == 0:
            out[r] = str(draw(st.integers(0, 4)))
    return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.lists(reqs(), max_size=2),
       st.lists(st.sampled_from(["cpu", "memory", "ephemeral-storage", "pods", *POOL]), min_size=1, max_size=5,
                unique=True), st.booleans())
def test_score_nodes_equals_score(cluster, pod_reqs, names, pre_score):
    nodes, existing = cluster
    status, ref, batch = run([ResourceSpec(name=n, weight=1) for n in names], pod(*pod_reqs), nodes, existing,
                             pre_score)
    if status is not None:
        assert status.code == Code.SKIP
    assert batch == ref
    assert all(0 <= s <= 100 for s in batch)
