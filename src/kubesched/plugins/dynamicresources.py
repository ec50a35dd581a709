"""DynamicResources (upstream ``pkg/scheduler/framework/plugins/dynamicresources``, v1.37.2, DRA GA).

What differs per emulated version (``handle.features``; the real release's behaviour):

* Score (since 1.35; v1.37.2 ``dynamicresources.go`` L1386-1471): :class:`ScoringDynamicResources`
  (see :func:`compute_score`), default weight 2. Not a Score plugin at 1.34.
* Device taints (DRADeviceTaints, β on 1.36, GA 1.37): a device with a ``NoSchedule`` /
  ``NoExecute`` taint is allocated only to a request that tolerates it; DeviceTaintRules
  (DRADeviceTaintRules, off β 1.36, GA 1.37) add taints to the devices they select.
* Partitionable devices (DRAPartitionableDevices, β on 1.36+): per-device node selection, and
  devices that consume shared counters (``sharedCounters`` of their pool) fit while the counters
  last (:mod:`~kubesched.plugins.dra_structured`).
* Consumable capacity (DRAConsumableCapacity, β on 1.36+): an ``allowMultipleAllocations``
  device is shared while its capacity lasts; results carry ``shareID`` (deterministic here:
  a UUIDv5 of claim, request, device and share number — upstream draws a random UUID) and
  ``consumedCapacity``; the manager keeps the capacity allocated shares hold.
* Filter timeout: since 1.36 an **Error** ``node <n>: timed out trying to allocate devices``
  (L1066-1073), before that ``UnschedulableAndUnresolvable "timed out trying to allocate devices"``.
* PostFilter (1.37, L1153-1221): a pod without claims and a pod with nothing to deallocate get
  ``Unschedulable`` without a message (1.34-1.36: ``no new claims to deallocate`` /
  ``still not schedulable``).

Pods **without** resource claims — as v1.34 (PostFilter text: see above):

* PreEnqueue: nothing to check → Success.
* PreFilter: writes an empty state, finds no claims, returns **Skip** (Filter is not run).
* PostFilter: state present with no claims → ``Unschedulable "no new claims to deallocate"`` (which
  is why v1.34 FailedScheduling messages read ``"... . no new claims to deallocate, preemption:
  ..."``; no text since 1.37); PreFilter never ran → Error ``"not found"`` (``fwk.ErrNotFound``).
* Reserve / Unreserve / PreBind: nothing to do.

Pods **with** claims (``spec.resourceClaims``):

* Each entry is resolved like ``resourceclaim.Name``: ``resourceClaimName``, or the pod's
  ``status.resourceClaimStatuses`` entry of a ``resourceClaimTemplateName`` (missing →
  ``pod "<ns>/<name>": ResourceClaim not created yet``; a generated claim must be owned by the
  pod: ``ResourceClaim <name> was not created for pod <ns>/<name> (pod is not owner)``). The claim
  is read through the :class:`DRAManager` (informer + claims this scheduler wrote and has not seen
  back yet): absent → ``could not find ResourceClaim "<ns>/<name>"``, being deleted →
  ``resourceclaim "<name>" is being deleted``. These checks run in PreEnqueue and PreFilter
  (UnschedulableAndUnresolvable, as upstream's ``statusUnschedulable``).
* PreFilter: an allocated claim reserved for other consumers up to the limit (256) →
  ``resourceclaim in use``; an allocated claim's ``allocation.nodeSelector`` limits the nodes;
  unallocated claims: an allocation in flight for another pod → ``resource claim <ns>/<name> is
  in the process of being allocated``, a missing class → ``request <req>: device class <c> does
  not exist``; then a structured :class:`~kubesched.plugins.dra_structured.Allocator` is built
  over all ResourceSlices with every device allocated to a claim (or being allocated) marked in use.
* Filter (per node; ``filter_nodes`` runs the same over many rows without a Status per node):
  ``resourceclaim not available on the node`` (an allocated claim's node selector); the
  allocator: no solution → ``cannot allocate all claims``; past ``DynamicResourcesArgs.filterTimeout``
  (default 10 s, DRASchedulerFilterTimeout beta) → ``timed out trying to allocate devices``;
  invalid pools → ``invalid resource pools were encountered``; a fatal claim/class problem (CEL
  errors, a request of unknown type, …) → Error status. The node's solution is kept for Reserve.
* PostFilter: an allocated claim that was unavailable and is not reserved (or only for this pod)
  gets deallocated (status write) → ``deallocation of ResourceClaim completed``; otherwise
  ``still not schedulable``.
* Reserve: the node's allocations become *in flight* (their devices are in use for every other
  pod at once, and the claim cannot be allocated twice); Unreserve drops them (and removes the pod
  from ``reservedFor`` of a claim PreBind had reserved).
* PreBind: per claim not yet reserved for the pod: ``claim … got deleted in the meantime`` /
  ``got allocated elsewhere in the meantime`` checks, the ``resource.kubernetes.io/delete-protection``
  finalizer (a normal update), then ``status.allocation`` + ``status.reservedFor += {pods, name,
  uid}`` (a status update); the written claim is *assumed* until the informer shows it.

* Binding conditions (DRADeviceBindingConditions + DRAResourceClaimDeviceStatus, β on 1.36+):
  devices with ``bindingConditions`` may be allocated (their pools last; ``bindsToNode`` pins the
  allocation to the node), PreBind stamps ``allocationTimestamp`` and then polls the claim every
  5 s (on the handle's clock) until each such device's ``status.devices`` conditions are True —
  a True failure condition → Error ``device binding failed: claim=…``, past ``bindingTimeout``
  (default 10m) → Error ``device binding timeout: context deadline exceeded``; Filter then finds a
  failed / timed-out allocated claim unavailable (and PostFilter deallocates it). The
  BindingConditionsPending event and the ``dra_bindingconditions_*`` metrics are not emitted.

* Extended resources backed by DRA (DRAExtendedResource, off α 1.35, on β 1.36, GA 1.37; v1.37.2
  ``extendeddynamicresources.go``, :mod:`~kubesched.plugins.dra_extended`): a pod requesting an
  extended resource a DeviceClass maps gets one more claim, last in the claim list: the claim a
  prior cycle wrote for it, else the in-memory ``<extended-resources>`` one (a pod with nothing else
  to allocate is no longer skipped). Filter: a written claim with requests → ``cannot schedule
  extended resource claim`` (PostFilter deletes it: ``deletion of ResourceClaim completed``); a
  request neither in the node's allocatable nor mapped → ``cannot fit resource``; otherwise the
  node's variant of the claim (one ExactCount request per container for the resources the node
  has 0 allocatable of) is allocated with the user claims (an allocator per distinct variant).
  Reserve puts it in flight; PreBind POSTs it (``generateName`` ``<pod>-extended-resources-``),
  adds the finalizer, allocation and reservation, then patches the pod's
  ``status.extendedResourceClaimStatus`` (request mappings, claim name); Unreserve deletes a
  written claim. The special claim's in-flight UID is derived from the pod (upstream: random).

1.37 alpha gates: DRAListTypeAttributes (list-valued attributes in constraints and CEL),
DRADerivedAttributes (per-request CEL-derived attributes in constraints),
DRADeviceCompatibilityGroups (devices on one counter set must share a group),
DRAOptionalNodeOperations (allocator skips devices of slices with
``skipNodeOperations`` on nodes not declaring the feature; an allocated claim needing it is
unavailable there), DRANodeAllocatableResources (only the shared mapped-claim rejection), the
ResourceClaim PreQueueingHint (SchedulerPreQueueingHints).

PodGroups (GenericWorkload; :mod:`~kubesched.plugins.dra_workload`): within one pod-group cycle a
member reuses the allocation another member's Reserve put in flight for a claim they share (the
manager counts its sharers; Unreserve keeps it while another member holds it) instead of waiting
(``resource claim … is in the process of being allocated``); PodGroupPostFilter (v1.37.2
L1220-1384) frees claims as PostFilter does per member, then the group's. With
DRAWorkloadResourceClaims (β off) a claim entry matching one of the PodGroup's
``spec.resourceClaims`` is reserved for the group (``{apiGroup: scheduling.k8s.io, resource:
podgroups, name, uid}``) and a claim the PodGroup owns is accepted as the member's. PreBind of a
member whose shared allocation another member wrote adds only what is missing (upstream: the
write conflicts and the member retries; not reproduced).

DRAFractionalCapacityRange: capacity ranges in milli units
(:func:`~kubesched.plugins.dra_structured.consumed_capacity`).

Not modelled yet: the
DRA-derived pod footprint of DRANodeAllocatableResources (fit, pod-level checks, status patch);
DeviceTaintRule changes do not requeue pods (upstream's slice tracker
turns them into ResourceSlice events).
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections import Counter
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.api.dra import AllocationResultView, DeviceRequestView, ResourceClaimView, ResourceSliceView
from kubesched.api.nodeselector import NodeSelectorMatcher
from kubesched.api.objects import NodeSelector, node_allocatable
from kubesched.api.quantity import to_int
from kubesched.api.resources import pod_requests
from kubesched.api.storage import ObjectView
from kubesched.features import BINARY_VERSION, default_feature_gate
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PreQueueingHintResult,
    QueueingHint,
)
from kubesched.framework.interface import (
    MAX_NODE_SCORE,
    SKIP_STATUS,
    Code,
    FilterResult,
    PreBindPreFlightResult,
    ReasonEntry,
    Status,
)
from kubesched.framework.podgroup import COMPOSITE_POD_GROUP_KEY_TYPE
from kubesched.plugins.dra_extended import (
    create_requests_and_mappings,
    extended_claim_owners,
    is_special_claim,
    new_special_claim,
    node_claim,
)
from kubesched.plugins.dra_structured import (
    OPTIONAL_NODE_OPERATIONS_FEATURE,
    Allocator,
    AllocatorError,
    AllocatorTimeout,
    DeviceID,
    Features,
    NodeAllocations,
    PoolVersions,
    allocated_devices,
    apply_device_taint_rules,
    node_declares,
    shared_allocations,
)
from kubesched.plugins.dra_workload import (
    PodGroupStateData,
    bind_to,
    claim_names_from_pod_group,
    group_name,
    is_for_pod_group,
    is_for_pod_group_by_pod,
    is_reserved_for_pod,
)
from kubesched.plugins.helper.extendedresources import device_class_mapping, is_dra_extended_resource_name
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.normalize import default_normalize_score
from kubesched.plugins.helper.resize import deferred_resize_enabled, is_pod_resize_deferred
from kubesched.plugins.noderesources.resource_allocation import is_scalar_resource_name

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod, PodResourceClaim
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable
    from kubesched.framework.podgroup import (
        PodGroupCycleState,
        PodGroupInfo,
        PodGroupPostFilterResult,
        PodGroupSchedulingFunc,
    )

__all__ = ["ERR_NO_NEW_CLAIMS", "FINALIZER", "NAME", "DRAManager", "DynamicResources", "ScoringDynamicResources",
           "StateData", "compute_score", "new", "pod_claim_names"]

NAME = "DynamicResources"
STATE_KEY = NAME
ERR_NO_NEW_CLAIMS = "no new claims to deallocate"
FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX_SIZE = 256
"""Upstream ``resourceapi.ResourceClaimReservedForMaxSize``."""
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
"""Upstream ``resourceapi.FirstAvailableDeviceRequestMaxSize``."""


def _as_dict(obj: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return obj
    return msgspec.to_builtins(obj)


def _copy_claim(claim: dict[str, Any]) -> dict[str, Any]:
    """A copy whose ``metadata`` (with ``finalizers``) and ``status`` (with ``reservedFor``) may be
    changed; ``spec`` and the allocation stay shared (never mutated: objects are replaced)."""
    meta = dict(claim.get("metadata") or {})
    if "finalizers" in meta:
        meta["finalizers"] = list(meta["finalizers"] or ())
    status = dict(claim.get("status") or {})
    if "reservedFor" in status:
        status["reservedFor"] = list(status["reservedFor"] or ())
    return {**claim, "metadata": meta, "status": status}


def _key(claim: dict[str, Any]) -> str:
    """``namespace/name`` (a leading ``/`` for a claim without namespace)."""
    view = ObjectView(claim)
    return f"{view.namespace}/{view.name}"


def _uid(claim: dict[str, Any]) -> str:
    return ObjectView(claim).uid or _key(claim)


class _Unschedulable(Exception):
    pass


class _BindingFailed(Exception):
    """Upstream ``ErrDeviceBindingFailed`` / ``ErrDeviceBindingTimeout`` (the message says which)."""


def _go_quote(text: str) -> str:
    """Go ``%q`` of a plain string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_SCALARS: dict[int, tuple[Any, dict[str, int]]] = {}
"""id(node) → (node, its scalar allocatable resources): nodes are replaced, never mutated."""


def _scalar_allocatable(node: Any) -> dict[str, int]:
    """The node's allocatable scalar (extended, hugepages, attachable-volumes) resources, as integers."""
    hit = _SCALARS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    out = {name: to_int(name, q) for name, q in node_allocatable(node).items() if is_scalar_resource_name(name)}
    if len(_SCALARS) > 100_000:
        _SCALARS.clear()
    _SCALARS[id(node)] = (node, out)
    return out


_CANNOT_ALLOCATE = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot allocate all claims",))
_NO_ROWS = np.zeros(0, np.int64)


def _first(t: tuple[int, Status]) -> int:
    return t[0]


class _FilterErr(Exception):
    """An Error status from Filter, raised out of :meth:`DynamicResources.filter_nodes`."""


_NO_LINK = object()


class DRAManager:
    """Upstream ``SharedDRAManager`` (``dra_manager.go``, ``allocateddevices.go``): the claims as
    the scheduler sees them (informer objects, overridden by the claims it wrote itself until the
    informer delivers them back — the assume cache), the allocations in flight (Reserve →
    PreBind), and the devices all of these hold, kept incrementally from informer events
    (:meth:`on_event`). Shared by every profile of one scheduler."""

    def __init__(self, lister: Any, consumable_capacity: bool = False) -> None:
        self.lister = lister
        self.consumable_capacity = consumable_capacity
        """DRAConsumableCapacity: results with a ``shareID`` are shares (:attr:`shared`), not devices in use."""
        self.shared: dict[DeviceID, dict[str, int]] = {}
        """Device → capacity (nanos) the allocated, assumed and in-flight shares of it hold."""
        self._share_slots: dict[tuple[str, str], list[tuple[DeviceID, dict[str, int]]]] = {}
        self._share_refs: Counter[DeviceID] = Counter()
        self._informer_claims: dict[str, dict[str, Any]] = {}
        self.assumed: dict[str, dict[str, Any]] = {}
        self.in_flight: dict[str, dict[str, Any]] = {}
        self.sharers: Counter[str] = Counter()
        """Claim UID → how many pods of a pod-group cycle share its in-flight allocation (upstream
        ``inFlightAllocation.sharers``; 1 for a claim of a single pod)."""
        self._informer: dict[str, list[DeviceID]] = {}
        self._slots: dict[tuple[str, str], list[DeviceID]] = {}
        self.refs: Counter[DeviceID] = Counter()
        self.in_use: set[DeviceID] = set()
        """Devices held by an allocated, assumed or in-flight claim (admin access excluded)."""
        self.pool_versions = PoolVersions()
        """(driver, pool) → bumped when one of its devices enters or leaves ``in_use``."""
        self.synced = False
        self.live_events = False
        self._slices: tuple[list[Any], list[dict[str, Any]]] | None = None
        self._ext_informer: dict[str, dict[str, Any]] = {}
        """Claim key → informer object, for claims with the extended-resource-claim annotation and a
        controlling owner (:func:`extended_claim_owners`)."""
        self._ext_owners: dict[str, tuple[tuple[str, str], ...]] = {}
        self._ext_index: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        """Owner (name, UID) → claim key → the claim as the scheduler sees it (assumed, else the
        informer's): :meth:`find_extended_claim` without a scan of every claim."""

    def slices(self) -> list[dict[str, Any]]:
        """Every ResourceSlice mapping, as the lister has them. While the lister returns the same
        objects (list equality: identity first), the same list object is returned — callers
        never mutate it — so that per-slice-set indexes (the allocator's pools) are kept."""
        raw = self.lister.list("ResourceSlice")
        hit = self._slices
        if hit is not None and len(hit[0]) == len(raw) and hit[0] == raw:
            return hit[1]
        out = [_as_dict(x) for x in raw]
        self._slices = (raw, out)
        return out

    # ── bookkeeping ──

    def _devices(self, claim: dict[str, Any]) -> list[DeviceID]:
        return allocated_devices(claim, self.consumable_capacity)

    def _set_shares(self, slot: tuple[str, str], claim: dict[str, Any] | None) -> None:
        """Keep :attr:`shared` (upstream ``allocatedDevices.capacities``) for one slot's claim."""
        shares = shared_allocations(claim) if claim is not None and self.consumable_capacity else []
        old = self._share_slots.pop(slot, None)
        for did, caps in old or ():
            agg = self.shared[did]
            for k, v in caps.items():
                agg[k] = agg.get(k, 0) - v
            self._share_refs[did] -= 1
            if self._share_refs[did] <= 0:
                del self._share_refs[did]
                del self.shared[did]
        if shares:
            self._share_slots[slot] = shares
            for did, caps in shares:
                agg = self.shared.setdefault(did, {})
                for k, v in caps.items():
                    agg[k] = agg.get(k, 0) + v
                self._share_refs[did] += 1

    def _set_slot(self, slot: tuple[str, str], devices: list[DeviceID]) -> None:
        refs, in_use, versions = self.refs, self.in_use, self.pool_versions
        old = self._slots.pop(slot, None)
        if old:
            for d in old:
                n = refs[d] - 1
                if n <= 0:
                    del refs[d]
                    in_use.discard(d)
                    versions.bump(d[:2])
                else:
                    refs[d] = n
        if devices:
            self._slots[slot] = devices
            for d in devices:
                refs[d] += 1
                if d not in in_use:
                    in_use.add(d)
                    versions.bump(d[:2])

    def _refresh_claim(self, key: str) -> None:
        a = self.assumed.get(key)
        self._set_slot(("c", key), self._devices(a) if a is not None else self._informer.get(key, []))
        if self.consumable_capacity:
            self._set_shares(("c", key), a if a is not None else self._informer_claims.get(key))
        if a is not None or key in self._ext_informer or key in self._ext_owners:
            self._index_ext(key, a if a is not None else self._ext_informer.get(key))

    def _set_informer_ext(self, key: str, claim: dict[str, Any] | None) -> None:
        if claim is not None and extended_claim_owners(claim):
            self._ext_informer[key] = claim
        else:
            self._ext_informer.pop(key, None)

    def _index_ext(self, key: str, claim: dict[str, Any] | None) -> None:
        """Keep :attr:`_ext_index` for one claim key (``claim``: as the scheduler sees it now)."""
        index = self._ext_index
        for owner in self._ext_owners.pop(key, ()):
            hits = index[owner]
            del hits[key]
            if not hits:
                del index[owner]
        owners = extended_claim_owners(claim) if claim is not None else ()
        if owners:
            self._ext_owners[key] = owners
            for owner in owners:
                index.setdefault(owner, {})[key] = claim  # type: ignore[assignment]

    def find_extended_claim(self, pod: Pod) -> dict[str, Any] | None:
        """Upstream ``findExtendedResourceClaim`` over ``ResourceClaims().List()`` (v1.37.2
        extendeddynamicresources.go L118-131 with dra_manager.go L289-300: the assume cache, i.e.
        the claims the informer delivered, an assumed object in place of its informer one): the
        claim with the extended-resource-claim annotation whose controlling owner is the pod, by
        an index kept from those events (a dict look-up, not a scan of every claim per pod).
        Several such claims: the first one indexed."""
        hits = self._ext_index.get((pod.metadata.name, pod.metadata.uid or ""))
        return next(iter(hits.values())) if hits else None

    def sync(self) -> None:
        """Read every claim from the lister (the first time, or always without informer events)."""
        if self.synced and self.live_events:
            return
        seen = set()
        for c in self.lister.list("ResourceClaim"):
            c = _as_dict(c)
            key = _key(c)
            seen.add(key)
            self._informer[key] = self._devices(c)
            if self.consumable_capacity:
                self._informer_claims[key] = c
            self._set_informer_ext(key, c)
            self._refresh_claim(key)
        if not self.live_events:
            for key in [k for k in self._informer if k not in seen]:
                del self._informer[key]
                self._informer_claims.pop(key, None)
                self._ext_informer.pop(key, None)
                self._refresh_claim(key)
        self.synced = True

    def on_event(self, kind: str, old: Any, new: Any) -> None:
        """An informer event (Scheduler ``object_listeners``)."""
        if kind != "ResourceClaim":
            return
        obj = _as_dict(new if new is not None else old)
        key = _key(obj)
        if new is None:
            self._informer.pop(key, None)
            self._informer_claims.pop(key, None)
            self._ext_informer.pop(key, None)
            self.assumed.pop(key, None)
        else:
            self._informer[key] = self._devices(obj)
            if self.consumable_capacity:
                self._informer_claims[key] = obj
            self._set_informer_ext(key, obj)
            a = self.assumed.get(key)
            rv = ObjectView(obj).metadata.get("resourceVersion")
            if a is not None and (a is not obj) and (rv != ObjectView(a).metadata.get("resourceVersion")
                                                     or rv is None):
                del self.assumed[key]  # the informer caught up (upstream assume cache)
        self._refresh_claim(key)

    # ── claims ──

    def get_claim(self, namespace: str, name: str) -> dict[str, Any] | None:
        key = f"{namespace}/{name}"
        a = self.assumed.get(key)
        if a is not None:
            return a
        c = self.lister.get("ResourceClaim", namespace, name)
        return _as_dict(c) if c is not None else None

    def assume(self, claim: dict[str, Any]) -> None:
        """Upstream ``AssumeClaimAfterAPICall``."""
        key = _key(claim)
        self.assumed[key] = claim
        self._refresh_claim(key)

    def restore(self, claim: dict[str, Any]) -> None:
        """Upstream ``AssumedClaimRestore``."""
        key = _key(claim)
        if self.assumed.pop(key, None) is not None:
            self._refresh_claim(key)

    def has_pending_allocation(self, claim: dict[str, Any]) -> bool:
        return _uid(claim) in self.in_flight

    def pending_allocation(self, claim: dict[str, Any]) -> Mapping[str, Any] | None:
        """Upstream ``GetPendingAllocation``: the in-flight allocation of the claim, or None."""
        c = self.in_flight.get(_uid(claim))
        return ResourceClaimView(c).allocation if c is not None else None

    def signal_pending_allocation(self, claim: dict[str, Any]) -> None:
        """Upstream ``SignalClaimPendingAllocation`` (dra_manager.go L211-250): a claim already in
        flight gains one more sharer (members of one pod-group cycle sharing it)."""
        uid = _uid(claim)
        if uid in self.in_flight:
            self.sharers[uid] += 1
            return
        self.sharers[uid] = 1
        self.in_flight[uid] = claim
        self._set_slot(("f", uid), self._devices(claim))
        if self.consumable_capacity:
            self._set_shares(("f", uid), claim)

    def remove_pending_allocation(self, claim: dict[str, Any], force: bool = True) -> bool:
        """Upstream ``MaybeRemoveClaimPendingAllocation`` (L253-275): without ``force`` (Unreserve)
        a shared in-flight allocation only loses a sharer until the last one goes."""
        uid = _uid(claim)
        if not force and self.sharers.get(uid, 0) > 1 and uid in self.in_flight:
            self.sharers[uid] -= 1
            return False
        self.sharers.pop(uid, None)
        deleted = self.in_flight.pop(uid, None) is not None
        self._set_slot(("f", uid), [])
        if self.consumable_capacity:
            self._set_shares(("f", uid), None)
        return deleted


class _ClaimInfo:
    __slots__ = ("available_on_nodes", "allocation")

    def __init__(self) -> None:
        self.available_on_nodes: NodeSelectorMatcher | None = None
        self.allocation: Mapping[str, Any] | None = None


class StateData:
    """Upstream ``stateData``; ``claims`` empty when the pod has no claims."""

    __slots__ = ("claims", "allocator", "to_allocate", "unavailable_claims", "informations", "node_allocations",
                 "has_node_selectors", "binding_unavailable", "ext_index", "ext_uid", "pod_scalars", "alloc_inputs",
                 "allocators", "node_ext", "pod", "optional_ops", "shared_mapped", "bindings", "reused", "alloc_idx",
                 "ext_variants", "ext_mapping", "variant_allocators")

    def __init__(self, claims: list[Any] | None = None) -> None:
        self.claims: list[dict[str, Any]] = claims or []
        self.allocator: Allocator | None = None
        self.to_allocate: list[int] = []
        self.unavailable_claims: set[int] = set()
        self.informations: list[_ClaimInfo] = []
        self.has_node_selectors = False
        self.binding_unavailable: list[int] = []
        """Allocated claims whose binding conditions failed or timed out (every node rejects them)."""
        self.node_allocations: dict[str, Any] = NodeAllocations()
        """Node name → the allocator's solution there (results built by Reserve)."""
        self.ext_index: int | None = None
        """DRAExtendedResource: index in :attr:`claims` of the pod's extended-resource claim (the
        last one; upstream ``claimStore.extendedResourceClaim``), None without one."""
        self.ext_uid = ""
        """Upstream ``initialExtendedResourceClaimUID``: the claim's UID at PreFilter (in-flight key)."""
        self.pod_scalars: dict[str, int] = {}
        """Upstream ``draExtendedResource.podScalarResources``: the pod's requests."""
        self.alloc_inputs: tuple[Any, ...] | None = None
        """With an unallocated extended-resource claim: the allocator's inputs but the claims; the
        allocators are built per set of resources DRA provides on a node (:attr:`allocators`)."""
        self.allocators: dict[frozenset[tuple[str, str, int]], Allocator] = {}
        self.node_ext: dict[str, tuple[dict[str, Any], list[dict[str, str]]]] = {}
        """Node name → (the node's variant of the extended-resource claim, the pod's request mappings)."""
        self.ext_variants: dict[tuple[tuple[str, int], ...], tuple[dict[str, Any], list[dict[str, str]]]] = {}
        """The claim variants made so far, by the resources DRA provides (nodes needing the same share one:
        every consumer copies it before changing it)."""
        self.ext_mapping: tuple[Any, ...] | None = None
        """What Filter's extended-resource part reads the same on every node, read once per cycle:
        (the claim, it has requests, it is allocated, the pod's non-zero scalars in name order,
        the DeviceClass mapping of extended resources)."""
        self.variant_allocators: dict[int, Allocator] = {}
        """id(a claim variant of :attr:`ext_variants`) → its allocator."""
        self.pod: Any = None
        self.optional_ops: list[int] = []
        """1.37: allocated claims whose devices skip node operations (``skipNodeOperations`` in a
        result): unavailable on nodes not declaring DRAOptionalNodeOperations."""
        self.shared_mapped: list[int] = []
        """DRANodeAllocatableResources: allocated claims with a device mapping node-allocatable
        resources that are reserved for others (every node rejects the pod)."""
        self.bindings: list[dict[str, Any]] | None = None
        """DRAWorkloadResourceClaims: per user claim, the ``reservedFor`` entry PreBind adds (the
        pod's or its PodGroup's; upstream ``claimStore.bindTo``); None = the pod's for all."""
        self.reused: set[int] = set()
        """Unallocated claims whose allocation is one Reserve of another member of this pod-group
        cycle made (its in-flight allocation is reused, not computed again)."""
        self.alloc_idx: list[int] = []
        """The claims of :attr:`to_allocate` the allocator allocates (all but :attr:`reused`)."""

    def clone(self) -> StateData:
        return self


def _has_node_allocatable_mapping(allocation: Mapping[str, Any], slices: list[dict[str, Any]]) -> bool:
    """Some allocated device's ``nodeAllocatableResources`` has a ``mapping`` (upstream PreFilter
    L736-752 with ``getDeviceFromSlices`` of nodeallocatabledynamicresources.go L168-186; a device
    not found counts as unmapped)."""
    for r in AllocationResultView(allocation).results:
        device = next((d for sl in map(ResourceSliceView, slices)
                       if sl.driver == r.get("driver") and sl.pool_name == r.get("pool")
                       for d in sl.devices if d.get("name") == r.get("device")), None)
        if device is not None and any((m or {}).get("mapping") is not None
                                      for m in (device.get("nodeAllocatableResources") or {}).values()):
            return True
    return False


def allocation_requires_optional_node_operations(allocation: Mapping[str, Any] | None) -> bool:
    """Upstream ``allocationResultRequiresDRAOptionalNodeOperations`` (dynamicresources.go
    L1978-1990): some allocated device result lists ``skipNodeOperations``."""
    if allocation is None:
        return False
    return any(r.get("skipNodeOperations") for r in AllocationResultView(allocation).results)


def pod_claim_names_entry(pod: Pod, rc: PodResourceClaim) -> str | None:
    """``resourceclaim.Name`` of one ``spec.resourceClaims`` entry (None = not created yet or
    skipped; raises ``_Unschedulable`` for an unsupported entry)."""
    name = rc.resource_claim_name
    if name is not None:
        return str(name)
    if rc.resource_claim_template_name is not None:
        for st in pod.status.resource_claim_statuses:
            if st.name == rc.name:
                got = st.resource_claim_name
                return None if got is None else str(got)
        return None
    raise _Unschedulable("API unsupported")


def pod_claim_names(pod: Pod) -> list[tuple[str | None, bool]]:
    """Upstream ``resourceclaim.Name`` for each ``spec.resourceClaims`` entry: (name or None =
    skipped, must-check-owner). Raises ``_Unschedulable`` with upstream's message."""
    out: list[tuple[str | None, bool]] = []
    for rc in getattr(pod.spec, "resource_claims", None) or ():
        name = rc.resource_claim_name
        if name is not None:
            out.append((name, False))
            continue
        if rc.resource_claim_template_name is not None:
            for st in pod.status.resource_claim_statuses:
                if st.name == rc.name:
                    out.append((st.resource_claim_name, True))
                    break
            else:
                raise _Unschedulable(
                    f'pod "{pod.metadata.namespace}/{pod.metadata.name}": ResourceClaim not created yet')
            continue
        raise _Unschedulable(f'pod "{pod.metadata.namespace}/{pod.metadata.name}", spec.resourceClaim '
                             f'"{rc.name}": none of the supported fields are set')
    return out


def _refers_to(pod: Pod, ref: Mapping[str, Any]) -> bool:
    """A reference names ``pod``: by UID (by name for pods without one, as simulator input may be)."""
    if pod.metadata.uid:
        return ref.get("uid") == pod.metadata.uid
    return ref.get("name") == pod.metadata.name and not ref.get("uid")


def _is_for_pod(pod: Pod, claim: dict[str, Any]) -> bool:
    """Upstream ``resourceclaim.IsForPod``: the pod is the claim's controlling owner."""
    return any(ref.get("controller") and _refers_to(pod, ref) for ref in ResourceClaimView(claim).owner_references)


def _reserved_for_pod(pod: Pod, claim: dict[str, Any]) -> bool:
    """Upstream ``resourceclaim.IsReservedForPod``."""
    return any(_refers_to(pod, r) for r in ResourceClaimView(claim).reserved_for)


def _refers_to_group(ref: Mapping[str, Any], pod_group: Mapping[str, Any]) -> bool:
    """A ``reservedFor`` entry names the PodGroup: by UID (by resource and name without one)."""
    group = ObjectView(pod_group)
    uid = group.uid
    if uid:
        return ref.get("uid") == uid
    return ref.get("resource") == "podgroups" and ref.get("name") == group.name


def _fire(coro: Coroutine[Any, Any, Any]) -> None:
    """Start a client write from a synchronous extension point (PostFilter, Unreserve): a task on
    the running loop (live), or run to completion at once (the simulator's store never waits)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        task = loop.create_task(coro)
        _TASKS.add(task)
        task.add_done_callback(_done)
        return
    try:
        coro.send(None)
    except StopIteration:
        return
    except Exception:  # noqa: BLE001 - a failed write is retried by the next attempt, as upstream
        return
    coro.close()


_TASKS: set[asyncio.Task[Any]] = set()


def _done(task: asyncio.Task[Any]) -> None:
    _TASKS.discard(task)
    if not task.cancelled():
        task.exception()  # retrieved: a failed write is retried by the pod's next attempt, as upstream


class DynamicResources:
    """PreEnqueue, PreFilter, Filter, PostFilter, Reserve/Unreserve, PreBind. See the module docstring."""

    name = NAME
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (dynamicresources.go L575-578, L936-939, L1159-1161)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]] | None, Status | None]:
        """Batching signature (v1.37.2 dynamicresources.go ``SignPod``): a pod with resource
        claims is refused; no fragment otherwise."""
        if pod.spec.resource_claims:
            return None, Status(Code.UNSCHEDULABLE, ("pods with dra resource claims are not signable",))
        return [], None

    def __init__(self, handle: Any, features: Features | None = None, filter_timeout_s: float = 10.0,
                 version: tuple[int, int] = BINARY_VERSION) -> None:
        self.handle = handle
        self.features = features or Features()
        self.manager: DRAManager | None = None
        self.filter_timeout_s = filter_timeout_s
        """``DynamicResourcesArgs.filterTimeout`` (DRASchedulerFilterTimeout, beta in v1.34); 0 = none."""
        self.binding_conditions = False
        """DRADeviceBindingConditions and DRAResourceClaimDeviceStatus: devices with binding
        conditions are allocated, PreBind waits for their conditions (:attr:`binding_timeout_s`)."""
        self.binding_timeout_s = 600.0
        """``DynamicResourcesArgs.bindingTimeout`` (default 10m)."""
        self.allocation_timestamp = False
        """DRADeviceBindingConditions and DRAResourceClaimDeviceStatus: PreBind stamps
        ``status.allocation.allocationTimestamp``."""
        self.device_taint_rules = False
        """DRADeviceTaintRules: DeviceTaintRule objects taint the devices they select."""
        self.extended_resource = False
        self.node_allocatable_resources = False
        """DRANodeAllocatableResources (α 1.37): only the claim-sharing rejection is modelled."""
        """DRAExtendedResource: extended resources a DeviceClass maps are allocated through a
        claim the scheduler writes (:mod:`~kubesched.plugins.dra_extended`)."""
        self.workload_claims = False
        """DRAWorkloadResourceClaims (β off in 1.37): claims a PodGroup shares are reserved for it."""
        self.generic_workload = False
        """GenericWorkload: pods of a PodGroup are scheduled in pod-group cycles."""
        self.topology_aware_workloads = False
        """TopologyAwareWorkloadScheduling: PodGroupPostFilter leaves groups with constraints alone."""
        self._group_states: dict[str, PodGroupStateData] = {}
        self._patched: tuple[Any, Any, list[dict[str, Any]]] | None = None
        self.version = version
        """The kube-scheduler release whose decisions are reproduced (``FeatureGate.emulated_version``):
        ungated changes are dated by it (the filter-timeout Error since 1.36, PostFilter texts 1.37)."""

    def _manager(self) -> DRAManager:
        """The Handle's ``shared_dra_manager`` (upstream ``Handle.SharedDRAManager()``: one per
        scheduler, fed by its informer events), or a manager of this plugin's own without one
        (a Handle built outside a Scheduler: unit tests)."""
        if self.manager is None:
            shared = self.handle.shared_dra_manager if self.handle is not None else None
            if isinstance(shared, DRAManager):
                self.manager = shared
            else:
                lister = self.handle.lister if self.handle is not None else None
                self.manager = DRAManager(lister, self.features.consumable_capacity)
        return self.manager

    def _claims(self, pod: Pod) -> list[dict[str, Any]]:
        """Upstream ``foreachPodResourceClaim``: the pod's existing claims, or ``_Unschedulable``."""
        if not getattr(pod.spec, "resource_claims", None):
            return []
        mgr = self._manager()
        ns = pod.metadata.namespace
        out = []
        for name, must_check_owner in pod_claim_names(pod):
            if name is None:
                continue
            claim = mgr.get_claim(ns, name) if mgr.lister is not None else None
            if claim is None:
                raise _Unschedulable(f'could not find ResourceClaim "{ns}/{name}"')
            view = ResourceClaimView(claim)
            if view.deletion_timestamp is not None:
                raise _Unschedulable(f'resourceclaim "{view.name}" is being deleted')
            if must_check_owner and not _is_for_pod(pod, claim):
                # resourceclaim.IsForPod (v0.37.2 resourceclaim.go L125-140; "Pod" capitalised since 1.36)
                pg = group_name(pod) if self.workload_claims else None
                if pg is not None:
                    if not is_for_pod_group_by_pod(pod, claim):
                        raise _Unschedulable(f"ResourceClaim {ns}/{name} was not created for Pod "
                                             f"{ns}/{pod.metadata.name} (neither Pod nor PodGroup {pg} is the owner)")
                elif self.version >= (1, 36):
                    raise _Unschedulable(f"ResourceClaim {ns}/{name} was not created for Pod "
                                         f"{ns}/{pod.metadata.name} (Pod is not owner)")
                else:
                    raise _Unschedulable(f"ResourceClaim {ns}/{name} was not created for pod "
                                         f"{ns}/{pod.metadata.name} (pod is not owner)")
            out.append(claim)
        return out

    # ── PodGroup claims (DRAWorkloadResourceClaims; v1.37.2 dynamicresources.go L515-537, L2078-2084) ──

    def _pod_group_snapshot(self, pod: Pod) -> dict[str, Any] | None:
        """Upstream ``getPodGroupSnapshot``: the pod's PodGroup (raw) when DRAWorkloadResourceClaims
        is on and the pod has a ``schedulingGroup``, else None; raises ``_Unschedulable`` with the
        snapshot lister's text when the scheduler has not observed it."""
        pg = group_name(pod) if self.workload_claims else None
        if pg is None:
            return None
        ns = pod.metadata.namespace
        mgr = getattr(self.handle, "pod_group_manager", None)
        if mgr is not None:
            obj = mgr.pod_group(ns, pg)
            if obj is None:
                if mgr.pod_group_state(ns, pg) is None:
                    raise _Unschedulable(f"pod group state not found for pod group {ns}/{pg}")
                raise _Unschedulable(f"pod group object not found for pod group {ns}/{pg}")
            return _as_dict(obj)
        lister = getattr(self.handle, "lister", None)
        obj = lister.get("PodGroup", ns, pg) if lister is not None else None
        if obj is None:
            raise _Unschedulable(f"pod group object not found for pod group {ns}/{pg}")
        return _as_dict(obj)

    def _claim_bindings(self, pod: Pod) -> list[dict[str, Any]] | None:
        """Upstream ``podResourceClaimBindings``: per ``spec.resourceClaims`` entry, the
        ``reservedFor`` entry (the PodGroup's for a claim the group shares); None without the gate."""
        if not self.workload_claims:
            return None
        pg = self._pod_group_snapshot(pod)
        try:
            return [bind_to(pod, pg, rc) for rc in getattr(pod.spec, "resource_claims", None) or ()]
        except ValueError as e:
            raise _Unschedulable(str(e)) from None

    def _group_state(self, state: CycleState, pod: Pod, create: bool = False) -> PodGroupStateData | None:
        """Upstream ``getPodGroupStateData`` / ``getOrCreatePodGroupStateData``: the DRA state of the
        pod-group cycle the pod is scheduled in, or None outside one.

        The cycle marks a member's CycleState with ``pod_group_cycle_state`` (upstream
        ``SetPodGroupSchedulingCycle``; None again before binding) and the state lives there. A
        CycleState without that attribute falls back to a state per group kept by the plugin
        (GenericWorkload on, the pod in a group), dropped by :meth:`pod_group_post_filter`."""
        pgcs: Any = getattr(state, "pod_group_cycle_state", _NO_LINK)
        if pgcs is _NO_LINK:
            pg = group_name(pod) if self.generic_workload else None
            if pg is None:
                return None
            key = f"{pod.metadata.namespace}/{pg}"
            gs = self._group_states.get(key)
            if gs is None and create:
                gs = self._group_states[key] = PodGroupStateData()
            return gs
        if pgcs is None:
            return None
        gs = pgcs.get(STATE_KEY)
        if gs is None and create:
            gs = PodGroupStateData()
            pgcs.write(STATE_KEY, gs)
        return gs if isinstance(gs, PodGroupStateData) else None

    # ── PreEnqueue ──

    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not getattr(pod.spec, "resource_claims", None):
            return None
        try:
            self._claims(pod)
        except _Unschedulable as e:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        return None

    # ── PreFilter ──

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        s = StateData()
        state.write(STATE_KEY, s)
        group_state = self._group_state(state, pod, create=True)
        if group_state is not None:  # v1.37.2 L593-603: PodGroupPostFilter reads every member's state
            group_state.pods_state_data[f"{pod.metadata.namespace}/{pod.metadata.name}"] = s
        ext_requests = self._mapped_extended_requests(pod) if self.extended_resource else None
        if not getattr(pod.spec, "resource_claims", None) and not ext_requests:
            return None, SKIP_STATUS
        mgr = self._manager()
        mgr.sync()
        try:
            claims = self._claims(pod)
        except _Unschedulable as e:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        if ext_requests:
            claims = [*claims, self._pre_filter_extended(s, pod, ext_requests, len(claims))]
        if self.workload_claims:
            try:
                s.bindings = self._claim_bindings(pod)
            except _Unschedulable as e:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        if not claims:
            return None, SKIP_STATUS
        s.pod = pod
        s.informations = [_ClaimInfo() for _ in claims]
        to_allocate: list[int] = []
        for i, claim in enumerate(claims):
            view = ResourceClaimView(claim)
            allocation = view.allocation
            if allocation is not None:
                if (len(view.reserved_for) >= RESERVED_FOR_MAX_SIZE
                        and not is_reserved_for_pod(pod, claim, self.workload_claims)):
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("resourceclaim in use",))
                sel = AllocationResultView(allocation).node_selector
                if sel is not None:
                    try:
                        s.informations[i].available_on_nodes = NodeSelectorMatcher(msgspec.convert(sel, NodeSelector))
                        s.has_node_selectors = True
                    except (msgspec.ValidationError, ValueError) as e:
                        return None, Status(Code.ERROR, (str(e),))
                if self.version >= (1, 37) and allocation_requires_optional_node_operations(allocation):
                    s.optional_ops.append(i)  # v1.37.2 Filter L983-988 (ungated: the data decides)
                if self.binding_conditions:
                    # v1.37.2 Filter L994-1007 (the same on every node, so decided once here): a claim
                    # whose binding failed or timed out is unavailable, for PostFilter to deallocate
                    try:
                        ready = self._claim_ready_for_binding(claim)
                    except _BindingFailed:
                        ready = None
                    if ready is None or (not ready and self._claim_timed_out(claim)):
                        s.binding_unavailable.append(i)
                continue
            to_allocate.append(i)
            if group_state is not None and _uid(claim) in group_state.pending_allocations:
                # v1.37.2 L640-679: another member of this pod-group cycle reserved an allocation
                # for the claim; reuse it (its node selector limits the nodes) instead of waiting
                pending = mgr.pending_allocation(claim)
                if pending is not None:
                    s.informations[i].allocation = pending
                    s.reused.add(i)
                    sel = AllocationResultView(pending).node_selector
                    if sel is not None:
                        try:
                            s.informations[i].available_on_nodes = NodeSelectorMatcher(
                                msgspec.convert(sel, NodeSelector))
                            s.has_node_selectors = True
                        except (msgspec.ValidationError, ValueError) as e:
                            return None, Status(Code.ERROR, (str(e),))
                    continue
            if mgr.has_pending_allocation(claim):
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                    f"resource claim {_key(claim).lstrip('/')} is in the process of being allocated",))
            if i == s.ext_index:
                continue  # v1.37.2 L685-690: the extended-resource claim is validated by Filter
            for request in map(DeviceRequestView, view.requests):
                subs = request.first_available
                if request.exactly is not None:
                    st = self._validate_class(request.device_class_name, request.name)
                    if st is not None:
                        return None, st
                    continue
                if not subs:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                        f"resource claim {_key(claim).lstrip('/')}, request {request.name}: "
                        "unknown request type",))
                if not self.features.prioritized_list:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                        f"resource claim {_key(claim).lstrip('/')}, request {request.name}: has "
                        "subrequests, but the DRAPrioritizedList feature is disabled",))
                for sub in subs:
                    st = self._validate_class(sub.get("deviceClassName"),
                                              f"{request.name}/{sub.get('name', '')}")
                    if st is not None:
                        return None, st
        if self.node_allocatable_resources:
            # v1.37.2 PreFilter L725-756 (claimHasNodeAllocatableMappedDevice) and Filter L1006-1019
            # (validateNodeAllocatableDRAClaimSharing): a mapped claim cannot be shared across pods
            slices = None
            me = pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}"
            for i, claim in enumerate(claims):
                view = ResourceClaimView(claim)
                allocation = view.allocation
                if allocation is None and i in s.reused and group_state is not None:
                    # a pending allocation another member of this pod-group cycle reserved
                    if not (group_state.pending_allocations.get(_uid(claim), set()) - {me}):
                        continue
                    allocation = s.informations[i].allocation
                elif allocation is None or not view.reserved_for \
                        or is_reserved_for_pod(pod, claim, self.workload_claims):
                    continue
                if slices is None:
                    slices = mgr.slices()
                if allocation is not None and _has_node_allocatable_mapping(allocation, slices):
                    s.shared_mapped.append(i)
        if to_allocate:
            lister = mgr.lister
            slices = mgr.slices()  # the same list object while the slices are the same
            if self.device_taint_rules:
                # (the patched list is kept while the slices and rules are the same: stable too)
                slices = self._patched_slices(slices, [_as_dict(x) for x in lister.list("DeviceTaintRule")])
            s.alloc_idx = [i for i in to_allocate if i not in s.reused] if s.reused else to_allocate
            if s.ext_index in to_allocate:
                # each node allocates its own variant of the extended-resource claim (Filter)
                s.alloc_inputs = (mgr.in_use, self._get_class, slices, self.features, mgr.pool_versions, mgr.shared,
                                  True)
            elif s.alloc_idx:
                s.allocator = Allocator([claims[i] for i in s.alloc_idx], mgr.in_use, self._get_class, slices,
                                        self.features, mgr.pool_versions, mgr.shared, True)
            s.to_allocate = to_allocate
        s.claims = claims
        return None, None

    def _patched_slices(self, slices: list[dict[str, Any]], rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The slices with the DeviceTaintRules' taints applied (upstream: the ResourceSlice tracker's
        patched slices, ``ListWithDeviceTaintRules``, when DRADeviceTaintRules is on); the last
        result is kept while the slices and rules are the same objects."""
        if not rules:
            return slices
        key = ([id(x) for x in slices], [id(r) for r in rules])
        hit = self._patched
        if hit is not None and hit[0] == key:
            return hit[2]
        patched = apply_device_taint_rules(slices, rules)
        self._patched = (key, (slices, rules), patched)  # holds the inputs: their ids stay theirs
        return patched

    def _get_class(self, name: str) -> dict[str, Any] | None:
        c = self._manager().lister.get("DeviceClass", "", name)
        return _as_dict(c) if c is not None else None

    def _validate_class(self, class_name: str | None, request_name: str) -> Status | None:
        if not class_name:
            return Status(Code.ERROR, (f"request {request_name}: unsupported request type",))
        if self._get_class(class_name) is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                          (f"request {request_name}: device class {class_name} does not exist",))
        return None

    def pre_filter_extensions(self) -> None:
        return None

    # ── extended resources backed by DRA (v1.37.2 extendeddynamicresources.go) ──

    def _mapped_extended_requests(self, pod: Pod) -> dict[str, int] | None:
        """The pod's DRA-extended-resource requests when one of them is mapped to a DeviceClass
        (upstream ``hasDeviceClassMappedExtendedResource``, L101-116), else None."""
        mapping = device_class_mapping(self._manager().lister)
        if not mapping:
            return None
        reqs = pod_requests(pod)
        scalars = {n: v for n, v in reqs.items() if is_dra_extended_resource_name(n)}
        if not any(v != 0 and n in mapping for n, v in scalars.items()):
            return None
        return scalars

    def _pre_filter_extended(self, s: StateData, pod: Pod, scalars: dict[str, int], index: int) -> dict[str, Any]:
        """Upstream ``preFilterExtendedResources`` (L147-206): the claim a prior cycle wrote for
        the pod (as the manager sees it), else a new in-memory one."""
        mgr = self._manager()
        s.pod_scalars = scalars
        claim = mgr.find_extended_claim(pod)
        if claim is not None:
            view = ObjectView(claim)
            claim = mgr.get_claim(view.namespace, view.name) or claim
        else:
            claim = new_special_claim(pod)
        s.ext_index = index
        s.ext_uid = _uid(claim)
        return claim

    def _ext_pre(self, s: StateData) -> tuple[Any, ...]:
        """:attr:`StateData.ext_mapping`, read on first use in the cycle."""
        pre = s.ext_mapping
        if pre is None:
            claim = s.claims[s.ext_index] if s.ext_index is not None else None
            view = ResourceClaimView(claim) if claim is not None else None
            pre = s.ext_mapping = (claim, bool(view is not None and view.requests),
                                   view is not None and view.allocation is not None,
                                   [(n, q) for n, q in sorted(s.pod_scalars.items()) if q != 0],
                                   device_class_mapping(self._manager().lister) if claim is not None else {})
        return pre

    def _filter_extended(self, s: StateData, node: Any
                         ) -> tuple[dict[str, Any] | None, list[dict[str, str]], Status | None]:
        """Upstream ``filterExtendedResources`` (L216-282): the node's variant of the claim and the
        request mappings; None when the node needs nothing from DRA (or the claim is allocated)."""
        claim, has_requests, allocated, scalars, mapping = self._ext_pre(s)
        if claim is None:
            return None, [], None
        if has_requests:  # (``omitempty``: an empty list is nil upstream)
            # written by a prior cycle: PostFilter deletes it and the pod retries anew
            return None, [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot schedule extended resource claim",))
        allocatable = _scalar_allocatable(node)
        needed: dict[str, int] = {}
        for name, q in scalars:
            have = allocatable.get(name)
            if name in mapping and not have:
                needed[name] = q  # the node provides it through DRA
            elif have is None:
                return None, [], Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot fit resource",))
        if not needed and not s.ext_index:  # no user claim either
            return None, [], None
        if allocated:
            return None, [], None
        key = tuple(needed.items())
        variant = s.ext_variants.get(key)
        if variant is None:
            requests, mappings = create_requests_and_mappings(s.pod, needed, mapping)
            variant = s.ext_variants[key] = (node_claim(claim, requests), mappings)
        return variant[0], variant[1], None

    def _node_allocator(self, s: StateData, node_ext: dict[str, Any] | None) -> Allocator | None:
        """The allocator of ``s`` (one per distinct node variant of the extended-resource claim)."""
        if s.alloc_inputs is None or node_ext is None:
            return s.allocator
        hit = s.variant_allocators.get(id(node_ext))  # variants are kept by s.ext_variants: ids stay theirs
        if hit is not None:
            return hit
        key = frozenset((str(r["name"]), str(r["exactly"]["deviceClassName"]), int(r["exactly"]["count"]))
                        for r in ResourceClaimView(node_ext).requests)
        a = s.allocators.get(key)
        if a is None:
            claims = [node_ext if i == s.ext_index else s.claims[i] for i in s.alloc_idx]
            a = s.allocators[key] = Allocator(claims, *s.alloc_inputs)
        s.variant_allocators[id(node_ext)] = a
        return a

    async def _delete_claim(self, claim: dict[str, Any]) -> None:
        """Upstream ``deleteClaim`` (L291-320): drop the delete-protection finalizer, then delete."""
        client = self.handle.client
        fins = ResourceClaimView(claim).finalizers
        if FINALIZER in fins:
            c = _copy_claim(claim)
            c["metadata"]["finalizers"] = [f for f in fins if f != FINALIZER]
            await client.update_resource_claim(c)
        await client.delete_resource_claim(claim)

    def _state(self, state: CycleState) -> StateData | None:
        s = state.get(STATE_KEY)
        return s if isinstance(s, StateData) else None

    # ── Filter ──

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = self._state(state)
        if s is None:
            return Status(Code.ERROR, ("not found",))
        if not s.claims:
            return None
        return self._filter_node(s, node_info.node)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        """:meth:`filter` over ``rows`` of the table, without a NodeInfo and a Status per node
        (same results; an Error status on a node raises, as the framework does for Filter)."""
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = self._state(state)
        if s is None:
            raise _FilterErr("not found")
        if not s.claims:
            return None
        table_nodes: Sequence[Any] = nodes.nodes
        failed = np.zeros(len(rows), np.int64)
        index: dict[ReasonEntry, int] = {}
        rejected: Iterable[tuple[int, Status]]
        bulk: np.ndarray | None = None
        if not s.has_node_selectors and not s.optional_ops and not s.shared_mapped and not s.binding_unavailable \
                and not s.reused:
            if s.ext_index is not None:
                bulk, rejected = self._extended_rejections(s, nodes, rows)
            elif s.allocator is None:
                return None
            else:
                bulk, rejected = self._allocator_rejections(s, s.allocator, nodes, rows)
            if len(bulk) and rejected:
                # (reasons are numbered in row order: merge the look-ups' rejections with the rest)
                rejected = sorted([*((i, _CANNOT_ALLOCATE) for i in bulk.tolist()), *rejected], key=_first)
                bulk = None
        else:
            rejected = ((i, st) for i, row in enumerate(rows.tolist())
                        if (st := self._filter_node(s, table_nodes[row])) is not None)
        if bulk is not None and len(bulk):
            index[(_CANNOT_ALLOCATE.reasons, _CANNOT_ALLOCATE.code)] = 1
            failed[bulk] = 1
        for i, st in rejected:
            if st.code == Code.ERROR:
                raise _FilterErr(st.message())
            entry = (st.reasons, st.code)
            k = index.get(entry)
            if k is None:
                k = index[entry] = len(index) + 1
            failed[i] = k
        if not index:
            return None
        return FilterResult.interned(failed, list(index))

    def _allocator_rejections(self, s: StateData, a: Allocator, nodes: NodeTable, rows: np.ndarray
                              ) -> tuple[np.ndarray, list[tuple[int, Status]]]:
        """:meth:`_filter_node` over ``rows`` when only the allocator decides (no extended-resource
        claim, node selectors, optional operations, shared mapped claims, failed bindings or
        reused allocations): the indexes into ``rows`` the look-ups (:meth:`Allocator.first_fit_table`,
        else :meth:`Allocator.first_fit_rows`) reject with "cannot allocate all claims", and the
        other rejected rows' statuses in row order (up to an Error status: Filter stops there);
        the solutions go to ``s.node_allocations``."""
        allocations = s.node_allocations
        timeout = self.filter_timeout_s
        table_nodes: Sequence[Any] = nodes.nodes
        pending: Iterable[int]
        batch = a.first_fit_table(nodes, rows, allocations)  # the look-ups, with numpy
        if batch is not None:
            bulk, undecided = batch
            pending = undecided.tolist()
        else:
            listed = a.first_fit_rows(table_nodes, rows.tolist(), allocations)  # the look-ups, in one loop
            if listed is not None:
                bulk, pending = np.asarray(listed[0], np.int64), listed[1]
            else:
                bulk, pending = _NO_ROWS, range(len(rows))
        rest: list[tuple[int, Status]] = []
        if pending:
            row_list: list[int] = rows.tolist()
            for i in pending:
                node = table_nodes[row_list[i]]
                try:
                    run = a.allocate_run(node, timeout)
                except (AllocatorTimeout, AllocatorError) as e:
                    st = self._allocator_error_status(e, node)
                    rest.append((i, st))
                    if st.code == Code.ERROR:
                        break
                    continue
                if run is not None:
                    allocations[node.metadata.name] = run
                else:
                    rest.append((i, _CANNOT_ALLOCATE))
        return bulk, rest

    def _extended_rejections(self, s: StateData, nodes: NodeTable, rows: np.ndarray
                             ) -> tuple[np.ndarray, list[tuple[int, Status]]]:
        """:meth:`_filter_node` over ``rows`` with an extended-resource claim and no other per-node
        condition: each node's variant of the claim first, then the nodes of one variant allocator
        together (:meth:`_allocator_rejections`); as that, the indexes rejected by the look-ups and
        the other rejected rows' statuses in row order."""
        out: list[tuple[int, Status]] = []
        groups: dict[int, tuple[Allocator, list[int], list[tuple[dict[str, Any] | None, list[dict[str, str]]]]]] = {}
        table_nodes: Sequence[Any] = nodes.nodes
        row_list: list[int] = rows.tolist()
        by_column = self._extended_by_column(s, nodes, rows)
        for i, row in (enumerate(row_list) if by_column is None else ()):
            node_ext, mappings, st = self._filter_extended(s, table_nodes[row])
            if st is not None:
                out.append((i, st))
                continue
            if node_ext is None and not s.ext_index:
                continue  # no user claim, and the node's allocatable covers the extended resources
            a = self._node_allocator(s, node_ext)
            if a is None:
                continue
            g = groups.get(id(a))
            if g is None:
                g = groups[id(a)] = (a, [], [])
            g[1].append(i)
            g[2].append((node_ext, mappings))
        allocations = s.node_allocations
        bulks: list[np.ndarray] = []
        for a, idx, exts in (groups.values() if by_column is None else by_column):
            idx_arr = np.asarray(idx, np.int64)
            bulk, rest = self._allocator_rejections(s, a, nodes, rows[idx_arr])
            if len(bulk):
                bulks.append(idx_arr[bulk])
            out.extend((idx[j], st) for j, st in rest)
            if any(st.code == Code.ERROR for _j, st in rest):
                kept = [j for j in range(len(idx)) if table_nodes[row_list[idx[j]]].metadata.name in allocations]
            else:  # (the rows not rejected are the ones with a solution)
                no = np.zeros(len(idx), bool)
                no[bulk] = True
                no[[j for j, _st in rest]] = True
                kept = np.flatnonzero(~no).tolist()
            names = nodes.names
            if by_column is not None:  # (one variant per group)
                node_ext0, mappings0 = exts[0]
                if kept and node_ext0 is not None:
                    s.node_ext.update(dict.fromkeys(map(names.__getitem__, rows[idx_arr[kept]].tolist()),
                                                    (node_ext0, mappings0)))
                continue
            for j in kept:
                node_ext, mappings = exts[j]
                if node_ext is not None:
                    s.node_ext[names[row_list[idx[j]]]] = (node_ext, mappings)
        if len(out) > 1:
            out.sort(key=_first)
        return (np.concatenate(bulks) if len(bulks) > 1 else bulks[0] if bulks else _NO_ROWS), out

    def _extended_by_column(self, s: StateData, nodes: NodeTable, rows: np.ndarray
                            ) -> list[tuple[Allocator, list[int], list[tuple[dict[str, Any],
                                                                           list[dict[str, str]]]]]] | None:
        """:meth:`_filter_extended` for every row at once, when it decides from the node's
        allocatable alone (the claim is unallocated and has no requests yet, and every extended
        resource the pod asks for maps to a DeviceClass: a node provides it through DRA where its
        allocatable has none, so no row is rejected here): the rows grouped by the resources DRA
        provides there, read from the table's allocatable columns (the same integers as
        :func:`_scalar_allocatable`), as (variant allocator, indexes into ``rows``, per index the
        node variant and mappings). None when the per-node path must decide."""
        claim, has_requests, allocated, scalars, mapping = self._ext_pre(s)
        if claim is None or has_requests or allocated or any(name not in mapping for name, _q in scalars):
            return None
        zero = np.zeros(len(rows), np.int64)
        code = zero.copy()
        for j, (name, _q) in enumerate(scalars):
            col = nodes.resource_index.get(name)
            have = nodes.allocatable[rows, col] if col is not None else zero
            code |= (have == 0).astype(np.int64) << j
        out = []
        for c in np.unique(code).tolist():
            needed = {name: q for j, (name, q) in enumerate(scalars) if c >> j & 1}
            if not needed and not s.ext_index:
                continue  # no user claim, and the nodes' allocatable covers the extended resources
            key = tuple(needed.items())
            variant = s.ext_variants.get(key)
            if variant is None:
                requests, mappings = create_requests_and_mappings(s.pod, needed, mapping)
                variant = s.ext_variants[key] = (node_claim(claim, requests), mappings)
            a = self._node_allocator(s, variant[0])
            if a is None:
                continue
            idx = np.flatnonzero(code == c).tolist()
            out.append((a, idx, [variant] * len(idx)))
        return out

    def _filter_node(self, s: StateData, node: Any) -> Status | None:
        node_ext: dict[str, Any] | None = None
        mappings: list[dict[str, str]] = []
        if s.ext_index is not None:
            node_ext, mappings, st = self._filter_extended(s, node)
            if st is not None:
                return st
            if node_ext is None and not s.ext_index:
                return None  # no user claim, and the node's allocatable covers the extended resources
        unavailable: list[int] = []
        if s.has_node_selectors:
            name, labels = node.metadata.name, node.metadata.labels or {}
            unavailable = [i for i, info in enumerate(s.informations) if info.available_on_nodes is not None
                           and not info.available_on_nodes.match(labels, name)]
        if s.optional_ops and not node_declares(node, OPTIONAL_NODE_OPERATIONS_FEATURE):
            unavailable = sorted(set(unavailable) | set(s.optional_ops))
        for i in s.shared_mapped:
            if i not in unavailable:  # upstream checks claims in order; unavailable ones are skipped
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                    f"node allocatable resource claim {ResourceClaimView(s.claims[i]).name} has a mapped device "
                    "and cannot be shared across pods",))
        if s.binding_unavailable:
            unavailable = sorted(set(unavailable) | set(s.binding_unavailable))
        if s.reused and not node_declares(node, OPTIONAL_NODE_OPERATIONS_FEATURE):
            for i in sorted(s.reused):  # v1.37.2 Filter L1043-1050: a reused pending allocation
                if allocation_requires_optional_node_operations(s.informations[i].allocation):
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                        f"resource claim {_key(s.claims[i]).lstrip('/')} allocation requires "
                        "DRAOptionalNodeOperations feature on the node",))
        allocations = None
        allocator = self._node_allocator(s, node_ext)
        if allocator is not None:
            try:
                allocations = allocator.allocate_run(node, self.filter_timeout_s)
            except (AllocatorTimeout, AllocatorError) as e:
                return self._allocator_error_status(e, node)
            if allocations is None:
                return _CANNOT_ALLOCATE
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("resourceclaim not available on the node",))
        if allocations is not None:
            s.node_allocations[node.metadata.name] = allocations
            if node_ext is not None:
                s.node_ext[node.metadata.name] = (node_ext, mappings)
        return None

    def _allocator_error_status(self, e: AllocatorTimeout | AllocatorError, node: Any) -> Status:
        if isinstance(e, AllocatorTimeout):
            if self.version >= (1, 36):
                # v1.37.2 dynamicresources.go L1066-1073 (since 1.36): potentially transient, so an
                # Error (error backoff) naming the node, not Unschedulable
                return Status(Code.ERROR, (f"node {node.metadata.name}: timed out trying to allocate devices",))
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("timed out trying to allocate devices",))
        if e.failed_on_node:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (e.message,))
        return Status(Code.ERROR, (e.message,))

    # ── PostFilter ──

    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: Any) -> tuple[None, Status]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, Status(Code.UNSCHEDULABLE)
        s = self._state(state)
        if s is None:
            return None, Status(Code.ERROR, ("not found",))
        v137 = self.version >= (1, 37)  # v1.37.2 dynamicresources.go L1153-1221: no texts but the two outcomes
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, () if v137 else (ERR_NO_NEW_CLAIMS,))
        return None, self._deallocate_or_delete_pod_claims(pod, s)[1]

    def _client(self) -> Any:
        return self.handle.client if self.handle is not None else None

    def _deallocate(self, claim: dict[str, Any]) -> None:
        """Write the claim without ``reservedFor``, ``allocation`` and ``devices`` (a status update)."""
        c = _copy_claim(claim)
        st = c.setdefault("status", {})
        st.pop("reservedFor", None)
        st.pop("allocation", None)
        st.pop("devices", None)
        client = self._client()
        if client is not None:
            _fire(client.update_resource_claim_status(c))

    def _deallocate_or_delete_pod_claims(self, pod: Pod, s: StateData) -> tuple[bool, Status]:
        """Upstream ``deallocateOrDeletePodClaims`` (v1.37.2 L1178-1218): deallocate one claim that
        was unavailable and is reserved for nobody (or only this pod), else delete the pod's written
        extended-resource claim; (whether one was found, the Unschedulable status)."""
        ext = s.claims[s.ext_index] if s.ext_index is not None else None
        for i in sorted(s.unavailable_claims):
            claim = s.claims[i]
            if i == s.ext_index:
                if not is_special_claim(claim):
                    break
                continue
            reserved = ResourceClaimView(claim).reserved_for
            if not reserved or (len(reserved) == 1 and _refers_to(pod, reserved[0])):
                self._deallocate(claim)
                return True, Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",))
        if ext is not None and not is_special_claim(ext):
            # v1.37.2 L1207-1215: the claim a prior cycle wrote is deleted, the pod retries anew
            if self._client() is not None:
                _fire(self._delete_claim(ext))
            return True, Status(Code.UNSCHEDULABLE, ("deletion of ResourceClaim completed",))
        return False, Status(Code.UNSCHEDULABLE, () if self.version >= (1, 37) else ("still not schedulable",))

    # ── PodGroupPostFilter (v1.37.2 dynamicresources.go L1220-1384) ──

    def pod_group_post_filter(self, state: PodGroupCycleState | None, pg_info: PodGroupInfo,
                              scheduling_func: PodGroupSchedulingFunc | None = None,
                              ) -> tuple[PodGroupPostFilterResult | None, Status]:
        """After a failed pod-group cycle: per unscheduled member (that reached PreFilter in this
        cycle) the same deallocation/deletion as PostFilter; when some member found nothing to
        free and DRAWorkloadResourceClaims is on, :meth:`_deallocate_pod_group_claims`. Always
        Unschedulable (``deallocation and deletion of ResourceClaims completed`` unless the group
        step answers itself); nothing for a CompositePodGroup or (TopologyAwareWorkloadScheduling)
        a PodGroup with ``schedulingConstraints``; Error ``not found`` when no member's PreFilter
        ran in the cycle (upstream reads the group's state unconditionally, upstream-v137 §8)."""
        key = f"{pg_info.namespace}/{pg_info.name}"
        fallback = self._group_states.pop(key, None)
        if pg_info.type == COMPOSITE_POD_GROUP_KEY_TYPE:
            return None, Status(Code.UNSCHEDULABLE)
        if self.topology_aware_workloads and pg_info.pod_group is not None \
                and (pg_info.pod_group.get("spec") or {}).get("schedulingConstraints") is not None:
            return None, Status(Code.UNSCHEDULABLE)
        gs = state.get(STATE_KEY) if state is not None else None
        if gs is None:
            gs = fallback
        if not isinstance(gs, PodGroupStateData):
            return None, Status(Code.ERROR, ("not found",))
        unreserve_group = False
        if gs.pods_state_data:
            for pod in pg_info.unscheduled_pods:
                ps = gs.pods_state_data.get(f"{pod.metadata.namespace}/{pod.metadata.name}")
                if ps is None:
                    continue
                found, st = self._deallocate_or_delete_pod_claims(pod, ps)
                if st.code == Code.ERROR:
                    return None, st
                if not found:
                    unreserve_group = True  # not every member can be scheduled
        if unreserve_group and self.workload_claims and pg_info.unscheduled_pods:
            st2 = self._deallocate_pod_group_claims(gs, pg_info.unscheduled_pods[0])
            if st2 is not None:
                return None, st2
        return None, Status(Code.UNSCHEDULABLE, ("deallocation and deletion of ResourceClaims completed",))

    def _deallocate_pod_group_claims(self, gs: PodGroupStateData, pod: Pod) -> Status | None:
        """Upstream ``deallocatePodGroupClaims`` (L1287-1384): when no member of the group is
        assumed or bound, deallocate a claim some member found unavailable that is reserved for
        nobody or only for the group (``deallocation of PodGroup ResourceClaim completed``), else
        drop the group from ``reservedFor`` of the first allocated claim of the PodGroup's
        ``spec.resourceClaims`` (UnschedulableAndUnresolvable ``ResourceClaim unreserved for
        PodGroup``), so the next cycle may pick other devices."""
        pg_name = group_name(pod)
        if pg_name is None:
            return None
        ns = pod.metadata.namespace
        pgm = getattr(self.handle, "pod_group_manager", None)
        pgs = pgm.pod_group_state(ns, pg_name) if pgm is not None else None
        if pgs is None:
            return Status(Code.ERROR, (f"pod group state not found for pod group {ns}/{pg_name}",))
        if pgs.scheduled_pods_count() > 0:
            return None  # members hold the claims
        try:
            pod_group = self._pod_group_snapshot(pod)
        except _Unschedulable as e:
            return Status(Code.ERROR, (str(e),))
        if pod_group is None:
            return None
        for ps in gs.pods_state_data.values():
            for i in sorted(ps.unavailable_claims):
                claim = ps.claims[i]
                reserved = ResourceClaimView(claim).reserved_for
                if not reserved or (len(reserved) == 1 and _refers_to_group(reserved[0], pod_group)):
                    self._deallocate(claim)
                    return Status(Code.UNSCHEDULABLE, ("deallocation of PodGroup ResourceClaim completed",))
        mgr = self._manager()
        for name, must_check_owner, err in claim_names_from_pod_group(pod_group):
            if err is not None:
                return Status(Code.ERROR, (err,))
            if name is None:
                continue
            claim = mgr.get_claim(ns, name) if mgr.lister is not None else None
            if claim is None:
                return Status(Code.ERROR, (f'resourceclaim.resource.k8s.io "{name}" not found',))
            if must_check_owner and is_for_pod_group(pod_group, claim) is not None:
                continue
            if ResourceClaimView(claim).allocation is not None and is_reserved_for_pod(pod, claim, True):
                c = _copy_claim(claim)
                c["status"]["reservedFor"] = [r for r in c["status"].get("reservedFor") or ()
                                              if not _refers_to_group(r, pod_group)]
                client = self._client()
                if client is not None:
                    _fire(client.update_resource_claim_status(c))
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("ResourceClaim unreserved for PodGroup",))
        return None

    # ── Reserve / Unreserve ──

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = self._state(state)
        if s is None:
            return Status(Code.ERROR, ("not found",))
        if not s.claims or not s.to_allocate:
            return None
        run = s.node_allocations.get(node_name)
        alloc_idx = s.alloc_idx
        if run is None:
            if any(i != s.ext_index for i in alloc_idx):
                return Status(Code.ERROR, ("claim allocation not found for node",))
            if not s.reused:
                return None  # v1.37.2 L1524-1530: the node's allocatable covers the extended resources
            alloc_idx = []
        allocations = run.results() if run is not None else []
        if len(allocations) != len(alloc_idx):
            return Status(Code.ERROR, (f"internal error, have {len(allocations)} allocations, "
                                       f"{len(alloc_idx)} claims to allocate",))
        results = dict(zip(alloc_idx, allocations, strict=True))
        mgr = self._manager()
        group_state = self._group_state(state, pod) if self.generic_workload else None
        for i in s.to_allocate:
            allocation = results.get(i)
            if allocation is None:
                if i not in s.reused:
                    continue  # the extended-resource claim on a node whose allocatable covers it
                allocation = s.informations[i].allocation  # shared with another member (L1545-1576)
            s.informations[i].allocation = allocation
            c = _copy_claim(s.node_ext[node_name][0] if i == s.ext_index else s.claims[i])
            fins = c.setdefault("metadata", {}).setdefault("finalizers", [])
            if FINALIZER not in fins:
                fins.append(FINALIZER)
            c.setdefault("status", {})["allocation"] = allocation
            mgr.signal_pending_allocation(c)
            if group_state is not None:
                group_state.pending_allocations.setdefault(_uid(c), set()).add(
                    pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}")
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = self._state(state)
        if s is None or not s.claims:
            return
        mgr = self._manager()
        client = self.handle.client if self.handle is not None else None
        group_state = self._group_state(state, pod) if self.generic_workload else None
        for i, claim in enumerate(s.claims):
            if i == s.ext_index:
                continue
            # v1.37.2 L1597-1622: a pending allocation other members still share stays in flight
            if mgr.remove_pending_allocation(claim, force=False):
                mgr.restore(claim)
                if group_state is not None:
                    group_state.pending_allocations.pop(_uid(claim), None)
            if ResourceClaimView(claim).allocation is not None and _reserved_for_pod(pod, claim) \
                    and client is not None:
                c = _copy_claim(claim)
                c["status"]["reservedFor"] = [r for r in c["status"].get("reservedFor") or ()
                                              if not _refers_to(pod, r)]
                _fire(client.update_resource_claim_status(c))
        if s.ext_index is not None:  # upstream unreserveExtendedResourceClaim (L590-615)
            ext = s.claims[s.ext_index]
            if mgr.remove_pending_allocation({"metadata": {"uid": s.ext_uid}}):
                mgr.restore(ext)
            if not is_special_claim(ext) and client is not None:
                _fire(self._delete_claim(ext))

    # ── PreBind ──

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod,
                            node_name: str) -> tuple[PreBindPreFlightResult, Status | None]:
        """Upstream ``PreBindPreFlight`` (``dynamicresources.go`` L1788-1801): Skip for a pod
        without claims, else Success (PreBind reserves/allocates them); ``AllowParallel``."""
        result = PreBindPreFlightResult(allow_parallel=True)
        s = self._state(state)
        if s is None:
            return result, Status(Code.ERROR, ("not found",))
        if not s.claims:
            return result, SKIP_STATUS
        return result, None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        """None or a Status at once for a pod without claims; else a coroutine the framework awaits."""
        s = self._state(state)
        if s is None:
            return Status(Code.ERROR, ("not found",))
        if not s.claims:
            return None
        return self._pre_bind(s, pod, node_name)

    async def _pre_bind(self, s: StateData, pod: Pod, node_name: str = "") -> Status | None:
        for i, claim in enumerate(s.claims):
            if is_reserved_for_pod(pod, claim, self.workload_claims):
                continue
            try:
                s.claims[i] = await self._bind_claim(s, i, pod, node_name)
            except Exception as e:  # noqa: BLE001 - any write failure fails the binding cycle
                return Status(Code.ERROR, (str(e) or type(e).__name__,), error=e)
        if not self.binding_conditions or not any(
                r.get("bindingConditions") for c in s.claims for r in ResourceClaimView(c).allocation_results):
            return None
        return await self._wait_for_binding_conditions(s)

    # ── binding conditions (DRADeviceBindingConditions + DRAResourceClaimDeviceStatus) ──

    async def _wait_for_binding_conditions(self, s: StateData) -> Status | None:
        """v1.37.2 PreBind L1713-1775: poll every 5 s (at once first) until every claim is ready
        for binding, for at most ``bindingTimeout``; a failure condition or the timeout is an
        Error (the next attempt's Filter then finds the claim unavailable)."""
        clock = getattr(self.handle, "clock", None)
        deadline = (clock.now() if clock is not None else time.time()) + self.binding_timeout_s
        while True:
            try:
                if self._pod_ready_for_binding(s):
                    return None
            except _BindingFailed as e:
                return Status(Code.ERROR, (str(e),), error=e)
            now = clock.now() if clock is not None else time.time()
            if now >= deadline:
                timeout = _BindingFailed("device binding timeout: context deadline exceeded")
                return Status(Code.ERROR, (str(timeout),), error=timeout)
            await self._sleep(min(5.0, deadline - now))

    async def _sleep(self, seconds: float) -> None:
        clock = getattr(self.handle, "clock", None)
        if clock is None:
            await asyncio.sleep(seconds)
            return
        fut = clock.create_future()
        clock.call_later(seconds, lambda: None if fut.done() else fut.set_result(None))
        await fut

    def _pod_ready_for_binding(self, s: StateData) -> bool:
        """Upstream ``isPodReadyForBinding``: the claims as the manager has them now."""
        mgr = self._manager()
        for i, claim in enumerate(s.claims):
            view = ObjectView(claim)
            fresh = mgr.get_claim(view.namespace, view.name)
            if fresh is None:
                raise _BindingFailed(f'resourceclaim.resource.k8s.io "{view.name}" not found')
            s.claims[i] = fresh
            if not self._claim_ready_for_binding(fresh):
                if self._claim_timed_out(fresh):
                    raise _BindingFailed(f"device binding timeout: claim={view.name}")
                return False
        return True

    @staticmethod
    def _claim_ready_for_binding(claim: dict[str, Any]) -> bool:
        """Upstream ``isClaimReadyForBinding`` (v1.37.2 L1998-2030): every result with binding
        conditions has a ``status.devices`` entry where all of them are True and none of its
        binding failure conditions is (a True failure condition raises ``_BindingFailed``)."""
        view = ResourceClaimView(claim)
        allocation = view.allocation
        if allocation is None:
            return False
        for r in AllocationResultView(allocation).results:
            if not r.get("bindingConditions"):
                continue
            status = next((d for d in view.devices
                           if (d.get("device"), d.get("driver"), d.get("pool"))
                           == (r.get("device"), r.get("driver"), r.get("pool"))), None)
            if status is None:
                return False
            conds = {c.get("type"): c for c in status.get("conditions") or ()}
            for t in r.get("bindingFailureConditions") or ():
                c = conds.get(t)
                if c is not None and c.get("status") == "True":
                    raise _BindingFailed(f"device binding failed: claim={view.name}, "
                                         f"reason={c.get('reason', '')}, message={_go_quote(c.get('message', ''))}")
            if any((conds.get(t) or {}).get("status") != "True" for t in r["bindingConditions"]):
                return False
        return True

    def _claim_timed_out(self, claim: dict[str, Any]) -> bool:
        """Upstream ``isClaimTimeout``: a result with binding conditions and ``allocationTimestamp``
        + ``bindingTimeout`` in the past."""
        allocation = ResourceClaimView(claim).allocation
        stamp = AllocationResultView(allocation).allocation_timestamp if allocation is not None else None
        if not self.binding_conditions or not stamp or allocation is None:
            return False
        if not any(r.get("bindingConditions") is not None for r in AllocationResultView(allocation).results):
            return False
        clock = getattr(self.handle, "clock", None)
        now = clock.now() if clock is not None else time.time()
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() + self.binding_timeout_s < now

    async def _bind_claim(self, s: StateData, index: int, pod: Pod, node_name: str = "") -> dict[str, Any]:
        mgr = self._manager()
        client = self.handle.client
        claim = _copy_claim(s.claims[index])
        allocation = s.informations[index].allocation
        is_ext = index == s.ext_index
        if is_ext and allocation is None and not ResourceClaimView(claim).requests:
            return s.claims[index]  # v1.37.2 L1813-1818: satisfied by the node's allocatable
        pending = {"metadata": {"uid": s.ext_uid}} if is_ext else claim
        consumer = s.bindings[index] if s.bindings is not None and index < len(s.bindings) else None
        if self.generic_workload and not is_ext and group_name(pod) is not None:
            # A member of a pod group: another member's PreBind may have written the allocation
            # they share (and the group's reservation) since PreFilter; only what is still missing
            # is written (upstream re-reads the claim on the write conflict and fails this member's
            # PreBind with "got allocated elsewhere"; it binds on its next attempt).
            view = ObjectView(claim)
            fresh = mgr.get_claim(view.namespace, view.name)
            if fresh is not None:
                if is_reserved_for_pod(pod, fresh, self.workload_claims):
                    mgr.remove_pending_allocation(pending)
                    return fresh
                written = ResourceClaimView(fresh).allocation
                if allocation is not None and written is not None and _uid(fresh) == _uid(claim) \
                        and AllocationResultView(written).results == AllocationResultView(allocation).results:
                    mgr.remove_pending_allocation(pending)
                    allocation = None  # the shared allocation is written: add the reservation only
                claim = _copy_claim(fresh)
        ok = False
        try:
            if is_ext and is_special_claim(claim):
                claim = await self._create_extended_claim(s, node_name)
                s.claims[index] = claim  # Unreserve deletes it from now on
                claim = _copy_claim(claim)
            ref = _key(claim).lstrip("/")
            view = ResourceClaimView(claim)
            if view.deletion_timestamp is not None:
                raise RuntimeError(f"claim {ref} got deleted in the meantime")
            if allocation is not None:
                if view.allocation is not None:
                    raise RuntimeError(f"claim {ref} got allocated elsewhere in the meantime")
                fins = claim.setdefault("metadata", {}).setdefault("finalizers", [])
                if FINALIZER not in fins:
                    fins.append(FINALIZER)
                    try:
                        updated = await client.update_resource_claim(claim)
                    except Exception as e:
                        raise RuntimeError(f"add finalizer to claim {ref}: {e}") from e
                    if isinstance(updated, dict):
                        claim = updated
                claim.setdefault("status", {})["allocation"] = allocation
            st = claim.setdefault("status", {})
            if consumer is None:
                consumer = {"resource": "pods", "name": pod.metadata.name}
                if pod.metadata.uid:
                    consumer["uid"] = pod.metadata.uid
            st["reservedFor"] = list(st.get("reservedFor") or ()) + [dict(consumer)]
            if self.allocation_timestamp:
                # v1.37.2 dynamicresources.go L1936-1947 (DRADeviceBindingConditions and
                # DRAResourceClaimDeviceStatus): the allocation is stamped once, when first reserved
                if st.get("allocation") is None:
                    raise RuntimeError(f"claim {ref} got deallocated elsewhere in the meantime")
                if st["allocation"].get("allocationTimestamp") is None:
                    st["allocation"] = {**st["allocation"], "allocationTimestamp": self._now_rfc3339()}
            try:
                updated = await client.update_resource_claim_status(claim)
            except Exception as e:
                what = "add allocation and reservation to" if allocation is not None else "add reservation to"
                raise RuntimeError(f"{what} claim {ref}: {e}") from e
            if isinstance(updated, dict):
                claim = updated
            ok = True
            if is_ext:
                await self._patch_pod_extended_status(s, pod, claim, node_name)
            return claim
        finally:
            if allocation is not None:
                if ok:
                    mgr.assume(claim)
                mgr.remove_pending_allocation(pending, force=ok)

    async def _create_extended_claim(self, s: StateData, node_name: str) -> dict[str, Any]:
        """Upstream ``createExtendedResourceClaimInAPI`` (L512-545): POST the node's variant of the
        claim (no name, UID or allocation: the API server generates the name)."""
        entry = s.node_ext.get(node_name)
        if entry is None:
            raise RuntimeError(f"extended resource claim not found for node {node_name}")
        claim = copy.deepcopy(entry[0])
        meta = claim["metadata"]
        meta.pop("name", None)
        meta.pop("uid", None)
        claim.get("status", {}).pop("allocation", None)
        try:
            created = await self.handle.client.create_resource_claim(claim)
        except Exception as e:
            raise RuntimeError(f"create claim for extended resources {meta.get('namespace') or ''}/: {e}") from e
        return _as_dict(created)

    async def _patch_pod_extended_status(self, s: StateData, pod: Pod, claim: dict[str, Any], node_name: str) -> None:
        """Upstream ``patchPodExtendedResourceClaimStatus`` (L547-575): the pod's
        ``status.extendedResourceClaimStatus`` names the claim and maps container requests to it."""
        entry = s.node_ext.get(node_name)
        mappings = entry[1] if entry is not None else []
        ns, name = pod.metadata.namespace, pod.metadata.name
        if not mappings:
            raise RuntimeError(f"nil or empty request mappings, no update of pod {ns}/{name} "
                               "ExtendedResourceClaimStatus")
        status = {"requestMappings": mappings, "resourceClaimName": ResourceClaimView(claim).name}
        try:
            await self.handle.client.update_pod_extended_resource_claim_status(pod, status)
        except Exception as e:
            raise RuntimeError(f"update pod {ns}/{name} ExtendedResourceClaimStatus: {e}") from e

    def _now_rfc3339(self) -> str:
        """``metav1.Now()`` as the API serializes it (seconds, UTC), from the handle's clock."""
        clock = getattr(self.handle, "clock", None)
        now = clock.now() if clock is not None else time.time()
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))

    # ── events ──

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """1.37 (dynamicresources.go EventsToRegister): ResourceClaim also on Delete, and the pod's
        own generated-claims update as ``TargetPod`` (hint without a UID check); the ResourceClaim
        registration carries the PreQueueingHint (:meth:`_pre_queueing_hint`, dynamicresources.go
        L288), which the queue uses only with SchedulerPreQueueingHints on."""
        v137 = features_of(self.handle).at_least(1, 37)
        claim_acts = ActionType.ADD | ActionType.UPDATE | (ActionType.DELETE if v137 else ActionType(0))
        claims_changed = ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
        pod_event = (ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, claims_changed),
                                          self._after_target_pod_update) if v137 else
                     ClusterEventWithHint(ClusterEvent(EventResource.POD, claims_changed), self._after_pod_change))
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_CLAIM, claim_acts), self._after_claim_change,
                                 self._pre_queueing_hint if v137 else None),
            pod_event,
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]

    def _pre_queueing_hint(self, old: Any, new: Any) -> PreQueueingHintResult:
        """Upstream ``preQueueingHint`` (dynamicresources.go L335-375, 1.37): a deallocation, or
        the deletion of an allocated claim, may help any pod (AllPods); otherwise the pods whose
        ``spec.resourceClaims`` resolve to this claim (``podResourceClaimIndexFunc`` L314-333:
        same namespace; entries that do not resolve yet are skipped; extended-resource claims are
        not indexed), read from the handle's pod lister (upstream: the pod informer's index)."""
        was_allocated = old is not None and ResourceClaimView(_as_dict(old)).allocation is not None
        if was_allocated and (new is None or ResourceClaimView(_as_dict(new)).allocation is None):
            return PreQueueingHintResult(all_pods=True)
        claim = ObjectView(_as_dict(new if new is not None else old))
        ns, name = claim.namespace, claim.name
        pods: list[tuple[str, str]] = []
        for pod in self.handle.lister.list("Pod", ns or None) if self.handle is not None else ():
            if not hasattr(pod, "spec") or (pod.metadata.namespace or "") != ns:
                continue
            for rc in getattr(pod.spec, "resource_claims", None) or ():
                try:
                    resolved = pod_claim_names_entry(pod, rc)
                except _Unschedulable:
                    continue
                if resolved is not None and resolved == name:
                    pods.append((ns, pod.metadata.name))
                    break
        return PreQueueingHintResult(pods=tuple(pods))

    def _after_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Upstream ``isSchedulableAfterClaimChange`` (a deletion, registered since 1.37, queues
        only when the deleted claim still had an allocation)."""
        if new is None:
            if old is None:
                return QueueingHint.QUEUE  # final state unknown
            return QueueingHint.SKIP if ResourceClaimView(_as_dict(old)).allocation is None else QueueingHint.QUEUE
        modified = _as_dict(new)
        original = _as_dict(old) if old is not None else None
        try:
            claims = self._claims(pod)
        except _Unschedulable:
            return QueueingHint.SKIP
        if original is not None and ResourceClaimView(original).allocation is not None \
                and ResourceClaimView(modified).allocation is None:
            return QueueingHint.QUEUE  # deallocated: devices became free
        uid = _uid(modified)
        if not any(_uid(c) == uid for c in claims):
            return QueueingHint.SKIP
        if original is None:
            return QueueingHint.QUEUE
        if original.get("status") == modified.get("status"):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def _after_target_pod_update(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """1.37 ``isSchedulableAfterTargetPodUpdate``: the rejected pod's own claims changed —
        Queue when all its claims can now be found."""
        try:
            self._claims(new)
        except _Unschedulable:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def _after_pod_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Upstream ``isSchedulableAfterPodChange``."""
        if new is None or (new.metadata.uid, new.metadata.namespace, new.metadata.name) != (
                pod.metadata.uid, pod.metadata.namespace, pod.metadata.name):
            return QueueingHint.SKIP
        try:
            self._claims(new)
        except _Unschedulable:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def compute_score(claims: list[dict[str, Any]], allocation_results: Sequence[Mapping[str, Any]], *,
                  by_claim_index: bool = False) -> int:
    """Upstream ``computeScore`` (v1.37.2 ``dynamicresources.go`` L1413-1459): for each claim, each
    ``firstAvailable`` subrequest at index ``i`` (0-based) whose ``<request>/<subrequest>`` is the
    ``request`` of an allocation result adds ``FirstAvailableDeviceRequestMaxSize − i`` (8 − i).

    ``claims``: all the pod's claims in order; ``allocation_results``: the allocator's results on
    one node, one per claim *needing allocation* (in order). An allocated claim is scored from its
    ``status.allocation`` (since 1.36). ``by_claim_index`` is v1.35.4's version (L861-889): the
    results are indexed by the claim's own index, so a pod with an already allocated claim gets
    an error once the index runs past the results. Raises ``ValueError`` with upstream's text.
    """
    score = 0
    unallocated = 0
    for i, claim in enumerate(claims):
        allocation: Mapping[str, Any] | None
        if by_claim_index:
            if i >= len(allocation_results):
                raise ValueError(f"number of allocations {len(allocation_results)} is smaller than number of claims")
            allocation = allocation_results[i]
        else:
            allocation = ResourceClaimView(claim).allocation
            if allocation is None:
                if unallocated >= len(allocation_results):
                    raise ValueError(f"number of allocations {len(allocation_results)} is smaller than number of "
                                     "claims needing allocation")
                allocation = allocation_results[unallocated]
                unallocated += 1
        allocated = {r.get("request", "") for r in AllocationResultView(allocation).results
                     if "/" in (r.get("request") or "")}
        if not allocated:
            continue
        for req in ResourceClaimView(claim).requests:
            if req.get("exactly") is not None:
                continue
            for j, sub in enumerate(req.get("firstAvailable") or ()):
                if f"{req.get('name', '')}/{sub.get('name', '')}" in allocated:
                    score += FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - j
    return score


def _light_results(run: Any) -> list[Mapping[str, Any]]:
    """An allocator solution as allocation results carrying only each device's ``request``."""
    return [{"devices": {"results": [{"request": n} for n in names]}} for names in run.request_names()]


class ScoringDynamicResources(DynamicResources):
    """DynamicResources with Score / NormalizeScore (since v1.35; v1.37.2 ``dynamicresources.go``
    L1386-1471): a node's raw score is :func:`compute_score` of the pod's claims and the
    allocator's solution there (0 for a pod without claims, or a node with no solution kept —
    every claim already allocated); normalized with ``DefaultNormalizeScore(100, false)``.
    Since 1.36 Score returns 0 everywhere unless DRAPrioritizedList is on."""

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        s = self._state(state)
        if s is None:
            return 0, Status(Code.ERROR, ("not found",))
        try:
            return self._score(s, node_info.node.metadata.name), None
        except ValueError as e:
            return 0, Status(Code.ERROR, (str(e),))

    def scores_zero(self, state: CycleState, pod: Pod) -> bool:
        """True when :meth:`score_nodes` would return 0 on every node without error (a pod
        without claims, no solution kept, or 1.36+ without DRAPrioritizedList) — NormalizeScore
        leaves all-zero scores at 0; the framework may then leave the plugin out of an
        unrecorded cycle's total (:meth:`Framework.run_score_plugins`)."""
        s = self._state(state)
        return s is not None and (not s.claims or not (s.node_allocations or s.reused) or (
            self.version >= (1, 36) and not self.features.prioritized_list))

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        """:meth:`score` over ``rows`` (an error raises, as the framework treats a Score error)."""
        s = self._state(state)
        if s is None:
            raise _FilterErr("not found")
        out = np.zeros(len(rows), np.int64)
        if not s.claims or not (s.node_allocations or s.reused) or (
                self.version >= (1, 36) and not self.features.prioritized_list):
            return out
        views = [ResourceClaimView(c) for c in s.claims]
        if not any(r.get("firstAvailable") for v in views for r in v.requests) and (
                self.version >= (1, 36) or all(v.allocation is None for v in views)):
            return out  # only subrequests score, and nothing can fail: 0 everywhere
        names = nodes.names
        for i, row in enumerate(rows.tolist()):
            out[i] = self._score(s, names[row])
        return out

    def _score(self, s: StateData, node_name: str) -> int:
        if self.version >= (1, 36) and not self.features.prioritized_list:
            return 0
        if not s.claims:
            return 0
        run = s.node_allocations.get(node_name)
        if run is None and not s.reused:
            return 0
        results = _light_results(run) if run is not None else []
        if s.reused:
            # v1.37.2 Filter L1076-1085: the node's allocations are the allocator's results followed
            # by the pending allocations reused from other members (Score indexes them in claim order)
            results += [s.informations[i].allocation or {} for i in sorted(s.reused)]
        return compute_score(s.claims, results, by_claim_index=self.version < (1, 36))

    def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None


def new(args: Any, handle: Any) -> DynamicResources:
    """``args``: :class:`~kubesched.config.args.DynamicResourcesArgs` (``filterTimeout``) or None.

    The gates and the emulated version come from ``handle.features`` (v1.37 defaults without one):
    DRAAdminAccess, DRAPrioritizedList, DRADeviceTaints and DRAPartitionableDevices reach the
    allocator, DRADeviceTaintRules
    applies DeviceTaintRules to the slices; from 1.35 on the plugin also scores
    (:class:`ScoringDynamicResources`)."""
    timeout = 10.0
    text = getattr(args, "filter_timeout", None)
    if text is not None:
        from kubesched.config.types import parse_duration

        timeout = parse_duration(text)
    fg = getattr(handle, "features", None) or default_feature_gate()
    features = Features(admin_access=fg.enabled("DRAAdminAccess"), prioritized_list=fg.enabled("DRAPrioritizedList"),
                        device_taints=fg.enabled("DRADeviceTaints"),
                        partitionable_devices=fg.enabled("DRAPartitionableDevices"),
                        consumable_capacity=fg.enabled("DRAConsumableCapacity"),
                        device_binding_conditions=fg.enabled("DRADeviceBindingConditions")
                        and fg.enabled("DRAResourceClaimDeviceStatus"),
                        optional_node_operations=fg.enabled("DRAOptionalNodeOperations"),
                        compatibility_groups=fg.enabled("DRADeviceCompatibilityGroups"),
                        list_type_attributes=fg.enabled("DRAListTypeAttributes"),
                        derived_attributes=fg.enabled("DRADerivedAttributes"),
                        fractional_capacity_range=fg.enabled("DRAFractionalCapacityRange"))
    cls = ScoringDynamicResources if fg.at_least(1, 35) else DynamicResources
    pl = cls(handle, features, filter_timeout_s=timeout, version=fg.emulated_version)
    pl.deferred_resize = deferred_resize_enabled(fg)
    pl.device_taint_rules = fg.enabled("DRADeviceTaintRules")
    pl.extended_resource = fg.enabled("DRAExtendedResource")
    pl.node_allocatable_resources = fg.enabled("DRANodeAllocatableResources")
    pl.generic_workload = fg.enabled("GenericWorkload")
    pl.workload_claims = fg.enabled("DRAWorkloadResourceClaims")
    pl.topology_aware_workloads = fg.enabled("TopologyAwareWorkloadScheduling")
    pl.allocation_timestamp = fg.enabled("DRADeviceBindingConditions") and fg.enabled("DRAResourceClaimDeviceStatus")
    pl.binding_conditions = pl.allocation_timestamp
    text = getattr(args, "binding_timeout", None)
    if text is not None:
        from kubesched.config.types import parse_duration

        pl.binding_timeout_s = parse_duration(text)
    return pl
