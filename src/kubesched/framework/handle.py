"""What plugins can reach besides their arguments (upstream ``framework.Handle``).

The cluster sits behind two small protocols, the seam between the engine and the world
(style anchor: httpx's transport): :class:`ClusterLister` reads objects the scheduler watches
(namespaces, services, …) and :class:`ClusterClient` carries every decision out (bind, status
patches, conditions, deletes, events, PV/PVC/claim writes). The simulator's in-memory store
(``kubesched.sim.store``) and the live adapter (``kubesched.kube``) implement both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.features import FeatureGate, default_feature_gate

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from kubesched.api.objects import Pod
    from kubesched.framework.clock import Clock
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.diagnosis import FilterChunk
    from kubesched.framework.extender import Extender
    from kubesched.framework.interface import Status
    from kubesched.framework.metrics import MetricsRecorder
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeInfo, NodeTable
    from kubesched.framework.podgroup import PodGroupManager
    from kubesched.framework.waiting_pods import PodsInPreBindMap, WaitingPod, WaitingPodsMap

__all__ = ["ClusterClient", "ClusterLister", "EmptyLister", "Handle", "PodNominator", "ProfileFramework",
           "SharedDRAManager", "lister_revision"]


class ClusterLister(Protocol):
    """Read access to the objects a plugin may need (upstream informer listers).

    A lister may also offer ``revision(kind) -> int``: a counter that grows whenever an object of
    ``kind`` is added, replaced or removed (never for Pods/Nodes, which the cache tracks), so that a
    plugin can keep what it derived from ``list``/``get`` until the counter moves (see
    :func:`lister_revision`). Listers without it are simply read every time.
    """

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        """Objects of ``kind`` ("Namespace", "Service", "ReplicaSet", …), optionally of one namespace."""
        ...

    def get(self, kind: str, namespace: str, name: str) -> Any | None: ...


class ClusterClient(Protocol):
    """Every write the engine makes (the seam contract, ``docs/architecture.md``).

    Sync methods are fire-and-forget: the live client enqueues the API call (bounded, retried as
    upstream) and returns at once; the simulator's store applies it and queues the resulting
    informer event for later delivery. Nothing here calls back into the engine synchronously.
    Coroutines (``bind`` and the PreBind writes) are awaited by the binding cycle.
    """

    async def bind(self, pod: Pod, node_name: str) -> None:
        """POST ``pods/{name}/binding`` (upstream DefaultBinder). Raises
        :class:`~kubesched.errors.BindError` (``message``, HTTP ``code``)."""
        ...

    def update_pod_condition(self, pod: Pod, status: str, reason: str, message: str,
                             nominated_node_name: str | None = None) -> None:
        """Set the ``PodScheduled`` condition; ``nominated_node_name`` None leaves
        ``status.nominatedNodeName`` alone, a string (``""`` clears) overrides it (upstream
        ``updatePod``/``PatchPodStatus`` with a NominatingInfo in ModeOverride)."""
        ...

    def clear_nominated_node_name(self, pod: Pod) -> None:
        """Clear ``status.nominatedNodeName`` (upstream ``clearNominatedNodeName``)."""
        ...

    async def set_nominated_node_name(self, pod: Pod, node_name: str) -> None:
        """Patch ``status.nominatedNodeName`` to ``node_name`` (upstream ``updatePod`` with
        ``NominatingInfo{node, ModeOverride}`` and no condition: the binding cycle's
        NominatedNodeNameForExpectation write, v1.35+), awaited by the binding cycle before
        WaitOnPermit/PreBind/Bind. Optional for a ClusterClient: the binding cycle skips the
        write when it is absent."""
        ...

    def add_pod_condition(self, pod: Pod, condition: dict[str, Any]) -> None:
        """Add or replace a status condition (``{"type", "status", "reason", "message"}``), e.g.
        ``DisruptionTarget`` on a preemption victim (upstream ``PreemptPod``)."""
        ...

    def delete_pod(self, pod: Pod) -> None:
        """Delete a pod (preemption victims)."""
        ...

    def record_event(self, regarding: Any, event_type: str, reason: str, action: str, note: str,
                     related: Any = None) -> None:
        """Emit an ``events.k8s.io/v1`` Event about ``regarding`` (``related``: a second object,
        e.g. the preemptor on a victim's ``Preempted`` event)."""
        ...

    async def update_persistent_volume(self, pv: Any) -> Any:
        """PUT a PersistentVolume (VolumeBinding's PreBind: ``BindPodVolumes`` binds PVs to claims).
        Returns the stored object (with its new ``metadata.resourceVersion``) or None."""
        ...

    async def update_persistent_volume_claim(self, pvc: Any) -> Any:
        """PUT a PersistentVolumeClaim (VolumeBinding's PreBind: the ``volume.kubernetes.io/selected-node``
        annotation that triggers provisioning). Returns the stored object or None."""
        ...

    async def update_resource_claim_status(self, claim: Any) -> None:
        """PUT ``resourceclaims/{name}/status`` (DynamicResources' PreBind: allocation, reservedFor)."""
        ...

    async def update_resource_claim(self, claim: Any) -> Any:
        """PUT ``resourceclaims/{name}`` (DynamicResources' PreBind: the delete-protection
        finalizer); returns the stored claim when the implementation has it (else None)."""
        ...

    async def create_resource_claim(self, claim: Any) -> Any:
        """POST ``resourceclaims`` (DynamicResources' PreBind, DRAExtendedResource: the claim for a
        pod's DRA-backed extended resources, named from ``metadata.generateName``); returns the
        created claim (with its name)."""
        ...

    async def delete_resource_claim(self, claim: Any) -> None:
        """DELETE ``resourceclaims/{name}`` (DynamicResources' PostFilter / Unreserve: an
        extended-resource claim that is stale or whose binding failed); a missing claim is no error."""
        ...

    def patch_pod_group_condition(self, pod_group: dict[str, Any], condition: dict[str, Any]) -> None:
        """Set a condition on a PodGroup's ``status.conditions`` (``pods/status``-like patch of
        ``podgroups/status``, upstream ``util.PatchPodGroupStatus`` after
        ``meta.SetStatusCondition``); fire-and-forget, retried on conflict. ``pod_group`` is the
        raw object the scheduler observed; ``condition`` is ``{"type", "status",
        "observedGeneration" (when the object has a generation), "reason", "message"}`` — the
        implementation keeps ``lastTransitionTime`` when the status is unchanged and stamps the
        current time otherwise. GenericWorkload only; optional for a ClusterClient (the engine
        skips the write when it is absent)."""
        ...

    async def update_pod_extended_resource_claim_status(self, pod: Pod, status: dict[str, Any]) -> None:
        """Patch the pod's ``status.extendedResourceClaimStatus`` to ``status``
        (``{"requestMappings": [{"containerName", "resourceName", "requestName"}], "resourceClaimName"}``;
        upstream ``PatchPodStatus`` in ``patchPodExtendedResourceClaimStatus``)."""
        ...


class PodNominator(Protocol):
    """What the engine reads of the queue's nominated pods (upstream ``fwk.PodNominator``,
    ``staging/src/k8s.io/kube-scheduler/framework/interface.go``; implemented by
    ``kubesched.queue.scheduling_queue.PriorityQueue``, upstream ``backend/queue/nominator.go``)."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to ``node_name`` (upstream ``NominatedPodsForNode``)."""
        ...

    def has_nominated_pods(self) -> bool:
        """Any pod nominated anywhere (lets the filter skip ``RunFilterPluginsWithNominatedPods``)."""
        ...

    def nominated_nodes(self) -> list[str]:
        """Names of the nodes that have nominated pods."""
        ...


class SharedDRAManager(Protocol):
    """The DRA claim tracker every profile's DynamicResources shares (upstream
    ``fwk.SharedDRAManager().ResourceClaims()``, the ``ResourceClaimTracker`` of
    ``staging/src/k8s.io/kube-scheduler/framework/listers.go``; implemented by
    ``kubesched.plugins.dynamicresources.DRAManager``). Claims are camelCase mappings."""

    def on_event(self, kind: str, old: Any, new: Any) -> None:
        """An informer event (add: ``old`` None; delete: ``new`` None) for any kind; the tracker
        keeps the ResourceClaims."""
        ...

    def get_claim(self, namespace: str, name: str) -> dict[str, Any] | None:
        """Upstream ``Get``: the assumed version if any, else the informer's; None when absent."""
        ...

    def assume(self, claim: dict[str, Any]) -> None:
        """Upstream ``AssumeClaimAfterAPICall``."""
        ...

    def restore(self, claim: dict[str, Any]) -> None:
        """Upstream ``AssumedClaimRestore``."""
        ...

    def pending_allocation(self, claim: dict[str, Any]) -> Mapping[str, Any] | None:
        """Upstream ``GetPendingAllocation``: the in-flight allocation of the claim, or None."""
        ...

    def signal_pending_allocation(self, claim: dict[str, Any]) -> None:
        """Upstream ``SignalClaimPendingAllocation``."""
        ...

    def remove_pending_allocation(self, claim: dict[str, Any], force: bool = True) -> bool:
        """Upstream ``MaybeRemoveClaimPendingAllocation``: whether a pending allocation was removed."""
        ...


class ProfileFramework(Protocol):
    """What plugins and preemption call on their profile's built framework through
    :attr:`Handle.framework` (the part of upstream's ``fwk.Framework`` interface they use,
    ``staging/src/k8s.io/kube-scheduler/framework/interface.go``; implemented by
    :class:`kubesched.framework.runtime.Framework`, upstream ``frameworkImpl``). A protocol
    because ``runtime`` imports this module (contract ``acyclic`` counts type-only imports).
    The plugin lists hold the profile's plugin objects, in order."""

    @property
    def pre_filter_plugins(self) -> Sequence[Any]: ...

    @property
    def filter_plugins(self) -> Sequence[Any]: ...

    @property
    def reserve_plugins(self) -> Sequence[Any]: ...

    @property
    def metrics(self) -> MetricsRecorder | None:
        """The recorder fed by this profile, or None."""
        ...

    @property
    def waiting_pods(self) -> WaitingPodsMap:
        """Pods waiting on Permit (shared by every profile)."""
        ...

    @property
    def pods_in_pre_bind(self) -> PodsInPreBindMap:
        """Pods in PreBind that preemption may cancel (shared by every profile)."""
        ...

    def run_filter_plugins(self, state: CycleState, pod: Pod, rows: np.ndarray) -> FilterChunk | Status:
        """Upstream ``RunFilterPlugins`` over table rows ``rows`` (``int64[M]``): the chunk of
        verdicts, or the Error status of the first plugin that failed."""
        ...

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: Pod, pod_info: PodInfo,
                                         node_info: NodeInfo) -> Status | None:
        """Upstream ``RunPreFilterExtensionAddPod``: None or an Error status."""
        ...

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: Pod, pod_info: PodInfo,
                                            node_info: NodeInfo) -> Status | None:
        """Upstream ``RunPreFilterExtensionRemovePod``: None or an Error status."""
        ...

    def filter_with_nominated_pods(self, state: CycleState, pod: Pod, row: int,
                                   nominated: Sequence[PodInfo]) -> FilterChunk | Status | None:
        """The first pass of upstream ``RunFilterPluginsWithNominatedPods`` on one row: the 1-row
        chunk when it rejects, None when it passes, or an Error status."""
        ...

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Upstream ``RunReservePluginsReserve``."""
        ...

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Upstream ``RunReservePluginsUnreserve``."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Upstream ``RejectWaitingPod``: False if the pod is not waiting."""
        ...


class EmptyLister:
    """A lister that knows no objects."""

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        return []

    def get(self, kind: str, namespace: str, name: str) -> Any | None:
        return None

    def revision(self, kind: str) -> int:
        return 0


def lister_revision(lister: ClusterLister, kinds: tuple[str, ...]) -> int | None:
    """The sum of ``lister.revision(kind)`` over ``kinds`` (each counter only grows, so the sum
    moves whenever an object of one of the kinds changed), or None when the lister keeps no
    change counter (then nothing derived from it may be kept between calls)."""
    rev = getattr(lister, "revision", None)
    if rev is None:
        return None
    return sum(int(rev(k)) for k in kinds)


@dataclass
class Handle:
    """Shared services for the plugins of one scheduler.

    ``nodes`` is the cluster's :class:`NodeTable` (the snapshot: the engine mutates it only
    between scheduling cycles); ``lister`` reads other objects; ``client`` binds.
    ``framework`` is set to the plugin's own Framework once it is built; the scheduler also sets
    ``rng`` (a seeded ``numpy.random.Generator``: tie-breaks, preemption's random offset),
    ``clock`` (the injected clock), ``nominator`` (the queue's nominated pods) and
    ``extenders`` (preemption consults them).
    """

    nodes: NodeTable
    lister: ClusterLister = field(default_factory=EmptyLister)
    client: ClusterClient | None = None
    framework: ProfileFramework | None = None
    """The built :class:`~kubesched.framework.runtime.Framework` (set by its constructor), seen
    through :class:`ProfileFramework`."""
    rng: np.random.Generator | None = None
    clock: Clock | None = None
    nominator: PodNominator | None = None
    extenders: list[Extender] = field(default_factory=list)
    """The scheduler's extenders (upstream ``Handle.Extenders()``:
    :class:`~kubesched.framework.extender.Extender` s, ignorable ones last)."""
    pod_group_manager: PodGroupManager | None = None
    """Upstream ``Handle.PodGroupManager()``: a :class:`~kubesched.framework.podgroup.PodGroupManager`
    when GenericWorkload is on (set by the scheduler), else None."""
    shared_dra_manager: SharedDRAManager | None = None
    """Upstream ``Handle.SharedDRAManager()``: the claims, in-flight allocations and allocated
    devices every profile's DynamicResources shares (a ``plugins.dynamicresources.DRAManager``),
    set by the scheduler when some profile runs that plugin; None otherwise."""
    activator: Callable[[dict[str, Pod]], None] | None = None
    """Set by the scheduler: the queue's ``activate`` (what :meth:`activate` calls)."""
    features: FeatureGate = field(default_factory=default_feature_gate)
    """The feature gates at the emulated version (upstream: the global ``utilfeature.DefaultFeatureGate``,
    read by plugin factories through ``feature.Features``); plugins ask ``handle.features.enabled("X")``."""

    def activate(self, pods: dict[str, Pod]) -> None:
        """Upstream ``Handle.Activate`` (PodActivator): move these pending pods (``namespace/name`` →
        pod) from unschedulablePods/backoffQ to activeQ; a no-op without a scheduler."""
        if self.activator is not None:
            self.activator(pods)

    # upstream Handle: IterateOverWaitingPods, GetWaitingPod, RejectWaitingPod

    def _built_framework(self) -> ProfileFramework:
        """The Framework this Handle belongs to. Raises :class:`RuntimeError` before it is built."""
        if self.framework is None:
            raise RuntimeError("Handle.framework is not set: the waiting pods live in a built Framework")
        return self.framework

    def iterate_waiting_pods(self, callback: Callable[[WaitingPod], Any]) -> None:
        """Call ``callback`` on every pod waiting on Permit (all profiles)."""
        self._built_framework().waiting_pods.iterate(callback)

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The waiting pod with this UID (``namespace/name`` for pods without one), or None."""
        return self._built_framework().waiting_pods.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject a waiting pod (message ``removed``); False if it is not waiting."""
        return self._built_framework().reject_waiting_pod(uid)
