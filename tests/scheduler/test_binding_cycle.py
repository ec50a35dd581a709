"""The binding cycle and Permit ``Wait`` (upstream ``schedule_one.go`` ``bindingCycle``,
``handleBindingCycleError``; ``framework/runtime`` ``RunPermitPlugins``, ``WaitOnPermit``,
``waiting_pods_map.go``), the store's delayed informer events, and the trampoline / asyncio."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched.config import decode_config
from kubesched.errors import BindError
from kubesched.features import FeatureGate
from kubesched.framework.clock import AsyncioClock, ManualClock, SimFuture
from kubesched.framework.interface import Code, PreBindPreFlightResult, Status
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler import Attempt, ScheduledPod, Scheduler, drive
from kubesched.sim.event_heap import Environment
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod


class Waiter:
    """Permit: every pod whose name starts with ``w`` waits ``timeout_s``."""

    def __init__(self, name: str, timeout_s: float = 10.0) -> None:
        self.name = name
        self.timeout_s = timeout_s

    def permit(self, state, pod, node_name):
        if pod.metadata.name.startswith("w"):
            return Status(Code.WAIT), self.timeout_s
        return None, 0.0


class Gatekeeper:
    """Reserve: when a pod named ``release-*`` / ``reject-*`` is reserved, allow / reject every
    waiting pod through the handle (upstream ``IterateOverWaitingPods``), like a gang plugin."""

    name = "Gatekeeper"

    def __init__(self, handle) -> None:
        self.handle = handle
        self.seen: list[tuple[str, list[str]]] = []

    def reserve(self, state, pod, node_name):
        name = pod.metadata.name

        def visit(wp) -> None:
            self.seen.append((wp.get_pod().metadata.name, wp.get_pending_plugins()))
            if name.startswith("release"):
                for p in wp.get_pending_plugins():
                    wp.allow(p)
            elif name.startswith("reject"):
                wp.reject(self.name, "gang member failed")

        self.handle.iterate_waiting_pods(visit)

    def unreserve(self, state, pod, node_name):
        return None


def _setup(*, waiters: dict[str, float] | None = None, clock: Any = None, nodes: int = 1,
           store: ClusterStore | None = None,
           features: FeatureGate | None = None) -> tuple[Scheduler, ClusterStore, Gatekeeper | None]:
    reg = dict(in_tree_registry())
    gk: list[Gatekeeper] = []
    permit = []
    for name, t in (waiters or {}).items():
        reg[name] = lambda a, h, name=name, t=t: Waiter(name, t)
        permit.append({"name": name})

    def make_gk(a, h):
        gk.append(Gatekeeper(h))
        return gk[-1]

    reg["Gatekeeper"] = make_gk
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler", "plugins": {
                             "multiPoint": {"enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit"},
                                                        {"name": "DefaultBinder"}],
                                            "disabled": [{"name": "*"}]},
                             "reserve": {"enabled": [{"name": "Gatekeeper"}]},
                             "permit": {"enabled": permit}}}]})
    store = store if store is not None else ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, registry=reg, clock=clock or ManualClock(),
                      features=features)
    store.scheduler = sched
    for i in range(nodes):
        store.add("Node", MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="10").obj())
    return sched, store, gk[0] if gk else None


def _add(store: ClusterStore, name: str, cpu: str = "1") -> None:
    store.add("Pod", MakePod().name(name).uid(name).req(cpu=cpu).obj())


def _cond(store: ClusterStore, name: str) -> tuple[str, str, str]:
    c = next(c for c in store.pods[f"default/{name}"].status.conditions if c.type == "PodScheduled")
    return c.status, c.reason, c.message


def test_permit_wait_then_allow_binds_and_next_pod_is_not_blocked() -> None:
    sched, store, gk = _setup(waiters={"Waiter": 30})
    _add(store, "w1")
    _add(store, "p2")
    a = sched.schedule_one()
    assert (a.pod_key, a.result, a.node) == ("default/w1", "waiting", "n0")
    assert sched.cache.is_assumed("default/w1") and store.pods["default/w1"].spec.node_name == ""
    wp = sched.profiles["default-scheduler"].handle.get_waiting_pod("w1")
    assert wp is not None and wp.get_pending_plugins() == ["Waiter"]
    # the next pod's scheduling cycle runs while w1 waits; it sees w1's assumed cpu
    b = sched.schedule_one()
    assert (b.pod_key, b.result) == ("default/p2", "scheduled")
    assert gk.seen == [("w1", ["Waiter"])]  # p2's Reserve saw the waiting pod
    assert sched.table.requested[sched.table.row_of["n0"], sched.table.resource_column("cpu")] == 2000
    done: list[Attempt] = []
    sched.on_attempt = done.append
    wp.allow("Waiter")
    assert [(x.pod_key, x.result) for x in done] == [("default/w1", "scheduled")]
    assert len(sched.waiting_pods) == 0
    store.flush()
    assert store.pods["default/w1"].spec.node_name == "n0"
    assert not sched.cache.is_assumed("default/w1")
    assert [e[1] for e in store.events] == ["Scheduled", "Scheduled"]


def test_all_waiting_plugins_must_allow() -> None:
    sched, store, _ = _setup(waiters={"WaitA": 30, "WaitB": 60})
    _add(store, "w1")
    sched.schedule_one()
    wp = sched.profiles["default-scheduler"].handle.get_waiting_pod("w1")
    assert sorted(wp.get_pending_plugins()) == ["WaitA", "WaitB"]
    wp.allow("WaitA")
    assert sched.cache.is_assumed("default/w1") and len(sched.waiting_pods) == 1
    wp.allow("WaitB")
    store.flush()
    assert store.pods["default/w1"].spec.node_name == "n0"


def test_waiting_pod_allowed_by_another_pods_plugin() -> None:
    sched, store, gk = _setup(waiters={"Waiter": 30})
    _add(store, "w1")
    _add(store, "release-me")
    assert sched.schedule_one().result == "waiting"
    assert sched.schedule_one().result == "scheduled"
    store.flush()
    assert store.pods["default/w1"].spec.node_name == "n0"
    assert gk.seen == [("w1", ["Waiter"])]


def test_waiting_pod_rejected_by_another_plugin_is_unschedulable_and_requeued() -> None:
    sched, store, _ = _setup(waiters={"Waiter": 30})
    _add(store, "w1")
    _add(store, "reject-it")
    done: list[Attempt] = []
    sched.on_attempt = done.append
    assert sched.schedule_one().result == "waiting"
    sched.schedule_one()
    w1 = next(x for x in done if x.pod_key == "default/w1")
    assert w1.result == "unschedulable"
    assert w1.message == "0/1 nodes are available: 1 gang member failed."
    assert not sched.cache.is_assumed("default/w1")
    assert sched.queue.where("default/w1") == "unschedulable"
    qpi = sched.queue._entries["default/w1"]
    assert qpi.unschedulable_plugins == {"Gatekeeper"}  # upstream: UnschedulablePlugins = {status.Plugin()}
    store.flush()
    assert _cond(store, "w1") == ("False", "Unschedulable", w1.message)


def test_permit_timeout_on_the_environment_clock() -> None:
    env = Environment()
    sched, store, _ = _setup(waiters={"Waiter": 90}, clock=env.clock)
    _add(store, "w1")
    done: list[Attempt] = []
    sched.on_attempt = done.append
    assert sched.schedule_one().result == "waiting"
    env.run(until=89.9)
    assert done == [] and sched.cache.is_assumed("default/w1")
    env.run()
    assert env.now == 90.0
    assert [(x.result, x.message) for x in done] == [
        ("unschedulable", "0/1 nodes are available: 1 rejected due to timeout after waiting 1m30s at plugin Waiter.")]
    assert not sched.cache.is_assumed("default/w1") and len(sched.waiting_pods) == 0
    store.flush()
    assert _cond(store, "w1")[1] == "Unschedulable"


def test_permit_timeout_is_capped_at_15_minutes() -> None:
    clock = ManualClock()
    sched, store, _ = _setup(waiters={"Waiter": 3600}, clock=clock)
    _add(store, "w1")
    done: list[Attempt] = []
    sched.on_attempt = done.append
    sched.schedule_one()
    clock.advance(899)
    assert done == []
    clock.advance(1)
    assert done[0].message.endswith("rejected due to timeout after waiting 15m0s at plugin Waiter.")


def test_deleting_a_waiting_pod_rejects_it_and_it_is_not_requeued() -> None:
    sched, store, _ = _setup(waiters={"Waiter": 30})
    _add(store, "w1")
    done: list[Attempt] = []
    sched.on_attempt = done.append
    sched.schedule_one()
    store.remove_pod("default/w1")
    assert [(x.result, x.message) for x in done] == [("unschedulable", "0/1 nodes are available: 1 removed.")]
    assert "default/w1" not in sched.queue and not sched.cache.is_assumed("default/w1")
    assert sched.table.requested[sched.table.row_of["n0"], sched.table.resource_column("cpu")] == 0


def test_bind_error_forgets_the_assumed_pod_and_requeues_it() -> None:
    class FailingStore(ClusterStore):
        async def bind(self, pod, node_name):
            raise BindError("etcdserver: request timed out", 500)

    sched, store, _ = _setup(store=FailingStore())
    _add(store, "p", cpu="3")
    a = sched.schedule_one()
    assert a.result == "error" and a.message == 'running Bind plugin "DefaultBinder": etcdserver: request timed out'
    assert not sched.cache.is_assumed("default/p")
    assert sched.table.requested[sched.table.row_of["n0"], sched.table.resource_column("cpu")] == 0
    assert sched.queue.where("default/p") == "backoff"
    store.flush()
    assert _cond(store, "p") == ("False", "SchedulerError", a.message)
    assert [e[1] for e in store.events] == ["FailedScheduling"]


def test_in_flight_events_are_freed_once_permit_passed() -> None:
    """Upstream ``bindingCycle`` calls ``SchedulingQueue.Done`` right after WaitOnPermit: the
    cluster events recorded while the pod was in flight are dropped before PreBind/Bind, and a
    Bind failure then goes to backoff (``determineSchedulingHintForInFlightPod`` without events)."""
    seen: list[bool] = []

    class FailingStore(ClusterStore):
        async def bind(self, pod, node_name):
            seen.append(sched.queue._in_flight.get("default/p") is not None)
            raise BindError("etcdserver: request timed out", 500)

    sched, store, _ = _setup(store=FailingStore())
    _add(store, "p", cpu="3")
    a = sched.schedule_one()
    assert a.result == "error"
    assert seen == [False]  # no longer tracked as in flight while binding
    assert sched.queue.where("default/p") == "backoff"


def test_bind_conflict_on_a_pod_the_store_shows_assigned_is_not_requeued() -> None:
    """Upstream ``handleSchedulingFailure``: "Pod has been assigned to node. Abort adding it back
    to queue." — here someone else bound the pod while it waited on Permit."""
    sched, store, _ = _setup(waiters={"Waiter": 30}, nodes=2)
    _add(store, "w1")
    assert sched.schedule_one().result == "waiting"
    other = store.pods["default/w1"]
    drive(store.bind(other, "n1"))  # another scheduler wins the race; its event is not delivered
    wp = sched.profiles["default-scheduler"].handle.get_waiting_pod("w1")
    done: list[Attempt] = []
    sched.on_attempt = done.append
    wp.allow("Waiter")
    assert done[0].result == "error" and "already assigned" in done[0].message
    assert "default/w1" not in sched.queue  # not requeued, not in flight
    assert not sched.queue._in_flight
    assert not sched.cache.is_assumed("default/w1")
    store.flush()
    assert sched.cache.pod_states["default/w1"].node_name == "n1"


def test_bind_event_is_not_seen_by_the_engine_until_delivered() -> None:
    sched, store, _ = _setup()
    _add(store, "p")
    assert sched.schedule_one().result == "scheduled"
    assert store.pods["default/p"].spec.node_name == "n0"  # the API server has it
    assert sched.cache.is_assumed("default/p")  # the engine has only assumed it
    assert store.pending_events() == 1
    assert store.flush() == 1
    assert not sched.cache.is_assumed("default/p") and "default/p" in sched.cache.pod_states
    assert store.pending_events() == 0


def test_store_delivers_through_the_environment_with_latency() -> None:
    env = Environment()
    sched, store, _ = _setup(clock=env.clock)
    store.deliver_via(env, latency_s=0.5)
    _add(store, "p")
    sched.schedule_one()
    env.run(until=0.4)
    assert sched.cache.is_assumed("default/p")
    env.run()
    assert env.now == 0.5 and not sched.cache.is_assumed("default/p")


def test_scheduling_cycle_and_binding_cycle_under_asyncio() -> None:
    async def main() -> list[tuple[str, str, str]]:
        sched, store, _ = _setup(waiters={"Waiter": 0.05}, clock=AsyncioClock())
        _add(store, "w1")
        _add(store, "w2")
        _add(store, "p3")
        tasks = []
        while True:
            out = sched.scheduling_cycle()
            if out is None:
                break
            assert isinstance(out, ScheduledPod)
            tasks.append(asyncio.create_task(sched.binding_cycle(out)))
        # w2 is allowed a little later; w1 times out; p3 binds at once
        wp = sched.profiles["default-scheduler"].handle.get_waiting_pod("w2")
        asyncio.get_running_loop().call_later(0.01, wp.allow, "Waiter")
        results = await asyncio.gather(*tasks)
        store.flush()
        assert len(sched.waiting_pods) == 0 and sched.cache.assumed_count() == 0
        return [(r.pod_key, r.result, r.message) for r in results]

    got = asyncio.run(asyncio.wait_for(main(), 5))
    assert got == [
        ("default/w1", "unschedulable", "0/1 nodes are available: 1 rejected due to timeout after waiting 50ms at plugin Waiter."),
        ("default/w2", "scheduled", ""),
        ("default/p3", "scheduled", ""),
    ]


def test_drive_keeps_exceptions_and_rejects_foreign_awaitables() -> None:
    async def boom() -> None:
        raise ValueError("x")

    t = drive(boom())
    assert t.done()
    with pytest.raises(ValueError):
        t.result()

    async def foreign() -> None:
        await asyncio.sleep(0)

    t = drive(foreign())
    with pytest.raises(TypeError, match="SimFuture"):
        t.result()


@pytest.mark.parametrize(("version", "want"), [
    # v1.34/v1.35 RunPermitPlugins: a new Wait status naming the pod
    ((1, 34), 'one or more plugins asked to wait and no plugin rejected pod "w9"'),
    ((1, 35), 'one or more plugins asked to wait and no plugin rejected pod "w9"'),
    # v1.36+ (framework.go L2136-2139): the waiting plugin's status (no reasons here) with
    # AppendReason of the fixed text, without the pod's name
    ((1, 36), "one or more plugins asked to wait and no plugin rejected pod"),
    ((1, 37), "one or more plugins asked to wait and no plugin rejected pod"),
])
def test_permit_error_and_plain_rejection_from_run_permit_plugins(version: tuple[int, int], want: str) -> None:
    sched, _, _ = _setup(waiters={"Waiter": 30}, features=FeatureGate(emulated_version=version))
    fw = sched.profiles["default-scheduler"]
    pod = MakePod().name("w9").uid("w9").obj()
    from kubesched.framework.cycle_state import CycleState

    st = fw.run_permit_plugins(CycleState(), pod, "n0")
    assert st.code == Code.WAIT and st.message() == want
    assert fw.will_wait_on_permit(pod)
    assert fw.reject_waiting_pod("w9") and not fw.reject_waiting_pod("nope")


def test_allow_during_a_scheduling_cycle_resumes_the_binding_after_it() -> None:
    """The cache must not change under a scheduling cycle: a binding cycle unblocked by a plugin
    of another pod's cycle resumes when that cycle ends."""
    sched, store, gk = _setup(waiters={"Waiter": 30})
    states: list[bool] = []
    orig = gk.reserve

    def reserve(state, pod, node_name):
        st = orig(state, pod, node_name)
        states.append(sched.cache.is_assumed("default/w1"))  # still assumed right after allow()
        return st

    gk.reserve = reserve  # type: ignore[method-assign]
    _add(store, "w1")
    _add(store, "release-me")
    assert sched.schedule_one().result == "waiting"
    out = sched.scheduling_cycle()
    assert isinstance(out, ScheduledPod) and states == [True, True]
    # w1's bind ran when release-me's cycle ended: its write is in the store
    assert store.pods["default/w1"].spec.node_name == "n0"


@pytest.mark.parametrize("version", [(1, 34), (1, 37)])
def test_preemption_rejects_a_victim_waiting_on_permit_instead_of_deleting_it(version: tuple[int, int]) -> None:
    """Upstream ``PreemptPod``: a victim that is a WaitingPod is rejected (``preempted``) —
    v1.36+ ``Preempt``ed: an Error status (``waiting on permit for pod: preempted``, the error
    backoff), and the event says it happened in memory (``executor.go`` L108-160)."""
    reg = dict(in_tree_registry())
    reg["Waiter"] = lambda a, h: Waiter("Waiter", 30)
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler",
                                       "plugins": {"permit": {"enabled": [{"name": "Waiter"}]}}}]})
    store = ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, registry=reg, features=FeatureGate(emulated_version=version))
    store.scheduler = sched
    store.add("Node", MakeNode().name("n0").capacity(cpu="2", memory="8Gi", pods="10").obj())
    store.add("Pod", MakePod().name("w-low").uid("w-low").priority(0).req(cpu="2").obj())
    done: list[Attempt] = []
    sched.on_attempt = done.append
    assert sched.schedule_one().result == "waiting"
    store.add("Pod", MakePod().name("hi").uid("hi").priority(1000).req(cpu="2").obj())
    a = sched.schedule_one()
    assert a.pod_key == "default/hi" and a.result == "unschedulable"
    assert "default/w-low" in store.pods  # rejected, not deleted
    assert store.writes["delete_pod"] == 0 and store.writes["add_pod_condition"] == 0
    low = next(x for x in done if x.pod_key == "default/w-low")
    if version < (1, 36):
        assert ("Normal", "Preempted", "default/w-low", "Preempted by pod hi on node n0") in store.events
        assert (low.result, low.message) == ("unschedulable", "0/1 nodes are available: 1 preempted.")
    else:
        assert ("Normal", "Preempted", "default/w-low",
                "Preempted by pod hi on node n0 (in kube-scheduler memory).") in store.events
        assert (low.result, low.message) == ("error", "waiting on permit for pod: preempted")
        assert ("Warning", "FailedScheduling", "default/hi", "0/1 nodes are available: 1 Insufficient cpu. "
                "preemption: found a potential placement for pod on node n0, preempting 1 victims") in store.events
    assert not sched.cache.is_assumed("default/w-low")
    store.flush()
    assert store.pods["default/hi"].status.nominated_node_name == "n0"
    sched.run_until_idle(after_each=store.flush)
    assert store.pods["default/hi"].spec.node_name == "n0"
    assert store.pods["default/w-low"].spec.node_name == ""


def test_store_implements_every_cluster_client_method() -> None:
    import inspect

    from kubesched.framework.handle import ClusterClient

    names = [n for n, v in vars(ClusterClient).items() if callable(v) and not n.startswith("_")]
    assert {"bind", "update_pod_condition", "clear_nominated_node_name", "add_pod_condition", "delete_pod",
            "record_event", "update_persistent_volume", "update_persistent_volume_claim",
            "update_resource_claim_status"} <= set(names)
    for n in names:
        want, got = getattr(ClusterClient, n), getattr(ClusterStore, n)
        assert inspect.iscoroutinefunction(want) == inspect.iscoroutinefunction(got), n
        assert list(inspect.signature(want).parameters) == list(inspect.signature(got).parameters), n


def test_stale_unassigned_tombstone_of_a_bound_pod_leaves_the_cache() -> None:
    sched, store, _ = _setup()
    _add(store, "p")
    unassigned = store.pods["default/p"]
    sched.schedule_one()
    store.flush()
    assert "default/p" in sched.cache.pod_states
    sched.on_pod_delete(unassigned)  # e.g. a DeletedFinalStateUnknown with the pre-binding object
    assert "default/p" not in sched.cache.pod_states
    assert sched.table.requested[sched.table.row_of["n0"], sched.table.resource_column("cpu")] == 0


def test_object_events_move_pods_whose_rejecting_plugin_registered_for_them() -> None:
    """``on_object_event``: a PVC Add requeues a pod rejected by a plugin registered for
    PersistentVolumeClaim/Add; a PV event does not; unknown kinds are ignored."""
    from kubesched.framework.events import (
        ActionType,
        ClusterEvent,
        ClusterEventWithHint,
        EventResource,
    )

    class NeedsClaim:
        name = "NeedsClaim"

        def filter(self, state, pod, node_info):
            return Status.of(Code.UNSCHEDULABLE, "claim missing")

        def events_to_register(self):
            return [ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD))]

    reg = dict(in_tree_registry())
    reg["NeedsClaim"] = lambda a, h: NeedsClaim()
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {
                             "enabled": [{"name": "PrioritySort"}, {"name": "NeedsClaim"}, {"name": "DefaultBinder"}],
                             "disabled": [{"name": "*"}]}}}]})
    store = ClusterStore()
    sched = Scheduler(cfg, client=store, lister=store, registry=reg)
    store.scheduler = sched
    store.add("Node", MakeNode().name("n0").obj())
    _add(store, "p")
    assert sched.schedule_one().result == "unschedulable"
    store.flush()
    assert sched.queue.where("default/p") == "unschedulable"
    sched.on_object_event("Service", None, object())
    drive(store.update_persistent_volume({"metadata": {"name": "pv1"}}))
    store.flush()
    assert sched.queue.where("default/p") == "unschedulable"
    store.add_raw("x", {})  # raw objects are not announced
    drive(store.update_persistent_volume_claim({"metadata": {"namespace": "default", "name": "c"}}))
    assert store.pending_events() == 1
    store.flush()
    assert sched.queue.where("default/p") in ("backoff", "active")
    # stored as the API server would: the object with a new metadata.resourceVersion
    stored = store.get("PersistentVolumeClaim", "default", "c")
    assert stored["metadata"]["resourceVersion"]
    assert {k: v for k, v in stored["metadata"].items() if k != "resourceVersion"} == {"namespace": "default",
                                                                                      "name": "c"}


class Blocker:
    """PreBind: pods named ``b-*`` block until released (or, like upstream's
    ``BlockingPreBindPlugin`` under a cancelled context, until their PodInPreBind is cancelled)."""

    name = "Blocker"

    def __init__(self) -> None:
        self.waiting: dict[str, SimFuture] = {}

    def pre_bind_pre_flight(self, state, pod, node_name):
        if pod.metadata.name.startswith("b-"):
            return PreBindPreFlightResult(), None
        return PreBindPreFlightResult(), Status(Code.SKIP)

    async def _wait(self, fut: SimFuture):
        return await fut

    def pre_bind(self, state, pod, node_name):
        fut = self.waiting[pod.metadata.name] = SimFuture()
        if state.pod_in_pre_bind is not None:
            state.pod_in_pre_bind.on_cancel(lambda cause: fut.done() or fut.set_result(
                Status(Code.ERROR, ("context canceled",))))
        return self._wait(fut)


@pytest.mark.parametrize("version", [(1, 34), (1, 36), (1, 37)])
def test_preemption_of_a_victim_in_pre_bind(version: tuple[int, int]) -> None:
    """v1.36+ (``executor.go`` L114-123): a victim whose binding cycle is in PreBind is cancelled
    in memory — no DisruptionTarget, no delete, the event says so, its binding fails with the
    cancel cause and it is retried. Before: the victim is deleted through the API."""
    blocker = Blocker()
    reg = dict(in_tree_registry())
    reg["Blocker"] = lambda a, h: blocker
    cfg = decode_config({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                         "profiles": [{"schedulerName": "default-scheduler",
                                       "plugins": {"preBind": {"enabled": [{"name": "Blocker"}]}}}]})
    store = ClusterStore()
    features = FeatureGate(emulated_version=version)
    sched = Scheduler(cfg, client=store, lister=store, registry=reg, features=features)
    store.scheduler = sched
    store.add("Node", MakeNode().name("n0").capacity(cpu="2", memory="8Gi", pods="10").obj())
    store.add("Pod", MakePod().name("b-low").uid("b-low").priority(0).req(cpu="2").obj())
    done: list[Attempt] = []
    sched.on_attempt = done.append
    assert sched.schedule_one().result == "waiting"  # blocked in PreBind
    assert "b-low" in blocker.waiting
    store.flush()
    if version >= (1, 35):  # NominatedNodeNameForExpectation: PreBind has work → NNN patched
        assert store.pods["default/b-low"].status.nominated_node_name == "n0"
    else:
        assert store.pods["default/b-low"].status.nominated_node_name == ""
    assert (len(sched.pods_in_pre_bind) == 1) == (version >= (1, 36))
    store.add("Pod", MakePod().name("hi").uid("hi").priority(1000).req(cpu="2").obj())
    a = sched.schedule_one()
    assert a.pod_key == "default/hi" and a.result == "unschedulable"
    events = [e for e in store.events if e[1] == "Preempted"]
    if version >= (1, 36):
        assert events == [("Normal", "Preempted", "default/b-low",
                           "Preempted by pod hi on node n0 (in kube-scheduler memory).")]
        assert store.writes["delete_pod"] == 0 and store.writes["add_pod_condition"] == 0
        low = next(x for x in done if x.pod_key == "default/b-low")
        assert (low.result, low.message) == (
            "error", 'running PreBind plugin "Blocker": preempted by DefaultPreemption')
        assert not sched.cache.is_assumed("default/b-low") and len(sched.pods_in_pre_bind) == 0
        store.flush()
        assert store.pods["default/b-low"].status.nominated_node_name == ""  # the failure clears it
    else:
        assert events == [("Normal", "Preempted", "default/b-low", "Preempted by pod hi on node n0")]
        assert store.writes["delete_pod"] == 1 and store.writes["add_pod_condition"] == 1
