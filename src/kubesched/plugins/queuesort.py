"""PrioritySort (upstream ``pkg/scheduler/framework/plugins/queuesort``, v1.34).

``less(a, b)``: the pod with the higher ``spec.priority`` (unset → 0) first; on equal
priority, the one with the earlier queue ``timestamp``. ``sort_key(qpi)`` returns
``(-priority, timestamp)``, a heap key with exactly the same order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.framework.node_info import QueuedPodInfo

__all__ = ["NAME", "PrioritySort", "new"]

NAME = "PrioritySort"


class PrioritySort:
    """QueueSort only. See the module docstring."""

    name = NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        p1 = a.pod_info.priority
        p2 = b.pod_info.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)

    def sort_key(self, qpi: QueuedPodInfo) -> tuple[int, float]:
        return (-qpi.pod_info.priority, qpi.timestamp)


def new(args: Any, handle: Any) -> PrioritySort:
    return PrioritySort()
