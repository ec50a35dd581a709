"""Scheduler event handlers (upstream ``eventhandlers.go``) across versions: node updates split per
property, assumed-pod deletion (1.35+ ``handleAssumedPodDeletion`` / 1.37 ``RemoveAssumedPod``),
nominated pods leaving (``getLEPriorityPreCheck``), TargetPod self-updates (1.37)."""

from __future__ import annotations

import msgspec

from kubesched.api.objects import Node, Pod
from kubesched.features import FeatureGate
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.node_info import PodInfo
from kubesched.scheduler import Scheduler
from kubesched.testing.wrappers import MakeNode, MakePod

V134 = FeatureGate(emulated_version=(1, 34))
V137 = FeatureGate(emulated_version=(1, 37))


def sched_with(features: FeatureGate) -> Scheduler:
    s = Scheduler(features=features)
    s.on_node_add(MakeNode().name("n1").capacity(cpu="4", memory="8Gi", pods="10").obj())
    return s


def park(s: Scheduler, pod: Pod, plugin: str) -> None:
    """Add a pending pod and bring it to unschedulablePods as rejected by ``plugin``."""
    s.queue.add(pod)
    qpi = s.queue.pop()
    assert qpi is not None and qpi.pod is pod
    qpi.unschedulable_plugins = {plugin}
    s.queue.add_unschedulable_if_not_present(qpi)
    assert s.queue.where(qpi.key) == "unschedulable"


def record(s: Scheduler, name: str, *events: ClusterEvent) -> list[tuple[ClusterEvent, object, object]]:
    """Register a fake rejecting plugin ``name`` for ``events``; returns the hint calls seen."""
    calls: list[tuple[ClusterEvent, object, object]] = []

    def hint_for(ev: ClusterEvent):  # noqa: ANN202
        def hint(pod: Pod, old: object, new: object) -> QueueingHint:
            calls.append((ev, old, new))
            return QueueingHint.SKIP
        return hint

    s.queue.register_events(name, [ClusterEventWithHint(ev, hint_for(ev)) for ev in events])
    return calls


def test_node_update_is_one_move_per_changed_property() -> None:
    s = sched_with(V137)
    park(s, MakePod().name("p").namespace("ns").uid("p").obj(), "fake")
    label = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)
    taint = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
    calls = record(s, "fake", label, taint)
    old = MakeNode().name("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    new = MakeNode().name("n1").label("a", "b").taint("k").capacity(cpu="4", memory="8Gi", pods="10").obj()
    s.on_node_update(old, new)
    assert [c[0] for c in calls] == [label, taint]  # upstream order: labels, then taints
    assert s.queue.incoming == {("active", "UnscheduledPodAdd"): 1, ("unschedulable", "ScheduleAttemptFailure"): 1}


def test_own_update_is_target_pod_in_137_and_unschedulable_pod_before() -> None:
    for features, resource in ((V137, EventResource.TARGET_POD), (V134, EventResource.UNSCHEDULED_POD)):
        s = sched_with(features)
        pod = MakePod().name("p").namespace("ns").uid("p").obj()
        park(s, pod, "fake")
        calls = record(s, "fake", *(ClusterEvent(r, ActionType.UPDATE_POD_LABEL)
                                    for r in (EventResource.TARGET_POD, EventResource.UNSCHEDULED_POD)))
        s.on_pod_update(pod, MakePod().name("p").namespace("ns").uid("p").label("a", "b").obj())
        assert [c[0].resource for c in calls] == [resource]


def _assume(s: Scheduler, pod: Pod) -> None:
    s.queue.add(pod)
    qpi = s.queue.pop()
    assert qpi is not None
    assumed = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name="n1"))
    s.cache.assume_pod(PodInfo(assumed), "n1")
    s.queue.done(qpi.key)


def test_deleting_an_assumed_pod_past_permit_frees_its_node_since_135() -> None:
    """1.35+ ``handleAssumedPodDeletion``: an assumed pod not waiting on Permit is removed from
    the cache at once and AssignedPodDelete moves the pods it blocked; 1.34 left it assumed until
    its binding failed."""
    for features, still_assumed, moved in ((V137, False, True), (V134, True, False)):
        s = sched_with(features)
        victim = MakePod().name("v").namespace("ns").uid("v").req(cpu="3").obj()
        _assume(s, victim)
        waiting = MakePod().name("w").namespace("ns").uid("w").req(cpu="3").obj()
        park(s, waiting, "NodeResourcesFit")
        s.on_pod_delete(victim)
        assert s.cache.is_assumed("ns/v") is still_assumed
        assert (s.queue.where("ns/w") != "unschedulable") is moved, features.emulated_version


def test_deletion_timestamp_on_an_assumed_pod_is_its_deletion_since_135() -> None:
    for features, still_assumed in ((V137, False), (V134, True)):
        s = sched_with(features)
        victim = MakePod().name("v").namespace("ns").uid("v").req(cpu="3").obj()
        _assume(s, victim)
        terminating = msgspec.structs.replace(victim, metadata=msgspec.structs.replace(
            victim.metadata, deletion_timestamp="2026-01-01T00:00:00Z"))
        s.on_pod_update(victim, terminating)
        assert s.cache.is_assumed("ns/v") is still_assumed
        assert "ns/v" not in s.queue  # an assumed pod is never queued again by its updates


def test_nominated_pod_leaving_moves_only_lower_or_equal_priority_pods() -> None:
    """``deletePodFromSchedulingQueue`` / ``hasNominatedNodeNameChanged``: AssignedPodDelete with
    ``getLEPriorityPreCheck``."""
    for features in (V134, V137):
        s = sched_with(features)
        low = MakePod().name("low").namespace("ns").uid("low").priority(1).obj()
        high = MakePod().name("high").namespace("ns").uid("high").priority(100).obj()
        park(s, low, "NodeResourcesFit")
        park(s, high, "NodeResourcesFit")
        nominated = MakePod().name("nom").namespace("ns").uid("nom").priority(10).nominated_node_name("n1").obj()
        s.queue.add(nominated)
        s.on_pod_update(nominated, MakePod().name("nom").namespace("ns").uid("nom").priority(10).obj())
        assert s.queue.where("ns/low") != "unschedulable"
        assert s.queue.where("ns/high") == "unschedulable"

        s2 = sched_with(features)
        park(s2, low, "NodeResourcesFit")
        park(s2, high, "NodeResourcesFit")
        s2.queue.add(nominated)
        s2.on_pod_delete(nominated)
        assert s2.queue.where("ns/low") != "unschedulable"
        assert s2.queue.where("ns/high") == "unschedulable"


def test_node_model_without_new_fields_gives_no_new_events() -> None:
    old: Node = MakeNode().name("n1").obj()
    s = sched_with(V137)
    s.on_node_update(old, old)  # nothing changed: no move, no error
