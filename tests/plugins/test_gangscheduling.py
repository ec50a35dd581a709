"""GangScheduling (upstream v1.37.2 ``plugins/gangscheduling/gangscheduling_test.go``): the
queueing-hint tables, the PreEnqueue → Permit flow and the PlacementFeasible table, ported
case by case (the CompositePodGroup cases: test_gangscheduling_composite.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cache import PodGroupManagerImpl
from kubesched.framework.events import QueueingHint
from kubesched.framework.interface import Code
from kubesched.framework.podgroup import PlacementCycleState, PlacementProgress, PodGroupCycleState, PodGroupInfo
from kubesched.plugins.gangscheduling import PERMIT_TIMEOUT_S, GangScheduling
from kubesched.plugins.registry import IN_TREE
from kubesched.testing.wrappers import MakePod

Q, S = QueueingHint.QUEUE, QueueingHint.SKIP


def _pod(name: str, pg: str | None = None, ns: str = "ns1", node: str = "") -> Any:
    w = MakePod().name(name).namespace(ns).uid(name)
    if pg is not None:
        w = w.spec(schedulingGroup={"podGroupName": pg})
    if node:
        w = w.node(node)
    return w.obj()


def _pg(name: str, min_count: int | None = None, ns: str = "ns1") -> dict[str, Any]:
    policy = {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns}, "spec": {"schedulingPolicy": policy}}


def test_registered() -> None:
    assert IN_TREE["GangScheduling"] == "kubesched.plugins.gangscheduling:new"


# ───── Test_isSchedulableAfterPodAdded ─────

@pytest.mark.parametrize(("name", "new", "want"), [
    ("add a newPod which matches the pod's scheduling group", _pod("p2", "pg1"), Q),
    ("add a newPod with NodeName set which matches the pod's scheduling group", _pod("p2", "pg1", node="n1"), Q),
    ("add a newPod which doesn't match the pod's namespace", _pod("p2", "pg1", ns="ns2"), S),
    ("add a newPod which doesn't match the pod's pod group name", _pod("p2", "pg2"), S),
    ("add a newPod without a scheduling group", _pod("p2"), S),
])
def test_is_schedulable_after_pod_added(name: str, new: Any, want: QueueingHint) -> None:
    assert GangScheduling.is_schedulable_after_pod_added(_pod("p1", "pg1"), None, new) == want, name


# ───── Test_isSchedulableAfterPodGroupAdded ─────

@pytest.mark.parametrize(("name", "new", "want"), [
    ("add a pod group which matches the pod's pod group name", _pg("pg1", 2), Q),
    ("add a pod group which doesn't match the pod's scheduling group name", _pg("pg2", 2), S),
    ("add a pod group which doesn't match the pod's scheduling group namespace", _pg("pg1", 2, ns="ns2"), S),
])
def test_is_schedulable_after_pod_group_added(name: str, new: Any, want: QueueingHint) -> None:
    assert GangScheduling.is_schedulable_after_pod_group_added(_pod("p1", "pg1"), None, new) == want, name


# ───── Test_isSchedulableAfterPodGroupUpdated ─────

@pytest.mark.parametrize(("name", "pod", "old", "new", "want"), [
    ("minCount decreased matches target pod", _pod("p1", "pg1"), _pg("pg1", 3), _pg("pg1", 2), Q),
    ("update Basic policy", _pod("p1", "pg1"), _pg("pg1"), _pg("pg1"), S),
    ("minCount increased matches target pod", _pod("p1", "pg1"), _pg("pg1", 2), _pg("pg1", 3), S),
    ("minCount unchanged matches target pod", _pod("p1", "pg1"), _pg("pg1", 2), _pg("pg1", 2), S),
    ("minCount decreased but pod group name doesn't match target pod", _pod("p1", "pg1"),
     _pg("pg2", 3), _pg("pg2", 2), S),
    ("minCount decreased but pod group namespace doesn't match target pod", _pod("p1", "pg1"),
     _pg("pg1", 3, ns="ns2"), _pg("pg1", 2, ns="ns2"), S),
    ("pod without a scheduling group is skipped", _pod("p1"), _pg("pg1", 3), _pg("pg1", 2), S),
])
def test_is_schedulable_after_pod_group_updated(name: str, pod: Any, old: Any, new: Any, want: QueueingHint) -> None:
    assert GangScheduling.is_schedulable_after_pod_group_updated(pod, old, new) == want, name


def test_events_to_register() -> None:
    events = [(str(r.event.resource.value), int(r.event.action)) for r in GangScheduling(None).events_to_register()]
    assert events == [("UnscheduledPod", 1), ("AssignedPod", 1), ("scheduling.k8s.io/PodGroup", 1),
                      ("scheduling.k8s.io/PodGroup", 32767 & ~3)]


# ───── TestGangSchedulingFlow ─────

class _WaitingPod:
    def __init__(self, uid: str) -> None:
        self.uid = uid
        self.allowed: list[str] = []

    def allow(self, plugin: str) -> None:
        self.allowed.append(plugin)


class _Handle:
    """What GangScheduling reads of the Handle: the pod-group manager, Activate, GetWaitingPod."""

    def __init__(self, pgm: PodGroupManagerImpl) -> None:
        self.pod_group_manager = pgm
        self.activated: list[str] = []
        self.waiting: dict[str, _WaitingPod] = {}

    def activate(self, pods: dict[str, Any]) -> None:
        self.activated.extend(sorted(pods))

    def get_waiting_pod(self, uid: str) -> _WaitingPod | None:
        return self.waiting.get(uid)


P = {n: _pod(n, "pg1") for n in ("p1", "p2", "p3")} | {n: _pod(n, "pg2") for n in ("p4", "p5")}
P["basic-pod"] = _pod("basic-pod", "pg3")
P["non-gang"] = _pod("non-gang")
GANG1, GANG2, BASIC = _pg("pg1", 3), _pg("pg2", 4), _pg("pg3")
PRE_NO_PG = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'waiting for pods\'s pod group "pg1" to appear in scheduling queue')
PRE_QUORUM = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
              "waiting for minCount pods from a gang to appear in scheduling queue")
WAIT = (Code.WAIT, "waiting for minCount pods from a gang to be scheduled")


@pytest.mark.parametrize(("name", "pod", "initial", "groups", "waiting", "want_pre", "want_permit", "want_allowed"), [
    ("non-gang pod succeeds immediately", "non-gang", [], [GANG1, GANG2, BASIC], [], None, None, []),
    ("basic policy pod succeeds immediately", "basic-pod", [], [GANG1, GANG2, BASIC], [], None, None, []),
    ("gang pod fails PreEnqueue when pod group is not yet created", "p1", ["p2", "p3", "p4", "p5"], [], [],
     PRE_NO_PG, None, []),
    ("gang pod fails PreEnqueue when quorum is not met", "p1", ["p2", "p4", "p5"], [GANG1, GANG2], [],
     PRE_QUORUM, None, []),
    ("gang pod passes PreEnqueue, but waits at Permit", "p1", ["p2", "p3", "p4", "p5"], [GANG1, GANG2],
     ["p2", "p4", "p5"], None, WAIT, []),
    ("final gang pod arrives at Permit and allows all waiting pods from a gang", "p1", ["p2", "p3", "p4", "p5"],
     [GANG1, GANG2], ["p2", "p3", "p4", "p5"], None, None, ["p1", "p2", "p3"]),
])
def test_gang_scheduling_flow(name: str, pod: str, initial: list[str], groups: list[dict[str, Any]],
                              waiting: list[str], want_pre: Any, want_permit: Any, want_allowed: list[str]) -> None:
    pgm = PodGroupManagerImpl()
    for g in groups:
        pgm.set_pod_group(g)
    for n in [*initial, pod]:
        pgm.add_pod(P[n])
    h = _Handle(pgm)
    pl = GangScheduling(h)
    st = pl.pre_enqueue(P[pod])
    assert (None if st is None else (st.code, st.message())) == want_pre, name
    if st is not None:
        return
    for n in waiting:  # other members already hit Permit and wait (assumed in the cache)
        pgm.assume_pod(P[n])
        wst, timeout = pl.permit(None, P[n], "some-node")  # type: ignore[arg-type]
        assert wst is not None and wst.code == Code.WAIT and timeout == PERMIT_TIMEOUT_S
        h.waiting[n] = _WaitingPod(n)
    h.activated.clear()
    pgm.assume_pod(P[pod])
    st, timeout = pl.permit(None, P[pod], "some-node")  # type: ignore[arg-type]
    assert (None if st is None else (st.code, st.message())) == want_permit, name
    if st is not None:
        assert timeout == PERMIT_TIMEOUT_S
        return
    assert sorted(n for n, wp in h.waiting.items() if wp.allowed == ["GangScheduling"]) == \
        [n for n in want_allowed if n in h.waiting]


def test_permit_wait_activates_unscheduled_members() -> None:
    """The "waits at Permit" case's wantActivatedPods: the group's unscheduled members (p3)."""
    pgm = PodGroupManagerImpl()
    pgm.set_pod_group(GANG1)
    for n in ("p1", "p2", "p3"):
        pgm.add_pod(P[n])
    h = _Handle(pgm)
    pgm.assume_pod(P["p2"])
    pgm.assume_pod(P["p1"])
    st, _ = GangScheduling(h).permit(None, P["p1"], "some-node")  # type: ignore[arg-type]
    assert st is not None and st.code == Code.WAIT
    assert h.activated == ["ns1/p3"]


# ───── TestPlacementFeasible ─────

@pytest.mark.parametrize(("name", "min_count", "pods", "statuses", "expected", "initial"), [
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
])
def test_placement_feasible(name: str, min_count: int | None, pods: int, statuses: list[Code],
                            expected: list[Code], initial: int) -> None:
    pl = GangScheduling(None)
    info = PodGroupInfo("pg", "default", pod_group=_pg("pg", min_count, ns="default"),
                        unscheduled_pods=[_pod(f"p{i}", "pg", ns="default") for i in range(pods)])
    state = PlacementCycleState(PodGroupCycleState())
    remaining, scheduled = pods, initial
    got = []
    for code in statuses:
        remaining -= 1
        if code == Code.SUCCESS:
            scheduled += 1
        st = pl.placement_feasible(state, info, PlacementProgress(remaining, scheduled))
        got.append(Code.SUCCESS if st is None else st.code)
    assert got == expected, name


def test_placement_feasible_messages() -> None:
    pl = GangScheduling(None)
    info = PodGroupInfo("pg", "default", pod_group=_pg("pg", 4, ns="default"))
    state = PlacementCycleState(PodGroupCycleState())
    st = pl.placement_feasible(state, info, PlacementProgress(0, 3))
    assert st is not None and (st.code, st.message()) == (
        Code.UNSCHEDULABLE, "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining")
    st = pl.placement_feasible(state, info, PlacementProgress(1, 3))
    assert st is not None and (st.code, st.message()) == (
        Code.WAIT, "minCount (4) is not yet satisfied: 3 scheduled, 1 remaining")
    assert pl.placement_feasible(state, info, PlacementProgress(0, 4)) is None
