"""Upstream queue behaviour tests, ported.

Source: kubernetes/kubernetes ``pkg/scheduler/backend/queue/scheduling_queue_test.go`` and
``backoff_queue_test.go`` (the v1.34 behaviour: ``SchedulerQueueingHints`` and
``SchedulerPopFromBackoffQ`` both on). Behaviour is ported, not Go code; the pytest ids are the
upstream test and case names. Cases upstream runs only with a feature gate off (QueueingHints
disabled, PopFromBackoffQ disabled) are not ported: kubesched implements only the v1.34 defaults.

Vocabulary mapping: upstream ``Pop`` → ``q.pop()`` (never blocks: ``None`` when nothing is ready);
``AddUnschedulableIfNotPresent`` → ``q.add_unschedulable_if_not_present(qpi)`` with the QueuedPodInfo
that ``pop()`` returned (kubesched keeps one QueuedPodInfo per pod); ``MoveAllToActiveOrBackoffQueue``
→ ``q.move_all_to_active_or_backoff``; ``flushBackoffQCompleted`` / ``flushUnschedulablePodsLeftover``
→ ``q.flush_backoff_completed()`` / ``q.flush_unschedulable_leftover()``; the fake clock → a
:class:`ManualClock`. Where upstream manipulates a sub-queue directly (``q.backoffQ.add``,
``q.unschedulablePods.addOrUpdate``) the helpers below do the same with the queue's internals.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.api.objects import Pod
from kubesched.features import FeatureGate
from kubesched.framework.clock import ManualClock
from kubesched.framework.events import (
    EVENT_ASSIGNED_POD_ADD,
    EVENT_FORCE_ACTIVATE,
    EVENT_NODE_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import Code, Status
from kubesched.framework.node_info import PodInfo, QueuedPodInfo
from kubesched.plugins.queuesort import PrioritySort
from kubesched.queue import SchedulingQueue
from kubesched.testing.wrappers import MakeNode, MakePod

# ───────────────────────────── fixtures shared with upstream ─────────────────────────────

NODE_ADD = EVENT_NODE_ADD
PV_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD, "PersistentVolumeAdd")
PV_UPDATE = ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.UPDATE, "PersistentVolumeUpdate")
PVC_ADD = ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD, "PersistentVolumeClaimAdd")
CSI_NODE_UPDATE = ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE, "CSINodeUpdate")
UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
TARGET_POD_UPDATE = ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE)
"""1.37 ``EventTargetPodUpdate``: the pending pod's own update (the 1.37 tests register their
self-update hints on it where the 1.34 ones used ``EventUnscheduledPodUpdate``)."""

LOW, MID, HIGH = 0, 100, 1000
MEDIUM = (LOW + HIGH) // 2

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 10.0
MAX_IN_UNSCHEDULABLE = 300.0
START = 1_000_000.25  # a fake "time.Now()": deliberately not on a 1 s window boundary


def high_pod() -> Pod:
    return MakePod().name("hpp").namespace("ns1").uid("hppns1").priority(HIGH).obj()


def high_nominated_pod() -> Pod:
    return MakePod().name("hpp").namespace("ns1").uid("hppns1").priority(HIGH).nominated_node_name("node1").obj()


def med_pod() -> Pod:
    return (MakePod().name("mpp").namespace("ns2").uid("mppns2").annotation("annot2", "val2")
            .priority(MEDIUM).nominated_node_name("node1").obj())


def unsched_pod() -> Pod:
    return (MakePod().name("up").namespace("ns1").uid("upns1").annotation("annot2", "val2")
            .priority(LOW).nominated_node_name("node1").obj())


def queue_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.QUEUE


def skip_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    return QueueingHint.SKIP


def error_hint(pod: Any, old: Any, new: Any) -> QueueingHint:
    raise RuntimeError("unexpected error")


HintMap = dict[ClusterEvent, list[tuple[str, Callable[[Any, Any, Any], QueueingHint]]]]


class HintPlugin:
    """A plugin that registers exactly the events of the upstream test's QueueingHintMap."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.regs: list[ClusterEventWithHint] = []

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return list(self.regs)

    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        """A Filter plugin (never called here): upstream registers events only for PreEnqueue,
        PreFilter, Filter, Reserve and Permit plugins (framework.go fillEnqueueExtensions)."""
        return None


class AllowlistPreEnqueue:
    """Upstream's ``preEnqueuePlugin``: admits a pod having one of the allow-listed label keys.

    Like the PreEnqueue plugins below it has no ``events_to_register``, so kubesched registers it
    for every event: the counterpart of upstream tests that build the queue without a
    QueueingHintMap, where ``isPodWorthRequeuing`` falls back to queueAfterBackoff. When the
    upstream test does give the plugin hints, the FakeFramework registers exactly those."""

    def __init__(self, name: str = "preEnqueuePlugin", allowlists: tuple[str, ...] = ()) -> None:
        self.name = name
        self.allowlists = allowlists

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if any(label in self.allowlists for label in pod.metadata.labels or {}):
            return None
        return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "pod name not in allowlists")


class SchedulingGatesPreEnqueue:
    """Upstream's SchedulingGates PreEnqueue (gated while ``spec.schedulingGates`` is not empty)."""

    name = "SchedulingGates"

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if pod.spec.scheduling_gates:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "waiting for scheduling gates")
        return None


class FakeFramework:
    """What SchedulingQueue needs from a Framework: plugins (for their events), the QueueSort key,
    PreEnqueue. Plugins are registered in the order the upstream hint map lists them, so hint
    execution order (and counts) follow the upstream test."""

    def __init__(self, hint_map: HintMap | None = None, pre_enqueue: list[Any] | None = None) -> None:
        sort = PrioritySort()
        self.queue_sort_key = sort.sort_key
        self.plugins: dict[str, Any] = {sort.name: sort}
        for event, hints in (hint_map or {}).items():
            for plugin, fn in hints:
                pl = self.plugins.setdefault(plugin, HintPlugin(plugin))
                pl.regs.append(ClusterEventWithHint(event, fn))
        self.pre_enqueue_plugins = list(pre_enqueue or [])
        for pl in self.pre_enqueue_plugins:
            if pl.name in self.plugins:
                self.plugins[pl.name].pre_enqueue = pl.pre_enqueue  # type: ignore[attr-defined]
            else:
                self.plugins[pl.name] = pl


class Q:
    """A queue under test plus its clock."""

    def __init__(self, hint_map: HintMap | None = None, pre_enqueue: list[Any] | None = None, *,
                 start: float = START, initial_backoff: float = INITIAL_BACKOFF,
                 max_backoff: float = MAX_BACKOFF, max_in_unschedulable: float = MAX_IN_UNSCHEDULABLE,
                 features: FeatureGate | None = None) -> None:
        self.clock = ManualClock(start)
        self.fw = FakeFramework(hint_map, pre_enqueue)
        self.q = SchedulingQueue({"default-scheduler": self.fw}, self.clock.now,
                                 pod_initial_backoff_s=initial_backoff, pod_max_backoff_s=max_backoff,
                                 pod_max_in_unschedulable_pods_s=max_in_unschedulable, features=features)

    # upstream helpers ------------------------------------------------------------

    def add(self, pod: Pod) -> None:
        self.q.add(pod)

    def pop(self, want: Pod | None = None) -> QueuedPodInfo:
        qpi = self.q.pop()
        assert qpi is not None, "Pop returned nothing"
        if want is not None:
            assert qpi.pod is want, f"popped {qpi.key}, want {want.metadata.namespace}/{want.metadata.name}"
        return qpi

    def fail(self, qpi: QueuedPodInfo, *plugins: str, pending: tuple[str, ...] = ()) -> None:
        """``AddUnschedulableIfNotPresent(newQueuedPodInfoForLookup(pod, plugins...))``."""
        qpi.unschedulable_plugins = set(plugins)
        qpi.pending_plugins = set(pending)
        self.q.add_unschedulable_if_not_present(qpi)

    def pop_and_fail(self, pod: Pod, *plugins: str, pending: tuple[str, ...] = ()) -> QueuedPodInfo:
        self.add(pod)
        qpi = self.pop(pod)
        self.fail(qpi, *plugins, pending=pending)
        return qpi

    def new_qpi(self, pod: Pod, *plugins: str) -> QueuedPodInfo:
        """``q.newQueuedPodInfo(pod, plugins...)``: a fresh entry stamped now."""
        qpi = QueuedPodInfo(PodInfo(pod), timestamp=self.clock.now(), seq=0,
                            unschedulable_plugins=set(plugins))
        self.q._seq += 1
        qpi.seq = self.q._seq
        return qpi

    def put_unschedulable(self, qpi: QueuedPodInfo) -> None:
        """``q.unschedulablePods.addOrUpdate(pInfo)``."""
        self.q._entries[qpi.key] = qpi
        self.q._park(qpi, "UnschedulablePodAdd")

    def put_backoff(self, qpi: QueuedPodInfo) -> None:
        """``q.backoffQ.add(pInfo)``."""
        self.q._entries[qpi.key] = qpi
        self.q._push_backoff(qpi, "UnschedulablePodAdd")

    def where(self, pod: Pod) -> str | None:
        return self.q.where(f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}")

    def names(self, queue: str) -> list[str]:
        return sorted(q.pod.metadata.name for q in self.q.pending() if self.q.where(q.key) == queue)

    def nominated(self) -> dict[str, list[str]]:
        return {n: [p.pod.metadata.name for p in self.q.nominated_pods_for_node(n)]
                for n in self.q.nominated_nodes()}


def key(pod: Pod) -> str:
    return f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"


# ───────────────────────────── Add / Pop ─────────────────────────────


def test_TestPriorityQueue_Add() -> None:
    t = Q()
    med, up, high = med_pod(), unsched_pod(), high_pod()
    t.add(med)
    t.add(up)
    t.add(high)
    assert t.nominated() == {"node1": ["mpp", "up"]}
    t.pop(high)
    t.pop(med)
    t.pop(up)
    # medPriorityPodInfo and unschedulablePodInfo are still nominated after Pop
    assert t.nominated() == {"node1": ["mpp", "up"]}


def test_TestPriorityQueue_AddWithReversePriorityLessFunc() -> None:
    t = Q()
    med, high = med_pod(), high_pod()
    t.add(med)
    t.add(high)
    t.pop(high)
    t.pop(med)


def test_TestPop_with_hints() -> None:
    """TestPop/with-hints: PendingPlugins survive Pop (they are cleared only by the next failure)."""
    t = Q({PV_ADD: [("fooPlugin1", queue_hint)]})
    pod = MakePod().name("targetpod").uid("pod1").obj()
    t.pop_and_fail(pod, pending=("fooPlugin1",))
    t.q.move_all_to_active_or_backoff(PV_ADD)
    assert t.where(pod) == "active"
    qpi = t.pop(pod)
    assert qpi.pending_plugins == {"fooPlugin1"}


@pytest.mark.parametrize("case", ["Pop pods from both activeQ and backoffQ when PopFromBackoffQ is enabled"])
def test_TestPriorityQueue_Pop(case: str) -> None:
    """med in activeQ, hpp in the (rejection) backoffQ, hpp2 in the error backoffQ, up in
    unschedulablePods: Pop gives med, then hpp from backoffQ; the error backoffQ and
    unschedulablePods are never popped early."""
    t = Q()
    med, high = med_pod(), high_pod()
    high2 = MakePod().name("hpp2").namespace("ns1").uid("hpp2ns1").priority(HIGH).obj()
    t.add(med)
    bo = t.new_qpi(high, "plugin")
    bo.unschedulable_count = 1
    t.put_backoff(bo)
    err = t.new_qpi(high2)
    err.consecutive_errors_count = 1
    t.put_backoff(err)
    t.put_unschedulable(t.new_qpi(unsched_pod(), "plugin"))
    got = []
    for _ in range(3):
        qpi = t.q.pop()
        if qpi is None:
            break
        got.append(qpi.pod.metadata.name)
    assert got == ["mpp", "hpp"]


# ───────────────────────────── in-flight pods ─────────────────────────────

IN_FLIGHT_CASES: list[tuple[str, HintMap, list[str], list[tuple[str, Any]], dict[str, list[str]]]] = [
    (
        "Pod, registered in inFlightPods, is enqueued back to backoffQ",
        {PV_ADD: [("fooPlugin1", queue_hint)], NODE_ADD: [("fooPlugin1", queue_hint)],
         PVC_ADD: [("fooPlugin1", queue_hint)]},
        ["targetpod", "targetpod2"],
        [("event", PVC_ADD), ("pop", "targetpod"), ("event", PV_ADD), ("pop", "targetpod2"),
         ("event", NODE_ADD), ("fail", ("targetpod", (), ()))],
        {"backoff": ["targetpod"]},
    ),
    (
        "All Pods registered in inFlightPods are enqueued back to activeQ",
        {PV_ADD: [("fooPlugin1", queue_hint)], NODE_ADD: [("fooPlugin1", queue_hint)],
         PVC_ADD: [("fooPlugin1", queue_hint)], CSI_NODE_UPDATE: [("fooPlugin1", queue_hint)]},
        ["targetpod", "targetpod2"],
        [("event", PVC_ADD), ("pop", "targetpod"), ("event", PV_ADD), ("pop", "targetpod2"),
         ("event", NODE_ADD), ("fail", ("targetpod", (), ())), ("event", CSI_NODE_UPDATE),
         ("fail", ("targetpod2", (), ()))],
        {"backoff": ["targetpod", "targetpod2"]},
    ),
    (
        "One intermediate Pod registered in inFlightPods is enqueued back to activeQ",
        {PV_ADD: [("fooPlugin1", queue_hint)], NODE_ADD: [("fooPlugin1", queue_hint)],
         EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]},
        ["targetpod", "targetpod2", "targetpod3"],
        [("event", PVC_ADD), ("pop", "targetpod"), ("event", PV_ADD), ("pop", "targetpod2"),
         ("event", NODE_ADD), ("pop", "targetpod3"), ("event", EVENT_ASSIGNED_POD_ADD),
         ("fail", ("targetpod2", (), ()))],
        {"backoff": ["targetpod2"]},
    ),
    (
        "events before popping Pod are ignored when Pod is enqueued back to queue",
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]},
        ["targetpod"],
        [("event", EVENT_UNSCHEDULABLE_TIMEOUT), ("pop", "targetpod"), ("event", EVENT_ASSIGNED_POD_ADD),
         ("fail", ("targetpod", ("fooPlugin1",), ()))],
        {"unschedulable": ["targetpod"]},
    ),
    (
        "pod is enqueued to backoff if no failed plugin",
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]},
        ["targetpod"],
        [("pop", "targetpod"), ("event", EVENT_ASSIGNED_POD_ADD), ("fail", ("targetpod", (), ()))],
        {"backoff": ["targetpod"]},
    ),
    (
        "pod is enqueued to unschedulable pod pool if no events that can make the pod schedulable",
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", queue_hint)]},
        ["targetpod"],
        [("pop", "targetpod"), ("event", NODE_ADD), ("fail", ("targetpod", ("fooPlugin1",), ()))],
        {"unschedulable": ["targetpod"]},
    ),
    (
        "pod is enqueued to unschedulable pod pool because the failed plugin has a hint fn but it returns Skip",
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", skip_hint)]},
        ["targetpod"],
        [("pop", "targetpod"), ("event", EVENT_ASSIGNED_POD_ADD), ("fail", ("targetpod", ("fooPlugin1",), ()))],
        {"unschedulable": ["targetpod"]},
    ),
    (
        "pod is enqueued to activeQ because the Pending plugins has a hint fn and it returns Queue",
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin3", skip_hint), ("fooPlugin2", queue_hint),
                                  ("fooPlugin1", queue_hint)]},
        ["targetpod"],
        [("pop", "targetpod"), ("event", EVENT_ASSIGNED_POD_ADD),
         ("fail", ("targetpod", ("fooPlugin2", "fooPlugin3"), ("fooPlugin1",)))],
        {"active": ["targetpod"]},
    ),
    (
        "pod is enqueued to backoffQ because the failed plugin has a hint fn and it returns Queue",
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin2", skip_hint), ("fooPlugin1", queue_hint)]},
        ["targetpod"],
        [("pop", "targetpod"), ("event", EVENT_ASSIGNED_POD_ADD),
         ("fail", ("targetpod", ("fooPlugin1", "fooPlugin2"), ()))],
        {"backoff": ["targetpod"]},
    ),
    (
        ("pod is enqueued to activeQ because the pending plugin has a hint fn and it returns Queue for a "
        "concurrent event that was received while some other pod was in flight"),
        {EVENT_ASSIGNED_POD_ADD: [("fooPlugin3", skip_hint), ("fooPlugin2", queue_hint),
                                  ("fooPlugin1", queue_hint)]},
        ["targetpod", "targetpod2"],
        [("pop", "targetpod"), ("event", NODE_ADD), ("pop", "targetpod2"), ("event", EVENT_ASSIGNED_POD_ADD),
         ("fail", ("targetpod", (), ())),
         ("fail", ("targetpod2", ("fooPlugin2", "fooPlugin3"), ("fooPlugin1",)))],
        {"active": ["targetpod2"], "backoff": ["targetpod"]},
    ),
]


@pytest.mark.parametrize(("hint_map", "initial", "actions", "want"),
                         [pytest.param(*c[1:], id=c[0]) for c in IN_FLIGHT_CASES])
def test_Test_InFlightPods(hint_map: HintMap, initial: list[str], actions: list[tuple[str, Any]],
                           want: dict[str, list[str]]) -> None:
    t = Q(hint_map)
    pods = {n: MakePod().name(n).uid(n).obj() for n in initial}
    for p in pods.values():
        t.add(p)
        t.clock.advance(1.0)
    popped: dict[str, QueuedPodInfo] = {}
    for kind, arg in actions:
        if kind == "event":
            t.q.move_all_to_active_or_backoff(arg)
        elif kind == "pop":
            popped[arg] = t.pop(pods[arg])
        else:
            name, plugins, pending = arg
            t.fail(popped[name], *plugins, pending=pending)
    for queue, names in want.items():
        assert t.names(queue) == sorted(names), queue
    # every pod that came back is no longer in flight
    for name in popped:
        if t.q.where(f"default/{name}") is not None:
            assert f"default/{name}" not in t.q._in_flight


def test_Test_InFlightPods_popped_pod_preserves_UnschedulablePlugins_and_PendingPlugins() -> None:
    """Test_InFlightPods/popped pod preserves UnschedulablePlugins and PendingPlugins."""
    t = Q({PV_ADD: [("fooPlugin1", queue_hint)]})
    pod = MakePod().name("targetpod").uid("pod1").obj()
    t.add(pod)
    qpi = t.pop(pod)
    t.fail(qpi, "fooPlugin2", pending=("fooPlugin1",))
    t.q.move_all_to_active_or_backoff(PV_ADD)  # active again (Pending plugin said Queue)
    qpi = t.pop(pod)
    assert qpi.unschedulable_plugins == {"fooPlugin2"}
    assert qpi.pending_plugins == {"fooPlugin1"}
    # failed with no plugin: an error, goes to backoff
    t.fail(qpi)
    assert t.where(pod) == "backoff"


# ───────────────────────────── AddUnschedulableIfNotPresent ─────────────────────────────


def test_TestPriorityQueue_AddUnschedulableIfNotPresent() -> None:
    t = Q()
    up, hpn = unsched_pod(), high_nominated_pod()
    t.add(up)
    qpi = t.pop(up)
    t.add(hpn)
    t.fail(qpi, "plugin")
    t.pop(hpn)
    assert len(t.nominated()) == 1
    # no event happened during scheduling: the pod goes to unschedulablePods
    assert t.where(up) == "unschedulable"


def test_TestPriorityQueue_AddUnschedulableIfNotPresent_Backoff() -> None:
    t = Q()
    pods = [MakePod().name(f"pod{i}").namespace(f"ns{i}").uid(f"upns{i}").priority(i).obj() for i in range(10)]
    for p in pods:
        t.add(p)
    popped = {}
    for i in range(9, 0, -1):
        popped[i] = t.pop(pods[i])
    # a move request while they are being scheduled
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    t.pop(pods[0])
    for i in range(1, 10):
        t.fail(popped[i], "plugin")
    # the move request happened during their cycle: backoffQ, not unschedulablePods
    for i in range(1, 10):
        assert t.where(pods[i]) == "backoff", pods[i].metadata.name


# ───────────────────────────── Update ─────────────────────────────

UPDATE_HINTS: HintMap = {TARGET_POD_UPDATE: [("queuePlugin", queue_hint), ("skipPlugin", skip_hint)]}


def _annotated(pod: Pod, k: str, v: str) -> Pod:
    b = MakePod().name(pod.metadata.name).namespace(pod.metadata.namespace).uid(pod.metadata.uid or "")
    b.priority(pod.spec.priority or 0)
    for ak, av in (pod.metadata.annotations or {}).items():
        b.annotation(ak, av)
    b.annotation(k, v)
    if pod.status.nominated_node_name:
        b.nominated_node_name(pod.status.nominated_node_name)
    return b.obj()


def _update_not_in_queue(t: Q) -> tuple[Pod, Pod]:
    med = med_pod()
    return med, _annotated(med, "foo", "test")


def _update_add_nominated(t: Q) -> tuple[Pod, Pod]:
    return high_pod(), high_nominated_pod()


def _update_in_active(t: Q) -> tuple[Pod, Pod]:
    hp = high_pod()
    t.add(hp)
    return hp, hp


def _update_in_backoff(t: Q) -> tuple[Pod, Pod]:
    med = med_pod()
    t.put_backoff(t.new_qpi(med))
    return med, med


def _update_unsched_backing_off(t: Q) -> tuple[Pod, Pod]:
    med = med_pod()
    qpi = t.new_qpi(med, "queuePlugin")
    qpi.unschedulable_count += 1
    t.put_unschedulable(qpi)
    return med, _annotated(med, "foo", "test")


def _update_unsched_backoff_expired(t: Q) -> tuple[Pod, Pod]:
    med = med_pod()
    qpi = t.new_qpi(med, "queuePlugin")
    qpi.unschedulable_count += 1
    t.put_unschedulable(qpi)
    t.clock.advance(MAX_BACKOFF)
    return med, _annotated(med, "foo", "test1")


def _update_unsched_skip(t: Q) -> tuple[Pod, Pod]:
    med = med_pod()
    t.put_unschedulable(t.new_qpi(med, "skipPlugin"))
    return med, _annotated(med, "foo", "test1")


def _update_in_flight(t: Q) -> tuple[Pod, Pod]:
    med = med_pod()
    t.add(med)
    t.pop(med)
    return med, _annotated(med, "foo", "bar")


UPDATE_CASES = [
    ("Update pod that didn't exist in the queue", "active", False, _update_not_in_queue),
    ("Update highPriorityPodInfo and add a nominatedNodeName to it", "active", True, _update_add_nominated),
    ("When updating a pod that is already in activeQ, the pod should remain in activeQ after Update()",
     "active", False, _update_in_active),
    ("When updating a pod that is in backoff queue and is still backing off, it will be updated in backoff queue",
     "backoff", False, _update_in_backoff),
    ("when updating a pod in unschedulablePods, if its backoff timer has not yet expired, it moves to backoffQ",
     "backoff", False, _update_unsched_backing_off),
    ("when updating a pod in unschedulablePods, if its backoff timer has expired, it moves to activeQ",
     "active", False, _update_unsched_backoff_expired),
    (("when updating a pod in unschedulablePods, if the scheduling hint returns QueueSkip, it remains in "
     "unschedulablePods"), "unschedulable", False, _update_unsched_skip),
    ("when updating a pod which is in flightPods, the pod will not be added to any queue", None, False,
     _update_in_flight),
]


@pytest.mark.parametrize(("want_q", "want_nominated", "prepare"), [pytest.param(*c[1:], id=c[0]) for c in UPDATE_CASES])
def test_TestPriorityQueue_Update(want_q: str | None, want_nominated: bool,
                                  prepare: Callable[[Q], tuple[Pod, Pod]]) -> None:
    t = Q(UPDATE_HINTS)
    _check_update(t, want_q, want_nominated, prepare)


@pytest.mark.parametrize(("want_q", "want_nominated", "prepare"), [pytest.param(*c[1:], id=c[0]) for c in UPDATE_CASES])
def test_TestPriorityQueue_Update_v134(want_q: str | None, want_nominated: bool,
                                       prepare: Callable[[Q], tuple[Pod, Pod]]) -> None:
    """The 1.34 test: the pod's own update is an ``UnschedulablePod/Update`` event."""
    t = Q({UNSCHEDULED_POD_UPDATE: [("queuePlugin", queue_hint), ("skipPlugin", skip_hint)]},
          features=FeatureGate(emulated_version=(1, 34)))
    _check_update(t, want_q, want_nominated, prepare)


def test_TestPriorityQueue_Update_unscheduled_registration_misses_target_pod() -> None:
    """1.37: a registration for ``UnscheduledPod/Update`` no longer sees the pod's own update
    (a ``TargetPod`` event); one for ``Pod/Update`` sees both."""
    for reg, want in ((UNSCHEDULED_POD_UPDATE, "unschedulable"), (ClusterEvent(EventResource.POD, ActionType.UPDATE),
                                                                 "backoff")):
        t = Q({reg: [("queuePlugin", queue_hint)]})
        old, new = _update_unsched_backing_off(t)
        t.q.update(old, new)
        assert t.where(new) == want


def _check_update(t: Q, want_q: str | None, want_nominated: bool,
                  prepare: Callable[[Q], tuple[Pod, Pod]]) -> None:
    old, new = prepare(t)
    t.q.update(old, new)
    assert t.where(new) == want_q
    if want_q is not None:
        assert t.q._entries[key(new)].pod is new
    if want_nominated:
        assert len(t.nominated()) == 1


def test_PodSchedulingPropertiesChange_other_update_wakes_only_generic_update_hints() -> None:
    """Upstream ``PodSchedulingPropertiesChange``: an update none of the specific action types
    describes (here an annotation) is ``updatePodOther``; it matches a registration for the generic
    ``UnschedulablePod/Update`` (TestPriorityQueue_Update's queuePlugin) but not one for
    ``UpdatePodLabel`` only."""
    label_only = ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_LABEL)
    t = Q({label_only: [("labelPlugin", queue_hint)], TARGET_POD_UPDATE: [("queuePlugin", queue_hint)]})
    a, b = med_pod(), MakePod().name("other").namespace("ns2").obj()
    qa, qb = t.new_qpi(a, "labelPlugin"), t.new_qpi(b, "queuePlugin")
    t.put_unschedulable(qa)
    t.put_unschedulable(qb)
    t.q.update(a, _annotated(a, "foo", "x"))
    t.q.update(b, _annotated(b, "foo", "x"))
    assert t.where(a) == "unschedulable"
    assert t.where(b) == "active"


def test_TestPriorityQueue_UpdateWhenInflight() -> None:
    t = Q({TARGET_POD_UPDATE: [("fakePlugin", queue_hint)]})
    pod = MakePod().name("test-pod").namespace("test-ns").uid("test-uid").obj()
    t.add(pod)
    qpi = t.pop(pod)
    updated = MakePod().name("test-pod").namespace("test-ns").uid("test-uid").toleration("foo", effect="NoSchedule").obj()
    t.q.update(pod, updated)
    # rejected by fakePlugin, but the update received while in flight may change that
    t.fail(qpi, "fakePlugin")
    assert t.where(updated) == "backoff"
    assert t.q._entries[key(updated)].pod is updated


def test_Test_queuedPodInfo_gatedSetUponCreationAndUnsetUponUpdate() -> None:
    t = Q(pre_enqueue=[SchedulingGatesPreEnqueue()])
    gated = MakePod().name("p").scheduling_gates("hello world").obj()
    t.add(gated)
    assert t.q._entries[key(gated)].gated
    assert t.where(gated) == "gated"
    ungated = MakePod().name("p").obj()
    t.q.update(gated, ungated)
    qpi = t.pop(ungated)
    assert not qpi.gated


# ───────────────────────────── Delete ─────────────────────────────


def test_TestPriorityQueue_Delete() -> None:
    t = Q()
    t.q.update(high_pod(), high_nominated_pod())
    up = unsched_pod()
    t.add(up)
    t.q.delete(high_nominated_pod())
    assert t.where(up) == "active"
    assert t.where(high_pod()) is None
    assert list(t.nominated()) == ["node1"]
    t.q.delete(up)
    assert t.nominated() == {}


# ───────────────────────────── Activate ─────────────────────────────


def _activate_case(setup: str) -> tuple[Q, Pod]:
    t = Q()
    hpn = high_nominated_pod()
    if setup == "active":
        t.add(hpn)
    elif setup == "unschedulable":
        t.put_unschedulable(t.new_qpi(hpn))
    elif setup == "backoff":
        t.put_backoff(t.new_qpi(hpn))
    return t, hpn


@pytest.mark.parametrize(("setup", "want_active"), [
    pytest.param("active", 1, id="pod already in activeQ"),
    pytest.param("none", 0, id="pod not in unschedulablePods/backoffQ"),
    pytest.param("unschedulable", 1, id="pod in unschedulablePods"),
    pytest.param("backoff", 1, id="pod in backoffQ"),
])
def test_TestPriorityQueue_Activate(setup: str, want_active: int) -> None:
    t, hpn = _activate_case(setup)
    t.q.activate([key(hpn)])
    assert t.q.counts()["active"] == want_active
    if want_active:
        assert t.where(hpn) == "active"


def test_TestPriorityQueue_Activate_QHint_pod_not_in_unschedulablePods_backoffQ_but_in_flight() -> None:
    """[QHint] pod not in unschedulablePods/backoffQ but in-flight: a ForceActivate event for that
    pod is recorded, so that the pod is requeued when it comes back rejected."""
    t = Q()
    hpn = high_nominated_pod()
    t.add(hpn)
    qpi = t.pop(hpn)
    t.q.activate([key(hpn)])
    assert t.q.counts()["active"] == 0
    t.fail(qpi, "plugin")  # the plugin has no hint for anything: only ForceActivate can move it
    assert t.where(hpn) == "backoff"


def test_TestPriorityQueue_Activate_QHint_pod_not_in_unschedulablePods_backoffQ_and_not_in_flight() -> None:
    """[QHint] pod not in unschedulablePods/backoffQ and not in-flight (a different pod is in flight):
    the ForceActivate targets only the activated pod."""
    t = Q()
    med = med_pod()
    t.add(med)
    qpi = t.pop(med)
    t.q.activate([key(high_nominated_pod())])
    assert t.q.counts()["active"] == 0
    t.fail(qpi, "plugin")
    assert t.where(med) == "unschedulable"


# ───────────────────────────── PreEnqueue ─────────────────────────────

MOVE_TO_ACTIVE_CASES = [
    ("no plugins registered", [], "p", "UnschedulablePodAdd", False, 0, True),
    ("preEnqueue plugin registered, pod name not in allowlists", [(), ()], "p", "UnschedulablePodAdd", False, 1, False),
    ("preEnqueue plugin registered, pod failed one preEnqueue plugin", [("foo", "bar"), ("foo",)], "bar",
     "UnschedulablePodAdd", False, 1, False),
    (("preEnqueue plugin registered, pod would fail one preEnqueue plugin, but it is moved from backoffQ after "
     "completing backoff, so preEnqueue is not executed"), [("foo", "bar"), ("foo",)], "bar", "BackoffComplete", True,
     0, True),
    ("preEnqueue plugin registered, pod failed one preEnqueue plugin when activated from unschedulablePods",
     [("foo", "bar"), ("foo",)], "bar", "ForceActivate", False, 1, False),
    (("preEnqueue plugin registered, pod would fail one preEnqueue plugin, but was activated from backoffQ, so "
     "preEnqueue is not executed"), [("foo", "bar"), ("foo",)], "bar", "ForceActivate", True, 0, True),
    ("preEnqueue plugin registered, pod passed all preEnqueue plugins", [("foo", "bar"), ("bar",)], "bar",
     "UnschedulablePodAdd", False, 0, True),
]


def _allowlist_plugins(lists: list[tuple[str, ...]]) -> list[AllowlistPreEnqueue]:
    return [AllowlistPreEnqueue(f"preEnqueuePlugin{i}", al) for i, al in enumerate(lists)]


@pytest.mark.parametrize(("plugins", "name", "event", "from_backoff", "want_unsched", "want_ok"),
                         [pytest.param(*c[1:], id=c[0]) for c in MOVE_TO_ACTIVE_CASES])
def test_TestPriorityQueue_moveToActiveQ(plugins: list[tuple[str, ...]], name: str, event: str, from_backoff: bool,
                                         want_unsched: int, want_ok: bool) -> None:
    t = Q(pre_enqueue=_allowlist_plugins(plugins), initial_backoff=30, max_backoff=60)
    pod = MakePod().name(name).label(name, "").obj()
    qpi = t.new_qpi(pod)
    t.q._entries[qpi.key] = qpi
    got = t.q._move_to_active(qpi, event, from_backoff=from_backoff)
    assert got == want_ok
    assert len(t.q.unschedulable) == want_unsched
    # an update (annotation only) keeps a gated pod where it is
    t.q.update(pod, _annotated_labelled(pod, "foo", ""))
    assert len(t.q.unschedulable) == want_unsched


def _annotated_labelled(pod: Pod, k: str, v: str) -> Pod:
    b = MakePod().name(pod.metadata.name)
    for lk, lv in (pod.metadata.labels or {}).items():
        b.label(lk, lv)
    return b.annotation(k, v).obj()


@pytest.mark.parametrize(("plugins", "name", "want_ok"), [
    pytest.param([], "p", True, id="no plugins registered"),
    pytest.param([(), ()], "p", False, id="preEnqueue plugin registered, pod name not in allowlists"),
    pytest.param([("foo", "bar"), ("foo",)], "bar", False, id="preEnqueue plugin registered, pod failed one preEnqueue plugin"),
    pytest.param([("foo", "bar"), ("bar",)], "bar", True, id="preEnqueue plugin registered, pod passed all preEnqueue plugins"),
])
def test_TestPriorityQueue_moveToBackoffQ(plugins: list[tuple[str, ...]], name: str, want_ok: bool) -> None:
    t = Q(pre_enqueue=_allowlist_plugins(plugins), initial_backoff=30, max_backoff=60)
    pod = MakePod().name(name).label(name, "").obj()
    qpi = t.new_qpi(pod)
    t.q._entries[qpi.key] = qpi
    assert t.q._move_to_backoff(qpi, "UnschedulablePodAdd") == want_ok
    assert t.where(pod) == ("backoff" if want_ok else "gated")


# ───────────────────────────── MoveAllToActiveOrBackoffQueue ─────────────────────────────

MOVE_HINT_START = 1_735_689_600.0  # time.Date(2025, 1, 1, 0, 0, 0, 0, UTC): on a window boundary


def _p1() -> Pod:
    return MakePod().name("pod1").namespace("ns1").uid("1").label("foo", "bar").obj()


@pytest.mark.parametrize(("hint", "pending", "gated_by", "duration", "want"), [
    pytest.param(queue_hint, ("foo",), None, 0.0, "active", id="Queue queues pod to activeQ"),
    pytest.param(queue_hint, (), None, 0.0, "backoff", id="Queue queues pod to backoffQ if Pod is backing off"),
    pytest.param(queue_hint, (), None, INITIAL_BACKOFF + 1.0, "active",
                 id="Queue queues pod to activeQ if Pod is not backing off"),
    pytest.param(skip_hint, (), None, 0.0, "unschedulable", id="Skip queues pod to unschedulablePods"),
    pytest.param(error_hint, (), "SchedulingGates", 0.0, "gated",
                 id="QueueHintFunction is not called when Pod is gated by the plugin that isn't interested in the event"),
    pytest.param(queue_hint, (), "foo", 0.0, "backoff",
                 id="QueueHintFunction is called when Pod is gated by the plugin that is interested in the event"),
])
def test_TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint(
        hint: Any, pending: tuple[str, ...], gated_by: str | None, duration: float, want: str) -> None:
    calls = []

    def counted(pod: Any, old: Any, new: Any) -> QueueingHint:
        calls.append(1)
        return hint(pod, old, new)

    t = Q({NODE_ADD: [("foo", counted)], TARGET_POD_UPDATE: [("SchedulingGates", queue_hint)]},
          pre_enqueue=[SchedulingGatesPreEnqueue(), AllowlistPreEnqueue("foo", ("foo",))], start=MOVE_HINT_START)
    pod = _p1()
    t.add(pod)
    qpi = t.pop(pod)
    if gated_by is not None:  # setQueuedPodInfoGated
        qpi.gated = True
        qpi.gating_plugin = gated_by
        t.fail(qpi, gated_by)
    elif pending:
        t.fail(qpi, pending=pending)
    else:
        t.fail(qpi, "foo")
    t.clock.advance(duration)
    t.q.move_all_to_active_or_backoff(NODE_ADD)
    assert t.where(pod) == want
    if gated_by == "SchedulingGates":
        assert calls == []


def test_TestPriorityQueue_MoveAllToActiveOrBackoffQueueWithQueueingHint_window_equality_still_backing_off() -> None:
    """From the comment of "Queue queues pod to activeQ if Pod is not backing off": waiting exactly
    DefaultPodInitialBackoffDuration is not enough, because the pod is still backing off while
    ``{backoff expiration time} == truncate({current time})``."""
    t = Q({NODE_ADD: [("foo", queue_hint)]}, start=MOVE_HINT_START)
    pod = _p1()
    t.pop_and_fail(pod, "foo")
    t.clock.advance(INITIAL_BACKOFF)
    t.q.move_all_to_active_or_backoff(NODE_ADD)
    assert t.where(pod) == "backoff"


def test_TestPriorityQueue_MoveAllToActiveOrBackoffQueue() -> None:
    t = Q({NODE_ADD: [("fooPlugin", queue_hint)]})
    up, hp, med = unsched_pod(), high_pod(), med_pod()
    t.add(up)
    up_q = t.pop(up)
    t.add(hp)
    hp_q = t.pop(hp)
    assert set(t.q._in_flight) == {key(up), key(hp)}
    t.fail(up_q, "fooPlugin")
    t.fail(hp_q, "fooPlugin")
    assert t.q._in_flight == {}
    hpp1 = MakePod().name("hpp1").namespace("ns1").uid("hpp1ns1").priority(HIGH).obj()
    t.add(hpp1)
    hpp1_q = t.pop(hpp1)
    hpp1_q.unschedulable_count += 1
    t.fail(hpp1_q)  # no failure plugin: backoffQ
    hpp2 = MakePod().name("hpp2").namespace("ns1").uid("hpp2ns1").priority(HIGH).obj()
    t.add(hpp2)
    t.fail(t.pop(hpp2), "barPlugin")  # unschedulablePods
    # NodeAdd moves up and hp to the backoffQ (fooPlugin's hint)
    t.q.move_all_to_active_or_backoff(NODE_ADD)
    t.add(med)
    assert t.q.counts()["active"] == 1
    t.pop(med)
    assert t.q.counts()["backoff"] == 3  # hpp2 isn't moved
    # pop the pods out of the backoffQ (upstream pops them with popAllBackoffCompleted and drops them)
    t.clock.advance(MAX_BACKOFF)
    for p in (up, hp, hpp1):
        t.q.delete(p)
    t.add(up)
    up_q = t.pop(up)
    t.add(hp)
    hp_q = t.pop(hp)
    t.add(hpp1)
    hpp1_q = t.pop(hpp1)
    t.fail(up_q, "fooPlugin")
    t.fail(hp_q, "fooPlugin")
    t.fail(hpp1_q)
    t.add(med)
    for p in (up, hp, hpp2):
        assert t.where(p) == "unschedulable", p.metadata.name
    assert t.where(hpp1) == "backoff"
    assert t.q.counts()["active"] == 1
    # after podMaxBackoffDuration nobody is backing off any more
    t.clock.advance(MAX_BACKOFF)
    t.q.flush_backoff_completed()
    t.q.move_all_to_active_or_backoff(NODE_ADD)
    assert t.q.counts()["active"] == 4
    assert t.q.counts()["backoff"] == 0
    assert list(t.q.unschedulable) == [key(hpp2)]  # hpp2 isn't moved regardless of its backoff


PRE_CHECK_CASES = [
    ("nil PreEnqueueCheck", EVENT_UNSCHEDULABLE_TIMEOUT, None, {"p0", "p1", "p2", "p3", "p4"}),
    ("move Pods with priority greater than 2", EVENT_UNSCHEDULABLE_TIMEOUT, lambda p: p.spec.priority >= 2,
     {"p2", "p3", "p4"}),
    ("move Pods with even priority and greater than 2", EVENT_UNSCHEDULABLE_TIMEOUT,
     lambda p: p.spec.priority % 2 == 0 and p.spec.priority >= 2, {"p2", "p4"}),
    ("move Pods with even and negative priority", EVENT_UNSCHEDULABLE_TIMEOUT,
     lambda p: p.spec.priority % 2 == 0 and p.spec.priority < 0, set()),
    ("preCheck isn't called if the event is not interested by any plugins", PV_ADD, None, set()),
]


@pytest.mark.parametrize(("event", "pre_check", "want"), [pytest.param(*c[1:], id=c[0]) for c in PRE_CHECK_CASES])
def test_TestMoveAllToActiveOrBackoffQueue_PreEnqueueChecks(event: ClusterEvent, pre_check: Any, want: set[str]) -> None:
    t = Q(start=math.floor(START))
    pods = [MakePod().name(f"p{i}").priority(i).obj() for i in range(5)]
    for p in pods:
        t.pop_and_fail(p, "plugin")
    t.q.move_all_to_active_or_backoff(event, pre_check=pre_check)
    assert set(t.names("backoff")) == want


# ───────────────────────────── isPodWorthRequeuing ─────────────────────────────

_COUNT: list[int] = []


def _cq(pod: Any, old: Any, new: Any) -> QueueingHint:
    _COUNT.append(1)
    return QueueingHint.QUEUE


def _cs(pod: Any, old: Any, new: Any) -> QueueingHint:
    _COUNT.append(1)
    return QueueingHint.SKIP


def _ce(pod: Any, old: Any, new: Any) -> QueueingHint:
    _COUNT.append(1)
    raise RuntimeError("unexpected error")


NODE_LABEL = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL, "NodeUpdate")
NODE_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE, "NodeUpdate")
WORTH_CASES = [
    ("return Queue when no queueing hint function is registered for the event", {"fooPlugin1"}, set(), NODE_ADD,
     "node", "skip", 0, {EVENT_ASSIGNED_POD_ADD: [("fooPlugin1", _cq)]}),
    ("Treat the event as Queue when QueueHintFn returns error", {"fooPlugin1"}, set(), NODE_ADD, "node",
     "after_backoff", 1, {NODE_ADD: [("fooPlugin1", _ce)]}),
    ("return Queue when the event is wildcard", {"fooPlugin1"}, set(), EVENT_UNSCHEDULABLE_TIMEOUT, None,
     "after_backoff", 0, {}),
    ("return Queue when the event is wildcard and the wildcard targets the pod to be requeued right now",
     {"fooPlugin1"}, set(), EVENT_FORCE_ACTIVATE, MakePod().name("pod1").namespace("ns1").uid("1").obj(),
     "after_backoff", 0, {}),
    ("return Skip when the event is wildcard, but the wildcard targets a different pod", {"fooPlugin1"}, set(),
     EVENT_FORCE_ACTIVATE, MakePod().name("pod-different").namespace("ns2").uid("2").obj(), "skip", 0, {}),
    ("interprets Queue from the Pending plugin as queueImmediately", {"fooPlugin1", "fooPlugin3"}, {"fooPlugin2"},
     NODE_ADD, "node", "immediately", 2,
     {NODE_ADD: [("fooPlugin1", _cq), ("fooPlugin2", _cq), ("fooPlugin3", _cq), ("fooPlugin4", _ce)]}),
    ("interprets Queue from the Unschedulable plugin as queueAfterBackoff", {"fooPlugin1", "fooPlugin2"}, set(),
     NODE_ADD, "node", "after_backoff", 2, {NODE_ADD: [("fooPlugin1", _cs), ("fooPlugin2", _cq)]}),
    ("Queueing hint function that isn't from the plugin in UnschedulablePlugins/PendingPlugins is ignored",
     {"fooPlugin1", "fooPlugin2"}, set(), NODE_ADD, "node", "skip", 2,
     {NODE_ADD: [("fooPlugin1", _cs), ("fooPlugin2", _cs), ("fooPlugin3", _cq)]}),
    ("If event is specific Node update event, queueing hint function for NodeUpdate/UpdateNodeLabel is also executed",
     {"fooPlugin1", "fooPlugin2"}, set(), NODE_LABEL, "node", "after_backoff", 1,
     {NODE_LABEL: [("fooPlugin1", _cq), ("fooPlugin2", _cq)], NODE_UPDATE: [("fooPlugin1", _cq)],
      NODE_ADD: [("fooPlugin1", _cq)]}),
    ("If event with '*' Resource, queueing hint function for specified Resource is also executed", {"fooPlugin1"},
     set(), NODE_ADD, "node", "after_backoff", 1,
     {ClusterEvent(EventResource.WILDCARD, ActionType.ADD): [("fooPlugin1", _cq)]}),
    ("If event is a wildcard one, queueing hint function for all kinds of events is executed", {"fooPlugin1"}, set(),
     ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT), "node",
     "after_backoff", 1, {ClusterEvent(EventResource.WILDCARD, ActionType.ALL): [("fooPlugin1", _cq)]}),
]


@pytest.mark.parametrize(("unsched", "pending", "event", "new", "want", "want_count", "hint_map"),
                         [pytest.param(*c[1:], id=c[0]) for c in WORTH_CASES])
def test_Test_isPodWorthRequeuing(unsched: set[str], pending: set[str], event: ClusterEvent, new: Any, want: str,
                                  want_count: int, hint_map: HintMap) -> None:
    from kubesched.queue import scheduling_queue as sq

    _COUNT.clear()
    t = Q(hint_map)
    qpi = t.new_qpi(MakePod().name("pod1").namespace("ns1").uid("1").obj(), *unsched)
    qpi.pending_plugins = set(pending)
    node = MakeNode().name("n").obj()
    got = t.q._strategy(qpi, event, None, node if new == "node" else new)
    assert got == {"skip": sq.QUEUE_SKIP, "after_backoff": sq.QUEUE_AFTER_BACKOFF,
                   "immediately": sq.QUEUE_IMMEDIATELY}[want]
    assert len(_COUNT) == want_count


# ───────────────────────────── nominated pods ─────────────────────────────


def test_TestPriorityQueue_NominatedPodsForNode() -> None:
    t = Q()
    med, up, high = med_pod(), unsched_pod(), high_pod()
    t.add(med)
    t.add(up)
    t.add(high)
    t.pop(high)
    got = t.q.nominated_pods_for_node("node1")
    assert [p.pod for p in got] == [med, up]
    assert t.q.nominated_pods_for_node("node2") == []


@pytest.mark.parametrize(("pod", "want_len"), [
    pytest.param(med_pod(), 1, id="alive pod gets added into PodNominator"),
    pytest.param(high_pod(), 0, id="pod without .status.nominatedPodName specified shouldn't be added into PodNominator"),
])
def test_TestPriorityQueue_NominatedPodDeleted(pod: Pod, want_len: int) -> None:
    t = Q()
    t.q.add_nominated_pod(PodInfo(pod), pod.status.nominated_node_name)
    assert len(t.q.nominated_pods_for_node(pod.status.nominated_node_name)) == want_len


# Not ported: TestPriorityQueue_NominatedPodDeleted/"deleted pod shouldn't be added into PodNominator" —
# kubesched's nominator has no pod lister (the scheduler only nominates pods it holds).


def test_TestPriorityQueue_UpdateNominatedPodForNode() -> None:
    """Upstream also nominates a deleted and an already-scheduled pod and expects no change: those two
    steps need the nominator's pod lister, which kubesched does not model (see the note above)."""
    t = Q()
    med, up, high = med_pod(), unsched_pod(), high_pod()
    t.add(med)
    # nominations on nodes other than the pod's own status
    t.q.add_nominated_pod(PodInfo(up), "node5")
    t.q.add_nominated_pod(PodInfo(high), "node2")
    want = {"node1": ["mpp"], "node2": ["hpp"], "node5": ["up"]}
    assert t.nominated() == want
    t.pop(med)
    assert t.nominated() == want  # popping doesn't change the nominations
    t.q.add_nominated_pod(PodInfo(high), "node4")
    assert t.nominated() == {"node1": ["mpp"], "node4": ["hpp"], "node5": ["up"]}
    assert t.q.nominated_node(key(high)) == "node4"
    t.q.delete_nominated_pod(key(high))
    assert t.nominated() == {"node1": ["mpp"], "node5": ["up"]}


def test_UpdateNominatedPod_keeps_in_memory_nomination() -> None:
    """nominator.UpdateNominatedPod: an update that carries no nominatedNodeName (old nor new) keeps
    the nomination made in memory (e.g. by preemption, before the status patch arrives)."""
    t = Q()
    med = MakePod().name("mpp").namespace("ns2").priority(MEDIUM).obj()
    t.add(med)
    t.q.add_nominated_pod(t.q._entries[key(med)].pod_info, "node3")
    newer = _annotated(med, "x", "y")
    t.q.update(med, newer)
    assert t.nominated() == {"node3": ["mpp"]}
    # an update that sets a nominatedNodeName wins
    with_nnn = MakePod().name("mpp").namespace("ns2").priority(MEDIUM).nominated_node_name("node9").obj()
    t.q.update(newer, with_nnn)
    assert t.nominated() == {"node9": ["mpp"]}
    # and one that removes it removes the nomination
    t.q.update(with_nnn, newer)
    assert t.nominated() == {}


# ───────────────────────────── pending pods ─────────────────────────────


def test_TestPriorityQueue_PendingPods() -> None:
    t = Q()
    up, high, med = unsched_pod(), high_pod(), med_pod()
    t.add(up)
    up_q = t.pop(up)
    t.add(high)
    high_q = t.pop(high)
    t.add(med)
    t.fail(up_q, "plugin")
    t.fail(high_q, "plugin")
    assert {q.pod.metadata.name for q in t.q.pending()} == {"mpp", "up", "hpp"}
    c = t.q.counts()
    assert (c["active"], c["backoff"], c["unschedulable"]) == (1, 0, 2)
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert {q.pod.metadata.name for q in t.q.pending()} == {"mpp", "up", "hpp"}
    c = t.q.counts()
    assert (c["active"], c["backoff"], c["unschedulable"]) == (1, 2, 0)


def _pinfos(n: int, prefix: str, label: str, ts: float) -> list[QueuedPodInfo]:
    base = {"x": 0, "y": 1000, "z": 2000}[prefix]
    return [QueuedPodInfo(PodInfo(MakePod().name(f"{prefix}-{i}").namespace(f"ns{i}").label(label, "").uid(f"tp-{i}").obj()),
                          timestamp=ts, seq=base + i) for i in range(1, n + 1)]


class _Metric:
    """TestPendingPodsMetric's fixture: 50 queueable pods, 10 gated, 20 queueable with a 2 s delay."""

    def __init__(self) -> None:
        self.t = Q({TARGET_POD_UPDATE: [("preEnqueuePlugin", queue_hint)]},
                   pre_enqueue=[AllowlistPreEnqueue("preEnqueuePlugin", ("queueable",))])
        ts = self.t.clock.now()
        self.p = _pinfos(50, "x", "queueable", ts)
        gated = _pinfos(10, "y", "failme", ts)
        for g in gated:
            g.gated, g.gating_plugin, g.unschedulable_plugins = True, "preEnqueuePlugin", {"preEnqueuePlugin"}
        self.p += gated
        self.delayed = _pinfos(20, "z", "queueable", ts + 2)

    def active(self, ps: list[QueuedPodInfo]) -> None:
        for qpi in ps:
            self.t.add(qpi.pod)

    def unsched(self, ps: list[QueuedPodInfo]) -> None:
        for qpi in ps:
            if not qpi.gated:
                qpi.unschedulable_count += 1
            self.t.put_unschedulable(qpi)

    def backoff(self, ps: list[QueuedPodInfo]) -> None:
        for qpi in ps:
            self.t.put_backoff(qpi)

    def counts(self) -> tuple[int, int, int, int]:
        c = self.t.q.counts()
        return c["active"], c["backoff"], c["gated"], c["unschedulable"]


def test_TestPendingPodsMetric_add_pods_to_activeQ_and_unschedulablePods() -> None:
    m = _Metric()
    m.active(m.p[:30])
    m.unsched(m.p[30:])
    assert m.counts() == (30, 0, 10, 20)


def test_TestPendingPodsMetric_add_pods_to_all_kinds_of_queues() -> None:
    m = _Metric()
    m.active(m.p[:15])
    m.backoff(m.p[15:40])
    m.unsched(m.p[40:])
    assert m.counts() == (15, 25, 10, 10)


def test_TestPendingPodsMetric_add_pods_to_unschedulablePods_and_then_move_all_to_activeQ() -> None:
    m = _Metric()
    m.unsched(m.p)
    m.t.clock.advance(3)
    m.t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert m.counts() == (50, 0, 10, 0)


def test_TestPendingPodsMetric_make_some_pods_subject_to_backoff_add_pods_to_unschedulablePods_and_then_move_all_to_activeQ() -> None:
    m = _Metric()
    m.unsched(m.p[20:])
    m.t.clock.advance(3)
    m.unsched(m.delayed)
    m.t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert m.counts() == (30, 20, 10, 0)


def test_TestPendingPodsMetric_add_pods_to_activeQ_unschedulablePods_and_then_delete_some_Pods() -> None:
    m = _Metric()
    m.active(m.p[:30])
    m.unsched(m.p[30:])
    for qpi in m.p[:2] + m.p[30:33] + m.p[50:54]:
        m.t.q.delete(qpi.pod)
    assert m.counts() == (28, 0, 6, 17)


def test_TestPendingPodsMetric_add_pods_to_activeQ_unschedulablePods_and_then_update_some_Pods_as_queueable() -> None:
    m = _Metric()
    m.active(m.p[:30])
    m.unsched(m.p[30:])
    for qpi in m.p[50:55]:
        new = MakePod().name(qpi.pod.metadata.name).namespace(qpi.pod.metadata.namespace).uid(qpi.pod.metadata.uid) \
            .label("queueable", "").obj()
        m.t.q.update(qpi.pod, new)
    assert m.counts() == (35, 0, 5, 20)


def _gate_all(m: _Metric) -> None:
    m.t.fw.pre_enqueue_plugins[0].allowlists = ("",)


def _ungate_all(m: _Metric) -> None:
    m.t.fw.pre_enqueue_plugins[0].allowlists = ("queueable",)


def _update_queueable(m: _Metric, qpi: QueuedPodInfo) -> None:
    old = m.t.q._entries[qpi.key].pod
    m.t.q.update(old, MakePod().name(old.metadata.name).namespace(old.metadata.namespace).uid(old.metadata.uid)
                 .label("queueable", "").obj())


@pytest.mark.parametrize(("move_clock", "ungate", "want"), [
    pytest.param(True, False, (0, 0, 1, 0), id="Gated metric should be 1 when Ungated to Gated transition into moveToActiveQ"),
    pytest.param(False, False, (0, 0, 1, 0), id="Gated metric should be 1 when Ungated to Gated transition into moveToBackoffQ"),
    pytest.param(True, True, (1, 0, 0, 0), id="Gated metric should be 0 when Ungated -> Gated -> Ungated (ActiveQ) transition"),
    pytest.param(False, True, (0, 1, 0, 0), id="Gated metric should be 0 when Ungated -> Gated -> Ungated (BackoffQ) transition"),
])
def test_TestPendingPodsMetric_gated_transitions(move_clock: bool, ungate: bool, want: tuple[int, int, int, int]) -> None:
    m = _Metric()
    m.unsched(m.p[:1])
    if move_clock:
        m.t.clock.advance(3)
    _gate_all(m)
    _update_queueable(m, m.p[0])
    if ungate:
        _ungate_all(m)
        _update_queueable(m, m.p[0])
    assert m.counts() == want


# ───────────────────────────── timestamps, backoff, flushes ─────────────────────────────


def test_TestRecentlyTriedPodsGoBack() -> None:
    t = Q()
    pods = [MakePod().name(f"test-pod-{i}").namespace("ns1").uid(f"tp00{i}").priority(HIGH).node("node1")
            .nominated_node_name("node1").obj() for i in range(5)]
    for p in pods:
        t.add(p)
    t.clock.advance(1e-6)
    p1 = t.pop()
    t.fail(p1, "plugin")
    t.clock.advance(MAX_BACKOFF)
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    for i in range(5):
        p = t.pop()
        assert (i == 4) == (p is p1), f"a pod tried before is not the last pod popped: i={i} {p.key}"


def test_TestPodFailedSchedulingMultipleTimesDoesNotBlockNewerPod() -> None:
    t = Q()
    up = MakePod().name("test-pod-unscheduled").namespace("ns1").uid("tp001").priority(HIGH).nominated_node_name("node1").obj()
    t.add(up)
    qpi = t.pop(up)
    t.fail(qpi, "plugin")
    t.clock.advance(INITIAL_BACKOFF + 1)
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    qpi = t.pop(up)
    newer = MakePod().name("test-newer-pod").namespace("ns1").uid("tp002").priority(HIGH).nominated_node_name("node1").obj()
    t.add(newer)
    t.fail(qpi, "plugin")
    t.clock.advance(INITIAL_BACKOFF + 1)
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    t.pop(newer)  # the oldest tried pod


def test_TestHighPriorityBackoff() -> None:
    t = Q()
    mid = MakePod().name("test-midpod").namespace("ns1").uid("tp-mid").priority(MID).nominated_node_name("node1").obj()
    high = MakePod().name("test-highpod").namespace("ns1").uid("tp-high").priority(HIGH).nominated_node_name("node1").obj()
    t.add(mid)
    t.add(high)
    qpi = t.pop(high)
    t.fail(qpi, "fooPlugin")
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    t.pop(mid)  # the high priority pod is backing off


def test_TestHighPriorityFlushUnschedulablePodsLeftover() -> None:
    t = Q({NODE_ADD: [("fakePlugin", queue_hint)]})
    mid = MakePod().name("test-midpod").namespace("ns1").uid("tp-mid").priority(MID).nominated_node_name("node1").obj()
    high = MakePod().name("test-highpod").namespace("ns1").uid("tp-high").priority(HIGH).nominated_node_name("node1").obj()
    t.add(high)
    hq = t.pop(high)
    t.add(mid)
    mq = t.pop(mid)
    t.fail(hq, "fakePlugin")
    t.fail(mq, "fakePlugin")
    t.clock.advance(MAX_IN_UNSCHEDULABLE + 1)
    t.q.flush_unschedulable_leftover()
    t.pop(high)
    t.pop(mid)


def test_flushUnschedulablePodsLeftover_only_after_the_limit() -> None:
    """flushUnschedulablePodsLeftover moves a pod only once ``now - Timestamp > 5 min`` (strictly)."""
    t = Q({NODE_ADD: [("fakePlugin", queue_hint)]})
    pod = MakePod().name("p").obj()
    t.pop_and_fail(pod, "fakePlugin")
    t.clock.advance(MAX_IN_UNSCHEDULABLE)
    assert t.q.flush_unschedulable_leftover() == 0
    assert t.where(pod) == "unschedulable"
    t.clock.advance(1e-3)
    assert t.q.flush_unschedulable_leftover() == 1
    assert t.where(pod) == "active"


@pytest.mark.parametrize(("limit", "name"), [
    (MAX_IN_UNSCHEDULABLE, "New priority queue by the default value of podMaxInUnschedulablePodsDuration"),
    (30.0, "New priority queue by user-defined value of podMaxInUnschedulablePodsDuration"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_TestPriorityQueue_initPodMaxInUnschedulablePodsDuration(limit: float, name: str) -> None:
    t = Q(max_in_unschedulable=limit)
    now = t.clock.now()
    p1 = QueuedPodInfo(PodInfo(MakePod().name("test-pod-1").namespace("ns1").uid("tp-1").nominated_node_name("node1").obj()),
                       timestamp=now - 1, seq=1)
    p2 = QueuedPodInfo(PodInfo(MakePod().name("test-pod-2").namespace("ns2").uid("tp-2").nominated_node_name("node2").obj()),
                       timestamp=now - 2, seq=2)
    for qpi in (p1, p2):
        qpi.unschedulable_count += 1
        t.put_unschedulable(qpi)
    t.clock.advance(limit)
    t.q.flush_unschedulable_leftover()
    assert t.q.counts()["active"] == 2
    assert [t.pop(), t.pop()] == [p2, p1]


def test_TestPodTimestamp_add_two_pod_to_unschedulablePods_then_move_them_to_activeQ_and_sort_them_by_the_timestamp() -> None:
    t = Q()
    now = t.clock.now()
    p1 = QueuedPodInfo(PodInfo(MakePod().name("test-pod-1").namespace("ns1").uid("tp-1").obj()), timestamp=now, seq=1)
    p2 = QueuedPodInfo(PodInfo(MakePod().name("test-pod-2").namespace("ns2").uid("tp-2").obj()), timestamp=now + 1, seq=2)
    for qpi in (p2, p1):
        qpi.unschedulable_count += 1
        t.put_unschedulable(qpi)
    t.clock.advance(3)
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert [t.pop(), t.pop()] == [p1, p2]


def test_TestPodTimestamp_add_one_pod_to_BackoffQ_and_move_it_to_activeQ() -> None:
    t = Q()
    now = t.clock.now()
    p1 = QueuedPodInfo(PodInfo(MakePod().name("test-pod-1").namespace("ns1").uid("tp-1").obj()), timestamp=now, seq=1)
    p2 = QueuedPodInfo(PodInfo(MakePod().name("test-pod-2").namespace("ns2").uid("tp-2").obj()), timestamp=now + 1, seq=2)
    t.q._entries[p2.key] = p2
    t.q._push_active(p2, "UnschedulablePodAdd")
    t.put_backoff(p1)
    t.clock.advance(3)
    t.q.flush_backoff_completed()
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert [t.pop(), t.pop()] == [p1, p2]


def test_TestPerPodSchedulingMetrics_pod_is_created_and_scheduled_after_2_attempts() -> None:
    t = Q()
    start = t.clock.now()
    pod = MakePod().name("test-pod").namespace("test-ns").uid("test-uid").obj()
    t.add(pod)
    qpi = t.pop(pod)
    t.fail(qpi, "plugin")
    t.clock.set(start + MAX_IN_UNSCHEDULABLE + 1e-9 + 1e-3)
    t.q.flush_unschedulable_leftover()
    qpi = t.pop(pod)
    assert qpi.attempts == 2
    assert qpi.initial_attempt_timestamp == start


def test_TestPerPodSchedulingMetrics_A_gated_pod_is_created_and_scheduled_after_lifting_gate() -> None:
    t = Q(pre_enqueue=[AllowlistPreEnqueue("preEnqueuePlugin", ("foo",))])
    start = t.clock.now()
    pod = MakePod().name("test-pod").namespace("test-ns").uid("test-uid").obj()
    t.add(pod)
    assert t.where(pod) == "gated"
    t.clock.advance(60)
    t.q.update(pod, MakePod().name("test-pod").namespace("test-ns").uid("test-uid").label("foo", "").obj())
    qpi = t.pop()
    assert qpi.attempts == 1
    assert qpi.initial_attempt_timestamp == start + 60


@pytest.mark.parametrize("step", range(7), ids=lambda i: f"step {i} popFromBackoffQEnabled(true)")
def test_TestBackOffFlow(step: int) -> None:
    want = [1, 2, 4, 8, 10, 10, 10]
    t = Q()
    pod = MakePod().name("test-pod").namespace("test-ns").uid("test-uid").obj()
    t.add(pod)
    for i in range(step + 1):
        timestamp = t.clock.now()
        qpi = t.pop(pod)
        assert qpi.attempts == i + 1
        qpi.unschedulable_plugins.add("unsched-plugin")
        t.q.add_unschedulable_if_not_present(qpi)
        t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
        assert t.where(pod) == "backoff"
        deadline = t.q.backoff_time(qpi)
        backoff = math.floor(deadline - timestamp) + 1.0  # rounded up to the ordering window
        assert backoff == want[i]
        t.clock.advance(1.0)
        t.q.flush_backoff_completed()
        assert t.where(pod) == "backoff"  # still there after an early flush
        t.clock.advance(backoff)
        t.q.flush_backoff_completed()
        assert t.where(pod) == "active"


def _ordering_pods(t: Q, shift: float) -> None:
    now = t.clock.now() + shift
    specs = [("pod0", 1, now), ("pod1", 1, now - 1), ("pod2", 2, now - 2 + 0.001), ("pod3", 1, now - 2),
             ("pod4", 2, now - 2), ("pod5", 1, now - 3)]
    for i, (name, prio, ts) in enumerate(specs):
        qpi = QueuedPodInfo(PodInfo(MakePod().name(name).priority(prio).obj()), timestamp=ts, seq=100 + i,
                            unschedulable_plugins={"plugin"})
        qpi.unschedulable_count = 1
        t.put_backoff(qpi)


def test_TestBackoffQueueOrdering() -> None:
    """backoff_queue_test.go, PopFromBackoffQ enabled: the clock is aligned with the ordering window;
    pod0 (window now+1) and pod1 (window == now) are still backing off, the others completed; pods
    in the same window are ordered by QueueSort (priority, then timestamp)."""
    t = Q(start=math.floor(START))
    _ordering_pods(t, 0.0)
    t.q.flush_backoff_completed()
    assert t.names("active") == ["pod2", "pod3", "pod4", "pod5"]
    assert t.names("backoff") == ["pod0", "pod1"]
    # The order inside podBackoffQ is observable through Pop when activeQ is empty: shift the same
    # pods 3 s into the future so that none of them completed, and pop them from the backoffQ.
    t = Q(start=math.floor(START))
    _ordering_pods(t, 3.0)
    got = [t.pop().pod.metadata.name for _ in range(6)]
    assert got == ["pod5", "pod4", "pod2", "pod3", "pod1", "pod0"]


@pytest.mark.parametrize(("pods", "want"), [
    pytest.param([], [], id="Both queues empty, no pods moved to activeQ"),
    pytest.param(["pod0", "pod1"], ["pod0"], id="Pods only in backoffQ, some pods moved to activeQ"),
    pytest.param(["pod2", "pod3"], ["pod2"], id="Pods only in errorBackoffQ, some pods moved to activeQ"),
    pytest.param(["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"], id="Pods in both queues, some pods moved to activeQ"),
    pytest.param(["pod0", "pod2"], ["pod0", "pod2"], id="Pods in both queues, all pods moved to activeQ"),
    pytest.param(["pod1", "pod3"], [], id="Pods in both queues, no pods moved to activeQ"),
])
def test_TestBackoffQueue_popEachBackoffCompleted(pods: list[str], want: list[str]) -> None:
    t = Q()
    now = t.clock.now()
    spec = {"pod0": (now - 2, True), "pod1": (now + 1, True), "pod2": (now - 2, False), "pod3": (now + 1, False)}
    for i, name in enumerate(pods):
        ts, rejected = spec[name]
        qpi = QueuedPodInfo(PodInfo(MakePod().name(name).obj()), timestamp=ts, seq=i,
                            unschedulable_plugins={"plugin"} if rejected else set())
        if rejected:
            qpi.unschedulable_count = 1
        else:
            qpi.consecutive_errors_count = 1
        t.put_backoff(qpi)
    t.q.flush_backoff_completed()
    assert t.names("active") == want
    assert t.q.counts()["backoff"] == len(pods) - len(want)


def test_TestBackoffQueue_calculateBackoffDuration() -> None:
    """calculateBackoffDuration: 0 without failures, initial * 2^(n-1) capped at max, no overflow."""
    t = Q(initial_backoff=1e-9, max_backoff=32e-9)
    qpi = t.new_qpi(MakePod().name("p").obj())
    assert t.q.backoff_duration(qpi) == 0
    qpi.unschedulable_count = 16
    assert t.q.backoff_duration(qpi) == pytest.approx(32e-9)
    big = Q(initial_backoff=1e-9, max_backoff=float(2**63 - 1) * 1e-9)
    qpi.unschedulable_count = 64
    assert big.q.backoff_duration(qpi) == pytest.approx(float(2**63 - 1) * 1e-9)


def test_backoff_counts_errors_and_rejections_separately() -> None:
    """AddUnschedulableIfNotPresent: an error bumps ConsecutiveErrorsCount (its own backoff), a
    rejection bumps UnschedulableCount and resets ConsecutiveErrorsCount."""
    t = Q()
    pod = MakePod().name("p").obj()
    t.add(pod)
    for _ in range(3):
        qpi = t.pop(pod)
        t.fail(qpi, "plugin")
        t.q.activate([key(pod)])
    qpi = t.pop(pod)
    t.fail(qpi)
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == (3, 1)
    assert t.q.backoff_duration(qpi) == 1.0  # by the error count, not the 3 rejections
    t.clock.advance(2)
    qpi = t.pop(pod)
    t.fail(qpi, "plugin")
    assert (qpi.unschedulable_count, qpi.consecutive_errors_count) == (4, 0)
    assert t.q.backoff_duration(qpi) == 8.0


def test_TestPriorityQueue_NewWithOptions() -> None:
    t = Q(initial_backoff=2, max_backoff=20)
    assert (t.q.initial_backoff, t.q.max_backoff) == (2, 20)


# ───────────────────────────── TestIncomingPodsMetrics ─────────────────────────────

# The Add row's label: "UnschedulablePodAdd" up to v1.34 (resource unschedulablePod), "UnscheduledPodAdd"
# since the resource became fwk.UnscheduledPod (v1.37.2 scheduling_queue_test.go:4952).
_ADD_LABELS = ("UnschedulablePodAdd", "UnscheduledPodAdd")


def _incoming_pods() -> list[Pod]:
    return [MakePod().name(f"test-pod-{i}").namespace(f"ns{i}").uid(f"tp-{i}").obj() for i in range(1, 4)]


def _op_add(t: Q, pod: Pod) -> None:
    t.add(pod)


def _op_pop_and_requeue_as_unschedulable(t: Q, pod: Pod) -> None:
    t.add(pod)
    t.fail(t.pop(pod), "unschedulable_plugin")


def _op_pop_and_requeue_as_backoff(t: Q, pod: Pod) -> None:
    t.add(pod)
    qpi = t.pop(pod)
    qpi.unschedulable_count += 1  # no unschedulable plugin: always the backoff queue
    t.q.add_unschedulable_if_not_present(qpi)


def _op_move_all(t: Q, pod: Pod) -> None:
    t.q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)


def _op_clock_forward(t: Q, pod: Pod) -> None:
    t.clock.advance(3)


def _op_flush_backoff(t: Q, pod: Pod) -> None:
    t.clock.advance(3)
    t.q.flush_backoff_completed()


@pytest.mark.parametrize(("ops", "expected"), [
    pytest.param([_op_add], {("active", "ADD"): 3}, id="add pods to activeQ"),
    pytest.param([_op_pop_and_requeue_as_unschedulable],
                 {("active", "ADD"): 3, ("unschedulable", "ScheduleAttemptFailure"): 3},
                 id="add unscheduled pods then make them unschedulable"),
    pytest.param([_op_pop_and_requeue_as_unschedulable, _op_move_all],
                 {("active", "ADD"): 3, ("unschedulable", "ScheduleAttemptFailure"): 3,
                  ("backoff", "UnschedulableTimeout"): 3},
                 id="add unscheduled pods, make them unschedulable, and move them to backoffQ"),
    pytest.param([_op_pop_and_requeue_as_unschedulable, _op_clock_forward, _op_move_all],
                 {("active", "ADD"): 3, ("unschedulable", "ScheduleAttemptFailure"): 3,
                  ("active", "UnschedulableTimeout"): 3},
                 id="add unscheduled pods, make them unschedulable, and move them to activeQ"),
    pytest.param([_op_pop_and_requeue_as_backoff, _op_clock_forward, _op_flush_backoff],
                 {("active", "ADD"): 3, ("active", "BackoffComplete"): 3, ("backoff", "ScheduleAttemptFailure"): 3},
                 id="make some pods subject to backoff and add them to backoffQ, then flush backoffQ"),
])
def test_TestIncomingPodsMetrics(ops: list[Callable[[Q, Pod], None]], expected: dict[tuple[str, str], int]) -> None:
    """``scheduler_queue_incoming_pods_total{queue, event}`` (kubesched: ``SchedulingQueue.incoming``).
    As upstream, each operation runs for each of the 3 pods before the next operation."""
    t = Q()
    pods = _incoming_pods()
    for op in ops:
        for pod in pods:
            op(t, pod)
    got = dict(t.q.incoming)
    add_labels = {event for (queue, event) in got if queue == "active" and event in _ADD_LABELS}
    assert len(add_labels) == 1, got
    add = add_labels.pop()
    assert got == {(queue, add if event == "ADD" else event): n for (queue, event), n in expected.items()}


# ───────────────────────────── not modelled ─────────────────────────────
#
# Not ported (no kubesched counterpart to test):
# - TestSchedulingQueue_Close / tryPop: kubesched's pop() never blocks (the engine is synchronous; None
#   means nothing is ready), so there is no goroutine to wake or close.
# - Test_InFlightPods/"Pop is made twice for the same Pod": simulates a queue bug by inserting into
#   activeQ's internal heap while the pod is in flight; kubesched keeps one entry per pod and cannot
#   hold a pod in activeQ and in flight at once.
# - TestPendingPodsMetric's plugin_execution_duration cases: Prometheus histogram internals
#   (pending_pods is counts(), incoming_pods_total is the test above).


# ───────────────────────────── leftover flush bookkeeping (1.36 / 1.37) ─────────────────────────────

def test_TestFlushUnschedulableEntitiesLeftoverSetsFlag() -> None:
    t = Q()
    pod = MakePod().name("test-pod").namespace("ns1").uid("tp-1").priority(MID).nominated_node_name("node1").obj()
    t.add(pod)
    qpi = t.pop(pod)
    assert not qpi.was_flushed_from_unschedulable
    t.fail(qpi, "fakePlugin")
    t.clock.advance(MAX_IN_UNSCHEDULABLE + 1)
    t.q.flush_unschedulable_leftover()
    qpi = t.pop(pod)
    assert qpi.was_flushed_from_unschedulable
    t.fail(qpi, "fakePlugin")
    assert t.where(pod) == "unschedulable"
    assert not t.q._entries[key(pod)].was_flushed_from_unschedulable


def test_flush_flag_not_set_before_136() -> None:
    t = Q(features=FeatureGate(emulated_version=(1, 35)))
    pod = MakePod().name("p").namespace("ns1").uid("p").obj()
    t.add(pod)
    t.fail(t.pop(pod), "fakePlugin")
    t.clock.advance(MAX_IN_UNSCHEDULABLE + 1)
    t.q.flush_unschedulable_leftover()
    assert not t.pop(pod).was_flushed_from_unschedulable


FLUSH_GATED_CASES = [
    # name, gated_before_flush, gated_after_flush, backing_off, want_flag, want_q
    ("flag is set when pod is not gated", False, False, False, True, "active"),
    ("flag is set when pod is no longer gated", True, False, False, True, "active"),
    ("flag is unset when pod is newly gated", False, True, False, False, "gated"),
    ("flag is unset when pod is still gated", True, True, False, False, "gated"),
    ("flag is set when pod is not gated and backoff is not complete", False, False, True, True, "backoff"),
    ("flag is set when pod is no longer gated and backoff is not complete", True, False, True, True, "backoff"),
    ("flag is unset when pod is newly gated and backoff is not complete", False, True, True, False, "gated"),
    ("flag is unset when pod is still gated and backoff is not complete", True, True, True, False, "gated"),
]


@pytest.mark.parametrize(("gated_before", "gated_after", "backing_off", "want_flag", "want_q"),
                         [pytest.param(*c[1:], id=c[0]) for c in FLUSH_GATED_CASES])
def test_TestFlushUnschedulablePodsLeftoverSetsFlag_GatedPod(gated_before: bool, gated_after: bool, backing_off: bool,
                                                            want_flag: bool, want_q: str) -> None:
    """1.37: a flushed pod that is gated again by PreEnqueue loses its flush mark (upstream's
    "unschedulableQ" holds kubesched's ``gated`` pods too)."""
    backoff = MAX_IN_UNSCHEDULABLE + 60 if backing_off else 0.0
    t = Q(pre_enqueue=[AllowlistPreEnqueue("preEnqueuePlugin", ("allow",))], initial_backoff=backoff,
          max_backoff=backoff)
    pod = MakePod().name("pod1").namespace("ns1").uid("1").label("allow", "").obj()
    t.add(pod)
    qpi = t.pop(pod)
    if gated_before:
        qpi.gated, qpi.gating_plugin = True, "preEnqueuePlugin"
    if gated_after:
        qpi.pod.metadata.labels = {}
    t.fail(qpi, "foo")
    t.clock.advance(MAX_IN_UNSCHEDULABLE + 1)
    t.q.flush_unschedulable_leftover()
    assert t.where(pod) == want_q
    assert t.q._entries[key(pod)].was_flushed_from_unschedulable is want_flag


@pytest.mark.parametrize(("version", "flushes"), [((1, 37), [True, False, True]), ((1, 36), [True, True, True])])
def test_TestGatedPodFlushFrequency(version: tuple[int, int], flushes: list[bool]) -> None:
    """1.37: a gated pod is flushed once per podMaxInUnschedulablePodsDuration measured from its
    last flush, not at every run after the first (1.36 measured from its timestamp only)."""
    gate_all = AllowlistPreEnqueue("preEnqueuePlugin", ())
    t = Q(pre_enqueue=[gate_all], features=FeatureGate(emulated_version=version))
    pod = MakePod().name("pod1").namespace("ns1").uid("1").obj()
    qpi = t.new_qpi(pod, "foo")
    t.put_unschedulable(qpi)
    got = []
    for step in (MAX_IN_UNSCHEDULABLE + 1, 4 * 60, 61):  # T = 5:01, 9:01, 10:02
        t.clock.advance(step)
        before = t.q.incoming.get(("unschedulable", "UnschedulableTimeout"), 0)
        t.q.flush_unschedulable_leftover()
        got.append(t.q.incoming.get(("unschedulable", "UnschedulableTimeout"), 0) > before)
        assert t.where(pod) == "gated"
    assert got == flushes


def test_TestIncomingEntitiesMetrics_pod_counted_once_per_queue_change() -> None:
    """1.37 ``recordIncomingEntitiesMetrics``: a new pod always counts; a requeue counts in
    ``queue_incoming_entities_total`` only when the pod lands in another queue than its queueing
    strategy named (e.g. queueAfterBackoff with the backoff already over → activeQ), while
    ``queue_incoming_pods_total`` counts every arrival."""
    t = Q({NODE_ADD: [("fooPlugin", queue_hint)]})
    pod = MakePod().name("p").namespace("ns").uid("p").obj()
    t.add(pod)
    assert t.q.incoming_entities == {("active", "UnscheduledPodAdd"): 1}
    t.fail(t.pop(pod), "fooPlugin")
    # no event while in flight: strategy queueSkip → unschedulable (same queue: not an entity count)
    assert t.q.incoming[("unschedulable", "ScheduleAttemptFailure")] == 1
    assert ("unschedulable", "ScheduleAttemptFailure") not in t.q.incoming_entities
    t.q.move_all_to_active_or_backoff(NODE_ADD, None, MakeNode().name("n").obj())  # backing off → backoffQ
    assert t.q.incoming[("backoff", "NodeAdd")] == 1 and ("backoff", "NodeAdd") not in t.q.incoming_entities
    t.fail(t.pop(pod), "fooPlugin")  # popped from backoffQ (activeQ empty)
    assert t.q.incoming[("active", "PopFromBackoffQ")] == 1
    t.clock.advance(MAX_BACKOFF + 1)
    t.q.move_all_to_active_or_backoff(NODE_ADD, None, MakeNode().name("n").obj())  # backoff over → activeQ
    assert t.q.incoming[("active", "NodeAdd")] == 1 and t.q.incoming_entities[("active", "NodeAdd")] == 1


def test_implicit_node_taint_registration_before_137() -> None:
    """1.34–1.36 ``buildQueueingHintMap``: a plugin registering Node/Add without
    Node/UpdateNodeTaint also gets Node/UpdateNodeTaint (default hint: Queue); 1.37 dropped it."""
    taint_update = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
    for version, want in (((1, 34), "backoff"), ((1, 36), "backoff"), ((1, 37), "unschedulable")):
        t = Q({NODE_ADD: [("NodeName", skip_hint)]}, features=FeatureGate(emulated_version=version))
        pod = MakePod().name("p").namespace("ns").uid("p").obj()
        t.add(pod)
        t.fail(t.pop(pod), "NodeName")
        t.q.move_all_to_active_or_backoff(taint_update, MakeNode().name("n").obj(), MakeNode().name("n").obj())
        assert t.where(pod) == want, version


def test_pod_scheduled_after_flush_counted_when_bound() -> None:
    t = Q()
    pod = MakePod().name("p").namespace("ns").uid("p").obj()
    t.add(pod)
    t.fail(t.pop(pod), "fakePlugin")
    t.clock.advance(MAX_IN_UNSCHEDULABLE + 1)
    t.q.flush_unschedulable_leftover()
    qpi = t.pop(pod)
    t.q.done(qpi.key, bound=True)
    assert t.q.scheduled_after_flush == 1


class _CountedPreEnqueue(AllowlistPreEnqueue):
    """An allow-list PreEnqueue plugin that records each call's plugin name in ``calls``."""

    def __init__(self, name: str, allowlists: tuple[str, ...], calls: list[str]) -> None:
        super().__init__(name, allowlists)
        self.calls = calls

    def pre_enqueue(self, pod: Pod) -> Status | None:
        self.calls.append(self.name)
        return super().pre_enqueue(pod)


def _labelled(*labels: str) -> Pod:
    b = MakePod().name("pod1").namespace("ns1").uid("1")
    for label in labels:
        b = b.label(label, "")
    return b.obj()


@pytest.mark.parametrize(("labels", "want"), [
    pytest.param(("b",), "A", id="the first plugin in profile order gates a new pod"),
    pytest.param((), "B", id="the plugin already gating runs first and, still gating, stays the gating plugin"),
    pytest.param(("a",), "B", id="the gating plugin still gates: no other plugin runs"),
    pytest.param(("b", "a"), None, id="all plugins pass: ungated"),
])
def test_runPreEnqueuePluginsForPod_runs_the_gating_plugin_first(labels: tuple[str, ...], want: str | None) -> None:
    """scheduling_queue.go runPreEnqueuePluginsForPod (L731-763): a pod gated by B (A passed)
    runs B first on its next PreEnqueue; while B still gates, B stays its gating plugin, and only
    B's events can ungate it, even when A, earlier in the profile, would gate it too."""
    calls: list[str] = []
    t = Q(pre_enqueue=[_CountedPreEnqueue("A", ("a",), calls), _CountedPreEnqueue("B", ("b",), calls)])
    if labels == ("b",):  # a new pod: profile order, the first that rejects gates
        t.add(_labelled("b"))
        qpi = t.q._entries["ns1/pod1"]
        assert (qpi.gated, qpi.gating_plugin, calls) == (True, "A", ["A"])
        return
    old = _labelled("a")
    t.add(old)  # A passes, B gates
    qpi = t.q._entries["ns1/pod1"]
    assert (qpi.gating_plugin, calls) == ("B", ["A", "B"])
    calls.clear()
    t.q.update(old, _labelled(*labels))
    qpi = t.q._entries["ns1/pod1"]
    if want is None:
        assert not qpi.gated and qpi.gating_plugin == "" and calls == ["B", "A"]
        assert t.q.where("ns1/pod1") == "active"
    else:
        assert (qpi.gated, qpi.gating_plugin, calls) == (True, want, ["B"])
        assert qpi.unschedulable_plugins == {"B"} and t.q.where("ns1/pod1") == "gated"
