"""TopologyPlacementGenerator: upstream topology_placement_test.go TestGeneratePlacements (v1.37.2),
every case with CompositePodGroup off and on (the composite cases with it on only), plus the error
texts of topology_placement.go and the placement order kubesched fixes (sorted by domain)."""

from __future__ import annotations

import pytest
from tests.plugins.podgroup_fakes import FakePodGroupManager, member, pg_info

from kubesched.features import FeatureGate
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.podgroup import Placement, PodGroupCycleState
from kubesched.plugins.topologyaware import NAME, TopologyPlacement
from kubesched.testing.wrappers import MakeNode, build_table

INITIAL = "test-placement"


def node(name: str, **labels: str):  # noqa: ANN201
    return MakeNode().name(name).labels(labels).obj()


SIX = [node("node0", topology2="d1"), node("node1", topology2="d4"), node("node2", topology1="d1"),
       node("node3", topology1="d2"), node("node4", topology1="d1"), node("node5", topology1="d3")]

# name: (group, scheduled [(path_to_root, node)], placement nodes, other nodes, want {placement: nodes} | Error text)
CASES = {
    "without constraint returns placement matching all nodes": (
        pg_info(None), [], [node("node1"), node("node2", foo="bar")], [node("node3")],
        {INITIAL: ["node1", "node2"]}),
    "with topology key constraint, returns placement for each topology domain": (
        pg_info("topology1"), [], SIX, [],
        {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]}),
    "without matching topology label, returns empty": (
        pg_info("topology3"), [], SIX, [], {}),
    "with pods already scheduled in a single domain, returns that domain": (
        pg_info("topology"), [([], "node2"), ([], "node3")],
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")],
        {"d1": ["node1"]}),
    "with pods already scheduled in a single domain not present in current placement, returns empty": (
        pg_info("topology"), [([], "node2"), ([], "node3")],
        [node("node0", topology="d2")],
        [node("node2", topology="d1"), node("node3", topology="d1")], {}),
    "with pods already scheduled in conflicting domains, returns error": (
        pg_info("topology"), [([], "node2"), ([], "node3")],
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d0"), node("node3", topology="d1")],
        "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: d0, d1"),
    "with already scheduled pod on node outside of snapshot, returns error": (
        pg_info("topology"), [([], "node2"), ([], "node4")],
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")],
        'cannot determine domain for already scheduled pods: getting node for pod default/pod1: '
        'nodeinfo not found for node name "node4"'),
    "with already scheduled pod on node without topology label, returns error": (
        pg_info("topology"), [([], "node2")],
        [node("node1", topology="d2")], [node("node2", foo="bar")],
        "cannot determine domain for already scheduled pods: no topology domain found for pod default/pod0"),
    "for cpg without constraint returns placement matching all nodes": (
        pg_info(None, composite=True), [], [node("node1"), node("node2", foo="bar")], [node("node3")],
        {INITIAL: ["node1", "node2"]}),
    "for cpg with topology key constraint, returns placement for each topology domain": (
        pg_info("topology1", composite=True), [], SIX, [],
        {"d1": ["node2", "node4"], "d2": ["node3"], "d3": ["node5"]}),
    "for cpg without matching topology label, returns empty": (
        pg_info("topology3", composite=True), [], SIX, [], {}),
    "for cpg with pods already scheduled in a single domain, returns that domain": (
        pg_info("topology", composite=True), [(["pg1", "cpg1"], "node2"), (["pg2", "cpg2"], "node3")],
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")],
        {"d1": ["node1"]}),
    "for cpg with pods already scheduled in a single domain not present in current placement, returns empty": (
        pg_info("topology", composite=True), [(["pg1", "cpg1"], "node2"), (["pg2", "cpg2"], "node3")],
        [node("node0", topology="d2")],
        [node("node2", topology="d1"), node("node3", topology="d1")], {}),
    "for cpg with pods already scheduled in conflicting domains across separate pod groups, returns error": (
        pg_info("topology", composite=True), [(["pg1", "cpg1"], "node2"), (["pg2", "cpg2"], "node3")],
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d0"), node("node3", topology="d1")],
        "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: d0, d1"),
    "for cpg with pods already scheduled in conflicting domains in a single pod group, returns error": (
        pg_info("topology", composite=True), [(["pg1", "cpg1"], "node2"), (["pg1", "cpg1"], "node3")],
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d0"), node("node3", topology="d1")],
        "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: d0, d1"),
    "for cpg with already scheduled pod on node outside of snapshot, returns error": (
        pg_info("topology", composite=True), [(["pg1", "cpg1"], "node2"), (["pg1", "cpg1"], "node4")],
        [node("node0", topology="d2"), node("node1", topology="d1")],
        [node("node2", topology="d1"), node("node3", topology="d1")],
        'cannot determine domain for already scheduled pods: getting node for pod default/pod1: '
        'nodeinfo not found for node name "node4"'),
    "for cpg with already scheduled pod on node without topology label, returns error": (
        pg_info("topology", composite=True), [(["pg1", "cpg1"], "node2")],
        [node("node1", topology="d2")], [node("node2", foo="bar")],
        "cannot determine domain for already scheduled pods: no topology domain found for pod default/pod0"),
}

PARAMS = [pytest.param(name, cpg, id=f"{name} (cpg={cpg})")
          for cpg in (False, True) for name, case in CASES.items()
          if cpg or case[0].composite_pod_group is None]


def _setup(case: tuple, cpg: bool):  # noqa: ANN202
    info, scheduled, placement_nodes, other_nodes, _ = case
    manager = FakePodGroupManager()
    manager.ensure_root(info)
    for i, (path, on) in enumerate(scheduled):
        manager.add_scheduled(info, path, member(f"pod{i}", on, path[0] if path else info.name))
    fg = FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True,
                                "CompositePodGroup": cpg})
    handle = Handle(nodes=build_table(placement_nodes + other_nodes), features=fg, pod_group_manager=manager)
    parent = Placement(INITIAL, [n.metadata.name for n in placement_nodes])
    return TopologyPlacement(handle), info, parent


@pytest.mark.parametrize(("name", "cpg"), PARAMS)
def test_generate_placements(name: str, cpg: bool) -> None:
    case = CASES[name]
    pl, info, parent = _setup(case, cpg)
    placements, st = pl.generate_placements(PodGroupCycleState(), info, parent)
    want = case[4]
    if isinstance(want, str):
        assert st is not None and st.code == Code.ERROR
        assert st.message() == want
        assert placements == []
        return
    assert st is None
    assert {p.name: p.nodes for p in placements} == want
    # kubesched's fixed order (upstream: Go map order): placements sorted by domain value
    assert [p.name for p in placements] == sorted(want)


def test_without_constraint_returns_the_parent_itself() -> None:
    pl, info, parent = _setup(CASES["without constraint returns placement matching all nodes"], False)
    placements, st = pl.generate_placements(PodGroupCycleState(), info, parent)
    assert st is None and placements == [parent] and placements[0] is parent


def test_no_parent_means_every_node_in_snapshot_order() -> None:
    nodes = [node("a", rack="r2"), node("b", rack="r1"), node("c"), node("d", rack="r2")]
    manager = FakePodGroupManager()
    info = pg_info("rack")
    manager.ensure_root(info)
    handle = Handle(nodes=build_table(nodes), pod_group_manager=manager,
                    features=FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    placements, st = TopologyPlacement(handle).generate_placements(PodGroupCycleState(), info, None)
    assert st is None
    assert [(p.name, p.nodes) for p in placements] == [("r1", ["b"]), ("r2", ["a", "d"])]


def test_assumed_members_count_as_scheduled() -> None:
    # the already-scheduled domain comes from assumed members too (PodGroupState.ScheduledPods)
    nodes = [node("n1", rack="r1"), node("n2", rack="r2"), node("n3", rack="r2")]
    manager = FakePodGroupManager()
    info = pg_info("rack")
    manager.add_scheduled(info, [], member("p0", "n3"), assumed=True)
    handle = Handle(nodes=build_table(nodes), pod_group_manager=manager,
                    features=FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    placements, st = TopologyPlacement(handle).generate_placements(
        PodGroupCycleState(), info, Placement("", ["n1", "n2", "n3"]))
    assert st is None and [(p.name, p.nodes) for p in placements] == [("r2", ["n2", "n3"])]


def test_missing_pod_group_state_is_an_error() -> None:
    # upstream: PodGroupStates().Get fails → AsStatus(err)
    handle = Handle(nodes=build_table([node("n1", rack="r1")]), pod_group_manager=FakePodGroupManager(),
                    features=FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True}))
    placements, st = TopologyPlacement(handle).generate_placements(PodGroupCycleState(), pg_info("rack"), None)
    assert placements == [] and st is not None and st.code == Code.ERROR
    assert st.message() == "pod group state not found for pod group default/root"


def test_name() -> None:
    assert NAME == "TopologyPlacementGenerator" == TopologyPlacement.name
