"""What plugins can reach besides their arguments (upstream ``framework.Handle``).

The cluster sits behind two small protocols, the seam between the engine and the world
(style anchor: httpx's transport): :class:`ClusterLister` reads objects the scheduler watches
(namespaces, services, …) and :class:`ClusterClient` carries decisions out (bind, status
patches, events). The simulator's in-memory store and the live adapter implement both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.node_table import NodeTable

__all__ = ["ClusterClient", "ClusterLister", "EmptyLister", "Handle"]


class ClusterLister(Protocol):
    """Read access to the objects a plugin may need (upstream informer listers)."""

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        """Objects of ``kind`` ("Namespace", "Service", "ReplicaSet", …), optionally of one namespace."""
        ...

    def get(self, kind: str, namespace: str, name: str) -> Any | None: ...


class ClusterClient(Protocol):
    """Write access to the cluster. ``bind`` raises :class:`~kubesched.errors.BindError`."""

    def bind(self, pod: Pod, node_name: str) -> None:
        """POST ``pods/{name}/binding`` (upstream DefaultBinder)."""
        ...

    def update_pod_condition(self, pod: Pod, status: str, reason: str, message: str,
                             nominated_node_name: str | None = None) -> None:
        """Set the ``PodScheduled`` condition (and ``status.nominatedNodeName`` when not None)."""
        ...

    def record_event(self, obj: Any, event_type: str, reason: str, action: str, message: str) -> None:
        """Emit an ``events.k8s.io`` Event about ``obj``."""
        ...

    def delete_pod(self, pod: Pod) -> None:
        """Delete a pod (preemption victims)."""
        ...


class EmptyLister:
    """A lister that knows no objects."""

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return []

    def get(self, kind: str, namespace: str, name: str) -> Any | None:
        return None


@dataclass
class Handle:
    """Shared services for the plugins of one scheduler.

    ``nodes`` is the cluster's :class:`NodeTable` (the snapshot: the engine mutates it only
    between scheduling cycles); ``lister`` reads other objects; ``client`` binds.
    ``framework`` is set to the plugin's own Framework once it is built; the scheduler also sets
    ``rng`` (a seeded ``numpy.random.Generator``: tie-breaks, preemption's random offset),
    ``clock`` (the injected clock) and ``nominator`` (the queue's nominated pods).
    """

    nodes: NodeTable
    lister: ClusterLister = field(default_factory=EmptyLister)
    client: ClusterClient | None = None
    framework: Any = None
    rng: Any = None
    clock: Any = None
    nominator: Any = None
