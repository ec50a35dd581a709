"""NodeResourcesBalancedAllocation: the v1.34 table of upstream balanced_allocation_test.go
(std of min(req/alloc, 1), real requests, Skip for best-effort pods) at emulated 1.34, the v1.37.2
table (``50 + (50 + with - without) / 2`` since 1.36), and hypothesis checks that ``score`` and
``score_nodes`` equal a plain port of upstream's Go code on random clusters, at 1.34/1.35/1.36/1.37."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.objects import node_allocatable
from kubesched.api.quantity import to_int
from kubesched.api.resources import pod_requests
from kubesched.config.args import NodeResourcesBalancedAllocationArgs, ResourceSpec
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.resource_allocation import balanced_resource_score, is_scalar_resource_name
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


V134 = FeatureGate(emulated_version=(1, 34))
V137 = FeatureGate(emulated_version=(1, 37))


def run(args, p, nodes, existing, pre_score=True, features=V134):
    table = build_table(nodes, existing)
    plugin = BalancedAllocation(NodeResourcesBalancedAllocationArgs(resources=args),
                                Handle(nodes=table, features=features))
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


# upstream v1.37.2 balanced_allocation_test.go (the non-DRA cases): 50 + (50 + with - without) / 2
CASES_137 = [
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY), [node("node1", 4000, 10000), node("node2", 6000, 10000)], [],
                 [68, 75], True, id="nothing scheduled, resources requested, differently sized nodes"),
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY),
                 [node("node1", 10000, 20000), node("node2", 10000, 20000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [73, 74], True, id="resources requested, pods scheduled with resources"),
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY),
                 [node("node1", 10000, 20000), node("node2", 10000, 50000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [73, 70], True, id="resources requested, pods scheduled with resources, differently sized nodes"),
    pytest.param(DEFAULT, pod({"memory": "2000"}, {"memory": "3000"}),
                 [node("node1", 3000, 5000), node("node2", 3000, 5000)],
                 [pod(*CPU_ONLY, on="node1", name="e1")],
                 [100, 50], True, id="nodes to reach min/max score"),
    pytest.param(DEFAULT, pod(*CPU_ONLY), [node("node1", 6000, 10000), node("node2", 6000, 10000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [62, 62], True, id="requested resources at node capacity"),
    pytest.param(WITH_GPU, pod({"cpu": "0", "memory": "0", GPU: "1"}),
                 [node("node1", 3500, 40000, {GPU: 8}), node("node2", 3500, 40000, {GPU: 8})],
                 [pod({"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"},
                      on="node1", name="e1"),
                  pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [75, 76], True, id="scalar resource is included if the pod requests it"),
    pytest.param(WITH_GPU, pod(*CPU_AND_MEMORY),
                 [node("node1", 3500, 40000, {GPU: 8}), node("node2", 3500, 40000)], [],
                 [56, 56], True, id="scalar resource is not included if the pod doesn't request it"),
    pytest.param(DEFAULT, pod(*CPU_AND_MEMORY),
                 [node("node1", 10000, 20000), node("node2", 10000, 20000)],
                 [pod(*CPU_ONLY, on="node1", name="e1"), pod(*CPU_AND_MEMORY, on="node2", name="e2")],
                 [73, 74], False, id="resources requested, pods scheduled with resources if PreScore not called"),
]


@pytest.mark.parametrize(("resources", "p", "nodes", "existing", "want", "pre_score"), CASES_137)
def test_balanced_allocation_v137(resources, p, nodes, existing, want, pre_score):
    status, ref, batch = run(resources, p, nodes, existing, pre_score, features=V137)
    assert status is None
    assert ref == batch == want


@pytest.mark.parametrize(("version", "want"), [((1, 34), [87, 100]), ((1, 35), [87, 100]),
                                                ((1, 36), [68, 75]), ((1, 37), [68, 75])])
def test_formula_changes_in_1_36(version, want):
    """No gate: v1.35.4 still has the v1.34 scorer, v1.36.3 has the delta formula."""
    _, ref, batch = run(DEFAULT, pod(*CPU_AND_MEMORY), [node("node1", 4000, 10000), node("node2", 6000, 10000)],
                        [], features=FeatureGate(emulated_version=version))
    assert ref == batch == want


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


def _go_balanced_resource_score(requested, allocatable):
    """Plain port of Go ``balancedResourceScore`` (v1.37.2 balanced_allocation.go L220-251)."""
    fractions, total = [], 0.0
    for r, a in zip(requested, allocatable):
        if a == 0:
            continue
        f = min(float(r) / float(a), 1.0)
        total += f
        fractions.append(f)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for f in fractions:
            acc = acc + (f - mean) * (f - mean)
        std = (acc / len(fractions)) ** 0.5
    return int((1 - std) * 100.0)


def _go_trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def go_reference(names, p, node_obj, existing, delta):
    """Upstream BalancedAllocation.Score for one node, written from the Go code
    (resource_allocation.go calculateNodeAllocatableRequest / calculateResourceAllocatableRequest,
    balancedResourceScorer): node sums from the raw objects, not from the NodeTable."""
    preq = pod_requests(p)
    pod_vec = [preq.get(n, 0) for n in names]
    if not any(pod_vec):
        return 0  # best effort: Score without PreScore state returns 0
    alloc = {k: to_int(k, v) for k, v in node_allocatable(node_obj).items()}
    used: dict[str, int] = {}
    for e in existing:
        for k, v in pod_requests(e).items():
            used[k] = used.get(k, 0) + v
    k = len(names)
    requested, allocated, allocatable = [0] * k, [0] * k, [0] * k
    for i, n in enumerate(names):
        if pod_vec[i] == 0 and is_scalar_resource_name(n):
            continue
        if n in ("cpu", "memory", "ephemeral-storage") or is_scalar_resource_name(n):
            a, u = alloc.get(n, 0), used.get(n, 0)
        else:
            a, u = 0, 0  # e.g. "pods": omitted by upstream
        if a == 0:
            continue
        allocatable[i], allocated[i], requested[i] = a, u, u + pod_vec[i]
    with_pod = _go_balanced_resource_score(requested, allocatable)
    if not delta:
        return with_pod
    without = _go_balanced_resource_score(allocated, allocatable)
    return 50 + _go_trunc_div(50 + with_pod - without, 2)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.lists(reqs(), max_size=2),
       st.lists(st.sampled_from(["cpu", "memory", "ephemeral-storage", "pods", *POOL]), min_size=1, max_size=5,
                unique=True), st.booleans(), st.sampled_from([(1, 34), (1, 35), (1, 36), (1, 37)]))
def test_score_nodes_equals_go_reference(cluster, pod_reqs, names, pre_score, version):
    nodes, existing = cluster
    p = pod(*pod_reqs)
    status, ref, batch = run([ResourceSpec(name=n, weight=1) for n in names], p, nodes, existing,
                             pre_score, features=FeatureGate(emulated_version=version))
    if status is not None:
        assert status.code == Code.SKIP
    go = [go_reference(names, p, nd, [e for e in existing if e.spec.node_name == nd.metadata.name],
                       version >= (1, 36)) for nd in nodes]
    assert ref == go
    assert batch == ref
    assert all(0 <= s <= 100 for s in batch)


# ───────────────────────────── the two-resource fast path == the two passes ─────────────────────────────

_INT = st.integers(0, 2**50)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 2**50), st.integers(1, 2**50), _INT, _INT, _INT, _INT), min_size=1,
                max_size=40))
def test_balanced_delta_two_equals_the_plain_passes(rows):
    """``_balanced_delta_two`` (cpu and memory on every node, v1.36+) against the general path:
    ``_balanced_rows`` with and without the pod, then ``50 + go_div(50 + with - without, 2)``;
    requests above allocatable included (fractions capped at 1)."""
    from kubesched.plugins.noderesources.resource_allocation import _balanced_delta_two, _balanced_rows, go_div

    a0, a1, w0, w1, b0, b1 = (np.asarray(c, np.int64) for c in zip(*rows))
    k = len(rows)
    with_pod = _balanced_rows(k, [(1, a0, w0, True), (1, a1, w1, True)])
    without = _balanced_rows(k, [(1, a0, b0, True), (1, a1, b1, True)])
    want = 50 + go_div(50 + with_pod - without, 2)
    assert _balanced_delta_two(a0, a1, w0, w1, b0, b1).tolist() == want.tolist()
