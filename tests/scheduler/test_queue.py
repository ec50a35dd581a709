"""Scheduling queue behaviour (upstream backend/queue/scheduling_queue.go)."""

from __future__ import annotations

import pytest

from kubesched.framework.clock import ManualClock
from kubesched.framework.events import (
    EVENT_NODE_ADD,
    EVENT_UNSCHEDULABLE_TIMEOUT,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import Code, Status
from kubesched.queue import SchedulingQueue
from kubesched.testing.wrappers import MakePod


class Sort:
    name = "Sort"

    def sort_key(self, q):  # noqa: ANN001, ANN201
        return (-q.pod_info.priority, q.timestamp)


class Gate:
    name = "Gate"

    def pre_enqueue(self, pod):  # noqa: ANN001, ANN201
        if pod.spec.scheduling_gates:
            return Status.of(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "gated")
        return None


class NodeOnly:
    """Registered only for Node add, with a hint that queues pods labelled wake=yes."""

    name = "NodeOnly"

    def events_to_register(self):  # noqa: ANN201
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD),
                                     lambda pod, old, new: QueueingHint.QUEUE if pod.metadata.labels.get("wake") == "yes"
                                     else QueueingHint.SKIP)]

    def filter(self, state, pod, node_info):  # noqa: ANN001, ANN201 - a Filter plugin (registers events)
        return None


class FakeFramework:
    def __init__(self) -> None:
        self.plugins = {"Sort": Sort(), "Gate": Gate(), "NodeOnly": NodeOnly()}
        self.queue_sort_key = Sort().sort_key
        self.pre_enqueue_plugins = [self.plugins["Gate"]]


@pytest.fixture
def q():  # noqa: ANN201
    clock = ManualClock(100.0)
    queue = SchedulingQueue({"default-scheduler": FakeFramework()}, clock.now)
    queue.clock = clock  # type: ignore[attr-defined]
    return queue


def _fail(q, key: str, plugins: set[str]) -> None:  # noqa: ANN001
    qpi = q._entries[key]
    qpi.unschedulable_plugins = set(plugins)
    q.add_unschedulable_if_not_present(qpi)


def test_backoff_sequence(q) -> None:  # noqa: ANN001
    qpi = q.add(MakePod().name("p").obj())
    got = []
    for count in range(1, 8):
        qpi.unschedulable_count = count
        got.append(q.backoff_duration(qpi))
    assert got == [1, 2, 4, 8, 10, 10, 10]


def test_priority_then_arrival(q) -> None:  # noqa: ANN001
    q.add(MakePod().name("a").priority(1).obj())
    q.add(MakePod().name("b").priority(5).obj())
    q.add(MakePod().name("c").priority(5).obj())
    assert [q.pop().key for _ in range(3)] == ["default/b", "default/c", "default/a"]


def test_error_goes_to_backoff_rejection_to_unschedulable(q) -> None:  # noqa: ANN001
    q.add(MakePod().name("err").obj())
    q.add(MakePod().name("rej").obj())
    q.pop(), q.pop()
    _fail(q, "default/err", set())
    _fail(q, "default/rej", {"NodeOnly"})
    assert q.where("default/err") == "backoff"
    assert q.where("default/rej") == "unschedulable"


def test_pop_from_backoff_when_active_is_empty(q) -> None:  # noqa: ANN001
    q.add(MakePod().name("rej").obj())
    q.pop()
    _fail(q, "default/rej", {"NodeOnly"})
    q.move_all_to_active_or_backoff(EVENT_UNSCHEDULABLE_TIMEOUT)
    assert q.where("default/rej") == "backoff"
    assert q.is_backing_off(q._entries["default/rej"])
    assert q.pop().key == "default/rej"  # SchedulerPopFromBackoffQ


def test_error_backoff_is_not_popped_early(q) -> None:  # noqa: ANN001
    """Upstream ``popBackoff`` takes only from podBackoffQ; pods that failed with an error wait."""
    q.add(MakePod().name("err").obj())
    q.pop()
    _fail(q, "default/err", set())
    assert q.is_backing_off(q._entries["default/err"])
    assert q.pop() is None
    q.clock.advance(2.0)
    assert q.pop().key == "default/err"


def test_hints_decide_who_moves(q) -> None:  # noqa: ANN001
    q.add(MakePod().name("sleepy").obj())
    q.add(MakePod().name("woken").label("wake", "yes").obj())
    q.pop(), q.pop()
    _fail(q, "default/sleepy", {"NodeOnly"})
    _fail(q, "default/woken", {"NodeOnly"})
    # an assigned-pod delete is not registered by NodeOnly: nobody moves
    q.move_all_to_active_or_backoff(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))
    assert q.where("default/woken") == "unschedulable"
    q.move_all_to_active_or_backoff(EVENT_NODE_ADD)
    assert q.where("default/sleepy") == "unschedulable"
    assert q.where("default/woken") == "backoff"  # still backing off (1 s)
    q.clock.advance(1.0)
    assert q.pop().key == "default/woken"


def test_gated_pod_waits_until_gates_removed(q) -> None:  # noqa: ANN001
    gated = MakePod().name("g").scheduling_gates("example.com/wait").obj()
    q.add(gated)
    assert q.where("default/g") == "gated"
    assert q.pop() is None
    q.update(gated, MakePod().name("g").obj())
    assert q.where("default/g") == "active"


def test_unschedulable_leftover_flush(q) -> None:  # noqa: ANN001
    q.add(MakePod().name("p").obj())
    q.pop()
    _fail(q, "default/p", {"NodeOnly"})
    q.clock.advance(299)
    assert q.flush_unschedulable_leftover() == 0
    q.clock.advance(2)
    assert q.flush_unschedulable_leftover() == 1
    assert q.where("default/p") == "active"
