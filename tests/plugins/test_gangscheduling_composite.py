"""GangScheduling with CompositePodGroup on, ported from upstream v1.37.2
``plugins/gangscheduling/gangscheduling_test.go``: the ``(CPG=true)`` cases of
TestGangSchedulingFlow (PreEnqueue → Permit over hierarchies), of the queueing-hint tables
(Test_isSchedulableAfterPodAdded / …PodGroupAdded / …CompositePodGroupAdded) and the ``isCPG=true``
rows of TestPlacementFeasible (``minGroupCount`` over child groups)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cache import PodGroupManagerImpl
from kubesched.features import default_feature_gate
from kubesched.framework.events import QueueingHint
from kubesched.framework.interface import Code
from kubesched.framework.podgroup import (
    COMPOSITE_POD_GROUP_KEY_TYPE,
    PlacementCycleState,
    PlacementProgress,
    PodGroupCycleState,
    PodGroupInfo,
)
from kubesched.plugins.gangscheduling import PERMIT_TIMEOUT_S, GangScheduling
from kubesched.testing.wrappers import MakePod

Q, S = QueueingHint.QUEUE, QueueingHint.SKIP
GATES_ON = default_feature_gate().with_overrides(GenericWorkload=True, TopologyAwareWorkloadScheduling=True,
                                                 CompositePodGroup=True)
GATES_OFF = default_feature_gate().with_overrides(GenericWorkload=True)


def pod(name: str, pg: str | None = None, ns: str = "ns1") -> Any:
    w = MakePod().name(name).namespace(ns).uid(name)
    if pg is not None:
        w = w.spec(schedulingGroup={"podGroupName": pg})
    return w.obj()


def pg(name: str, min_count: int | None = None, parent: str | None = None, ns: str = "ns1") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}} if min_count is None
                            else {"gang": {"minCount": min_count}}}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def cpg(name: str, min_group_count: int | None = None, parent: str | None = None, ns: str = "ns1") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}} if min_group_count is None
                            else {"gang": {"minGroupCount": min_group_count}}}
    if parent is not None:
        spec["parentCompositePodGroupName"] = parent
    return {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


class WaitingPod:
    def __init__(self) -> None:
        self.allowed: list[str] = []

    def allow(self, plugin: str) -> None:
        self.allowed.append(plugin)


class Handle:
    def __init__(self, pgm: PodGroupManagerImpl, features: Any) -> None:
        self.pod_group_manager = pgm
        self.features = features
        self.activated: list[str] = []
        self.waiting: dict[str, WaitingPod] = {}

    def activate(self, pods: dict[str, Any]) -> None:
        self.activated.extend(sorted(pods))

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting.get(uid)


def manager(composite: bool, pgs: list[dict[str, Any]] = (), cpgs: list[dict[str, Any]] = (),  # type: ignore[assignment]
            pods: list[Any] = ()) -> PodGroupManagerImpl:  # type: ignore[assignment]
    m = PodGroupManagerImpl(composite_enabled=composite)
    for g in pgs:
        m.set_pod_group(g)
    for c in cpgs:
        m.set_composite_pod_group(c)
    for p in pods:
        m.add_pod(p)
    return m


# ───── TestGangSchedulingFlow (CPG=true) ─────

GANG1, GANG2, BASIC = pg("pg1", 3), pg("pg2", 4), pg("pg3")
P = {n: pod(n, "pg1") for n in ("p1", "p2", "p3")} | {n: pod(n, "pg2") for n in ("p4", "p5")}
P |= {"basic-pod": pod("basic-pod", "pg3"), "non-gang": pod("non-gang")}
CPG_ROOT, CPG_SUB1 = cpg("cpg-root", 2), cpg("cpg-sub1", 2, "cpg-root")
CPG_SUB2, CPG_SUB3 = cpg("cpg-sub2", None, "cpg-root"), cpg("cpg-sub3", 2, "cpg-root")
TREE_PGS = [pg("pg1-cpg", 1, "cpg-sub1"), pg("pg2-cpg", 1, "cpg-sub1"), pg("pg3-cpg", 1, "cpg-sub1"),
            pg("pg4-cpg", None, "cpg-sub2"), pg("pg5-cpg", 1, "cpg-sub2"), pg("pg6-cpg", 1, "cpg-sub3"),
            pg("pg7-cpg", 1, "cpg-sub3")]
TREE_CPGS = [CPG_ROOT, CPG_SUB1, CPG_SUB2, CPG_SUB3]
P |= {f"p{i}-cpg": pod(f"p{i}-cpg", f"pg{i}-cpg") for i in (1, 2, 4, 6)}
BASIC_ROOT = cpg("cpg-basic-root")
BASIC_PGS = [pg("pg-basic-1", 2, "cpg-basic-root"), pg("pg-basic-2", 2, "cpg-basic-root")]
P |= {"p1_1": pod("p1_1", "pg-basic-1"), "p1_2": pod("p1_2", "pg-basic-1"), "p2_1": pod("p2_1", "pg-basic-2")}

UAU, WAIT = Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT
TREE_QUORUM = 'waiting for composite pod group "cpg-root" tree to meet quorum'

FLOW = [
    ("non-gang pod succeeds immediately", "non-gang", [], [GANG1, GANG2, BASIC], [], [], None, None, []),
    ("basic policy pod succeeds immediately", "basic-pod", [], [GANG1, GANG2, BASIC], [], [], None, None, []),
    ("gang pod fails PreEnqueue when pod group is not yet created", "p1", ["p2", "p3", "p4", "p5"], [], [], [],
     (UAU, "failed to build hierarchy snapshot: pod group object not found in state for podgroup/ns1/pg1"),
     None, []),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], [GANG1, GANG2], [], [],
     (UAU, "waiting for minCount pods from a gang to appear in scheduling queue"), None, []),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"], [GANG1, GANG2], [],
     ["p2", "p4", "p5"], None, (WAIT, "waiting for minCount pods from a gang to be scheduled"), []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1", ["p2", "p3", "p4", "p5"],
     [GANG1, GANG2], [], ["p2", "p3", "p4", "p5"], None, None, ["p2", "p3"]),
    ("CPG Hierarchical Stage 1: No pods, tree not ready", "p1-cpg", [], TREE_PGS, TREE_CPGS, [],
     (UAU, TREE_QUORUM), None, []),
    ("CPG Hierarchical Stage 2: Add p6, cpg-sub1 ready but root not ready", "p6-cpg", ["p1-cpg", "p2-cpg"],
     TREE_PGS, TREE_CPGS, [], (UAU, TREE_QUORUM), None, []),
    ("CPG Hierarchical Stage 3: Add p4, root becomes ready", "p4-cpg", ["p1-cpg", "p2-cpg", "p6-cpg"],
     TREE_PGS, TREE_CPGS, ["p1-cpg", "p2-cpg", "p6-cpg"], None, None, ["p1-cpg", "p2-cpg", "p6-cpg"]),
    ("CPG Basic With Gang Stage 1: pg1 ready, root ready", "p2_1", ["p1_1", "p1_2"], BASIC_PGS, [BASIC_ROOT], [],
     None, (WAIT, 'waiting for composite pod group "cpg-basic-root" tree to meet quorum'), []),
    ("CPG Permit Wait: Hierarchical gang waits at permit if gang isn't fully scheduled", "p4-cpg",
     ["p1-cpg", "p2-cpg", "p6-cpg"], TREE_PGS, TREE_CPGS, [], None, (WAIT, TREE_QUORUM), []),
]


@pytest.mark.parametrize("case", FLOW, ids=[c[0] for c in FLOW])
def test_gang_scheduling_flow_with_hierarchies(case: tuple) -> None:
    name, p, initial, pgs, cpgs, waiting, want_pre, want_permit, want_allowed = case
    pgm = manager(True, pgs, cpgs, [P[n] for n in [*initial, p]])
    h = Handle(pgm, GATES_ON)
    pl = GangScheduling(h)
    st = pl.pre_enqueue(P[p])
    assert (None if st is None else (st.code, st.message())) == want_pre, name
    if st is not None:
        return
    for n in waiting:  # other members already hit Permit and wait (assumed in the cache)
        pgm.assume_pod(P[n])
        wst, timeout = pl.permit(None, P[n], "some-node")  # type: ignore[arg-type]
        assert wst is not None and wst.code == Code.WAIT and timeout == PERMIT_TIMEOUT_S
        h.waiting[n] = WaitingPod()
    pgm.assume_pod(P[p])
    st, timeout = pl.permit(None, P[p], "some-node")  # type: ignore[arg-type]
    assert (None if st is None else (st.code, st.message())) == want_permit, name
    if st is not None:
        assert timeout == PERMIT_TIMEOUT_S
        return
    assert sorted(n for n, wp in h.waiting.items() if wp.allowed == ["GangScheduling"]) == sorted(want_allowed)


def test_hierarchy_permit_wait_activates_the_whole_tree() -> None:
    """permitPodForHierarchy below quorum activates the unscheduled members of every leaf."""
    pods = [P["p1-cpg"], P["p2-cpg"], P["p6-cpg"], P["p4-cpg"], pod("p7", "pg7-cpg")]
    pgm = manager(True, TREE_PGS, TREE_CPGS, pods)
    h = Handle(pgm, GATES_ON)
    pgm.assume_pod(P["p4-cpg"])
    st, _ = GangScheduling(h).permit(None, P["p4-cpg"], "some-node")  # type: ignore[arg-type]
    assert st is not None and st.code == Code.WAIT
    assert sorted(h.activated) == ["ns1/p1-cpg", "ns1/p2-cpg", "ns1/p6-cpg", "ns1/p7"]


def test_gate_off_ignores_the_hierarchy() -> None:
    """The (CPG=false) twins: the parent is not followed."""
    pgm = manager(False, TREE_PGS, TREE_CPGS, [P["p1-cpg"]])
    pl = GangScheduling(Handle(pgm, GATES_OFF))
    assert pl.pre_enqueue(P["p1-cpg"]) is None
    pgm = manager(False, BASIC_PGS, [BASIC_ROOT], [P["p1_1"], P["p1_2"], P["p2_1"]])
    st = GangScheduling(Handle(pgm, GATES_OFF)).pre_enqueue(P["p2_1"])
    assert st is not None and st.message() == "waiting for minCount pods from a gang to appear in scheduling queue"


# ───── hints (CPG=true rows) ─────

@pytest.mark.parametrize(("name", "new", "pgs", "cpgs", "want"), [
    ("add a newPod which matches the pod's scheduling group", pod("p2", "pg1"), [pg("pg1")], [], Q),
    ("add a newPod which doesn't match the pod's namespace", pod("p2", "pg1", ns="ns2"),
     [pg("pg1"), pg("pg1", ns="ns2")], [], S),
    ("add a newPod which doesn't match the pod's pod group name", pod("p2", "pg2"), [pg("pg1"), pg("pg2")], [], S),
    ("add a newPod which belongs to a different scheduling group but matches the root CPG", pod("p2", "pg2"),
     [pg("pg1", None, "cpg-root"), pg("pg2", None, "cpg-root")], [cpg("cpg-root")], Q),
    ("add a newPod which belongs to a different scheduling group and does not match the root CPG", pod("p2", "pg2"),
     [pg("pg1", None, "cpg-root1"), pg("pg2", None, "cpg-root2")], [cpg("cpg-root1"), cpg("cpg-root2")], S),
])
def test_is_schedulable_after_pod_added(name: str, new: Any, pgs: list[Any], cpgs: list[Any],
                                        want: QueueingHint) -> None:
    pl = GangScheduling(Handle(manager(True, pgs, cpgs), GATES_ON))
    hint = next(r.hint for r in pl.events_to_register() if r.event.resource.value == "UnscheduledPod")
    assert hint(pod("p1", "pg1"), None, new) == want, name


@pytest.mark.parametrize(("name", "new", "pgs", "cpgs", "want"), [
    ("add a CPG which matches the pod's root CPG", cpg("cpg-root", ns="default"),
     [pg("pg", None, "cpg-root", ns="default")], [], Q),
    ("add a CPG which matches the pod's intermediate CPG but implies the same root",
     cpg("cpg-sub", None, "cpg-root", ns="default"), [pg("pg", None, "cpg-sub", ns="default")],
     [cpg("cpg-root", ns="default")], Q),
    ("add a CPG which does not match the pod's CPG hierarchy", cpg("cpg-2", ns="default"),
     [pg("pg", None, "cpg-1", ns="default")], [cpg("cpg-1", ns="default")], S),
])
def test_is_schedulable_after_composite_pod_group_added(name: str, new: Any, pgs: list[Any], cpgs: list[Any],
                                                        want: QueueingHint) -> None:
    m = manager(True, pgs, [*cpgs, new])  # the informer has the new object when the hint runs
    pl = GangScheduling(Handle(m, GATES_ON))
    hint = next(r.hint for r in pl.events_to_register()
                if r.event.resource.value == "scheduling.k8s.io/CompositePodGroup")
    assert hint(pod("p", "pg", ns="default"), None, new) == want, name


def test_events_to_register_with_hierarchies() -> None:
    pl = GangScheduling(Handle(manager(True), GATES_ON))
    events = [(str(r.event.resource.value), int(r.event.action)) for r in pl.events_to_register()]
    assert events == [("UnscheduledPod", 1), ("AssignedPod", 1), ("scheduling.k8s.io/PodGroup", 1),
                      ("scheduling.k8s.io/PodGroup", 32767 & ~3), ("scheduling.k8s.io/CompositePodGroup", 1)]


# ───── TestPlacementFeasible (isCPG=true rows) ─────

@pytest.mark.parametrize(("name", "min_group_count", "children", "statuses", "expected", "initial"), [
    ("All pods succeed, minCount met at end", 2, 2, [Code.SUCCESS] * 2, [Code.WAIT, Code.SUCCESS], 0),
    ("First pod fails, minCount not satisfiable", 3, 3, [Code.UNSCHEDULABLE], [Code.UNSCHEDULABLE], 0),
    ("Second pod fails, minCount not satisfiable", 2, 2, [Code.SUCCESS, Code.UNSCHEDULABLE],
     [Code.WAIT, Code.UNSCHEDULABLE], 0),
    ("Non-gang pod group with 0 scheduled pods fails", None, 1, [Code.UNSCHEDULABLE], [Code.UNSCHEDULABLE], 0),
    ("Non-gang pod group with succeeds once 1 pod is scheduled", None, 1, [Code.SUCCESS], [Code.SUCCESS], 0),
    ("Non-gang pod group with 1 initially scheduled pod succeeds", None, 1, [Code.UNSCHEDULABLE], [Code.SUCCESS], 1),
    ("More than minCount pods, all succeed", 2, 3, [Code.SUCCESS] * 3, [Code.WAIT, Code.SUCCESS, Code.SUCCESS], 0),
    ("More than minCount pods, first fails", 2, 3, [Code.UNSCHEDULABLE, Code.SUCCESS, Code.SUCCESS],
     [Code.WAIT, Code.WAIT, Code.SUCCESS], 0),
    ("More than minCount pods, minCount not satisfiable", 2, 3, [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE],
     [Code.WAIT, Code.UNSCHEDULABLE], 0),
    ("1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, [Code.SUCCESS, Code.SUCCESS],
     [Code.WAIT, Code.SUCCESS], 1),
    ("minCount already met by scheduled pods", 2, 1, [Code.UNSCHEDULABLE], [Code.SUCCESS], 2),
    ("1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining", 3, 2, [Code.UNSCHEDULABLE],
     [Code.UNSCHEDULABLE], 1),
])
def test_placement_feasible_composite(name: str, min_group_count: int | None, children: int,
                                      statuses: list[Code], expected: list[Code], initial: int) -> None:
    pl = GangScheduling(Handle(manager(True), GATES_ON))
    info = PodGroupInfo("cpg", "default", type=COMPOSITE_POD_GROUP_KEY_TYPE,
                        composite_pod_group=cpg("cpg", min_group_count, ns="default"),
                        children=[PodGroupInfo(f"pg{i}", "default") for i in range(children)])
    state = PlacementCycleState(PodGroupCycleState())
    remaining, scheduled = children, initial
    got = []
    for code in statuses:
        remaining -= 1
        if code == Code.SUCCESS:
            scheduled += 1
        st = pl.placement_feasible(state, info, PlacementProgress(remaining, scheduled))
        got.append(Code.SUCCESS if st is None else st.code)
    assert got == expected, name


def test_placement_feasible_composite_messages() -> None:
    pl = GangScheduling(Handle(manager(True), GATES_ON))
    info = PodGroupInfo("cpg", "default", type=COMPOSITE_POD_GROUP_KEY_TYPE,
                        composite_pod_group=cpg("cpg", 3, ns="default"))
    st = pl.placement_feasible(PlacementCycleState(PodGroupCycleState()), info, PlacementProgress(0, 2))
    assert st is not None and (st.code, st.message()) == (
        Code.UNSCHEDULABLE, "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining")
