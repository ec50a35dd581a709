"""The queue's in-flight events (upstream v1.37.2 ``backend/queue/active_queue.go`` ``inFlightPods`` /
``inFlightEvents``): one shared log instead of one list per pod in flight, and a ForceActivate not
logged again while every pod in flight already sees one for the same pod. Compared on random
operation sequences with the plain model (each pod in flight keeps its own list of every event
received after its Pop): every pod must come back with the same requeue strategy, for any set of
rejecting plugins, and see the same distinct events."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.features import FeatureGate
from kubesched.framework.events import EVENT_ASSIGNED_POD_DELETE, EVENT_FORCE_ACTIVATE, EVENT_NODE_ADD
from kubesched.framework.node_info import PodInfo, QueuedPodInfo
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore
from kubesched.testing.wrappers import MakeNode, MakePod

PODS = [MakePod().name(f"p{i}").uid(f"p{i}").obj() for i in range(5)]
KEYS = [f"default/p{i}" for i in range(5)]
NODE = MakeNode().name("n1").obj()
PLAIN_EVENTS: list[tuple[Any, Any, Any]] = [(EVENT_NODE_ADD, None, NODE),
                                            (EVENT_ASSIGNED_POD_DELETE, PODS[0], None)]
REJECTORS = [set(), {"NodeResourcesFit"}, {"NodeAffinity", "TaintToleration"}, {"InterPodAffinity"}]

_op = st.one_of(
    st.tuples(st.just("pop"), st.integers(0, 4)),
    st.tuples(st.just("event"), st.integers(0, len(PLAIN_EVENTS) - 1)),
    st.tuples(st.just("activate"), st.integers(0, 4)),
    st.tuples(st.just("leave"), st.integers(0, 4)),
)


def _queue() -> Any:
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, features=FeatureGate(overrides={"GenericWorkload": True}))
    return sched.queue


def _ident(ev: tuple[Any, Any, Any]) -> tuple[Any, ...]:
    event, old, new = ev
    return (event.resource, event.action, id(old), getattr(getattr(new, "metadata", None), "name", id(new)))


@settings(max_examples=300, deadline=None)
@given(ops=st.lists(_op, max_size=60), rejectors=st.integers(0, len(REJECTORS) - 1),
       pending=st.booleans())
def test_shared_log_gives_every_pod_the_plain_models_strategy(ops: list[tuple[str, int]], rejectors: int,
                                                              pending: bool) -> None:
    q = _queue()
    model: dict[str, list[tuple[Any, Any, Any]]] = {}
    for i, key in enumerate(KEYS):
        q._entries[key] = QueuedPodInfo(PodInfo(PODS[i]))

    def check(key: str, seen: list[tuple[Any, Any, Any]] | None, plain: list[tuple[Any, Any, Any]] | None) -> None:
        assert (seen is None) == (plain is None)
        if seen is None or plain is None:
            return
        assert {_ident(e) for e in seen} == {_ident(e) for e in plain}
        qpi = QueuedPodInfo(PodInfo(PODS[KEYS.index(key)]))
        plugins = REJECTORS[rejectors]
        if pending:
            qpi.pending_plugins = set(plugins)
        else:
            qpi.unschedulable_plugins = set(plugins)
        assert q._strategy_for_in_flight(qpi, seen) == q._strategy_for_in_flight(qpi, plain)

    for op, arg in ops:
        if op == "pop":
            key = KEYS[arg]
            if key in q._in_flight:  # a pod comes back before it is popped again
                check(key, q._leave_flight(key, events=True), model.pop(key))
            q._enter_flight(key)
            model[key] = []
        elif op == "event":
            ev = PLAIN_EVENTS[arg]
            q._record_in_flight(*ev)
            for events in model.values():
                events.append(ev)
        elif op == "activate":
            key = KEYS[arg]
            if key in q._in_flight:  # Activate of a pod in flight (upstream addEventsIfPodInFlight)
                q._record_force_activate(key)
                for events in model.values():
                    events.append((EVENT_FORCE_ACTIVATE, None, PODS[arg]))
        else:
            key = KEYS[arg]
            check(key, q._leave_flight(key, events=True), model.pop(key, None))
    for key in list(model):
        check(key, q._leave_flight(key, events=True), model.pop(key))
    assert not q._in_flight and not q._in_flight_events and not q._force_activated


def test_a_gang_in_flight_logs_one_force_activate_per_member() -> None:
    """GangScheduling's Permit activates every unscheduled member of a gang whose members are all
    in flight: N Permits over N members log N ForceActivates, not N²/2."""
    q = _queue()
    n = 50
    pods = [MakePod().name(f"m{i}").uid(f"m{i}").obj() for i in range(n)]
    keys = [f"default/m{i}" for i in range(n)]
    for key, pod in zip(keys, pods, strict=True):
        q._entries[key] = QueuedPodInfo(PodInfo(pod))
        q._enter_flight(key)
    for i in range(n):
        q.activate(keys[i + 1:])
    assert len(q._in_flight_events) == n - 1
    for key in keys:
        q.done_in_flight(key)
    assert not q._in_flight_events
