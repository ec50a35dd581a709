"""PodInfo, QueuedPodInfo, Resource and host ports (upstream ``pkg/scheduler/framework/types.go``).

``NodeInfo``, a *view* of one row of the columnar table, lives beside the table it reads:
:class:`kubesched.framework.node_table.NodeInfo`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from kubesched.api.objects import Pod, pod_key, pod_priority
from kubesched.api.resources import is_pod_level_requests_set, pod_non_zero_requests, pod_requests

if TYPE_CHECKING:  # pragma: no cover
    pass

__all__ = ["HostPort", "PodInfo", "QueuedPodInfo", "Resource", "host_ports"]

# A host port in use: (hostIP, protocol, port); hostIP "" is normalised to "0.0.0.0".
HostPort = tuple[str, str, int]


def host_ports(pod: Pod) -> tuple[HostPort, ...]:
    """The host ports a pod wants (upstream ``schedutil.GetHostPorts``): ports with
    ``hostPort > 0`` of the containers and of the restartable init containers (sidecars);
    protocol defaults to TCP and hostIP to ``0.0.0.0``."""
    out: list[HostPort] = []
    sidecars = [c for c in pod.spec.init_containers if c.restart_policy == "Always"]
    for c in [*pod.spec.containers, *sidecars]:
        for p in c.ports:
            if p.host_port > 0:
                out.append((p.host_ip or "0.0.0.0", p.protocol or "TCP", p.host_port))
    return tuple(out)


ContainerRequests = tuple[dict[str, int], int, int]
"""``(requests, non-zero cpu millicores, non-zero memory bytes)`` with the pod-level requests
ignored (upstream ``PodResourcesOptions.SkipPodLevelResources``)."""
_Derived = tuple[dict[str, int], int, int, tuple[HostPort, ...], ContainerRequests | None]
#: Encoded ``(containers, initContainers, resources, overhead)`` → what :class:`PodInfo` derives
#: from them (requests, non-zero cpu and memory, host ports, the container-only requests): the
#: replicas of a workload (thousands of pods in a large simulation) share one entry. Keyed by
#: content, not identity, so a pod changed in place is never given stale data. Cleared when it
#: reaches ``_DERIVED_MAX`` entries.
_DERIVED: dict[bytes, _Derived] = {}
_DERIVED_MAX = 4096
_encode = msgspec.json.encode


def _derive(pod: Pod) -> _Derived:
    skip = None
    if is_pod_level_requests_set(pod):
        skip = (pod_requests(pod, skip_pod_level_resources=True),
                *pod_non_zero_requests(pod, skip_pod_level_resources=True))
    return (pod_requests(pod), *pod_non_zero_requests(pod), host_ports(pod), skip)


def _spec_derived(pod: Pod) -> _Derived:
    """``(pod_requests, *pod_non_zero_requests, host_ports, container_requests)`` of ``pod`` (the
    last None without pod-level requests, where it equals the first three), memoised on the parts of
    its spec they read (upstream computes them per PodInfo; the values are the same). The
    requests dict is shared between the PodInfos of one entry, as :meth:`PodInfo.with_pod`
    shares it: never changed in place."""
    spec = pod.spec
    try:
        key = _encode((spec.containers, spec.init_containers, spec.resources, spec.overhead))
    except (TypeError, ValueError, OverflowError):  # not encodable: computed, not memoised
        return _derive(pod)
    got = _DERIVED.get(key)
    if got is None:
        got = _derive(pod)
        if len(_DERIVED) >= _DERIVED_MAX:
            _DERIVED.clear()
        _DERIVED[key] = got
    return got


class PodInfo:
    """A pod plus data derived from it once (upstream ``framework.PodInfo``).

    Attributes: ``pod``; ``key`` ("namespace/name"); ``requests`` (``dict[str, int]``: cpu in
    millicores, memory/storage in bytes, extended resources as counts); ``non_zero_cpu``
    (millicores) and ``non_zero_memory`` (bytes), the scoring requests with 100m/200Mi
    defaults; ``priority``; ``ports`` (host ports wanted); ``container_requests``
    (:data:`ContainerRequests`, the same three with ``spec.resources`` ignored, for scorers without
    pod-level resources; None when the pod has no pod-level requests). ``extra`` is a per-pod cache that
    plugins may use for pre-parsed terms (keyed by plugin name).
    """

    __slots__ = ("pod", "key", "requests", "non_zero_cpu", "non_zero_memory", "priority",
                 "ports", "container_requests", "extra")

    def __init__(self, pod: Pod) -> None:
        self.extra: dict[str, object] = {}
        self.update(pod)

    def update(self, pod: Pod) -> None:
        """Recompute the derived data for a new version of the pod (requests and ports through
        :func:`_spec_derived`: once per distinct container/resources content)."""
        self.pod = pod
        self.key = pod_key(pod)
        (self.requests, self.non_zero_cpu, self.non_zero_memory, self.ports,
         self.container_requests) = _spec_derived(pod)
        self.priority = pod_priority(pod)
        self.extra.clear()

    def with_pod(self, pod: Pod) -> PodInfo:
        """A PodInfo for another version of the same pod whose requests, ports and priority are
        unchanged (e.g. the assumed pod with ``spec.nodeName`` set): the derived data is shared."""
        other = PodInfo.__new__(PodInfo)
        other.pod = pod
        other.key = self.key
        other.requests = self.requests
        other.non_zero_cpu = self.non_zero_cpu
        other.non_zero_memory = self.non_zero_memory
        other.priority = self.priority
        other.ports = self.ports
        other.container_requests = self.container_requests
        other.extra = dict(self.extra)
        return other

    @property
    def uid(self) -> str:
        return self.pod.metadata.uid or self.key

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


@dataclass(eq=False)
class QueuedPodInfo:
    """A pod in the scheduling queue (upstream ``framework.QueuedPodInfo``).

    Times are seconds on the injected clock. ``attempts`` counts scheduling attempts;
    ``unschedulable_plugins`` / ``pending_plugins`` are the plugins that rejected the pod in its
    last attempt (they decide which cluster events requeue it).
    """

    pod_info: PodInfo
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
    """Arrival order, the final tie-breaker so runs are deterministic."""
    pod_signature: bytes | None = None
    """Upstream ``PodSignature`` (1.36+): the profile's batching signature of the pod, computed
    when the queue adds or updates it (None: unsignable, or batching off)."""
    was_flushed_from_unschedulable: bool = False
    """Upstream ``WasFlushedFromUnschedulable`` (1.36+): the pod was last moved out of
    unschedulablePods by the leftover flush; cleared when it fails again (and, 1.37+, when it is
    gated again). A pod bound with it set counts in ``pod_scheduled_after_flush_total``."""
    flush_timestamp: float | None = None
    """Upstream ``FlushTimestamp`` (1.37+): when the leftover flush last moved the pod; the
    flush measures the 5 minutes from max(timestamp, flush_timestamp)."""

    @property
    def pod(self) -> Pod:
        return self.pod_info.pod

    @property
    def key(self) -> str:
        return self.pod_info.key


@dataclass(slots=True)
class Resource:
    """Upstream ``framework.Resource``: cpu in millicores, memory/storage in bytes, the pod
    count, and scalar (extended) resources by name."""

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    def get(self, name: str) -> int:
        if name == "cpu":
            return self.milli_cpu
        if name == "memory":
            return self.memory
        if name == "ephemeral-storage":
            return self.ephemeral_storage
        if name == "pods":
            return self.allowed_pod_number
        return self.scalar_resources.get(name, 0)
