"""Pod groups in the scheduling queue (upstream v1.37.2 ``backend/queue``: scheduling_queue.go
addPodGroupMember / AddAttemptedPodGroupIfNeeded / Activate / AddPodGroup / DeletePodGroup,
backoff_queue.go calculateBackoffDuration, types.go PodGroupMemberPodsOrderingFunc), with
GenericWorkload on; cases after scheduling_queue_test.go's pod-group tests."""

from __future__ import annotations

import math
from typing import Any

from kubesched.features import FeatureGate
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo, QueuedPodInfo
from kubesched.queue.podgroups import QueuedPodGroupInfo, member_order_key
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakePod


def _pg(name: str = "pg", min_count: int | None = 1, priority: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}} if min_count is None else
                            {"gang": {"minCount": min_count}}}
    if priority is not None:
        spec["priority"] = priority
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": "1"}, "spec": spec}


def _pod(name: str, pg: str | None = "pg", priority: int = 0, gates: tuple[str, ...] = ()) -> Any:
    w = MakePod().name(name).uid(name).priority(priority)
    if pg is not None:
        w = w.spec(schedulingGroup={"podGroupName": pg})
    if gates:
        w = w.scheduling_gates(*gates)
    return w.obj()


def _sched() -> tuple[Scheduler, ClusterStore]:
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, features=FeatureGate(overrides={"GenericWorkload": True}))
    store.scheduler = sched
    return sched, store


def _add_pg(store: ClusterStore, pg: dict[str, Any]) -> None:
    store.put_object("PodGroup", pg)
    store.flush()


def test_member_before_its_pod_group_waits_in_the_incomplete_pool() -> None:
    sched, store = _sched()
    store.add("Pod", _pod("p1"))
    q = sched.queue
    assert q.counts()["incomplete"] == 1 and not q.has_schedulable()
    _add_pg(store, _pg())
    assert q.counts()["incomplete"] == 0
    e = q.pod_group_entity("default", "pg")
    assert e is not None and q.where(e.key) == "active" and [m.key for m in e.members] == ["default/p1"]


def test_members_join_one_entity_and_pop_as_one_cycle() -> None:
    sched, store = _sched()
    _add_pg(store, _pg(min_count=None))
    for n in ("p2", "p1", "p3"):
        store.add("Pod", _pod(n))
    q = sched.queue
    assert len(q) == 3 and q.counts()["active"] == 3
    cycle = q.scheduling_cycle
    e = q.pop()
    assert isinstance(e, QueuedPodGroupInfo)
    assert q.scheduling_cycle == cycle + 1
    # member order: priority, attempts, timestamp (all equal here: the same virtual instant), name
    assert [m.pod.metadata.name for m in e.members] == ["p1", "p2", "p3"]
    assert e.attempts == 1 and all(m.attempts == 1 for m in e.members)
    assert q.pop() is None


def test_member_order_key() -> None:
    """PodGroupMemberPodsOrderingFunc: priority desc, attempts desc, timestamp asc, name asc."""
    def qpi(name: str, prio: int = 0, attempts: int = 0, ts: float = 0.0) -> QueuedPodInfo:
        return QueuedPodInfo(PodInfo(_pod(name, priority=prio)), timestamp=ts, attempts=attempts)
    members = [qpi("a", ts=1.0), qpi("b", attempts=2, ts=5.0), qpi("c", prio=10, ts=9.0), qpi("d", ts=0.5)]
    assert [m.pod.metadata.name for m in sorted(members, key=member_order_key)] == ["c", "b", "d", "a"]


def test_group_sorts_by_pod_group_priority() -> None:
    """QueueSort compares a group by its PodGroup's spec.priority (GetPriority)."""
    sched, store = _sched()
    store.add("Pod", _pod("single", pg=None, priority=5))
    _add_pg(store, _pg(priority=10))
    store.add("Pod", _pod("m1", priority=10))
    first = sched.queue.pop()
    assert isinstance(first, QueuedPodGroupInfo)


def test_one_gated_member_gates_the_entity() -> None:
    """runPreEnqueuePlugins: any gated member gates the whole entity (its gating plugin copied)."""
    sched, store = _sched()
    _add_pg(store, _pg(min_count=None))
    store.add("Pod", _pod("p1"))
    store.add("Pod", _pod("p2", gates=("wait",)))
    q = sched.queue
    e = q.pod_group_entity("default", "pg")
    assert e is not None and e.gated and e.gating_plugin == "SchedulingGates"
    assert q.where(e.key) == "gated" and not q.has_schedulable()


def test_gang_quorum_gates_until_min_count_members() -> None:
    sched, store = _sched()
    _add_pg(store, _pg(min_count=2))
    store.add("Pod", _pod("p1"))
    q = sched.queue
    e = q.pod_group_entity("default", "pg")
    assert e is not None and e.gating_plugin == "GangScheduling" and q.where(e.key) == "gated"
    store.add("Pod", _pod("p2"))
    e = q.pod_group_entity("default", "pg")
    assert e is not None and not e.gated and q.where(e.key) == "active" and e.size() == 2


def test_member_added_while_in_flight_is_pending_then_requeued() -> None:
    sched, store = _sched()
    _add_pg(store, _pg(min_count=None))
    store.add("Pod", _pod("p1"))
    q = sched.queue
    e = q.pop()
    assert isinstance(e, QueuedPodGroupInfo)
    store.add("Pod", _pod("p2"))
    assert q.counts()["pending"] == 1 and q.pod_group_entity("default", "pg") is None
    q.done("default/p1")  # p1 was bound
    q.add_attempted_pod_group(e, None)
    e2 = q.pod_group_entity("default", "pg")
    assert e2 is not None and [m.key for m in e2.members] == ["default/p2"] and q.where(e2.key) == "active"
    assert e2.attempts == 1  # the popped entity's queueing parameters


def test_add_attempted_pod_group_requeue_rules() -> None:
    """AddAttemptedPodGroupIfNeeded: success → activeQ (timestamp kept when a member of the attempt
    failed); rejected → UnschedulableCount + 1 and backoff; error → ConsecutiveErrorsCount + 1."""
    for status, where, unsched, errors in ((None, "active", 0, 0),
                                           (Status(Code.UNSCHEDULABLE, ("x",)), "backoff", 1, 0),
                                           (Status(Code.ERROR, ("x",)), "backoff", 0, 1)):
        sched, store = _sched()
        clock = sched.clock
        _add_pg(store, _pg(min_count=None))
        store.add("Pod", _pod("p1"))
        store.add("Pod", _pod("p2"))
        q = sched.queue
        e = q.pop()
        assert isinstance(e, QueuedPodGroupInfo)
        ts = e.timestamp
        clock.set(clock.now() + 0.5)
        for m in e.members:  # both members failed and came back (FailureHandler → pending)
            q.add_unschedulable_if_not_present(m)
        q.add_attempted_pod_group(e, status)
        e2 = q.pod_group_entity("default", "pg")
        assert e2 is not None and q.where(e2.key) == where, status
        assert (e2.unschedulable_count, e2.consecutive_errors_count) == (unsched, errors)
        assert e2.timestamp == (ts if status is None else clock.now())


def test_group_backoff_is_scaled_by_sqrt_size() -> None:
    """calculateBackoffDuration: a group's max backoff × √size."""
    sched, _ = _sched()
    q = sched.queue
    e = QueuedPodGroupInfo("default", "pg", _pg())
    for i in range(4):
        e.add(QueuedPodInfo(PodInfo(_pod(f"p{i}"))))
    e.unschedulable_count = 10
    assert q.backoff_duration(e) == 10.0 * math.sqrt(4)
    e.unschedulable_count = 2
    assert q.backoff_duration(e) == 2.0


def test_activating_a_member_activates_its_group() -> None:
    sched, store = _sched()
    _add_pg(store, _pg(min_count=None))
    store.add("Pod", _pod("p1"))
    store.add("Pod", _pod("p2"))
    q = sched.queue
    e = q.pop()
    assert isinstance(e, QueuedPodGroupInfo)
    for m in e.members:
        q.add_unschedulable_if_not_present(m)
    q.add_attempted_pod_group(e, Status(Code.UNSCHEDULABLE, ("x",)))
    assert q.where(e.key) == "backoff"
    sched.profiles["default-scheduler"].handle.activate({"default/p2": _pod("p2")})
    assert q.where(e.key) == "active"


def test_deleting_the_pod_group_moves_members_to_incomplete() -> None:
    sched, store = _sched()
    _add_pg(store, _pg(min_count=None))
    store.add("Pod", _pod("p1"))
    store.remove_object("PodGroup", "default", "pg")
    store.flush()
    q = sched.queue
    assert q.pod_group_entity("default", "pg") is None and q.counts()["incomplete"] == 1


def test_deleting_the_last_member_removes_the_entity() -> None:
    sched, store = _sched()
    _add_pg(store, _pg(min_count=None))
    store.add("Pod", _pod("p1"))
    store.add("Pod", _pod("p2"))
    q = sched.queue
    store.remove_pod("default/p1")
    e = q.pod_group_entity("default", "pg")
    assert e is not None and [m.key for m in e.members] == ["default/p2"]
    store.remove_pod("default/p2")
    assert q.pod_group_entity("default", "pg") is None and len(q) == 0
    assert sched.pod_group_manager.pod_group_state("default", "pg").all_pods_count() == 0


def test_pod_group_state_follows_pod_events() -> None:
    """Cache podGroupStates: members known before the PodGroup; assumed/assigned as they bind."""
    sched, store = _sched()
    store.add("Pod", _pod("p1"))
    pgm = sched.pod_group_manager
    st = pgm.pod_group_state("default", "pg")
    assert st is not None and pgm.pod_group("default", "pg") is None and st.all_pods_count() == 1
    assert list(st.unscheduled_pods()) == ["default/p1"]
    store.add("Pod", MakePod().name("b").uid("b").node("n1").spec(schedulingGroup={"podGroupName": "pg"}).obj())
    assert st.assigned_pods() == {"b"} and st.scheduled_pods_count() == 1 and st.all_pods_count() == 2


def test_gate_off_pods_queue_alone() -> None:
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store)
    store.scheduler = sched
    store.add("Pod", _pod("p1"))
    assert sched.queue.where("default/p1") == "active"
    assert sched.queue.counts() == {"active": 1, "backoff": 0, "unschedulable": 0, "gated": 0}


def test_taking_a_sibling_group_puts_it_in_flight_with_the_popped_one() -> None:
    """CompositePodGroup's tree-wide cycle (upstream: one queue entry per root,
    backend/queue/workload_forest.go): a sibling PodGroup's queued entity is taken out of activeQ
    with its members in flight; a member added meanwhile is pending; after the attempt it comes
    back as the popped entity does (AddAttemptedPodGroupIfNeeded)."""
    sched, store = _sched()
    _add_pg(store, _pg("a", min_count=None))
    _add_pg(store, _pg("b", min_count=None))
    store.add("Pod", _pod("a1", pg="a"))
    store.add("Pod", _pod("b1", pg="b"))
    q = sched.queue
    popped = q.pop()
    assert isinstance(popped, QueuedPodGroupInfo) and popped.name == "a"
    taken = q.take_pod_group_entity("default", "b")
    assert taken is not None and [m.key for m in taken.members] == ["default/b1"]
    assert taken.attempts == 1 and q.pod_group_entity("default", "b") is None and q.pop() is None
    assert q.take_pod_group_entity("default", "b") is None  # in flight: nothing more to take
    store.add("Pod", _pod("b2", pg="b"))
    assert q.counts()["pending"] == 1 and q.pod_group_entity("default", "b") is None
    q.done("default/b1")  # b1 was bound
    q.add_attempted_pod_group(taken, None)
    back = q.pod_group_entity("default", "b")
    assert back is not None and [m.key for m in back.members] == ["default/b2"] and q.where(back.key) == "active"
