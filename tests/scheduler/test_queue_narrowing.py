"""Which unschedulable entities a cluster event looks at (upstream v1.37.2
``backend/queue/scheduling_queue.go`` ``moveAllToActiveOrBackoffQueue`` →
``collectEntitiesToEvaluate`` → ``moveEntitiesToActiveOrBackoffQueue``).

Upstream walks every entity of ``unschedulableEntities`` and skips gated ones whose gating plugin
did not register for the event (1.37: unless the event is a wildcard one, which re-runs PreEnqueue
on every gated entity) and, per pod, the plugins that did not reject it. kubesched indexes the
pool by those plugins (``queue/unschedulable.py``) and walks only the candidates; the hypothesis
test below runs the indexed walk and the plain walk side by side on random queues and events and
asserts the same hints called in the same order, the same pods moved and the same metrics.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.scheduler.test_upstream_queue import (
    MOVE_HINT_START,
    NODE_ADD,
    PV_ADD,
    TARGET_POD_UPDATE,
    AllowlistPreEnqueue,
    Q,
    SchedulingGatesPreEnqueue,
    _p1,
    key,
    queue_hint,
)

from kubesched.api.objects import Pod
from kubesched.features import FeatureGate
from kubesched.framework.clock import ManualClock
from kubesched.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_ASSIGNED_POD_DELETE,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import Code, Status
from kubesched.plugins.queuesort import PrioritySort
from kubesched.queue import SchedulingQueue
from kubesched.queue.unschedulable import UnschedulableEntities
from kubesched.testing.wrappers import MakePod

# ───────────── upstream TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint, wildcard rows (1.37)


def _hint_must_not_run(pod: Any, old: Any, new: Any) -> QueueingHint:
    raise AssertionError("QueueingHintFn should not be called as trigger event is wildcard")


@pytest.mark.parametrize(("version", "gated_by", "pod_labels", "want"), [
    pytest.param((1, 37), None, {"foo": "bar"}, "backoff",
                 id="Queue queues pod to backoffQ if Pod is not gated and the event is wildcard"),
    pytest.param((1, 37), "foo", {"foo": "bar"}, "backoff",
                 id="Queue queues pod to backoffQ when Pod is no longer gated and the event is wildcard"),
    pytest.param((1, 37), "foo", {}, "gated",
                 id="Queue queues pod to unschedulableQ when Pod is gated and the event is wildcard"),
    # before 1.37 (scheduling_queue.go v1.36.3 L1316) a wildcard event skips a gated pod whose gating
    # plugin did not register for it: the pod stays gated, even when PreEnqueue would now pass
    pytest.param((1, 36), "foo", {"foo": "bar"}, "gated",
                 id="1.36: a gated pod is not re-evaluated on a wildcard event"),
])
def test_wildcard_event_and_gated_pods(version: tuple[int, int], gated_by: str | None,
                                       pod_labels: dict[str, str], want: str) -> None:
    t = Q({NODE_ADD: [("foo", _hint_must_not_run)], TARGET_POD_UPDATE: [("SchedulingGates", queue_hint)]},
          pre_enqueue=[SchedulingGatesPreEnqueue(), AllowlistPreEnqueue("foo", ("foo",))], start=MOVE_HINT_START,
          features=FeatureGate(emulated_version=version))
    pod = _p1()
    t.add(pod)
    qpi = t.pop(pod)
    qpi.pod.metadata.labels = dict(pod_labels)
    if gated_by is not None:  # setQueuedPodInfoGated
        qpi.gated, qpi.gating_plugin = True, gated_by
    t.fail(qpi, gated_by or "foo")
    before = t.q.incoming.get(("unschedulable", "UnschedulableTimeout"), 0)
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert t.where(pod) == want
    # a gated pod evaluated (1.37) and gated again re-enters unschedulablePods under the event
    re_gated = version >= (1, 37) and want == "gated"
    assert t.q.incoming.get(("unschedulable", "UnschedulableTimeout"), 0) - before == (1 if re_gated else 0)


def test_gated_pod_flushed_by_leftover_timeout_in_137_only() -> None:
    """1.37: the leftover flush (a wildcard event) re-runs PreEnqueue on a pod gated by a plugin
    that registered only for its own update (SchedulingGates), so a gate the plugin lifts without
    that event is noticed after podMaxInUnschedulablePodsDuration; 1.36 leaves it gated."""
    for version, want in (((1, 37), "active"), ((1, 36), "gated")):
        t = Q({TARGET_POD_UPDATE: [("foo", queue_hint)]}, pre_enqueue=[AllowlistPreEnqueue("foo", ("foo",))],
              features=FeatureGate(emulated_version=version))
        pod = MakePod().name("p").namespace("ns").uid("p").obj()
        t.add(pod)
        assert t.where(pod) == "gated"
        assert (t.q.next_unschedulable_timeout() is not None) is (version >= (1, 37))
        pod.metadata.labels = {"foo": ""}  # the allowlist would pass now; no event says so
        t.clock.advance(301)
        t.q.flush_unschedulable_leftover()
        assert t.where(pod) == want, version


def test_event_no_plugin_registered_for_moves_nothing() -> None:
    """Upstream ``isEventOfInterest``: an event no plugin registered for returns before the walk,
    even for a pod without rejecting plugins (which any other event moves after backoff)."""
    t = Q({NODE_ADD: [("foo", queue_hint)]})
    # upstream gives QueueSort no enqueue extension (fillEnqueueExtensions: PreEnqueue, PreFilter,
    # Filter, Reserve and Permit plugins only): the profile's PrioritySort registers for nothing
    assert PrioritySort().name not in t.q._events
    pod = MakePod().name("p").namespace("ns").uid("p").obj()
    t.put_unschedulable(t.new_qpi(pod))
    assert t.q.move_all_to_active_or_backoff(PV_ADD) == 0
    assert t.where(pod) == "unschedulable"
    assert t.q.move_all_to_active_or_backoff(NODE_ADD) == 1


def test_gated_pods_of_uninterested_plugin_are_not_looked_at() -> None:
    """SchedulingWhileGated's shape: thousands of pods gated by SchedulingGates and an AssignedPod
    event per bind; the walk sees only the pods rejected by a plugin registered for the event."""
    t = Q({EVENT_ASSIGNED_POD_ADD: [("foo", queue_hint)], TARGET_POD_UPDATE: [("SchedulingGates", queue_hint)]},
          pre_enqueue=[SchedulingGatesPreEnqueue()])
    for i in range(50):
        t.add(MakePod().name(f"g{i}").namespace("ns").uid(f"g{i}").scheduling_gates("gate").obj())
    other = MakePod().name("o").namespace("ns").uid("o").obj()
    t.pop_and_fail(other, "foo")
    assert len(t.q.unschedulable) == 51
    assert [e.key for e in t.q.unschedulable.candidates(t.q._plan(EVENT_ASSIGNED_POD_ADD))] == [key(other)]
    t.clock.advance(20)
    assert t.q.move_all_to_active_or_backoff(EVENT_ASSIGNED_POD_ADD) == 1
    assert t.q.counts()["gated"] == 50


# ───────────── the indexed walk equals the plain walk ─────────────

PLUGINS = ("A", "B", "C", "G1", "G2")
PV_UPDATE = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.UPDATE)
EVENTS = (NODE_ADD, EVENT_ASSIGNED_POD_ADD, EVENT_ASSIGNED_POD_DELETE, PV_ADD, PV_UPDATE,
          ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL))
WILDCARD = ClusterEvent(EventResource.WILDCARD, ActionType.ALL)


class _PlainPool(UnschedulableEntities):
    """The pool as upstream walks it: every entity is a candidate."""

    def candidates(self, plugins: Any) -> list[Any]:
        return list(self.values())


class _Plugin:
    def __init__(self, name: str, regs: list[ClusterEventWithHint], gate: bool) -> None:
        self.name = name
        self.regs = regs
        if gate:  # PreEnqueue: gated while the pod carries the label "gate-<name>"
            self.pre_enqueue = self._pre_enqueue

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return list(self.regs)

    def _pre_enqueue(self, pod: Pod) -> Status | None:
        if f"gate-{self.name}" in (pod.metadata.labels or {}):
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated")
        return None


class _Framework:
    def __init__(self, plugins: list[_Plugin]) -> None:
        sort = PrioritySort()
        self.queue_sort_key = sort.sort_key
        self.plugins: dict[str, Any] = {sort.name: sort, **{p.name: p for p in plugins}}
        self.pre_enqueue_plugins = [p for p in plugins if hasattr(p, "pre_enqueue")]


def _hint(plugin: str, answers: dict[str, int], log: list[tuple[str, str, str]]) -> Any:
    def hint(pod: Any, old: Any, new: Any) -> QueueingHint:
        name = pod.metadata.name
        log.append((plugin, name, str(new)))
        a = answers.get(name, 0)
        if a == 2:
            raise RuntimeError("hint failed")  # counts as Queue
        return QueueingHint.QUEUE if a == 1 else QueueingHint.SKIP
    return hint


@st.composite
def _setup(draw: Any) -> dict[str, Any]:
    regs = {p: draw(st.lists(st.sampled_from(EVENTS), max_size=2, unique=True)) for p in PLUGINS}
    if draw(st.integers(0, 4)) == 0:  # now and then a plugin registered for every event
        regs[draw(st.sampled_from(PLUGINS))].append(WILDCARD)
    answers = {p: draw(st.dictionaries(st.sampled_from([f"p{i}" for i in range(12)]), st.integers(0, 2)))
               for p in PLUGINS}
    rejectors = st.sets(st.sampled_from(PLUGINS), max_size=2)
    initial = draw(st.lists(st.tuples(st.sets(st.sampled_from(("G1", "G2")), max_size=1), rejectors,
                                      st.sets(st.sampled_from(PLUGINS), max_size=1)), min_size=2, max_size=12))
    move = st.tuples(st.just("move"), st.sampled_from(EVENTS), st.booleans())
    ops = draw(st.lists(st.one_of(
        move, move, move,
        st.tuples(st.just("fail"), rejectors, st.sets(st.sampled_from(PLUGINS), max_size=1)),
        st.tuples(st.just("add"), st.integers(0, 11), st.sets(st.sampled_from(("G1", "G2")), max_size=2)),
        st.tuples(st.just("ungate"), st.integers(0, 11)),
        st.tuples(st.just("tick"), st.sampled_from((0.5, 3.0, 301.0))),
        st.tuples(st.just("flush"),),
        st.tuples(st.just("activate"), st.integers(0, 11)),
    ), max_size=30))
    return {"regs": regs, "answers": answers, "initial": initial, "ops": ops,
            "version": draw(st.sampled_from([(1, 36), (1, 37)]))}


def _run(setup: dict[str, Any], plain: bool) -> list[Any]:
    log: list[tuple[str, str, str]] = []
    plugins = [_Plugin(p, [ClusterEventWithHint(e, _hint(p, setup["answers"][p], log)) for e in setup["regs"][p]],
                       gate=p.startswith("G")) for p in PLUGINS]
    clock = ManualClock(1_000_000.25)
    q = SchedulingQueue({"default-scheduler": _Framework(plugins)}, clock.now,
                        features=FeatureGate(emulated_version=setup["version"]))
    if plain:
        q.unschedulable = _PlainPool()
    pods: dict[int, Pod] = {}
    trace: list[Any] = []
    for i, (gates, unsched, pending) in enumerate(setup["initial"]):  # a pool to walk: gated, or failed
        pods[i] = MakePod().name(f"p{i}").namespace("ns").uid(f"p{i}").labels(
            {f"gate-{g}": "" for g in sorted(gates)}).obj()
        q.add(pods[i])
        qpi = q.pop()
        if qpi is not None:
            qpi.unschedulable_plugins, qpi.pending_plugins = set(unsched), set(pending)
            q.add_unschedulable_if_not_present(qpi)
    for op in setup["ops"]:
        if op[0] == "add":
            i = op[1]
            if i in pods:
                continue
            pods[i] = MakePod().name(f"p{i}").namespace("ns").uid(f"p{i}").labels(
                {f"gate-{g}": "" for g in sorted(op[2])}).obj()
            q.add(pods[i])
        elif op[0] == "fail":
            qpi = q.pop()
            if qpi is not None:
                qpi.unschedulable_plugins, qpi.pending_plugins = set(op[1]), set(op[2])
                q.add_unschedulable_if_not_present(qpi)
        elif op[0] == "move":
            target = next(iter(pods.values()), None) if op[2] else None
            trace.append(("moved", q.move_all_to_active_or_backoff(op[1], None, target)))
        elif op[0] == "ungate" and op[1] in pods:
            old = pods[op[1]]
            new = MakePod().name(old.metadata.name).namespace("ns").uid(old.metadata.uid).obj()
            new.metadata.resource_version = "2"
            pods[op[1]] = new
            q.update(old, new)
        elif op[0] == "tick":
            clock.advance(op[1])
        elif op[0] == "flush":
            trace.append(("flushed", q.flush_unschedulable_leftover()))
        elif op[0] == "activate" and op[1] in pods:
            q.activate([key(pods[op[1]])])
        trace.append(sorted((k, q.where(k)) for k in q._where))
    trace.append(("hints", log))
    trace.append(("incoming", sorted(q.incoming.items()), sorted(q.incoming_entities.items()), q.counts()))
    trace.append(("next timeout", q.next_unschedulable_timeout()))
    trace.append(("order", list(q.unschedulable)))
    return trace


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=_setup())
def test_indexed_walk_equals_plain_walk(setup: dict[str, Any]) -> None:
    assert _run(setup, plain=False) == _run(setup, plain=True)
