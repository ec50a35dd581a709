"""Cluster events and queueing hints (staging ``kube-scheduler/framework/types.go`` L35-283:
``ActionType``, ``EventResource``, ``ClusterEvent``, ``QueueingHint``; ``pkg/scheduler/framework/
types.go`` L48-150: matching; ``pkg/scheduler/framework/events.go``: the special events and the
pod/node change extractors). v1.37.2, with the older releases' differences keyed by
:class:`~kubesched.features.FeatureGate` (``features.at_least`` / gates).

A plugin that can reject pods declares, in ``events_to_register()``, the cluster events that
may make a rejected pod schedulable, each with an optional hint function
``hint(pod, old, new) -> QueueingHint``. When such an event happens, the queue evaluates the
hints of the plugins that rejected each unschedulable pod; ``QUEUE`` moves the pod to
activeQ/backoffQ, ``SKIP`` leaves it. A hint that raises counts as ``QUEUE`` (as upstream).

Incoming events are specific: a pod or node update is split into one event per changed property
(:func:`pod_update_events`, :func:`node_update_events`), each carrying a single action bit, or the
general update (:func:`general_update`) when no specific property changed. A registration matches an incoming event when
``registered & incoming != 0 and incoming <= registered`` (upstream ``MatchClusterEvents``).

Bit order: 1.35 inserted ``UpdateNodeDeclaredFeature`` after ``UpdateNodeAnnotation``; 1.37 inserted
``UpdateNodePreemptionPolicy`` after it and ``UpdatePodScaleUp`` after ``UpdatePodScaleDown``, so the
pod bits moved up. kubesched uses the 1.37 values at every emulated version: an incoming event is a
single bit ``b`` (then ``R & b != 0`` already implies ``b <= R``), the general ``UPDATE`` (matched
only by a registration containing every update bit, i.e. ``UPDATE`` or ``ALL``) or ``ADD``/``DELETE``,
so no matching outcome depends on the numbering (``tests/framework/test_events.py`` checks this
against the 1.34 numbering exhaustively). Older releases never extract the newer bits, and their
general update lacks them (:func:`general_update`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.features import FeatureGate

__all__ = [
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "PreQueueingHintResult",
    "QueueingHint",
    "pod_info_hint",
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_ASSIGNED_POD_UPDATE",
    "EVENT_NODE_ADD",
    "EVENT_POD_GROUP_ADD",
    "EVENT_POD_GROUP_DELETE",
    "EVENT_POD_GROUP_UPDATE",
    "EVENT_TARGET_POD_UPDATE",
    "EVENT_UNSCHEDULED_POD_ADD",
    "EVENT_UNSCHEDULED_POD_DELETE",
    "EVENT_UNSCHEDULED_POD_UPDATE",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "EVENT_FORCE_ACTIVATE",
    "action_string",
    "assigned_pod_resource",
    "event_label",
    "features_of",
    "general_update",
    "match_cluster_events",
    "node_update_events",
    "pod_update_events",
    "unroll_pod_event",
]


class EventResource(str, enum.Enum):
    """Upstream ``EventResource``. ``POD`` is the general pod resource: a registration with it
    matches ``ASSIGNED_POD`` (a bound pod changed), ``UNSCHEDULED_POD`` (another pending pod
    changed) and ``TARGET_POD`` (the pending pod itself changed; since 1.37 — before, a pod's own
    update was an ``UnschedulablePod`` event like any other pending pod's)."""

    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnscheduledPod"
    TARGET_POD = "TargetPod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "CSINode"
    STORAGE_CLASS = "StorageClass"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    POD_GROUP = "scheduling.k8s.io/PodGroup"
    """Upstream ``fwk.PodGroup`` (GenericWorkload; the objects reach the engine as kind ``PodGroup``)."""
    COMPOSITE_POD_GROUP = "scheduling.k8s.io/CompositePodGroup"
    """Upstream ``fwk.CompositePodGroup`` (CompositePodGroup, alpha)."""
    WILDCARD = "*"
    UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
    FORCE_ACTIVATE = "ForceActivate"


class ActionType(enum.IntFlag):
    """Bit flags with upstream v1.37.2's values (staging ``framework/types.go`` L41-85)."""

    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    """Taints changed, or ``spec.unschedulable`` became false."""
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_NODE_DECLARED_FEATURE = 1 << 7
    """``status.declaredFeatures`` changed (since 1.35; extracted only with NodeDeclaredFeatures on)."""
    UPDATE_NODE_PREEMPTION_POLICY = 1 << 8
    """``spec.podPreemptionPolicy`` changed (since 1.37)."""
    UPDATE_POD_LABEL = 1 << 9
    UPDATE_POD_SCALE_DOWN = 1 << 10
    UPDATE_POD_SCALE_UP = 1 << 11
    """Some request is new or larger (since 1.37)."""
    UPDATE_POD_TOLERATION = 1 << 12
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 13
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 14
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_ANNOTATION | UPDATE_NODE_DECLARED_FEATURE | UPDATE_NODE_PREEMPTION_POLICY
              | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN | UPDATE_POD_SCALE_UP | UPDATE_POD_TOLERATION
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    """The general update: as an incoming event, "an update none of the specific bits describes"."""
    ALL = ADD | DELETE | UPDATE


_ACTION_STRINGS = {
    ActionType.ADD: "Add", ActionType.DELETE: "Delete",
    ActionType.UPDATE_NODE_ALLOCATABLE: "UpdateNodeAllocatable", ActionType.UPDATE_NODE_LABEL: "UpdateNodeLabel",
    ActionType.UPDATE_NODE_TAINT: "UpdateNodeTaint", ActionType.UPDATE_NODE_CONDITION: "UpdateNodeCondition",
    ActionType.UPDATE_NODE_ANNOTATION: "UpdateNodeAnnotation",
    ActionType.UPDATE_NODE_DECLARED_FEATURE: "UpdateNodeDeclaredFeature",
    ActionType.UPDATE_NODE_PREEMPTION_POLICY: "UpdateNodePreemptionPolicy",
    ActionType.UPDATE_POD_LABEL: "UpdatePodLabel", ActionType.UPDATE_POD_SCALE_DOWN: "UpdatePodScaleDown",
    ActionType.UPDATE_POD_SCALE_UP: "UpdatePodScaleUp", ActionType.UPDATE_POD_TOLERATION: "UpdatePodToleration",
    ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED: "UpdatePodSchedulingGatesEliminated",
    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM: "UpdatePodGeneratedResourceClaim",
    ActionType.ALL: "All", ActionType.UPDATE: "Update",
}


def action_string(action: ActionType) -> str:
    """Upstream ``ActionType.String()``: the name of one action, ``All``, ``Update``, or ``""``
    for any other combination."""
    return _ACTION_STRINGS.get(action, "")


class QueueingHint(enum.IntEnum):
    SKIP = 0
    QUEUE = 1


def match_cluster_events(registered: ClusterEvent, incoming: ClusterEvent) -> bool:
    """Upstream ``MatchClusterEvents(ce, incomingEvent)`` (``framework/types.go`` L118): the
    registration is the wildcard ``*``/All, or the resources match (``*``, equal, or ``Pod`` for
    any of ``AssignedPod``/``UnscheduledPod``/``TargetPod``) and ``incoming`` is the same or more
    specific: a common bit and ``incoming <= registered``."""
    r = registered.resource
    if r == EventResource.WILDCARD and registered.action == ActionType.ALL:
        return True
    res = incoming.resource
    res_ok = (r == EventResource.WILDCARD or r == res
              or (r == EventResource.POD and res in _SPECIFIC_POD_RESOURCES))
    return res_ok and bool(registered.action & incoming.action) and int(incoming.action) <= int(registered.action)


_SPECIFIC_POD_RESOURCES = (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD, EventResource.TARGET_POD)


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A kind of change in the cluster, e.g. ``ClusterEvent(NODE, ADD | UPDATE_NODE_LABEL)``.
    ``label``: upstream ``CustomLabel`` (special events only); see :func:`event_label`."""

    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this (incoming) event is covered by ``registered`` (:func:`match_cluster_events`)."""
        return match_cluster_events(registered, self)

    def __str__(self) -> str:
        return event_label(self)


def event_label(event: ClusterEvent, features: FeatureGate | None = None) -> str:
    """Upstream ``ClusterEvent.Label()``: the custom label, else resource + action string (e.g.
    ``UnscheduledPodAdd``, ``NodeUpdateNodeTaint``). Before 1.37 the unscheduled-pod resource
    was named ``UnschedulablePod`` (so ``UnschedulablePodAdd``)."""
    if event.label:
        return event.label
    res = event.resource.value
    if event.resource == EventResource.UNSCHEDULED_POD and features is not None and not features.at_least(1, 37):
        res = "UnschedulablePod"
    return f"{res}{action_string(event.action)}"


HintFn = Callable[[Any, Any, Any], QueueingHint]

_F = TypeVar("_F", bound=Callable[..., Any])


def pod_info_hint(fn: _F) -> _F:
    """Mark a QueueingHint as taking the queued pod's :class:`~kubesched.framework.node_info.PodInfo`
    (``hint(pod_info, old, new)``) instead of the pod (upstream's ``QueueingHintFn(logger, pod,
    oldObj, newObj)``), so that it can read the pod's parsed terms cached once in
    ``pod_info.extra``. Unmarked hints (custom plugins) keep getting the pod. Returns ``fn``."""
    fn.takes_pod_info = True  # type: ignore[attr-defined]
    return fn


@dataclass(frozen=True, slots=True)
class PreQueueingHintResult:
    """Upstream ``fwk.PreQueueingHintResult`` (staging ``framework/interface.go``, 1.37): the pods
    worth evaluating for one event. ``all_pods`` — no narrowing; otherwise ``pods`` lists
    ``(namespace, name)`` pairs."""

    all_pods: bool = False
    pods: tuple[tuple[str, str], ...] = ()


PreHintFn = Callable[[Any, Any], PreQueueingHintResult]
"""``pre_hint(old, new) -> PreQueueingHintResult`` (upstream ``PreQueueingHintFn``; raising counts
as "no narrowing")."""


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """A registration: the event, its hint, and (1.37, SchedulerPreQueueingHints α) an optional
    ``pre_hint`` run once per event to name the pods whose hint is worth running (upstream
    ``ClusterEventWithHint.PreQueueingHintFn``)."""

    event: ClusterEvent
    hint: HintFn | None = None
    pre_hint: PreHintFn | None = None


EVENT_NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD)
EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD)
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE)
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
EVENT_UNSCHEDULED_POD_ADD = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD)
EVENT_UNSCHEDULED_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)
EVENT_UNSCHEDULED_POD_DELETE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.DELETE)
EVENT_TARGET_POD_UPDATE = ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE)
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.UNSCHEDULABLE_TIMEOUT, ActionType.ALL, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.FORCE_ACTIVATE, ActionType.ALL, "ForceActivate")
EVENT_POD_GROUP_ADD = ClusterEvent(EventResource.POD_GROUP, ActionType.ADD)
EVENT_POD_GROUP_UPDATE = ClusterEvent(EventResource.POD_GROUP, ActionType.UPDATE)
EVENT_POD_GROUP_DELETE = ClusterEvent(EventResource.POD_GROUP, ActionType.DELETE)


def unroll_pod_event(event: ClusterEvent) -> list[ClusterEvent]:
    """Upstream ``UnrollPodEvent``: a ``Pod`` registration as its ``AssignedPod``,
    ``UnscheduledPod`` and ``TargetPod`` registrations (1.37 ``buildQueueingHintMap``)."""
    return [ClusterEvent(r, event.action, event.label) for r in _SPECIFIC_POD_RESOURCES]


def features_of(handle: Any) -> FeatureGate:
    """The plugin handle's :class:`~kubesched.features.FeatureGate` (the default gate when the
    plugin was built without a handle, as in unit tests)."""
    f = getattr(handle, "features", None)
    return f if f is not None else _default_features()


def assigned_pod_resource(handle: Any) -> EventResource:
    """The resource in-tree plugins register pod deletions with: ``AssignedPod`` since 1.37
    (only assigned pods' deletions are ever delivered), ``Pod`` before."""
    return EventResource.ASSIGNED_POD if features_of(handle).at_least(1, 37) else EventResource.POD


def _default_features() -> FeatureGate:
    from kubesched.features import default_feature_gate

    return default_feature_gate()


def node_update_events(old: Any, new: Any, features: FeatureGate | None = None) -> list[ClusterEvent]:
    """Upstream ``NodeSchedulingPropertiesChange`` (``framework/events.go`` L194-291): one ``Node``
    event per changed property, in upstream's order — ``spec.unschedulable`` became false
    (UpdateNodeTaint), allocatable, labels, taints (UpdateNodeTaint again), condition statuses by
    type, annotations, ``spec.podPreemptionPolicy`` (1.37+), ``status.declaredFeatures``
    (1.35+, NodeDeclaredFeatures on). Empty when nothing scheduling-relevant changed."""
    from kubesched.api.objects import node_allocatable  # local: events is imported early

    f = features if features is not None else _default_features()
    acts: list[ActionType] = []
    if new.spec.unschedulable != old.spec.unschedulable and not new.spec.unschedulable:
        acts.append(ActionType.UPDATE_NODE_TAINT)
    if node_allocatable(old) != node_allocatable(new):
        acts.append(ActionType.UPDATE_NODE_ALLOCATABLE)
    if (old.metadata.labels or {}) != (new.metadata.labels or {}):
        acts.append(ActionType.UPDATE_NODE_LABEL)
    if (old.spec.taints or []) != (new.spec.taints or []):
        acts.append(ActionType.UPDATE_NODE_TAINT)
    if _condition_statuses(old) != _condition_statuses(new):
        acts.append(ActionType.UPDATE_NODE_CONDITION)
    if (old.metadata.annotations or {}) != (new.metadata.annotations or {}):
        acts.append(ActionType.UPDATE_NODE_ANNOTATION)
    if f.at_least(1, 37) and (getattr(old.spec, "pod_preemption_policy", None)
                              != getattr(new.spec, "pod_preemption_policy", None)):
        acts.append(ActionType.UPDATE_NODE_PREEMPTION_POLICY)
    if (f.at_least(1, 35) and f.enabled("NodeDeclaredFeatures")
            and list(getattr(old.status, "declared_features", None) or [])
            != list(getattr(new.status, "declared_features", None) or [])):
        acts.append(ActionType.UPDATE_NODE_DECLARED_FEATURE)
    return [ClusterEvent(EventResource.NODE, a) for a in acts]


def _condition_statuses(node: Any) -> dict[str, str]:
    return {c.type: c.status for c in node.status.conditions or ()}


def pod_update_events(old: Any, new: Any, *, target: bool = False,
                      features: FeatureGate | None = None) -> list[ClusterEvent]:
    """Upstream ``PodSchedulingPropertiesChange(new, old, isTargetPod)`` (``framework/events.go``
    L69-107): one event per changed property — labels, scale-down (a request removed or
    smaller), scale-up (1.37+: a request added or larger), scheduling gates all removed,
    tolerations (count changed), generated ResourceClaims (DynamicResourceAllocation on) — or
    the general ``UPDATE`` when none changed. Resource: ``AssignedPod`` for a bound pod, else
    ``TargetPod`` for the pending pod's own update (``target``, 1.37+), else ``UnscheduledPod``."""
    from kubesched.api.resources import pod_requests

    f = features if features is not None else _default_features()
    if new.spec.node_name:
        res = EventResource.ASSIGNED_POD
    elif target and f.at_least(1, 37):
        res = EventResource.TARGET_POD
    else:
        res = EventResource.UNSCHEDULED_POD
    acts: list[ActionType] = []
    if (old.metadata.labels or {}) != (new.metadata.labels or {}):
        acts.append(ActionType.UPDATE_POD_LABEL)
    old_req, new_req = pod_requests(old), pod_requests(new)
    if any(k not in new_req or v > new_req[k] for k, v in old_req.items()):
        acts.append(ActionType.UPDATE_POD_SCALE_DOWN)
    if f.at_least(1, 37) and any(k not in old_req or v > old_req[k] for k, v in new_req.items()):
        acts.append(ActionType.UPDATE_POD_SCALE_UP)
    if not new.spec.scheduling_gates and old.spec.scheduling_gates:
        acts.append(ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    if len(new.spec.tolerations or ()) != len(old.spec.tolerations or ()):
        acts.append(ActionType.UPDATE_POD_TOLERATION)
    if f.enabled("DynamicResourceAllocation") and (old.status.resource_claim_statuses
                                                    != new.status.resource_claim_statuses):
        acts.append(ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM)
    return [ClusterEvent(res, a) for a in acts] or [ClusterEvent(res, general_update(f))]


def general_update(features: FeatureGate | None = None) -> ActionType:
    """The release's ``Update`` as an incoming event ("no specific property changed"): the OR of
    the update bits that release had — without ``UpdateNodeDeclaredFeature`` before 1.35 and
    without ``UpdateNodePreemptionPolicy``/``UpdatePodScaleUp`` before 1.37. A registration matches
    it only when it contains all of them (``ce.ActionType`` ≥ that release's ``Update``), so a
    registration spelling out exactly the 1.34 update bits still matches at 1.34."""
    f = features if features is not None else _default_features()
    a = ActionType.UPDATE
    if not f.at_least(1, 37):
        a &= ~(ActionType.UPDATE_NODE_PREEMPTION_POLICY | ActionType.UPDATE_POD_SCALE_UP)
    if not f.at_least(1, 35):
        a &= ~ActionType.UPDATE_NODE_DECLARED_FEATURE
    return a
