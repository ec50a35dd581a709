"""EventHandlers (informers → engine) on a real in-memory Scheduler: tombstones, recreated pods,
assumed pods. No HTTP: the handlers are pure functions of the engine state."""

from __future__ import annotations

import msgspec

from kubesched.api.objects import Node, Pod
from kubesched.framework.node_info import PodInfo
from kubesched.kube.adapter import EventHandlers
from kubesched.kube.reflector import DeletedFinalStateUnknown
from kubesched.scheduler import Scheduler


def node(name: str) -> Node:
    return msgspec.convert({"metadata": {"name": name, "resourceVersion": "1"},
                            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}, Node)


def pod(name: str, rv: str, node_name: str = "", uid: str = "u1", **meta: object) -> Pod:
    return msgspec.convert({"metadata": {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv, **meta},
                            "spec": {"nodeName": node_name, "containers": [
                                {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}, Pod)


def setup() -> tuple[Scheduler, EventHandlers, list[int]]:
    sched = Scheduler()
    wakes: list[int] = []
    h = EventHandlers(sched, on_change=lambda: wakes.append(1))
    h.node_handler().on_add(node("n1"), True)
    return sched, h, wakes


def test_tombstone_with_stale_unassigned_state_removes_the_bound_pod_from_the_cache() -> None:
    sched, h, _ = setup()
    ph = h.pod_handler()
    ph.on_add(pod("a", "2", "n1"), False)  # bound pod in the cache
    assert "ns/a" in sched.cache.pod_states
    # relist tombstone carrying an older, unassigned state (the bind and the delete were missed)
    ph.on_delete(DeletedFinalStateUnknown("ns/a", pod("a", "1")))
    assert "ns/a" not in sched.cache.pod_states


def test_tombstone_of_a_pending_pod_leaves_the_queue() -> None:
    sched, h, _ = setup()
    ph = h.pod_handler()
    ph.on_add(pod("p", "2"), False)
    assert sched.queue.where("ns/p") == "active"
    ph.on_delete(DeletedFinalStateUnknown("ns/p", pod("p", "2")))
    assert sched.queue.where("ns/p") is None and "ns/p" not in sched.queue


def test_recreated_pod_under_the_same_name_is_delete_plus_add() -> None:
    sched, h, _ = setup()
    ph = h.pod_handler()
    old = pod("a", "2", "n1", uid="u1")
    ph.on_add(old, False)
    new = pod("a", "9", uid="u2")  # deleted and recreated (pending) while the watch was down
    ph.on_update(old, new)
    assert "ns/a" not in sched.cache.pod_states
    assert sched.queue.where("ns/a") == "active"


def test_assumed_pod_after_binding_ignores_updates_and_is_forgotten_when_terminating() -> None:
    sched, h, wakes = setup()
    ph = h.pod_handler()
    p = pod("a", "2")
    ph.on_add(p, False)
    qpi = sched.queue.pop()
    assumed = msgspec.structs.replace(p, spec=msgspec.structs.replace(p.spec, node_name="n1"))
    sched.cache.assume_pod(PodInfo(assumed), "n1")
    sched.queue.done(qpi.key)  # bound: out of the queue, waiting for the watch to confirm
    n = len(wakes)
    ph.on_update(p, pod("a", "3", labels={"x": "y"}))
    assert sched.queue.where("ns/a") is None and "ns/a" not in sched.queue  # not queued again
    assert len(wakes) == n
    ph.on_update(pod("a", "3"), pod("a", "4", deletionTimestamp="2026-01-01T00:00:00Z"))
    assert not sched.cache.is_assumed("ns/a") and "ns/a" not in sched.cache.pod_states
    # the confirmed bind of another pod is kept
    ph.on_add(pod("b", "5", "n1", uid="u9"), False)
    assert "ns/b" in sched.cache.pod_states
