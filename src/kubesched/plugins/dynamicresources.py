"""DynamicResources (upstream ``pkg/scheduler/framework/plugins/dynamicresources``, v1.34, DRA GA).

Pods **without** resource claims — as v1.34:

* PreEnqueue: nothing to check → Success.
* PreFilter: writes an empty state, finds no claims, returns **Skip** (Filter is not run).
* PostFilter: state present with no claims → ``Unschedulable "no new claims to deallocate"`` (which
  is why v1.34 FailedScheduling messages read ``"... . no new claims to deallocate, preemption:
  ..."``); PreFilter never ran → Error ``"not found"`` (``fwk.ErrNotFound``).
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

DRA-based extended resources (``DRAExtendedResource``) are alpha and off by default in v1.34: not
modelled. No Score (v1.34 has none for DRA).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.api.nodeselector import NodeSelectorMatcher
from kubesched.api.objects import NodeSelector
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubesched.framework.interface import Code, FilterResult, PreBindPreFlightResult, ReasonEntry, Status
from kubesched.plugins.dra_structured import (
    Allocator,
    AllocatorError,
    AllocatorTimeout,
    DeviceID,
    Features,
    allocated_devices,
)
from kubesched.plugins.dra_structured import dict_path as _g
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.volumebinding import field

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["ERR_NO_NEW_CLAIMS", "FINALIZER", "NAME", "DRAManager", "DynamicResources", "StateData", "new",
           "pod_claim_names"]

NAME = "DynamicResources"
STATE_KEY = NAME
ERR_NO_NEW_CLAIMS = "no new claims to deallocate"
FINALIZER = "resource.kubernetes.io/delete-protection"
RESERVED_FOR_MAX_SIZE = 256
"""Upstream ``resourceapi.ResourceClaimReservedForMaxSize``."""


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
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name', '')}"


def _uid(claim: dict[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return str(meta.get("uid") or _key(claim))


class _Unschedulable(Exception):
    pass


class _FilterErr(Exception):
    """An Error status from Filter, raised out of :meth:`DynamicResources.filter_nodes`."""


class DRAManager:
    """Upstream ``SharedDRAManager`` (``dra_manager.go``, ``allocateddevices.go``): the claims as
    the scheduler sees them (informer objects, overridden by the claims it wrote itself until the
    informer delivers them back — the assume cache), the allocations in flight (Reserve →
    PreBind), and the devices all of these hold, kept incrementally from informer events
    (:meth:`on_event`). Shared by every profile of one scheduler."""

    def __init__(self, lister: Any) -> None:
        self.lister = lister
        self.assumed: dict[str, dict[str, Any]] = {}
        self.in_flight: dict[str, dict[str, Any]] = {}
        self._informer: dict[str, list[DeviceID]] = {}
        self._slots: dict[tuple[str, str], list[DeviceID]] = {}
        self.refs: Counter[DeviceID] = Counter()
        self.in_use: set[DeviceID] = set()
        """Devices held by an allocated, assumed or in-flight claim (admin access excluded)."""
        self.pool_versions: dict[tuple[str, str], int] = {}
        """(driver, pool) → bumped when one of its devices enters or leaves ``in_use``."""
        self.synced = False
        self.live_events = False

    # ── bookkeeping ──

    def _set_slot(self, slot: tuple[str, str], devices: list[DeviceID]) -> None:
        refs, in_use, versions = self.refs, self.in_use, self.pool_versions
        old = self._slots.pop(slot, None)
        if old:
            for d in old:
                n = refs[d] - 1
                if n <= 0:
                    del refs[d]
                    in_use.discard(d)
                    versions[d[:2]] = versions.get(d[:2], 0) + 1
                else:
                    refs[d] = n
        if devices:
            self._slots[slot] = devices
            for d in devices:
                refs[d] += 1
                if d not in in_use:
                    in_use.add(d)
                    versions[d[:2]] = versions.get(d[:2], 0) + 1

    def _refresh_claim(self, key: str) -> None:
        a = self.assumed.get(key)
        self._set_slot(("c", key), allocated_devices(a) if a is not None else self._informer.get(key, []))

    def sync(self) -> None:
        """Read every claim from the lister (the first time, or always without informer events)."""
        if self.synced and self.live_events:
            return
        seen = set()
        for c in self.lister.list("ResourceClaim"):
            c = _as_dict(c)
            key = _key(c)
            seen.add(key)
            self._informer[key] = allocated_devices(c)
            self._refresh_claim(key)
        if not self.live_events:
            for key in [k for k in self._informer if k not in seen]:
                del self._informer[key]
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
            self.assumed.pop(key, None)
        else:
            self._informer[key] = allocated_devices(obj)
            a = self.assumed.get(key)
            if a is not None and (a is not obj) and (
                    _g(obj, "metadata", "resourceVersion") != _g(a, "metadata", "resourceVersion")
                    or _g(obj, "metadata", "resourceVersion") is None):
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

    def signal_pending_allocation(self, claim: dict[str, Any]) -> None:
        uid = _uid(claim)
        self.in_flight[uid] = claim
        self._set_slot(("f", uid), allocated_devices(claim))

    def remove_pending_allocation(self, claim: dict[str, Any]) -> bool:
        uid = _uid(claim)
        deleted = self.in_flight.pop(uid, None) is not None
        self._set_slot(("f", uid), [])
        return deleted


class _ClaimInfo:
    __slots__ = ("available_on_nodes", "allocation")

    def __init__(self) -> None:
        self.available_on_nodes: NodeSelectorMatcher | None = None
        self.allocation: dict[str, Any] | None = None


class StateData:
    """Upstream ``stateData``; ``claims`` empty when the pod has no claims."""

    __slots__ = ("claims", "allocator", "to_allocate", "unavailable_claims", "informations", "node_allocations",
                 "has_node_selectors")

    def __init__(self, claims: list[Any] | None = None) -> None:
        self.claims: list[dict[str, Any]] = claims or []
        self.allocator: Allocator | None = None
        self.to_allocate: list[int] = []
        self.unavailable_claims: set[int] = set()
        self.informations: list[_ClaimInfo] = []
        self.has_node_selectors = False
        self.node_allocations: dict[str, Any] = {}
        """Node name → the allocator's solution there (results built by Reserve)."""

    def clone(self) -> StateData:
        return self


def pod_claim_names(pod: Pod) -> list[tuple[str | None, bool]]:
    """Upstream ``resourceclaim.Name`` for each ``spec.resourceClaims`` entry: (name or None =
    skipped, must-check-owner). Raises ``_Unschedulable`` with upstream's message."""
    out: list[tuple[str | None, bool]] = []
    for rc in getattr(pod.spec, "resource_claims", None) or ():
        name = field(rc, "resourceClaimName")
        if name is not None:
            out.append((name, False))
            continue
        if field(rc, "resourceClaimTemplateName") is not None:
            for st in field(pod.status, "resourceClaimStatuses") or ():
                if field(st, "name") == field(rc, "name"):
                    out.append((field(st, "resourceClaimName"), True))
                    break
            else:
                raise _Unschedulable(
                    f'pod "{pod.metadata.namespace}/{pod.metadata.name}": ResourceClaim not created yet')
            continue
        raise _Unschedulable(f'pod "{pod.metadata.namespace}/{pod.metadata.name}", spec.resourceClaim '
                             f'"{field(rc, "name")}": API unsupported')
    return out


def _refers_to(pod: Pod, ref: dict[str, Any]) -> bool:
    """A reference names ``pod``: by UID (by name for pods without one, as simulator input may be)."""
    if pod.metadata.uid:
        return ref.get("uid") == pod.metadata.uid
    return ref.get("name") == pod.metadata.name and not ref.get("uid")


def _is_for_pod(pod: Pod, claim: dict[str, Any]) -> bool:
    """Upstream ``resourceclaim.IsForPod``: the pod is the claim's controlling owner."""
    return any(ref.get("controller") and _refers_to(pod, ref) for ref in _g(claim, "metadata", "ownerReferences") or ())


def _reserved_for_pod(pod: Pod, claim: dict[str, Any]) -> bool:
    """Upstream ``resourceclaim.IsReservedForPod``."""
    return any(_refers_to(pod, r) for r in _g(claim, "status", "reservedFor") or ())


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

    def __init__(self, handle: Any, features: Features | None = None, filter_timeout_s: float = 10.0) -> None:
        self.handle = handle
        self.features = features or Features()
        self.manager: DRAManager | None = None
        self.filter_timeout_s = filter_timeout_s
        """``DynamicResourcesArgs.filterTimeout`` (DRASchedulerFilterTimeout, beta in v1.34); 0 = none."""

    def set_scheduler(self, sched: Any) -> None:
        """Share one :class:`DRAManager` per scheduler, fed by its informer events."""
        mgr = getattr(sched, "dra_manager", None)
        if mgr is None:
            mgr = DRAManager(sched.lister)
            listeners = getattr(sched, "object_listeners", None)
            if listeners is not None:
                listeners.append(mgr.on_event)
                mgr.live_events = True
            sched.dra_manager = mgr
        self.manager = mgr

    def _manager(self) -> DRAManager:
        if self.manager is None:
            lister = self.handle.lister if self.handle is not None else None
            self.manager = DRAManager(lister)
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
            if _g(claim, "metadata", "deletionTimestamp") is not None:
                raise _Unschedulable(f'resourceclaim "{_g(claim, "metadata", "name")}" is being deleted')
            if must_check_owner and not _is_for_pod(pod, claim):
                raise _Unschedulable(f"ResourceClaim {ns}/{name} was not created for pod "
                                     f"{ns}/{pod.metadata.name} (pod is not owner)")
            out.append(claim)
        return out

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
        s = StateData()
        state.write(STATE_KEY, s)
        if not getattr(pod.spec, "resource_claims", None):
            return None, Status(Code.SKIP)
        mgr = self._manager()
        mgr.sync()
        try:
            claims = self._claims(pod)
        except _Unschedulable as e:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        if not claims:
            return None, Status(Code.SKIP)
        s.informations = [_ClaimInfo() for _ in claims]
        to_allocate: list[int] = []
        for i, claim in enumerate(claims):
            allocation = _g(claim, "status", "allocation")
            if allocation is not None:
                if (len(_g(claim, "status", "reservedFor") or ()) >= RESERVED_FOR_MAX_SIZE
                        and not _reserved_for_pod(pod, claim)):
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("resourceclaim in use",))
                sel = allocation.get("nodeSelector")
                if sel is not None:
                    try:
                        s.informations[i].available_on_nodes = NodeSelectorMatcher(msgspec.convert(sel, NodeSelector))
                        s.has_node_selectors = True
                    except (msgspec.ValidationError, ValueError) as e:
                        return None, Status(Code.ERROR, (str(e),))
                continue
            to_allocate.append(i)
            if mgr.has_pending_allocation(claim):
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                    f"resource claim {_key(claim).lstrip('/')} is in the process of being allocated",))
            for request in _g(claim, "spec", "devices", "requests") or ():
                subs = request.get("firstAvailable") or []
                if request.get("exactly") is not None:
                    st = self._validate_class(_g(request, "exactly", "deviceClassName"), request.get("name", ""))
                    if st is not None:
                        return None, st
                    continue
                if not subs:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                        f"resource claim {_key(claim).lstrip('/')}, request {request.get('name', '')}: "
                        "unknown request type",))
                if not self.features.prioritized_list:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                        f"resource claim {_key(claim).lstrip('/')}, request {request.get('name', '')}: has "
                        "subrequests, but the DRAPrioritizedList feature is disabled",))
                for sub in subs:
                    st = self._validate_class(sub.get("deviceClassName"),
                                              f"{request.get('name', '')}/{sub.get('name', '')}")
                    if st is not None:
                        return None, st
        if to_allocate:
            lister = mgr.lister
            slices = [_as_dict(x) for x in lister.list("ResourceSlice")]
            s.allocator = Allocator([claims[i] for i in to_allocate], mgr.in_use, self._get_class, slices,
                                    self.features, mgr.pool_versions)
            s.to_allocate = to_allocate
        s.claims = claims
        return None, None

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

    def _state(self, state: CycleState) -> StateData | None:
        s = state.get(STATE_KEY)
        return s if isinstance(s, StateData) else None

    # ── Filter ──

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = self._state(state)
        if s is None:
            return Status(Code.ERROR, ("not found",))
        if not s.claims:
            return None
        return self._filter_node(s, node_info.node)

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        """:meth:`filter` over ``rows`` of the table, without a NodeInfo and a Status per node
        (same results; an Error status on a node raises, as the framework does for Filter)."""
        s = self._state(state)
        if s is None:
            raise _FilterErr("not found")
        if not s.claims:
            return None
        table_nodes = nodes.nodes
        failed = np.zeros(len(rows), np.int64)
        index: dict[ReasonEntry, int] = {}
        for i, row in enumerate(rows.tolist()):
            st = self._filter_node(s, table_nodes[row])
            if st is None:
                continue
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

    def _filter_node(self, s: StateData, node: Any) -> Status | None:
        unavailable: list[int] = []
        if s.has_node_selectors:
            name, labels = node.metadata.name, node.metadata.labels or {}
            unavailable = [i for i, info in enumerate(s.informations) if info.available_on_nodes is not None
                           and not info.available_on_nodes.match(labels, name)]
        allocations = None
        if s.allocator is not None:
            try:
                allocations = s.allocator.allocate_run(node, self.filter_timeout_s)
            except AllocatorTimeout:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("timed out trying to allocate devices",))
            except AllocatorError as e:
                if e.failed_on_node:
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (e.message,))
                return Status(Code.ERROR, (e.message,))
            if allocations is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("cannot allocate all claims",))
        if unavailable:
            s.unavailable_claims.update(unavailable)
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("resourceclaim not available on the node",))
        if allocations is not None:
            s.node_allocations[node.metadata.name] = allocations
        return None

    # ── PostFilter ──

    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: Any) -> tuple[None, Status]:
        s = self._state(state)
        if s is None:
            return None, Status(Code.ERROR, ("not found",))
        if not s.claims:
            return None, Status(Code.UNSCHEDULABLE, (ERR_NO_NEW_CLAIMS,))
        for i in sorted(s.unavailable_claims):
            claim = s.claims[i]
            reserved = _g(claim, "status", "reservedFor") or []
            if not reserved or (len(reserved) == 1 and _refers_to(pod, reserved[0])):
                c = _copy_claim(claim)
                st = c.setdefault("status", {})
                st.pop("reservedFor", None)
                st.pop("allocation", None)
                client = self.handle.client if self.handle is not None else None
                if client is not None:
                    _fire(client.update_resource_claim_status(c))
                return None, Status(Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",))
        return None, Status(Code.UNSCHEDULABLE, ("still not schedulable",))

    # ── Reserve / Unreserve ──

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = self._state(state)
        if s is None:
            return Status(Code.ERROR, ("not found",))
        if not s.claims or not s.to_allocate:
            return None
        run = s.node_allocations.get(node_name)
        if run is None:
            return Status(Code.ERROR, ("claim allocation not found for node",))
        allocations = run.results()
        if len(allocations) != len(s.to_allocate):
            return Status(Code.ERROR, (f"internal error, have {len(allocations)} allocations, "
                                       f"{len(s.to_allocate)} claims to allocate",))
        mgr = self._manager()
        for i, allocation in zip(s.to_allocate, allocations, strict=True):
            s.informations[i].allocation = allocation
            c = _copy_claim(s.claims[i])
            fins = c.setdefault("metadata", {}).setdefault("finalizers", [])
            if FINALIZER not in fins:
                fins.append(FINALIZER)
            c.setdefault("status", {})["allocation"] = allocation
            mgr.signal_pending_allocation(c)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        s = self._state(state)
        if s is None or not s.claims:
            return
        mgr = self._manager()
        client = self.handle.client if self.handle is not None else None
        for claim in s.claims:
            if mgr.remove_pending_allocation(claim):
                mgr.restore(claim)
            if _g(claim, "status", "allocation") is not None and _reserved_for_pod(pod, claim) and client is not None:
                c = _copy_claim(claim)
                c["status"]["reservedFor"] = [r for r in c["status"].get("reservedFor") or ()
                                              if not _refers_to(pod, r)]
                _fire(client.update_resource_claim_status(c))

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
            return result, Status(Code.SKIP)
        return result, None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        """None or a Status at once for a pod without claims; else a coroutine the framework awaits."""
        s = self._state(state)
        if s is None:
            return Status(Code.ERROR, ("not found",))
        if not s.claims:
            return None
        return self._pre_bind(s, pod)

    async def _pre_bind(self, s: StateData, pod: Pod) -> Status | None:
        for i, claim in enumerate(s.claims):
            if _reserved_for_pod(pod, claim):
                continue
            try:
                s.claims[i] = await self._bind_claim(s, i, pod)
            except Exception as e:  # noqa: BLE001 - any write failure fails the binding cycle
                return Status(Code.ERROR, (str(e) or type(e).__name__,), error=e)
        return None

    async def _bind_claim(self, s: StateData, index: int, pod: Pod) -> dict[str, Any]:
        mgr = self._manager()
        client = self.handle.client
        claim = _copy_claim(s.claims[index])
        allocation = s.informations[index].allocation
        ref = _key(claim).lstrip("/")
        ok = False
        try:
            if _g(claim, "metadata", "deletionTimestamp") is not None:
                raise RuntimeError(f"claim {ref} got deleted in the meantime")
            if allocation is not None:
                if _g(claim, "status", "allocation") is not None:
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
            consumer = {"resource": "pods", "name": pod.metadata.name}
            if pod.metadata.uid:
                consumer["uid"] = pod.metadata.uid
            st["reservedFor"] = list(st.get("reservedFor") or ()) + [consumer]
            try:
                updated = await client.update_resource_claim_status(claim)
            except Exception as e:
                what = "add allocation and reservation to" if allocation is not None else "add reservation to"
                raise RuntimeError(f"{what} claim {ref}: {e}") from e
            if isinstance(updated, dict):
                claim = updated
            ok = True
            return claim
        finally:
            if allocation is not None:
                if ok:
                    mgr.assume(claim)
                mgr.remove_pending_allocation(claim)

    # ── events ──

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """1.37 (dynamicresources.go EventsToRegister): ResourceClaim also on Delete, and the pod's
        own generated-claims update as ``TargetPod`` (hint without a UID check). (Not modelled:
        the PreQueueingHint of the alpha SchedulerPreQueueingHints.)"""
        v137 = features_of(self.handle).at_least(1, 37)
        claim_acts = ActionType.ADD | ActionType.UPDATE | (ActionType.DELETE if v137 else ActionType(0))
        claims_changed = ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM
        pod_event = (ClusterEventWithHint(ClusterEvent(EventResource.TARGET_POD, claims_changed),
                                          self._after_target_pod_update) if v137 else
                     ClusterEventWithHint(ClusterEvent(EventResource.POD, claims_changed), self._after_pod_change))
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_CLAIM, claim_acts), self._after_claim_change),
            pod_event,
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)),
        ]

    def _after_claim_change(self, pod: Pod, old: Any, new: Any) -> QueueingHint:
        """Upstream ``isSchedulableAfterClaimChange`` (a deletion, registered since 1.37, queues
        only when the deleted claim still had an allocation)."""
        if new is None:
            if old is None:
                return QueueingHint.QUEUE  # final state unknown
            return QueueingHint.SKIP if _g(_as_dict(old), "status", "allocation") is None else QueueingHint.QUEUE
        modified = _as_dict(new)
        original = _as_dict(old) if old is not None else None
        try:
            claims = self._claims(pod)
        except _Unschedulable:
            return QueueingHint.SKIP
        if original is not None and _g(original, "status", "allocation") is not None \
                and _g(modified, "status", "allocation") is None:
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


def new(args: Any, handle: Any) -> DynamicResources:
    """``args``: :class:`~kubesched.config.args.DynamicResourcesArgs` (``filterTimeout``) or None."""
    timeout = 10.0
    text = getattr(args, "filter_timeout", None)
    if text is not None:
        from kubesched.config.types import parse_duration

        timeout = parse_duration(text)
    return DynamicResources(handle, filter_timeout_s=timeout)
