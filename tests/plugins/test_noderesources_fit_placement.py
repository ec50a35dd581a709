"""NodeResourcesFit as a PlacementScore plugin (TopologyAwareWorkloadScheduling): upstream fit_test.go
TestScorePlacement_Resources (v1.37.2), the gate, and a hypothesis check of the vectorised placement
score against a literal port of upstream's per-node loop (resource_allocation.go L505-545)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.plugins.podgroup_fakes import pg_info
from tests.plugins.test_noderesources_fit import SCALAR_POOL, clusters, requests

from kubesched.config.args import NodeResourcesFitArgs, ResourceSpec, ScoringStrategy
from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import MAX_NODE_SCORE, Code
from kubesched.framework.node_info import PodInfo
from kubesched.framework.podgroup import Placement, PodGroupAssignments, ProposedAssignment
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.noderesources.resource_allocation import is_scalar_resource_name, pod_request_vector
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

TAS = FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
GPU = "nvidia.com/gpu"


def node(name: str, cpu: str, mem: str, gpu: str | None = None):  # noqa: ANN201
    cap = {"cpu": cpu, "memory": mem}
    if gpu is not None:
        cap[GPU] = gpu
    return MakeNode().name(name).capacity(**cap).obj()


def pod(name: str, cpu: str, mem: str, gpu: str | None = None, on: str | None = None):  # noqa: ANN201
    req = {"cpu": cpu, "memory": mem}
    if gpu is not None:
        req[GPU] = gpu
    mp = MakePod().name(name).uid(name).req(**req)
    if on:
        mp.node(on)
    return mp.obj()


def fit(resources: list[tuple[str, int]], features: FeatureGate = TAS, table=None) -> Fit:  # noqa: ANN001
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
        type="LeastAllocated", resources=[ResourceSpec(name=n, weight=w) for n, w in resources]))
    return Fit(args, Handle(nodes=table, features=features))


def assignments(pods_on: list[tuple[object, str]], placement_nodes: list[str] | None) -> PodGroupAssignments:
    return PodGroupAssignments(
        None if placement_nodes is None else Placement("", placement_nodes),
        [ProposedAssignment(p, PodInfo(p), n, CycleState()) for p, n in pods_on])


CM = [("cpu", 1), ("memory", 1)]
TWO = [node("node1", "5000m", "5000"), node("node2", "5000m", "5000")]
TWO_GPU = [node("node1", "5000m", "5000", "5"), node("node2", "5000m", "5000", "5")]

# name: (nodes, placement nodes, [(pod, node)], pre-existing pods, resources, want)
CASES = {
    # CPU (1000m + 2000m) / 10000m = 0.3, memory 2000 / 10000 = 0.2 → 100 × 0.5 / 2
    "Computes score based on total requests": (
        TWO, ["node1", "node2"], [(pod("foo", "1000m", "0"), "node1"), (pod("bar", "2000m", "2000"), "node2")],
        [], CM, 25),
    "Computes score using weights": (
        TWO, ["node1", "node2"], [(pod("foo", "1000m", "0"), "node1"), (pod("bar", "2000m", "2000"), "node2")],
        [], [("cpu", 4), ("memory", 1)], 28),
    "Handles multiple pods per node": (
        TWO, ["node1", "node2"], [(pod("foo", "1000m", "0"), "node1"), (pod("bar", "2000m", "2000"), "node1")],
        [], [("cpu", 4), ("memory", 1)], 28),
    "Does not include nodes from outside of placement": (
        [*TWO, node("node3", "5000m", "5000")], ["node1", "node2"],
        [(pod("foo", "1000m", "0"), "node1"), (pod("bar", "2000m", "2000"), "node2")], [], CM, 25),
    "Includes pre-existing pods from outside of pod group": (
        TWO, ["node1", "node2"], [(pod("foo", "1000m", "0"), "node1"), (pod("bar", "2000m", "2000"), "node2")],
        [pod("baz", "1000m", "0", on="node1")], CM, 30),
    # GPU (0 + 1 + 0) / 10 = 0.1 → 100 × (0.3 + 0.2 + 0.1) / 3
    "Includes scalar resources if any pod in pod group has nonzero requests": (
        TWO_GPU, ["node1", "node2"],
        [(pod("foo", "1000m", "0", "0"), "node1"), (pod("bar", "1000m", "2000", "1"), "node2")],
        [pod("baz", "1000m", "0", "0", on="node1")], [*CM, (GPU, 1)], 20),
    "Does not include scalar resources if all pods in pod group have zero requests": (
        TWO_GPU, ["node1", "node2"],
        [(pod("foo", "1000m", "0", "0"), "node1"), (pod("bar", "1000m", "2000", "0"), "node2")],
        [pod("baz", "1000m", "0", "1", on="node1")], [*CM, (GPU, 1)], 25),
}


@pytest.mark.parametrize("name", list(CASES))
def test_score_placement_resources(name: str) -> None:
    nodes, placement_nodes, pods_on, existing, resources, want = CASES[name]
    table = build_table(nodes, existing)
    score, st_ = fit(resources, table=table).score_placement(CycleState(), pg_info(),
                                                             assignments(pods_on, placement_nodes))
    assert st_ is None
    assert score == want


def test_placement_scorer_is_most_allocated_whatever_the_node_strategy() -> None:
    # fit.go L247-256: getScorer(MostAllocated, args.ScoringStrategy.Resources); LeastAllocated here
    table = build_table(TWO)
    pl = fit(CM, table=table)
    assert pl.strategy == "LeastAllocated" and pl.placement_scorer is not None
    assert pl.placement_scorer.strategy == "MostAllocated"


def test_no_placement_means_every_node() -> None:
    table = build_table([*TWO, node("node3", "5000m", "5000")])
    pods_on = [(pod("foo", "1000m", "0"), "node1"), (pod("bar", "2000m", "2000"), "node2")]
    score, _ = fit(CM, table=table).score_placement(CycleState(), pg_info(), assignments(pods_on, None))
    # CPU 3000 / 15000 = 20, memory 2000 / 15000 = 13 → 33 / 2
    assert score == 16


def test_pod_level_resources_are_ignored() -> None:
    # quirk §8a: the placement scorer, like Fit's scorer, has no enablePodLevelResources
    table = build_table(TWO)
    p = (MakePod().name("p").uid("p").container(requests={"cpu": "500m", "memory": "1000"})
         .spec(resources={"requests": {"cpu": "4", "memory": "4000"}}).obj())
    score, _ = fit(CM, table=table).score_placement(CycleState(), pg_info(), assignments([(p, "node1")],
                                                                                         ["node1", "node2"]))
    # containers: cpu 500 / 10000 = 5, memory 1000 / 10000 = 10 → 7
    assert score == 7


def test_without_the_gate_there_is_no_placement_scorer() -> None:
    pl = fit(CM, features=FeatureGate(), table=build_table(TWO))
    assert pl.placement_scorer is None
    score, st_ = pl.score_placement(CycleState(), pg_info(), assignments([], None))
    assert st_ is not None and st_.code == Code.ERROR and score == 0


# ───────────────────────────── vectorised vs upstream's loop ─────────────────────────────


def reference_score_placement(resources, node_infos, pods) -> int:  # noqa: ANN001
    """resourceAllocationScorer.scorePlacement as written upstream: ``requested`` starts as the
    members' requests and doubles as ``podRequests`` of calculateNodeAllocatableRequest while the
    nodes' allocations are added to it; then mostResourceScorer."""
    names = [n for n, _ in resources]
    k = len(names)
    requested = [0] * k
    for p in pods:
        for i, v in enumerate(pod_request_vector(None, p, names, False, pod_level_resources=False)):
            requested[i] += v
    allocatable = [0] * k
    for ni in node_infos:
        node_alloc, node_allocd = [0] * k, [0] * k
        for i, name in enumerate(names):
            if requested[i] == 0 and is_scalar_resource_name(name):
                continue
            if name == "cpu":
                a, r = ni.allocatable.milli_cpu, ni.non_zero_requested.milli_cpu
            elif name == "memory":
                a, r = ni.allocatable.memory, ni.non_zero_requested.memory
            elif name == "ephemeral-storage":
                a, r = ni.allocatable.ephemeral_storage, ni.requested.ephemeral_storage
            elif name in ni.allocatable.scalar_resources:
                a, r = ni.allocatable.scalar_resources[name], ni.requested.scalar_resources.get(name, 0)
            else:
                a, r = 0, 0
            if a == 0:
                continue
            node_alloc[i], node_allocd[i] = a, r
        for i in range(k):
            allocatable[i] += node_alloc[i]
            requested[i] += node_allocd[i]
    node_score = weight_sum = 0
    for i, (_, w) in enumerate(resources):
        if allocatable[i] == 0:
            continue
        req = min(requested[i], allocatable[i])
        node_score += req * MAX_NODE_SCORE // allocatable[i] * w
        weight_sum += w
    return node_score // weight_sum if weight_sum else 0


resource_lists = st.lists(st.sampled_from(["cpu", "memory", "ephemeral-storage", "pods", "foo", *SCALAR_POOL]),
                          min_size=1, max_size=5, unique=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.lists(requests(), min_size=0, max_size=4), resource_lists,
       st.lists(st.integers(1, 100), min_size=5, max_size=5), st.data())
def test_score_placement_equals_upstream_loop(cluster, member_reqs, names, weights, data) -> None:  # noqa: ANN001
    nodes, existing = cluster
    table = build_table(nodes, existing)
    resources = list(zip(names, weights))
    all_names = [n.metadata.name for n in nodes]
    chosen = data.draw(st.lists(st.sampled_from(all_names), unique=True, max_size=len(all_names)))
    members = []
    for j, req in enumerate(member_reqs):
        mp = MakePod().name(f"m{j}").uid(f"m{j}")
        mp.container(requests=req)
        members.append(mp.obj())
    pods_on = [(p, all_names[0]) for p in members]
    got, st_ = fit(resources, table=table).score_placement(CycleState(), pg_info(), assignments(pods_on, chosen))
    assert st_ is None
    want = reference_score_placement(resources, [table.get(n) for n in chosen], members)
    assert got == want
    assert 0 <= got <= MAX_NODE_SCORE
