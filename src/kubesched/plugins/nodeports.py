"""NodePorts (upstream ``pkg/scheduler/framework/plugins/nodeports``, v1.34).

PreFilter computes the host ports the pod wants (upstream ``util.GetHostPorts``: container
ports with ``hostPort > 0`` of the containers and of the restartable (sidecar) init containers;
protocol defaults to TCP, hostIP to ``0.0.0.0``) and returns **Skip** when there are none, so
Filter never runs for the vast majority of pods.

Filter: Unschedulable ``"node(s) didn't have free ports for the requested pod ports"`` when a
wanted port conflicts with one in use on the node (upstream ``HostPortInfo.CheckConflict``):
the key is ``(protocol, port)``; a wanted hostIP ``0.0.0.0`` conflicts with that key on any IP,
any other IP conflicts with the same IP or with ``0.0.0.0``.

Batch shape: an index ``(protocol, port) → rows using it`` is kept up to date through a
:class:`NodeTable` listener, so a pod is checked only against the rows that use one of its
ports (no Python loop over all nodes). The per-node reference reads ``NodeInfo.used_ports``.

Queueing hints: Pod Delete → queue only when the deleted pod was assigned (or nominated) and
one of its host ports conflicts with the pod's; Node Add → always queue.

The node's used ports are a *set* of ``(hostIP, protocol, port)`` as upstream's ``HostPortInfo``
(quirk kept in every version, v1.34.12 = v1.37.2): removing a pod — in the cache or in a
preemption dry run — deletes its tuples even when another pod on the node holds the same one
(:meth:`NodeTable.remove_pod`).

Known gap (framework, not this plugin): the NodeTable's ``used_ports`` of existing pods come
from ``kubesched.framework.node_info.host_ports``, which does not include sidecar init
containers' ports, while upstream's ``NodeInfo`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    assigned_pod_resource,
)
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, Status
from kubesched.framework.signers import HOST_PORTS_SIGNER_NAME, host_ports_signer
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import HostPort, PodInfo
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = ["ERR_REASON", "NAME", "NodePorts", "PreFilterState", "fits_ports", "new", "pod_host_ports",
           "ports_conflict"]

NAME = "NodePorts"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def pod_host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """Upstream ``util.GetHostPorts``: ``(hostIP, protocol, port)`` of the ports with
    ``hostPort > 0`` of restartable init containers, then containers (sanitised: "" → 0.0.0.0/TCP)."""
    out: list[HostPort] = []
    for c in pod.spec.init_containers:
        if c.restart_policy != "Always":
            continue
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip or DEFAULT_BIND_ALL_HOST_IP, p.protocol or "TCP", p.host_port))
    for c in pod.spec.containers:
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip or DEFAULT_BIND_ALL_HOST_IP, p.protocol or "TCP", p.host_port))
    return tuple(out)


def ports_conflict(want: HostPort, used: dict[tuple[str, int], set[str]] | None) -> bool:
    """Upstream ``HostPortInfo.CheckConflict`` on a ``(protocol, port) → {hostIP}`` map."""
    if not used:
        return False
    ip, proto, port = want
    if port <= 0:
        return False
    ips = used.get((proto or "TCP", port))
    if not ips:
        return False
    ip = ip or DEFAULT_BIND_ALL_HOST_IP
    return ip == DEFAULT_BIND_ALL_HOST_IP or ip in ips or DEFAULT_BIND_ALL_HOST_IP in ips


def fits_ports(want: tuple[HostPort, ...], used: dict[tuple[str, int], set[str]] | None) -> bool:
    """True when none of ``want`` conflicts with ``used`` (upstream ``fitsPorts``)."""
    return not any(ports_conflict(w, used) for w in want)


def _as_used(ports: tuple[HostPort, ...]) -> dict[tuple[str, int], set[str]]:
    used: dict[tuple[str, int], set[str]] = {}
    for ip, proto, port in ports:
        used.setdefault((proto, port), set()).add(ip)
    return used


class PreFilterState:
    """The pod's wanted host ports (immutable: ``clone`` returns self, as upstream)."""

    __slots__ = ("ports",)

    def __init__(self, ports: tuple[HostPort, ...]) -> None:
        self.ports = ports

    def clone(self) -> PreFilterState:
        return self


_INDEX_KEY = (__name__, "PortIndex")


class _PortIndex:
    """``(protocol, port) → set of rows`` whose ``used_ports`` has that key; a NodeTable listener."""

    def __init__(self, table: NodeTable) -> None:
        self.rows: dict[tuple[str, int], set[int]] = {}
        self._keys: dict[int, set[tuple[str, int]]] = {}
        for row, used in enumerate(table.used_ports):
            if used:
                self._set_row(row, used)
        table.add_listener(self)

    def _set_row(self, row: int, used: dict[tuple[str, int], set[str]] | None) -> None:
        old = self._keys.pop(row, set())
        new = set(used) if used else set()
        for k in old - new:
            s = self.rows.get(k)
            if s is not None:
                s.discard(row)
                if not s:
                    del self.rows[k]
        for k in new - old:
            self.rows.setdefault(k, set()).add(row)
        if new:
            self._keys[row] = new

    def on_node_set(self, table: NodeTable, row: int, old: Any) -> None:
        pass

    def on_node_removed(self, table: NodeTable, row: int, old: Any) -> None:
        self._set_row(row, None)

    def on_pod_added(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        if pod_info.ports:
            self._set_row(row, table.used_ports[row])

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        if pod_info.ports:
            self._set_row(row, table.used_ports[row])

    def on_ports_restored(self, table: NodeTable, row: int) -> None:
        """A :class:`~kubesched.framework.node_table.RowEdit` put the row's ports back as they were
        (an undone addition may have dropped a port another pod still uses: ports are a set)."""
        self._set_row(row, table.used_ports[row])


class NodePorts:
    """PreFilter + Filter (both shapes). See the module docstring."""

    name = NAME
    pure_filter_nodes = True
    """``filter_nodes`` judges each row on its own, without effects (``Framework.run_filter_plugins``)."""
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (node_ports.go L76-79, L156-159)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 node_ports.go ``SignPod``): the sorted host ports."""
        return [(HOST_PORTS_SIGNER_NAME, host_ports_signer(pod))], None
    handle: Any = None

    def __init__(self, table: NodeTable | None = None) -> None:
        if table is not None:
            table.derived(_INDEX_KEY, _PortIndex)  # built now, kept up to date by the table

    # ─── PreFilter ───
    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        ports = pod_host_ports(pod)
        if not ports:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(ports))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # ─── Filter ───
    def filter_is_node_local(self, state: CycleState) -> bool:
        """Filter depends only on the pod and the one node's state (the scheduler's equivalence
        cache, :mod:`kubesched.framework.equivalence`, may reuse its passes)."""
        return True

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        if not fits_ports(s.ports, node_info.used_ports):
            return Status(Code.UNSCHEDULABLE, (ERR_REASON,))
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable,
                     rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        index = nodes.derived(_INDEX_KEY, _PortIndex)
        candidates: set[int] = set()
        for _, proto, port in s.ports:
            r = index.rows.get((proto, port))
            if r:
                candidates |= r
        if not candidates:
            return None
        bad = [r for r in candidates if not fits_ports(s.ports, nodes.used_ports[r])]
        if not bad:
            return None
        mask = np.isin(rows, np.fromiter(bad, np.int64, len(bad)))
        if not np.count_nonzero(mask):
            return None
        return FilterResult.single(mask, ERR_REASON, Code.UNSCHEDULABLE)

    # ─── queueing hints ───
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(assigned_pod_resource(getattr(self, "handle", None)), ActionType.DELETE),
                                 self.is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]

    @staticmethod
    def is_schedulable_after_pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
        deleted = old
        if deleted is None:
            return QueueingHint.QUEUE
        if not deleted.spec.node_name and not deleted.status.nominated_node_name:
            return QueueingHint.SKIP
        ports = pod_host_ports(deleted)
        if not ports:
            return QueueingHint.SKIP
        if fits_ports(pod_host_ports(pod), _as_used(ports)):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def new(args: Any, handle: Any) -> NodePorts:
    pl = NodePorts(handle.nodes if handle is not None else None)
    pl.handle = handle
    return with_deferred_resize(pl, handle)
