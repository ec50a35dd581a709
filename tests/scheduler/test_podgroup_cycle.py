"""The pod-group cycle (upstream v1.37.2 ``schedule_one_podgroup_test.go``): the algorithm table
(TestPodGroupSchedulingAlgorithm), validatePodGroup (TestValidatePodGroup), skipping
(TestSkipPodGroupPodSchedule / TestScheduleOnePodGroup_FinishesAttemptWhenAllPoppedPodsAreAssumed),
submit and the PodGroup condition (TestSubmitPodGroupAlgorithmResult, TestUpdatePodGroupCondition),
and gangs end to end through the engine with GenericWorkload on."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.features import FeatureGate
from kubesched.framework.interface import Code, Status
from kubesched.framework.podgroup import PodGroupCycleState
from kubesched.plugins.registry import in_tree_registry
from kubesched.queue.podgroups import QueuedPodGroupInfo
from kubesched.scheduler import Scheduler
from kubesched.scheduler.schedule_one_podgroup import PodGroupCycleResult, _run_root_algorithm, validate_pod_group
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

GW = {"GenericWorkload": True}


def _pg(name: str = "pg", min_count: int | None = 3, ns: str = "default", priority: int | None = None,
        generation: int = 1, policy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulingPolicy": {"basic": {}} if min_count is None else
                            {"gang": {"minCount": min_count}}}
    if priority is not None:
        spec["priority"] = priority
    if policy is not None:
        spec["preemptionPolicy"] = policy
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": ns, "generation": generation, "resourceVersion": "1"},
            "spec": spec}


def _pod(name: str, pg: str = "pg", cpu: str = "1", **kw: Any) -> Any:
    w = MakePod().name(name).uid(name).req(cpu=cpu).spec(schedulingGroup={"podGroupName": pg})
    if "priority" in kw:
        w = w.priority(kw["priority"])
    if "scheduler" in kw:
        w = w.scheduler_name(kw["scheduler"])
    if "policy" in kw:
        w = w.preemption_policy(kw["policy"])
    return w.obj()


class FakeFilter:
    """Upstream ``fakePodGroupPlugin``: Filter returns the configured status per pod name."""

    name = "FakeFilter"

    def __init__(self, statuses: dict[str, Status | None]) -> None:
        self.statuses = statuses

    def filter(self, state: Any, pod: Any, node_info: Any) -> Status | None:
        return self.statuses.get(pod.metadata.name)


class FakePlacementFeasible:
    """Returns the given codes in turn (upstream ``podGroupFeasibleStatuses``); Success when exhausted."""

    name = "GangScheduling"

    def __init__(self, codes: list[Code]) -> None:
        self.codes = list(codes)
        self.calls = 0

    def placement_feasible(self, state: Any, pg_info: Any, progress: Any) -> Status | None:
        self.calls += 1
        if not self.codes:
            return None
        c = self.codes.pop(0)
        return None if c == Code.SUCCESS else Status(c, (f"fake {c}",))


def _scheduler(nodes: int = 1, *, filter_statuses: dict[str, Status | None] | None = None,
               features: dict[str, bool] | None = None, cpu: str = "4") -> tuple[Scheduler, ClusterStore]:
    fg = FeatureGate(overrides={**GW, **(features or {})})
    store = ClusterStore()
    if filter_statuses is None:
        sched = Scheduler(client=store, lister=store, features=fg)
    else:
        reg = dict(in_tree_registry())
        reg["FakeFilter"] = lambda a, h: FakeFilter(filter_statuses)
        cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                             "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                                 "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"},
                                                            {"name": "GangScheduling"}],
                                                "disabled": [{"name": "*"}]},
                                 "filter": {"enabled": [{"name": "FakeFilter"}]}}}]}, features=fg)
        sched = Scheduler(cfg, client=store, lister=store, registry=reg, features=fg)
    store.scheduler = sched
    for i in range(nodes):
        store.add("Node", MakeNode().name(f"n{i}").capacity(cpu=cpu, memory="8Gi", pods="110").obj())
    return sched, store


def _entity(sched: Scheduler, store: ClusterStore, pods: list[Any], pg: dict[str, Any]) -> QueuedPodGroupInfo:
    """Add the PodGroup and its pods, then pop the group entity."""
    store.put_object("PodGroup", pg)
    store.flush()
    for p in pods:
        store.add("Pod", p)
    entity = sched.queue.pop()
    assert isinstance(entity, QueuedPodGroupInfo)
    return entity


def _cond(store: ClusterStore, name: str) -> tuple[str, str, str] | None:
    p = store.pods[f"default/{name}"]
    c = next((c for c in p.status.conditions if c.type == "PodScheduled"), None)
    return None if c is None else (c.status, c.reason, c.message)


def _pg_cond(store: ClusterStore, name: str = "pg") -> dict[str, Any] | None:
    pg = store.objects["PodGroup"][("default", name)]
    conds = (pg.get("status") or {}).get("conditions") or []
    return next((c for c in conds if c["type"] == "PodGroupInitiallyScheduled"), None)


# ───── TestPodGroupSchedulingAlgorithm ─────

UNS, UAU, ERR = Status(Code.UNSCHEDULABLE, ("fake",)), Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("fake",)), \
    Status(Code.ERROR, ("fake error",))


@pytest.mark.parametrize(("name", "filters", "feasible", "group_code", "pod_codes"), [
    ("All pods feasible", {}, None, Code.SUCCESS, {"p1": None, "p2": None, "p3": None}),
    ("All pods feasible, podGroup already meeting quorum before any pod is evaluated", {},
     [Code.SUCCESS] * 4, Code.SUCCESS, {"p1": None, "p2": None, "p3": None}),
    ("All pods feasible, podGroup schedulable with 3 schedulable pods", {},
     [Code.WAIT, Code.WAIT, Code.WAIT, Code.SUCCESS], Code.SUCCESS, {"p1": None, "p2": None, "p3": None}),
    ("All pods feasible, podGroup waiting", {}, [Code.WAIT] * 4, Code.UNSCHEDULABLE,
     {"p1": None, "p2": None, "p3": None}),
    ("All pods feasible, podGroup unschedulable", {}, [Code.WAIT, Code.UNSCHEDULABLE], Code.UNSCHEDULABLE,
     {"p1": None}),
    ("All pods feasible, podGroup unschedulable with 2 pods", {}, [Code.WAIT, Code.WAIT, Code.UNSCHEDULABLE],
     Code.UNSCHEDULABLE, {"p1": None, "p2": None}),
    ("PodGroup schedulable with 2 schedulable pods", {"p1": UNS}, [Code.WAIT, Code.WAIT, Code.WAIT, Code.SUCCESS],
     Code.SUCCESS, {"p1": Code.UNSCHEDULABLE, "p2": None, "p3": None}),
    ("All pods unschedulable", {"p1": UAU, "p2": UNS, "p3": UNS}, [Code.WAIT] + [Code.SUCCESS] * 3,
     Code.UNSCHEDULABLE, {"p1": Code.UNSCHEDULABLE, "p2": Code.UNSCHEDULABLE, "p3": Code.UNSCHEDULABLE}),
    ("Any filter returned Error", {"p2": ERR}, None, Code.ERROR, {"p1": None, "p2": Code.ERROR}),
    ("Any placementFeasible returned Error", {}, [Code.WAIT, Code.SUCCESS, Code.ERROR], Code.ERROR,
     {"p1": None, "p2": None}),
    ("First placementFeasible call returned Unschedulable", {}, [Code.UNSCHEDULABLE], Code.UNSCHEDULABLE, {}),
    ("First placementFeasible call returned Error", {}, [Code.ERROR], Code.ERROR, {}),
])
def test_pod_group_scheduling_algorithm(name: str, filters: dict[str, Status], feasible: list[Code] | None,
                                        group_code: Code, pod_codes: dict[str, Code | None]) -> None:
    sched, store = _scheduler(1, filter_statuses=filters)
    fw = sched.profiles["default-scheduler"]
    if feasible is not None:
        fw.placement_feasible_plugins = [FakePlacementFeasible(feasible)]
    else:
        fw.placement_feasible_plugins = []
    entity = _entity(sched, store, [_pod("p1"), _pod("p2"), _pod("p3")], _pg(min_count=None))
    result = _run_root_algorithm(sched, fw, PodGroupCycleState(), entity)  # reverts the assumptions
    got = Code.SUCCESS if result.status is None else result.status.code
    assert got == group_code, name
    assert {pr.qpi.pod.metadata.name: (None if pr.status is None else pr.status.code)
            for pr in result.pod_results} == pod_codes, name
    # the simulation is a dry run: nothing stays assumed on the node
    assert len(sched.table.pods[sched.table.row_of["n0"]]) == 0
    assert sched.pod_group_manager.pod_group_state("default", "pg").scheduled_pods_count() == 0


# ───── TestValidatePodGroup ─────

@pytest.mark.parametrize(("name", "pods", "pg", "features", "want"), [
    ("success for same scheduler name", [_pod("p1"), _pod("p2")], _pg(), {}, None),
    ("failure for different scheduler names", [_pod("p1"), _pod("p2", scheduler="other")], _pg(), {},
     'all pods in a single pod group should have the same .spec.schedulerName set, got: "other" and '
     '"default-scheduler"'),
    ("failure when profile not found", [_pod("p1", scheduler="other"), _pod("p2", scheduler="other")], _pg(), {},
     'profile not found for scheduler name "other"'),
    ("success when priorities match", [_pod("p1", priority=5), _pod("p2", priority=5)], _pg(priority=5), {}, None),
    ("failure when different priorities across pods", [_pod("p1", priority=5), _pod("p2", priority=6)],
     _pg(priority=5), {},
     "all pods in a single pod group should have the same priority as the pod group's priority, got 6 and 5"),
    ("failure when different priorities across pods and pod group", [_pod("p1", priority=5)], _pg(), {},
     "all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 0"),
    ("success when preemption policies match", [_pod("p1", policy="Never"), _pod("p2", policy="Never")], _pg(), {},
     None),
    ("failure when different preemption policies across pods", [_pod("p1", policy="Never"), _pod("p2")], _pg(), {},
     "all pods in a single pod group should have the same preemption policy, got PreemptLowerPriority and Never"),
    ("failure when different preemption policies across pods and pod group", [_pod("p1", policy="Never")],
     _pg(), {"PodGroupPreemptionPolicy": True},
     "all pods in a single pod group should have the same preemption policy as the pod group's preemption "
     "policy, got Never and PreemptLowerPriority"),
    ("success when preemption policies between pods and podgroup do not match but PodGroupPreemptionPolicy is "
     "disabled", [_pod("p1", policy="Never")], _pg(policy="PreemptLowerPriority"), {}, None),
])
def test_validate_pod_group(name: str, pods: list[Any], pg: dict[str, Any], features: dict[str, bool],
                            want: str | None) -> None:
    sched, store = _scheduler(1, features=features)
    store.put_object("PodGroup", pg)
    store.flush()
    for p in pods:
        sched.pod_group_manager.add_pod(p)
    entity = QueuedPodGroupInfo("default", "pg", pg)
    from kubesched.framework.node_info import PodInfo, QueuedPodInfo
    for p in pods:
        entity.add(QueuedPodInfo(PodInfo(p)))
    entity.members.sort(key=lambda m: m.pod.metadata.name)
    assert validate_pod_group(sched, entity) == want, name


def test_validate_pod_group_checks_scheduled_members() -> None:
    """"failure when new pod has different priority than scheduled pod": an assigned member counts."""
    sched, store = _scheduler(2)
    store.put_object("PodGroup", _pg(min_count=1))
    store.flush()
    store.add("Pod", MakePod().name("old").uid("old").node("n0").priority(7)
              .spec(schedulingGroup={"podGroupName": "pg"}).obj())
    store.add("Pod", _pod("p1"))
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    msg = "all pods in a single pod group should have the same priority as the pod group's priority, got 7 and 0"
    assert _cond(store, "p1") == ("False", "SchedulerError", msg)
    assert _pg_cond(store) == {"type": "PodGroupInitiallyScheduled", "status": "False", "observedGeneration": 1,
                               "reason": "SchedulerError", "message": msg}


# ───── skipping ─────

def test_all_members_skipped_finishes_the_attempt() -> None:
    """TestScheduleOnePodGroup_FinishesAttemptWhenAllPoppedPodsAreAssumed: a member added while the
    group is in flight is requeued when the attempt ends, even if nothing was scheduled."""
    sched, store = _scheduler(2)
    entity = _entity(sched, store, [_pod("p1")], _pg(min_count=1))
    # p1 is already assumed (e.g. by an earlier cycle), p2 arrives while the group is in flight
    p1 = entity.members[0]
    sched.cache.assume_pod(p1.pod_info.with_pod(p1.pod), "n0")
    store.add("Pod", _pod("p2"))
    assert sched.queue.counts()["pending"] == 1
    from kubesched.scheduler.schedule_one_podgroup import schedule_one_pod_group
    out = schedule_one_pod_group(sched, entity)
    assert out.scheduled == [] and out.attempts == []
    assert sched.queue.counts()["pending"] == 0
    e = sched.queue.pod_group_entity("default", "pg")
    assert e is not None and [m.key for m in e.members] == ["default/p2"]
    assert sched.queue.where(e.key) == "active"


# ───── end to end (submit, condition, Permit) ─────

def test_gang_all_fit_all_bound() -> None:
    sched, store = _scheduler(4, cpu="4")
    store.put_object("PodGroup", _pg(min_count=4))
    store.flush()
    for i in range(4):
        store.add("Pod", _pod(f"p{i}", cpu="3"))
    attempts: list[Any] = []
    sched.on_attempt = attempts.append
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert sorted(store.pods[f"default/p{i}"].spec.node_name for i in range(4)) == ["n0", "n1", "n2", "n3"]
    assert sorted((a.pod_key, a.result) for a in attempts) == [(f"default/p{i}", "scheduled") for i in range(4)]
    assert _pg_cond(store) == {"type": "PodGroupInitiallyScheduled", "status": "True", "observedGeneration": 1,
                               "reason": "Scheduled", "message": ""}
    assert sched.pod_group_attempts == {"scheduled": 1}
    assert len(sched.queue) == 0


def test_gang_three_of_four_fit_none_bound() -> None:
    sched, store = _scheduler(3, cpu="4")
    store.put_object("PodGroup", _pg(min_count=4))
    store.flush()
    for i in range(4):
        store.add("Pod", _pod(f"p{i}", cpu="3"))
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert all(not store.pods[f"default/p{i}"].spec.node_name for i in range(4))
    group_msg = "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining"
    for i in range(3):
        st, reason, msg = _cond(store, f"p{i}")
        assert (st, reason) == ("False", "Unschedulable")
        assert msg.startswith(f"pod group is unschedulable, {group_msg}")
    assert _cond(store, "p3") == ("False", "Unschedulable", "0/3 nodes are available: 3 Insufficient cpu.")
    c = _pg_cond(store)
    assert c is not None and (c["status"], c["reason"], c["observedGeneration"]) == ("False", "Unschedulable", 1)
    assert c["message"].startswith(group_msg)
    # nothing stays assumed; the group waits out its backoff as one entity
    assert sched.cache.assumed_count() == 0
    e = sched.queue.pod_group_entity("default", "pg")
    assert e is not None and e.size() == 4 and e.unschedulable_count == 1
    assert sched.queue.where(e.key) == "backoff"
    assert [ev for ev in store.events if ev[1] == "FailedScheduling"] and store.bind_count == 0


def test_condition_never_regresses_true() -> None:
    """TestUpdatePodGroupCondition "do not regress Scheduled to Unschedulable": a later member that
    cannot fit leaves the True condition alone."""
    sched, store = _scheduler(1, cpu="4")
    store.put_object("PodGroup", _pg(min_count=1))
    store.flush()
    store.add("Pod", _pod("p0", cpu="3"))
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert _pg_cond(store)["status"] == "True"
    store.add("Pod", _pod("p1", cpu="3"))
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert store.pods["default/p1"].spec.node_name == ""
    assert _pg_cond(store)["status"] == "True"


def test_basic_group_schedules_members_one_cycle() -> None:
    """A Basic PodGroup is one entity (minCount 1): every member is tried in one cycle."""
    sched, store = _scheduler(2)
    store.put_object("PodGroup", _pg(min_count=None))
    store.flush()
    for i in range(3):
        store.add("Pod", _pod(f"p{i}"))
    cycles = sched.queue.scheduling_cycle
    out = sched.scheduling_cycle()
    assert isinstance(out, PodGroupCycleResult)
    assert sched.queue.scheduling_cycle == cycles + 1
    assert [sp.key for sp in out.scheduled] == ["default/p0", "default/p1", "default/p2"]


def test_gang_waits_for_quorum_in_queue() -> None:
    """PreEnqueue gates the entity until minCount members are known (each UnscheduledPodAdd
    re-runs it), then the gang is scheduled as one."""
    sched, store = _scheduler(3)
    store.put_object("PodGroup", _pg(min_count=3))
    store.flush()
    store.add("Pod", _pod("p0"))
    store.add("Pod", _pod("p1"))
    assert not sched.queue.has_schedulable()
    assert sched.queue.counts()["gated"] == 2
    store.add("Pod", _pod("p2"))
    assert sched.queue.has_schedulable()
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert all(store.pods[f"default/p{i}"].spec.node_name for i in range(3))


def test_gate_off_scheduling_group_is_ignored() -> None:
    """GenericWorkload off: a pod naming a PodGroup is scheduled alone, as before."""
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store)
    store.scheduler = sched
    store.add("Node", MakeNode().name("n0").capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.add("Pod", _pod("p0"))
    assert sched.pod_group_manager is None
    sched.run_until_idle(after_each=store.flush)
    assert store.pods["default/p0"].spec.node_name == "n0"


class RejectOutsideGroupCycle:
    """Reserve rejects ``victim`` outside the pod-group cycle's simulation (at the real commit)."""

    name = "RejectOutsideGroupCycle"

    def __init__(self, victim: str) -> None:
        self.victim = victim

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status | None:
        if pod.metadata.name == self.victim and not state.is_pod_group_scheduling_cycle():
            return Status(Code.UNSCHEDULABLE, ("no room at commit",))
        return None

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        return None


def test_permit_timeout_rejects_the_waiting_member() -> None:
    """A member that passed Permit's Wait while its gang never reaches minCount is rejected after
    5 minutes: "rejected due to timeout after waiting 5m0s at plugin GangScheduling", unreserved
    and forgotten, back in the queue with UnschedulablePlugins = {GangScheduling}."""
    fg = FeatureGate(overrides=GW)
    store = ClusterStore()
    reg = dict(in_tree_registry())
    reg["RejectOutsideGroupCycle"] = lambda a, h: RejectOutsideGroupCycle("p1")
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                             "reserve": {"enabled": [{"name": "RejectOutsideGroupCycle"}]}}}]}, features=fg)
    sched = Scheduler(cfg, client=store, lister=store, registry=reg, features=fg)
    store.scheduler = sched
    for i in range(2):
        store.add("Node", MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.put_object("PodGroup", _pg(min_count=2))
    store.flush()
    store.add("Pod", _pod("p0"))
    store.add("Pod", _pod("p1"))
    a = sched.schedule_one()
    store.flush()
    assert a is not None and a.pod_key == "default/p0" and a.result == "waiting"
    assert _cond(store, "p1") == ("False", "Unschedulable", "0/1 nodes are available: 1 no room at commit.")
    assert sched.cache.is_assumed("default/p0")
    sched.clock.set(sched.clock.now() + 300)  # the Permit timer fires
    store.flush()
    assert not store.pods["default/p0"].spec.node_name and not sched.cache.is_assumed("default/p0")
    st, reason, msg = _cond(store, "p0")
    assert (st, reason) == ("False", "Unschedulable")
    assert "rejected due to timeout after waiting 5m0s at plugin GangScheduling" in msg
    e = sched.queue.pod_group_entity("default", "pg")
    assert e is not None
    m = e.get("default/p0")
    assert m is not None and m.unschedulable_plugins == {"GangScheduling"}


# ───── TestPodGroupSchedulingPlacementAlgorithm (the TAS path, with stand-in placement plugins) ─────

def _tas_scheduler(sizes: list[str]) -> tuple[Scheduler, ClusterStore]:
    fg = FeatureGate(overrides={**GW, "TopologyAwareWorkloadScheduling": True})
    store = ClusterStore()
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                             "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit"},
                                                        {"name": "DefaultBinder"}, {"name": "GangScheduling"}],
                                            "disabled": [{"name": "*"}]}}}]}, features=fg)
    sched = Scheduler(cfg, client=store, lister=store, features=fg)
    store.scheduler = sched
    for i, cpu in enumerate(sizes):
        store.add("Node", MakeNode().name(f"n{i}").capacity(cpu=cpu, memory="8Gi", pods="110").obj())
    return sched, store


def test_placement_algorithm_restricts_each_placement_to_its_nodes() -> None:
    from kubesched.framework.podgroup import Placement

    sched, store = _tas_scheduler(["1", "1", "4", "4"])
    fw: Any = sched.profiles["default-scheduler"]
    seen: list[Any] = []
    fw.run_placement_generate_plugins = lambda state, info, parent: (
        seen.append(parent) or [Placement("a", ["n0", "n1"]), Placement("b", ["n2", "n3"])], None)
    store.put_object("PodGroup", _pg(min_count=2))
    store.flush()
    for i in range(2):
        store.add("Pod", _pod(f"p{i}", cpu="3"))
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert seen == [None]
    assert sorted(store.pods[f"default/p{i}"].spec.node_name for i in range(2)) == ["n2", "n3"]
    assert sched.placement_rows is None


def test_placement_algorithm_no_feasible_placement() -> None:
    from kubesched.framework.podgroup import Placement

    sched, store = _tas_scheduler(["1", "1", "4", "4"])
    fw: Any = sched.profiles["default-scheduler"]
    fw.run_placement_generate_plugins = lambda state, info, parent: (
        [Placement("a", ["n0", "n1"]), Placement("b", ["n2"])], None)
    store.put_object("PodGroup", _pg(min_count=2))
    store.flush()
    for i in range(2):
        store.add("Pod", _pod(f"p{i}", cpu="3"))
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert all(not store.pods[f"default/p{i}"].spec.node_name for i in range(2))
    # podGroupSchedulingPlacementAlgorithm L1051: the first placement's status as an error (%v)
    msg = ("pod group is unschedulable, 0/2 placements are available, first placement status: "
           "minCount (2) cannot be satisfied: 0 scheduled, 1 remaining")
    c = _pg_cond(store)
    assert c is not None and c["message"].startswith(msg)
    # p0 failed in the first placement: its FitError counts that placement's nodes only;
    # p1 was not reached there and gets the group's status
    assert _cond(store, "p0") == ("False", "Unschedulable", "0/2 nodes are available: 2 Insufficient cpu.")
    assert _cond(store, "p1")[2].startswith(msg)


def test_placement_rows_given_rows_match_the_name_lookup() -> None:
    """A placement carrying its table rows (:attr:`Placement.rows`: the parent placement of every
    node, ``ListNodesInPlacement``) is restricted to the same rows, in the same snapshot order, as
    one given by node names only — with and without an enclosing placement."""
    import numpy as np

    from kubesched.framework.podgroup import Placement
    from kubesched.scheduler.schedule_one_podgroup import parent_placement, placement_rows

    sched, store = _tas_scheduler([])
    for i in range(9):  # three zones: order() interleaves them, unlike the add order
        store.add("Node", MakeNode().name(f"z{i}").label("topology.kubernetes.io/zone", f"zone{i // 3}")
                  .capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.flush()
    table = sched.table
    order = table.order()
    assert order.tolist() != sorted(order.tolist())
    fw: Any = sched.profiles["default-scheduler"]
    (every,), st = fw.run_placement_generate_plugins(PodGroupCycleState(), None, None)
    assert st is None and every.rows is not None
    by_name = Placement("", list(every.nodes))
    assert placement_rows(sched, every, None).tolist() == placement_rows(sched, by_name, None).tolist() \
        == order.tolist()
    parent = placement_rows(sched, Placement("p", ["z5", "z1", "z3", "z0"]), None)
    sched.placement_rows = parent
    try:
        enclosing = parent_placement(sched)
    finally:
        sched.placement_rows = None
    assert enclosing is not None and enclosing.rows is parent
    for pl in (enclosing, every, Placement("s", ["z3", "z0"], np.asarray([table.row_of["z3"], table.row_of["z0"]]))):
        plain = Placement(pl.name, list(pl.nodes))
        assert placement_rows(sched, pl, parent).tolist() == placement_rows(sched, plain, parent).tolist()


def test_every_node_placement_follows_the_table() -> None:
    """The every-node placement lists the nodes in ``order()`` order after nodes come and go (the
    names are kept per table order), and each caller gets its own list."""
    from kubesched.framework.podgroup import every_node_placement

    sched, store = _tas_scheduler(["1", "1"])
    table = sched.table

    def want() -> list[str]:
        return [table.names[r] for r in table.order().tolist()]

    first = every_node_placement(table)
    assert first.nodes == want() == ["n0", "n1"] and first.rows is table.order()
    first.nodes.append("mutated")
    assert every_node_placement(table).nodes == ["n0", "n1"]
    store.add("Node", MakeNode().name("z9").label("topology.kubernetes.io/zone", "b")
              .capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.flush()
    assert every_node_placement(table).nodes == want() and len(want()) == 3
    store.remove_node("n0")
    store.flush()
    assert every_node_placement(table).nodes == want() and "n0" not in want()
