"""PodGroupPodsCount: upstream podgroup_pods_count_test.go (v1.37.2) — TestScorePlacement (with
CompositePodGroup off and on; the composite cases with it on only) and TestNormalizePlacementScore."""

from __future__ import annotations

import pytest
from tests.plugins.podgroup_fakes import FakePodGroupManager, member, pg_info

from kubesched.features import FeatureGate
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable
from kubesched.framework.podgroup import PlacementScore, PodGroupAssignments, ProposedAssignment
from kubesched.plugins.podgrouppodscount import NAME, PodGroupPodsCount


def _proposed() -> list[ProposedAssignment]:
    out = []
    for name, on in (("proposed-pod-1", "node1"), ("proposed-pod-2", "node2")):
        pod = member(name)
        out.append(ProposedAssignment(pod, PodInfo(pod), on, CycleState()))
    return out


# name: (composite?, assigned [(path, node)], assumed [(path, node)], want)
SCORE_CASES = {
    "existing assigned and assumed pods": (False, [([], "node2"), ([], "node3")], [([], "node1")], 5),
    "no assumed pods": (False, [([], "node1")], [], 3),
    "no assigned pods": (False, [], [([], "node1")], 3),
    "no assigned pods, no assumed pods": (False, [], [], 2),
    "for cpg existing assigned and assumed pods across multi-level hierarchies": (
        True, [(["pg1", "cpg1"], "node2"), (["pg2", "cpg2"], "node3")], [(["pg1", "cpg1"], "node1")], 5),
    "for cpg with no assumed pods": (True, [(["pg1", "cpg1"], "node1")], [], 3),
    "for cpg with no assigned pods": (True, [], [(["pg1", "cpg1"], "node1")], 3),
    "for cpg with no assigned pods, no assumed pods": (True, [], [], 2),
}


@pytest.mark.parametrize(("name", "cpg"), [pytest.param(n, c, id=f"{n} (cpg={c})") for c in (False, True)
                                           for n, case in SCORE_CASES.items() if c or not case[0]])
def test_score_placement(name: str, cpg: bool) -> None:
    composite, assigned, assumed, want = SCORE_CASES[name]
    info = pg_info(composite=composite)
    manager = FakePodGroupManager()
    manager.ensure_root(info)
    for i, (path, on) in enumerate(assigned):
        manager.add_scheduled(info, path, member(f"assigned-pod{i}", on, path[0] if path else "root"))
    for i, (path, on) in enumerate(assumed):
        manager.add_scheduled(info, path, member(f"assumed-pod{i}", on, path[0] if path else "root"), assumed=True)
    fg = FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True,
                                "CompositePodGroup": cpg})
    pl = PodGroupPodsCount(Handle(nodes=NodeTable(), features=fg, pod_group_manager=manager))
    score, st = pl.score_placement(None, info, PodGroupAssignments(None, _proposed()))
    assert st is None
    assert score == want


def test_score_placement_missing_state_is_an_error() -> None:
    fg = FeatureGate(overrides={"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
    pl = PodGroupPodsCount(Handle(nodes=NodeTable(), features=fg, pod_group_manager=FakePodGroupManager()))
    score, st = pl.score_placement(None, pg_info(), PodGroupAssignments(None, _proposed()))
    assert st is not None and st.code == Code.ERROR
    assert st.message() == "pod group state not found for pod group default/root"


NORMALIZE_CASES = {
    # score × (100 − 0) / max, Go integer division
    "distinct scores": ([10, 50, 110], [9, 45, 100]),
    "equal scores": ([50, 50], [100, 100]),
    "single score": ([50], [100]),
    "some minimal score that is far from a group of scores located closely": ([11, 100, 101, 102],
                                                                               [10, 98, 99, 100]),
}


@pytest.mark.parametrize("name", list(NORMALIZE_CASES))
def test_normalize_placement_score(name: str) -> None:
    raw, want = NORMALIZE_CASES[name]
    scores = [PlacementScore(None, s) for s in raw]
    st = PodGroupPodsCount().normalize_placement_score(None, pg_info(), scores)
    assert st is None
    assert [s.score for s in scores] == want


def test_normalize_zero_scores() -> None:
    scores = [PlacementScore(None, 0), PlacementScore(None, 0)]
    st = PodGroupPodsCount().normalize_placement_score(None, pg_info(), scores)
    assert st is not None and st.code == Code.ERROR
    assert st.message() == "no pods from pod group are assigned to any of the candidate placements"


def test_name() -> None:
    assert NAME == "PodGroupPodsCount" == PodGroupPodsCount.name
