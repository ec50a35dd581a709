"""Cluster events and queueing hints (upstream ``framework/types.go``: ``ClusterEvent``,
``EventResource``, ``ActionType``, ``QueueingHint``; ``pkg/scheduler/framework/events.go``).

A plugin that can reject pods declares, in ``events_to_register()``, the cluster events that
may make a rejected pod schedulable, each with an optional hint function
``hint(pod, old, new) -> QueueingHint``. When such an event happens, the queue evaluates the
hints of the plugins that rejected each unschedulable pod; ``QUEUE`` moves the pod to
activeQ/backoffQ, ``SKIP`` leaves it. A hint that raises counts as ``QUEUE`` (as upstream).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ActionType",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EventResource",
    "QueueingHint",
    "EVENT_ASSIGNED_POD_ADD",
    "EVENT_ASSIGNED_POD_DELETE",
    "EVENT_ASSIGNED_POD_UPDATE",
    "EVENT_NODE_ADD",
    "EVENT_UNSCHEDULABLE_TIMEOUT",
    "EVENT_FORCE_ACTIVATE",
]


class EventResource(str, enum.Enum):
    POD = "Pod"
    ASSIGNED_POD = "AssignedPod"
    UNSCHEDULED_POD = "UnschedulablePod"
    NODE = "Node"
    PERSISTENT_VOLUME = "PersistentVolume"
    PERSISTENT_VOLUME_CLAIM = "PersistentVolumeClaim"
    CSI_NODE = "CSINode"
    STORAGE_CLASS = "StorageClass"
    RESOURCE_CLAIM = "ResourceClaim"
    RESOURCE_SLICE = "ResourceSlice"
    DEVICE_CLASS = "DeviceClass"
    WILDCARD = "*"
    UNSCHEDULABLE_TIMEOUT = "UnschedulableTimeout"
    FORCE_ACTIVATE = "ForceActivate"


class ActionType(enum.IntFlag):
    """Bit flags, as upstream ``ActionType``."""

    ADD = 1 << 0
    DELETE = 1 << 1
    UPDATE_NODE_ALLOCATABLE = 1 << 2
    UPDATE_NODE_LABEL = 1 << 3
    UPDATE_NODE_TAINT = 1 << 4
    UPDATE_NODE_CONDITION = 1 << 5
    UPDATE_NODE_ANNOTATION = 1 << 6
    UPDATE_POD_LABEL = 1 << 7
    UPDATE_POD_SCALE_DOWN = 1 << 8
    UPDATE_POD_TOLERATION = 1 << 9
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1 << 10
    UPDATE_POD_GENERATED_RESOURCE_CLAIM = 1 << 11
    UPDATE_POD_OTHER = 1 << 12
    """Upstream's unexported ``updatePodOther``: a pod update none of the specific bits describes;
    it wakes only plugins registered for the generic ``Update`` (or for everything)."""
    UPDATE_NODE_DECLARED_FEATURE = 1 << 13
    """``node.status.declaredFeatures`` changed (upstream ``UpdateNodeDeclaredFeature``, since 1.35;
    extracted only while the NodeDeclaredFeatures gate is on)."""
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT | UPDATE_NODE_CONDITION
              | UPDATE_NODE_ANNOTATION | UPDATE_NODE_DECLARED_FEATURE | UPDATE_POD_LABEL | UPDATE_POD_SCALE_DOWN
              | UPDATE_POD_TOLERATION
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED | UPDATE_POD_GENERATED_RESOURCE_CLAIM | UPDATE_POD_OTHER)
    ALL = ADD | DELETE | UPDATE


class QueueingHint(enum.IntEnum):
    SKIP = 0
    QUEUE = 1


@dataclass(frozen=True, slots=True)
class ClusterEvent:
    """A kind of change in the cluster, e.g. ``ClusterEvent(NODE, ADD | UPDATE_NODE_LABEL)``."""

    resource: EventResource
    action: ActionType
    label: str = ""

    def matches(self, registered: ClusterEvent) -> bool:
        """Whether this (happened) event is covered by ``registered``: same resource (``*``
        matches all; ``Pod`` also covers ``AssignedPod``/``UnschedulablePod``) and a common
        action bit."""
        res_ok = (registered.resource == EventResource.WILDCARD or registered.resource == self.resource
                  or (registered.resource == EventResource.POD
                      and self.resource in (EventResource.ASSIGNED_POD, EventResource.UNSCHEDULED_POD)))
        return res_ok and bool(registered.action & self.action)

    def __str__(self) -> str:
        return self.label or f"{self.resource.value}{self.action!r}"


HintFn = Callable[[Any, Any, Any], QueueingHint]


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: HintFn | None = None


EVENT_NODE_ADD = ClusterEvent(EventResource.NODE, ActionType.ADD, "NodeAdd")
EVENT_ASSIGNED_POD_ADD = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ADD, "AssignedPodAdd")
EVENT_ASSIGNED_POD_UPDATE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE, "AssignedPodUpdate")
EVENT_ASSIGNED_POD_DELETE = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE, "AssignedPodDelete")
EVENT_UNSCHEDULABLE_TIMEOUT = ClusterEvent(EventResource.UNSCHEDULABLE_TIMEOUT, ActionType.ALL, "UnschedulableTimeout")
EVENT_FORCE_ACTIVATE = ClusterEvent(EventResource.FORCE_ACTIVATE, ActionType.ALL, "ForceActivate")


def node_update_actions(old: Any, new: Any, declared_features: bool = False) -> ActionType:
    """Which node-update action bits changed between two versions of a Node
    (upstream ``framework.NodeSchedulingPropertiesChange``, v1.37.2 events.go L196-291);
    ``declared_features``: the NodeDeclaredFeatures gate is on (only then is a change of
    ``status.declaredFeatures`` extracted, as ``extractNodeFeaturesChange``)."""
    from kubesched.api.objects import node_allocatable  # local: events is imported early

    a = ActionType(0)
    if node_allocatable(old) != node_allocatable(new):
        a |= ActionType.UPDATE_NODE_ALLOCATABLE
    if old.metadata.labels != new.metadata.labels:
        a |= ActionType.UPDATE_NODE_LABEL
    if old.spec.taints != new.spec.taints or old.spec.unschedulable != new.spec.unschedulable:
        a |= ActionType.UPDATE_NODE_TAINT
    if old.status.conditions != new.status.conditions:
        a |= ActionType.UPDATE_NODE_CONDITION
    if old.metadata.annotations != new.metadata.annotations:
        a |= ActionType.UPDATE_NODE_ANNOTATION
    if declared_features and old.status.declared_features != new.status.declared_features:
        a |= ActionType.UPDATE_NODE_DECLARED_FEATURE
    return a


def pod_update_actions(old: Any, new: Any) -> ActionType:
    """Which pod-update action bits changed (upstream ``framework.PodSchedulingPropertiesChange``);
    ``UPDATE_POD_OTHER`` when none of the specific ones did (not the generic ``UPDATE``, which
    would wake every plugin registered for any pod update)."""
    a = ActionType(0)
    if old.metadata.labels != new.metadata.labels:
        a |= ActionType.UPDATE_POD_LABEL
    if old.spec.tolerations != new.spec.tolerations:
        a |= ActionType.UPDATE_POD_TOLERATION
    if old.spec.scheduling_gates and not new.spec.scheduling_gates:
        a |= ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    from kubesched.api.resources import pod_requests

    if any(v < pod_requests(old).get(k, 0) for k, v in pod_requests(new).items()):
        a |= ActionType.UPDATE_POD_SCALE_DOWN
    if old.status.resource_claim_statuses != new.status.resource_claim_statuses:
        a |= ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
    return a or ActionType.UPDATE_POD_OTHER
