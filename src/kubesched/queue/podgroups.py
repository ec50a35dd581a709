"""A pod group as one queue entity (upstream ``framework.QueuedPodGroupInfo``,
``pkg/scheduler/framework/types.go`` v1.37.2 L781-1040).

The entity carries the group's own queueing parameters (timestamp, attempts, the two failure
counters, the gating plugin, the flush marks and a cached backoff expiry) and its queued members
in member order (:func:`member_order_key`, upstream ``PodGroupMemberPodsOrderingFunc``). The
queue sorts it by the PodGroup's ``spec.priority`` (:attr:`QueuedPodGroupInfo.pod_info` gives the
QueueSort plugin a view with that priority).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.objects import Pod
from kubesched.framework.node_info import QueuedPodInfo
from kubesched.framework.podgroup import POD_GROUP_KEY_TYPE, PodGroupInfo, entity_key, pod_group_priority

__all__ = ["QueuedPodGroupInfo", "member_order_key"]


def member_order_key(qpi: QueuedPodInfo) -> tuple[int, int, float, str]:
    """Upstream ``PodGroupMemberPodsOrderingFunc`` (types.go L870-905): priority descending,
    attempts descending, timestamp ascending, then pod name."""
    return (-qpi.pod_info.priority, -qpi.attempts, qpi.timestamp, qpi.pod.metadata.name)


@dataclass(slots=True)
class _SortView:
    """What a QueueSort plugin reads of a group entity: ``priority`` = the PodGroup's
    ``spec.priority`` (upstream ``QueuedPodGroupInfo.GetPriority``)."""

    priority: int


@dataclass(eq=False)
class QueuedPodGroupInfo:
    """A PodGroup's queued members as one entity (see the module docstring).

    ``members`` are :class:`QueuedPodInfo` in member order; ``pod_group`` the raw PodGroup.
    ``unschedulable_plugins``/``pending_plugins`` stay empty (upstream never sets them on the
    entity: a group that failed goes to the error backoff heap); ``gating_plugin`` is copied from
    a gated member by PreEnqueue.
    """

    namespace: str
    name: str
    pod_group: dict[str, Any]
    members: list[QueuedPodInfo] = field(default_factory=list)
    timestamp: float = 0.0
    initial_attempt_timestamp: float | None = None
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors_count: int = 0
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gated: bool = False
    gating_plugin: str = ""
    seq: int = 0
    was_flushed_from_unschedulable: bool = False
    flush_timestamp: float | None = None
    backoff_expiration: float | None = None
    """Upstream ``BackoffExpiration``: computed once per failure (the group's size may change
    while it backs off), reset when a counter changes."""

    _key: str = field(default="", init=False, repr=False)
    """:attr:`key`, formatted once (namespace and name never change)."""

    @property
    def key(self) -> str:
        """``podgroup/namespace/name``."""
        key = self._key
        if not key:
            key = self._key = entity_key(POD_GROUP_KEY_TYPE, self.namespace, self.name)
        return key

    @property
    def pod_info(self) -> _SortView:
        return _SortView(pod_group_priority(self.pod_group))

    @property
    def priority(self) -> int:
        return pod_group_priority(self.pod_group)

    def size(self) -> int:
        return len(self.members)

    def add(self, qpi: QueuedPodInfo) -> None:
        """Upstream ``AddPod``: insert in member order (replacing a member of the same key)."""
        self.remove(qpi.key)
        self.members.insert(bisect.bisect_left(self.members, member_order_key(qpi), key=member_order_key), qpi)

    def remove(self, key: str) -> QueuedPodInfo | None:
        for i, m in enumerate(self.members):
            if m.pod_info.key == key:
                return self.members.pop(i)
        return None

    def get(self, key: str) -> QueuedPodInfo | None:
        return next((m for m in self.members if m.key == key), None)

    def inc_attempts(self, now: float) -> None:
        """Upstream ``IncAttempts`` + ``SetInitialAttemptTimestamp`` at Pop: the entity's and every member's."""
        self.attempts += 1
        if self.initial_attempt_timestamp is None:
            self.initial_attempt_timestamp = now
        for m in self.members:
            m.attempts += 1
            if m.initial_attempt_timestamp is None:
                m.initial_attempt_timestamp = now

    def pod_group_info(self) -> PodGroupInfo:
        """The framework's :class:`PodGroupInfo` (members' pods in member order)."""
        return PodGroupInfo(self.name, self.namespace, pod_group=self.pod_group,
                            unscheduled_pods=[m.pod for m in self.members])

    def pods(self) -> list[Pod]:
        return [m.pod for m in self.members]

    def copy_queueing_params(self, other: QueuedPodGroupInfo) -> None:
        """``rootInfo.QueueingParams = pgInfo.QueueingParams`` (AddAttemptedPodGroupIfNeeded)."""
        for f in ("timestamp", "initial_attempt_timestamp", "attempts", "unschedulable_count",
                  "consecutive_errors_count", "gated", "gating_plugin", "seq",
                  "was_flushed_from_unschedulable", "flush_timestamp", "backoff_expiration"):
            setattr(self, f, getattr(other, f))
        self.unschedulable_plugins = set(other.unschedulable_plugins)
        self.pending_plugins = set(other.pending_plugins)
