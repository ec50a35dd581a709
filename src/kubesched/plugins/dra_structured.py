"""The structured-parameters allocator (upstream
``staging/src/k8s.io/dynamic-resource-allocation/structured``: ``allocator.go`` and the "stable"
implementation ``internal/stable/allocator_stable.go``, ``pools_stable.go``, v1.34).

v1.34 picks the stable allocator when only the default features are on: ``DRAAdminAccess`` and
``DRAPrioritizedList`` (beta, on); ``DRAPartitionableDevices``, ``DRADeviceTaints``,
``DRAConsumableCapacity`` and ``DRADeviceBindingConditions`` are alpha (off). With those off, as
upstream: slices with ``perDeviceNodeSelection`` are ignored, devices that consume counters or
have binding conditions are never picked, device taints are not looked at.

From 1.36 (v0.37.2 ``internal/incubating``): ``Features(device_taints=True)`` skips devices with a
``NoSchedule``/``NoExecute`` taint the request does not tolerate (:func:`taint_prevents_allocation`);
``Features(partitionable_devices=True)`` turns per-device node selection on and lets devices that
consume counters be picked while their pool's ``sharedCounters`` last (``checkAvailableCounters``:
the counters less what allocated devices and the devices picked so far consume), with the pool
completed by slices that do not reach the node (``checkSlicesInPool``) and invalid on a duplicate
counter set or an unknown counter. ``Features(consumable_capacity=True)``: a request's
``capacity.requests`` must exist on the device and fit (``CmpRequestOverCapacity``, integer path), and
an ``allowMultipleAllocations`` device is shared by capacity (``shareID``, ``consumedCapacity``),
and ``distinctAttribute`` constraints hold (pairwise different values; ``distinctAttributeConstraint``
of ``incubating/constraint.go``; without the feature: ``empty constraint``).
``Features(list_type_attributes=True)`` (DRAListTypeAttributes, α 1.37, experimental allocator
L849-1070, constraint.go L97-125): attributes may be lists (``ints``/``bools``/``strings``/
``versions``); matchAttribute then needs the value sets to share an element (the intersection
narrows device by device), distinctAttribute pairwise disjoint sets.
``Features(derived_attributes=True)`` (DRADerivedAttributes, α 1.37, experimental allocator
L553-567, L1110-1142): a request's ``derivedAttributes`` (``{name, expression}``) are evaluated per
device (:func:`~kubesched.plugins.dra_cel.evaluate_derived_attribute`) and shadow the device's
attributes in that request's constraints; a CEL failure aborts allocation (Error).
``Features(fractional_capacity_range=True)`` (DRAFractionalCapacityRange): consumable capacity
ranges are rounded and checked in milli units (``useMilli``, ``roundUpRange``).

Objects are the API's JSON mappings (``resource.k8s.io/v1`` ResourceClaim, ResourceSlice,
DeviceClass). :class:`Allocator` is built once per pod (PreFilter) and asked per node
(:meth:`Allocator.allocate`): it gathers the pools whose slices reach the node (highest
``pool.generation`` wins; a pool is *incomplete* when fewer slices than
``resourceSliceCount`` are seen, *invalid* with duplicate device names), then searches
depth-first, claim by claim, request by request, device by device, for the first full solution
(pools ordered by driver and pool name, slices and devices in their order), checking "in use"
(``allocated`` plus the devices picked so far), the class and request CEL selectors and the
``matchAttribute`` constraints, backtracking on failure. ``allocationMode: All`` takes every
matching device of the node's pools (an error while a pool is incomplete or invalid),
``firstAvailable`` tries the subrequests in order. Results are the claims'
``status.allocation`` mappings (``devices.results``, ``devices.config``, ``nodeSelector``).

Raises :class:`AllocatorError` (fatal for the pod: the plugin returns an Error status) for
problems with a claim or class (CEL compile/runtime errors, missing class, …) with upstream's
messages; ``failed_on_node`` is set for "invalid resource pools were encountered".
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from kubesched.api.dra import DeviceClassView, ResourceClaimView
from kubesched.api.nodeselector import NodeSelectorMatcher
from kubesched.api.objects import NodeSelector
from kubesched.api.quantity import nano_value
from kubesched.plugins.dra_cel import CELError, compile_selector, device_context, evaluate_derived_attribute

if TYPE_CHECKING:
    from kubesched.framework.node_table import NodeTable

__all__ = ["ALLOCATION_RESULTS_MAX_SIZE", "AllocatorError", "AllocatorTimeout", "Allocator", "DeviceID", "Features",
           "NodeAllocations", "PoolVersions",
           "allocated_devices", "apply_device_taint_rules", "consumed_capacity", "device_matches", "dict_path",
           "format_int_quantity",
           "node_matches", "request_fits_capacity", "shared_allocations", "taint_prevents_allocation",
           "tolerates_taint"]

DeviceID = tuple[str, str, str]
"""(driver, pool, device)."""

ALLOCATION_RESULTS_MAX_SIZE = 32
"""Upstream ``resourceapi.AllocationResultsMaxSize``."""


@dataclass(frozen=True)
class Features:
    """The DRA feature gates the allocator looks at (v1.34 defaults)."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = False
    device_taints: bool = False
    """DRADeviceTaints: tainted devices need a toleration (:func:`taint_prevents_allocation`)."""
    consumable_capacity: bool = False
    """DRAConsumableCapacity: ``allowMultipleAllocations`` devices are shared by capacity."""
    device_binding_conditions: bool = False
    """DRADeviceBindingConditions + DRAResourceClaimDeviceStatus: devices with binding conditions
    may be picked (their pools last), results carry the conditions."""
    compatibility_groups: bool = False
    """DRADeviceCompatibilityGroups (α 1.37; upstream's experimental allocator): devices drawing
    from one counter set must have intersecting ``consumesCounters[].compatibilityGroups``
    (:class:`_GroupIntersection`)."""
    list_type_attributes: bool = False
    """DRAListTypeAttributes (α 1.37): list-valued attributes (``ints``/``bools``/``strings``/
    ``versions``); matchAttribute needs a common value, distinctAttribute disjoint values."""
    fractional_capacity_range: bool = False
    """DRAFractionalCapacityRange (β 1.37, on only with min-compatibility 1.37): consumable
    capacity ranges with fractional min/max/step use milli-value arithmetic."""
    derived_attributes: bool = False
    """DRADerivedAttributes (α 1.37): a request's ``derivedAttributes`` (name → CEL expression
    evaluated per device) stand in for device attributes in its constraints."""
    optional_node_operations: bool = False
    """DRAOptionalNodeOperations (α 1.37; upstream's experimental allocator): devices of a slice
    with ``spec.skipNodeOperations`` need the node to declare the feature
    (:data:`OPTIONAL_NODE_OPERATIONS_FEATURE`); results carry the slice's list. Off (the
    incubating allocator 1.37 picks by default), the field is ignored."""


class _GroupIntersection:
    """Upstream ``compatibilityGroupIntersection`` (experimental/compatibility_groups.go): the
    running intersection of the compatibility groups of the devices placed on one counter set.
    A device without groups only joins devices without groups; one with groups joins when the
    sets intersect."""

    __slots__ = ("has_members", "all_empty", "groups")

    def __init__(self, has_members: bool = False, all_empty: bool = False,
                 groups: frozenset[str] = frozenset()) -> None:
        self.has_members, self.all_empty, self.groups = has_members, all_empty, groups

    def admits(self, groups: frozenset[str]) -> bool:
        if not self.has_members:
            return True
        if not groups:
            return self.all_empty
        if self.all_empty:
            return False
        return bool(self.groups & groups)

    def add(self, groups: frozenset[str]) -> _GroupIntersection:
        if not self.has_members:
            return _GroupIntersection(True, not groups, groups)
        if self.all_empty or not groups:
            return self
        return _GroupIntersection(True, False, self.groups & groups)


OPTIONAL_NODE_OPERATIONS_FEATURE = "DRAOptionalNodeOperations"
"""The node-declared feature (``draoptionalnodeoperations.DRAOptionalNodeOperationsFeatureGate``)."""


def node_declares(node: Any, feature: str) -> bool:
    """``slices.Contains(node.Status.DeclaredFeatures, feature)`` (node object or dict)."""
    if node is None:
        return False
    if isinstance(node, dict):
        return feature in ((node.get("status") or {}).get("declaredFeatures") or ())
    return feature in (getattr(node.status, "declared_features", None) or ())


_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
"""Device taint effects that keep the allocator away (``None`` and unknown effects do not)."""


def tolerates_taint(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Upstream ``resourceclaim.ToleratesTaint`` (dynamic-resource-allocation v0.37.2
    ``resourceclaim/devicetoleration.go`` L35-56): effect and key must match when set; operator
    ``Equal`` (or empty) compares the values, ``Exists`` matches any value, others never match."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return op == "Exists"


def taint_prevents_allocation(device: dict[str, Any], tolerations: Any) -> bool:
    """Upstream ``taintPreventsAllocation`` (structured/internal/stable/allocator_stable.go
    L1281-1301, v0.37.2): a ``NoSchedule`` or ``NoExecute`` taint of ``device`` that no toleration
    of the request tolerates. NoExecute matters to the scheduler only this way (evicting pods that
    already use the device is the device-taint eviction controller's job)."""
    for taint in device.get("taints") or ():
        if taint.get("effect") in _TAINT_EFFECTS and not any(tolerates_taint(t, taint) for t in tolerations or ()):
            return True
    return False


def apply_device_taint_rules(slices: list[dict[str, Any]], rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Upstream ``Tracker.applyPatches`` (dynamic-resource-allocation v0.37.2
    ``resourceslice/tracker/tracker.go`` L574-617): each DeviceTaintRule's ``spec.taint`` is
    appended to the ``taints`` of every device its ``spec.deviceSelector`` (``driver``, ``pool``,
    ``device``, each optional) names; a rule without a selector matches nothing. Slices no rule
    touches are returned as they are (the same objects); touched ones are copies."""
    out = []
    for sl in slices:
        spec = sl.get("spec") or {}
        patched: list[dict[str, Any]] | None = None
        for rule in rules:
            sel = dict_path(rule, "spec", "deviceSelector")
            if sel is None:
                continue
            if sel.get("driver") is not None and sel["driver"] != spec.get("driver"):
                continue
            if sel.get("pool") is not None and sel["pool"] != dict_path(spec, "pool", "name"):
                continue
            taint = dict_path(rule, "spec", "taint") or {}
            for i, d in enumerate(spec.get("devices") or ()):
                if sel.get("device") is not None and sel["device"] != d.get("name"):
                    continue
                if patched is None:
                    patched = list(spec.get("devices") or ())
                dev = patched[i]
                if dev is d:
                    dev = patched[i] = {**d, "taints": list(d.get("taints") or ())}
                dev["taints"].append(taint)
        out.append(sl if patched is None else {**sl, "spec": {**spec, "devices": patched}})
    return out


class AllocatorError(Exception):
    def __init__(self, message: str, *, failed_on_node: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.failed_on_node = failed_on_node


class AllocatorTimeout(Exception):
    """The search ran past its time limit (upstream: the Filter context's deadline,
    ``DynamicResourcesArgs.filterTimeout``)."""


class _MaxSizeExceeded(Exception):
    """Upstream ``errAllocationResultMaxSizeExceeded``."""


def dict_path(obj: Any, *path: str) -> Any:
    """``obj[path[0]][path[1]]...`` over plain dicts; None where a step is missing or not a dict."""
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def _kobj(claim: dict[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def allocated_devices(claim: dict[str, Any], consumable_capacity: bool = False) -> list[DeviceID]:
    """Devices a claim's ``status.allocation`` holds, admin-access results excluded (upstream
    ``allocateddevices.go``: those do not make a device unavailable); with DRAConsumableCapacity
    a result with a ``shareID`` is a share, not a dedicated device (see :func:`shared_allocations`)."""
    out: list[DeviceID] = []
    for r in dict_path(claim, "status", "allocation", "devices", "results") or ():
        if r.get("adminAccess"):
            continue
        if consumable_capacity and r.get("shareID") is not None:
            continue
        out.append((r.get("driver", ""), r.get("pool", ""), r.get("device", "")))
    return out


def shared_allocations(claim: dict[str, Any]) -> list[tuple[DeviceID, dict[str, int]]]:
    """Upstream ``foreachAllocatedDevice``'s shared-device callbacks (v1.37.2 ``allocateddevices.go``
    L63-75): each non-admin result with a ``shareID``, with its ``consumedCapacity`` in nanos."""
    out: list[tuple[DeviceID, dict[str, int]]] = []
    for r in dict_path(claim, "status", "allocation", "devices", "results") or ():
        if r.get("adminAccess") or r.get("shareID") is None:
            continue
        caps = {k: nano_value(v) for k, v in (r.get("consumedCapacity") or {}).items()}
        out.append(((r.get("driver", ""), r.get("pool", ""), r.get("device", "")), caps))
    return out


# ── consumable capacity (DRAConsumableCapacity; v0.37.2 incubating consumable_capacity.go) ──

_NANO = 10**9


def _value(nanos: int) -> int:
    """Go ``Quantity.Value()``: rounded up to an integer."""
    return -((-nanos) // _NANO)


def _format_of(text: str) -> str:
    t = text.strip()
    if t[-2:] in ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"):
        return "BinarySI"
    return "DecimalSI"


def format_int_quantity(n: int, fmt: str) -> str:
    """``resource.NewQuantity(n, fmt).String()``: the canonical text of an integer quantity
    (``CanonicalizeBytes``: BinarySI strictly between -1024 and 1024 prints as DecimalSI, else the
    largest exact power of 1024 or plain digits; DecimalSI uses the largest exact power of 1000)."""
    if fmt == "BinarySI" and abs(n) >= 1024:
        for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
            base = 1024 ** (("Ki", "Mi", "Gi", "Ti", "Pi", "Ei").index(suffix) + 1)
            if n % base == 0:
                return f"{n // base}{suffix}"
        return str(n)
    if n == 0:
        return "0"
    for i, suffix in reversed(list(enumerate(("k", "M", "G", "T", "P", "E"), start=1))):
        if n % (1000 ** i) == 0:
            return f"{n // 1000 ** i}{suffix}"
    return str(n)


def _q(text: Any) -> tuple[int, str]:
    return nano_value(text), str(text)


_MILLI = 10**6
_INT64_MAX = 2**63 - 1


def _milli(nanos: int) -> int | None:
    """Upstream ``safeMilliValue``: the value in milli units when that is lossless (and fits int64)."""
    if nanos % _MILLI:
        return None
    m = nanos // _MILLI
    return m if -_INT64_MAX - 1 <= m <= _INT64_MAX else None


def _use_milli(rng: dict[str, Any], fractional: bool) -> bool:
    """Upstream ``useMilli`` (v0.37.2 experimental consumable_capacity.go L309-332,
    DRAFractionalCapacityRange): milli-value arithmetic when min/max/step are all lossless in milli
    units and the step is at least 1m."""
    if not fractional:
        return False
    for key in ("min", "max", "step"):
        if rng.get(key) is None:
            continue
        m = _milli(nano_value(rng[key]))
        if m is None or (key == "step" and m < 1):
            return False
    return True


def consumed_capacity(requested: str | None, capacity: dict[str, Any], fractional: bool = False) -> tuple[int, str]:
    """Upstream ``calculateConsumedCapacity``: what one share takes of a capacity, as (nanos,
    quantity text) — the integer path, or with DRAFractionalCapacityRange (``fractional``) the
    milli-value path of ``roundUpRange`` (:func:`_use_milli`). Raises ValueError for a request
    the range arithmetic cannot represent."""
    policy = capacity.get("requestPolicy")
    if requested is None:
        if policy is not None and policy.get("default") is not None:
            return _q(policy["default"])
        return _q(capacity.get("value", "0"))
    req = _q(requested)
    if policy is None:
        return req
    rng = policy.get("validRange")
    if rng is not None and rng.get("min") is not None:
        lo = _q(rng["min"])
        if req[0] < lo[0]:
            return lo
        if rng.get("step") is None:
            return req
        if _use_milli(rng, fractional):
            rm = _milli(req[0])
            if rm is None:
                raise ValueError(f"capacity request cannot be represented in the device's range arithmetic: request "
                                 f"{requested} is not a representable milli value")
            step_m, min_m = nano_value(rng["step"]) // _MILLI, lo[0] // _MILLI
            n = -(-(rm - min_m) // step_m)
            if n > (_INT64_MAX - min_m) // step_m:
                raise ValueError(f"capacity request cannot be represented in the device's range arithmetic: rounding "
                                 f"request {requested} up to the next step passes the milli-value range")
            vm = min_m + step_m * n
            if vm % 1000 == 0:
                return vm * _MILLI, format_int_quantity(vm // 1000, _format_of(str(rng["step"])))
            return vm * _MILLI, f"{vm}m"
        if req[0] > (2**63 - 1) * _NANO:
            raise ValueError(f"capacity request cannot be represented in the device's range arithmetic: request "
                             f"{requested} exceeds MaxInt64")
        r, step, m = _value(req[0]), _value(nano_value(rng["step"])), _value(lo[0])
        n = -(-(r - m) // step)
        if m >= 0 and n > (2**63 - 1 - m) // step:
            raise ValueError(f"capacity request cannot be represented in the device's range arithmetic: rounding "
                             f"request {requested} up to the next step passes MaxInt64")
        v = m + step * n
        return v * _NANO, format_int_quantity(v, _format_of(str(rng["step"])))
    values = policy.get("validValues")
    if values is not None:
        for v in values:
            if req[0] <= nano_value(v):
                return _q(v)
        return req
    return req


def _violates_policy(consumed: int, policy: dict[str, Any] | None, fractional: bool = False) -> bool:
    """Upstream ``violatesPolicy`` (the step check in milli units with DRAFractionalCapacityRange
    when :func:`_use_milli`)."""
    if policy is None:
        return False
    if policy.get("default") is not None and consumed == nano_value(policy["default"]):
        return False
    rng = policy.get("validRange")
    if rng is not None:
        if rng.get("max") is not None and consumed > nano_value(rng["max"]):
            return True
        if rng.get("step") is not None:
            if _use_milli(rng, fractional):
                cm = _milli(consumed)
                if cm is None:
                    return True
                m = nano_value(rng["min"]) // _MILLI if rng.get("min") is not None else 0
                return (cm - m) % (nano_value(rng["step"]) // _MILLI) != 0
            m = _value(nano_value(rng["min"])) if rng.get("min") is not None else 0
            if (_value(consumed) - m) % _value(nano_value(rng["step"])) != 0:
                return True
        return False
    values = policy.get("validValues") or ()
    if values:
        return not any(consumed == nano_value(v) for v in values)
    return False


def request_fits_capacity(requests: dict[str, Any] | None, capacities: dict[str, Any],
                          allocated: dict[str, int], allocating: dict[str, int], fractional: bool = False) -> bool:
    """Upstream ``CmpRequestOverCapacity`` (v0.37.2 incubating ``consumable_capacity.go`` L44-104):
    a request naming a capacity the device lacks does not fit; else each capacity's share
    (:func:`consumed_capacity`) must respect its ``requestPolicy`` and, added to what allocated
    shares and shares picked so far hold, stay within ``value``. Raises AllocatorError for a
    negative or unrepresentable value."""
    if requests and any(k not in capacities for k in requests):
        return False
    consumed: dict[str, int] = {}
    for name, cap in capacities.items():
        try:
            c = consumed_capacity((requests or {}).get(name), cap, fractional)[0]
        except ValueError as e:
            raise AllocatorError(f'capacity "{name}": {e}') from None
        if c < 0:
            raise AllocatorError(f'capacity "{name}": capacity value is negative')
        consumed[name] = c
    for name, cap in capacities.items():
        c = consumed[name]
        if _violates_policy(c, cap.get("requestPolicy"), fractional):
            return False
        if allocated.get(name, 0) + c + allocating.get(name, 0) > nano_value(cap.get("value", "0")):
            return False
    return True


class _DeviceCache:
    """Per device mapping: its CEL context and the results of the expressions evaluated on it,
    kept across cycles (slices are replaced, never mutated, so a mapping's identity pins its
    content; the entry holds the mapping so that its id cannot be reused)."""

    __slots__ = ("device", "driver", "context", "results")

    def __init__(self, device: dict[str, Any], driver: str) -> None:
        self.device = device
        self.driver = driver
        self.context: Any = None
        self.results: dict[Any, Any] = {}
        """expression → result; a request's tuple of expressions → all of them match."""


_DEVICES: dict[int, _DeviceCache] = {}


def device_matches(driver: str, device: dict[str, Any], expression: str) -> bool:
    """One CEL selector against one device (cached). Raises :class:`CELError`."""
    entry = _DEVICES.get(id(device))
    if entry is None or entry.device is not device or entry.driver != driver:
        if len(_DEVICES) > 200_000:
            _DEVICES.clear()
        entry = _DEVICES[id(device)] = _DeviceCache(device, driver)
    hit = entry.results.get(expression)
    if hit is not None:
        return hit
    sel = compile_selector(expression)
    quick = sel.matches_driver(driver)
    if quick is not None:
        entry.results[expression] = quick
        return quick
    if entry.context is None:
        entry.context = device_context(driver, device)
    result = entry.results[expression] = sel.matches(entry.context)
    return result


def _node_selector(sel: Any) -> NodeSelectorMatcher:
    return NodeSelectorMatcher(msgspec.convert(sel, NodeSelector))


def node_matches(node: Any, node_name: str, all_nodes: bool, node_selector: Any) -> bool:
    """Upstream ``nodeMatches``: a node name, all nodes, or a node selector."""
    if node_name:
        return node is not None and node.metadata.name == node_name
    if all_nodes:
        return True
    if node_selector is not None:
        if node is None:
            return False
        return _node_selector(node_selector).match(node.metadata.labels or {}, node.metadata.name)
    return False


class _Pool:
    __slots__ = ("driver", "pool", "generation", "slices", "incomplete", "invalid", "invalid_reason", "devices",
                 "key", "free", "free_version", "free_owner", "counter_sets", "other_devices", "per_device", "fits")

    def __init__(self, driver: str, pool: str, generation: int) -> None:
        self.driver = driver
        self.pool = pool
        self.generation = generation
        self.slices: list[dict[str, Any]] = []
        self.incomplete = False
        self.invalid = False
        self.invalid_reason = ""
        self.devices: list[tuple[DeviceID, dict[str, Any], dict[str, Any]]] = []
        """(device id, device mapping, slice) in slice then device order."""
        self.key = (driver, pool)
        self.free: list[tuple[DeviceID, dict[str, Any], dict[str, Any]]] = []
        """``devices`` not in use, valid while ``free_version`` is the pool's in-use version."""
        self.free_version = -1
        self.free_owner: Any = None
        self.counter_sets: dict[str, dict[str, int]] = {}
        """DRAPartitionableDevices: counter set name → counter name → nanos (``sharedCounters``)."""
        self.other_devices: list[dict[str, Any]] = []
        """Devices of the pool's slices that do not reach the node (their allocated ones use counters too)."""
        self.per_device = False
        """A slice of the pool selects nodes per device (its first fit depends on the node)."""
        self.fits: dict[Any, tuple[Any, ...]] = {}
        """First-fit scans of simple requests (:meth:`Allocator._first_fit`): request key →
        (in-use version, versions, in-use container, matches, stopped at a device needing the general search)."""

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}"


class _Req:
    """One request or subrequest (upstream ``requestAccessor`` + ``requestData``)."""

    __slots__ = ("name", "parent", "spec", "class_", "num_devices", "all_devices", "selected_sub", "admin",
                 "selectors", "mode", "sel_key", "tolerations", "capacity_requests", "derived")

    def __init__(self, name: str, parent: str | None, spec: dict[str, Any], class_: dict[str, Any] | None) -> None:
        self.name = name
        self.parent = parent
        self.spec = spec
        self.class_ = class_
        self.num_devices = 0
        self.all_devices: list[tuple[DeviceID, dict[str, Any], dict[str, Any], _Pool]] = []
        self.selected_sub = 0
        self.admin = bool(spec.get("adminAccess")) if parent is None else False
        self.mode = spec.get("allocationMode") or "ExactCount"
        self.tolerations: list[dict[str, Any]] = list(spec.get("tolerations") or ())
        self.capacity_requests: dict[str, Any] | None = (spec.get("capacity") or {}).get("requests")
        self.selectors: list[tuple[str, int, bool]] = []
        """(expression, selector index, from the class) in evaluation order."""
        self.sel_key: tuple[str, ...] = ()
        """The expressions, as the key of a device's cached "all selectors match" result."""
        self.derived: dict[str, str] | None = None
        """DRADerivedAttributes: attribute name → CEL expression (``derivedAttributes``)."""

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent is not None else self.name


_SET_KINDS = (("ints", "int"), ("bools", "bool"), ("strings", "string"), ("versions", "version"))


def attribute_as_set(attr: dict[str, Any]) -> tuple[str, frozenset[Any]] | None:
    """Upstream ``attributeAsSet`` (v0.37.2 experimental allocator L898-938, DRAListTypeAttributes):
    a (kind, values) set of an attribute — a non-empty list (``ints``/``bools``/``strings``/
    ``versions``) first, else the scalar; None for an unknown type."""
    for plural, kind in _SET_KINDS:
        values = attr.get(plural)
        if values:
            return kind, frozenset(values)
    for _, kind in _SET_KINDS:
        if kind in attr and attr[kind] is not None:
            return kind, frozenset((attr[kind],))
    return None


def _intersection(a: tuple[str, frozenset[Any]], b: tuple[str, frozenset[Any]]) -> tuple[str, frozenset[Any]] | None:
    """``deviceAttributeListAsSet.intersection``: None when the kinds differ or nothing is common."""
    if a[0] != b[0]:
        return None
    common = a[1] & b[1]
    return (a[0], common) if common else None


class _AttributeConstraint:
    """What the two attribute constraints share: the requests they apply to (none = all; a
    ``request/sub`` entry names one ``firstAvailable`` sub-request), the attribute, whether list
    values are sets (DRAListTypeAttributes) and the derived-attribute cache."""

    __slots__ = ("requests", "attribute", "list_types", "cache")

    def __init__(self, requests: list[str], attribute: str, list_types: bool = False) -> None:
        self.requests = set(requests)
        self.attribute = attribute
        self.list_types = list_types
        self.cache: dict[tuple[DeviceID, str], dict[str, Any]] = {}

    def _applies(self, request: str, sub: str | None) -> bool:
        if not self.requests:
            return True
        if sub is None:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests


class _MatchAttribute(_AttributeConstraint):
    """``matchAttributeConstraint``: every device the constraint applies to has the attribute with
    one value; with DRAListTypeAttributes (``list_types``) the values as sets must have a common
    element (an intersection stack, so backtracking restores it)."""

    __slots__ = ("value", "n", "stack")

    def __init__(self, requests: list[str], attribute: str, list_types: bool = False) -> None:
        super().__init__(requests, attribute, list_types)
        self.value: Any = None
        self.n = 0
        self.stack: list[tuple[str, frozenset[Any]]] = []

    def add(self, request: str, sub: str | None, device: dict[str, Any], did: DeviceID,
            derived: dict[str, str] | None = None) -> bool:
        if not self._applies(request, sub):
            return True
        attr = _lookup_attribute(device, did, self.attribute, derived, self.cache)
        if attr is None:
            return False
        if self.list_types:
            new = attribute_as_set(attr)
            if new is None:
                return False
            if self.n:
                narrowed = _intersection(self.stack[self.n - 1], new)
                if narrowed is None:
                    return False
                new = narrowed
            del self.stack[self.n:]
            self.stack.append(new)
            self.n += 1
            return True
        if self.n == 0:
            self.value = attr
            self.n = 1
            return True
        for typ in ("string", "int", "bool", "version"):
            if typ in attr:
                if typ not in self.value or self.value[typ] != attr[typ]:
                    return False
                break
        else:
            return False
        self.n += 1
        return True

    def remove(self, request: str, sub: str | None) -> None:
        if self._applies(request, sub):
            self.n -= 1
            if self.list_types:
                del self.stack[self.n:]


class _DistinctAttribute(_AttributeConstraint):
    """``distinctAttributeConstraint`` (DRAConsumableCapacity, upstream's incubating and
    experimental allocators): the devices the constraint applies to all have the attribute, with
    pairwise different values; with DRAListTypeAttributes pairwise disjoint value sets."""

    __slots__ = ("values",)

    def __init__(self, requests: list[str], attribute: str, list_types: bool = False) -> None:
        super().__init__(requests, attribute, list_types)
        self.values: list[dict[str, Any]] = []

    def add(self, request: str, sub: str | None, device: dict[str, Any], did: DeviceID,
            derived: dict[str, str] | None = None) -> bool:
        if not self._applies(request, sub):
            return True
        attr = _lookup_attribute(device, did, self.attribute, derived, self.cache)
        if attr is None:
            return False
        if self.list_types:
            new = attribute_as_set(attr)
            if new is None:
                return False
            for old in self.values:
                seen = attribute_as_set(old)
                if seen is not None and _intersection(new, seen) is not None:
                    return False
        else:
            for old in self.values:
                for typ in ("string", "int", "bool", "version"):
                    if attr.get(typ) is not None:
                        if old.get(typ) is not None and old[typ] == attr[typ]:
                            return False
                        break
                else:
                    return False  # an unknown value type cannot match
        self.values.append(attr)
        return True

    def remove(self, request: str, sub: str | None) -> None:
        if self._applies(request, sub):
            self.values.pop()


def _derived_attribute(device: dict[str, Any], did: DeviceID, name: str, expression: str,
                       cache: dict[tuple[DeviceID, str], dict[str, Any]]) -> dict[str, Any]:
    """Upstream ``lookupAttribute``'s derived branch (experimental allocator L1110-1142): the
    expression evaluated on the device (cached per device and expression, as upstream's
    ``derivedAttributesCache``); a CEL failure is an :class:`AllocatorError` with upstream's text."""
    key = (did, expression)
    hit = cache.get(key)
    if hit is not None:
        return hit
    try:
        attr = evaluate_derived_attribute(expression, did[0], device)
    except CELError as e:
        if e.compile:
            raise AllocatorError(f"compile derived attribute {name} failed: {e.message}") from None
        raise AllocatorError(f"evaluate derived attribute {name} on device {did[0]}/{did[1]}/{did[2]} failed: "
                             f"{e.message}") from None
    cache[key] = attr
    return attr


def _lookup_attribute(device: dict[str, Any], did: DeviceID, name: str, derived: dict[str, str] | None = None,
                      cache: dict[tuple[DeviceID, str], dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """A device's attribute for a constraint: a derived attribute of the request first (it
    shadows the device's own), else the fully qualified name or, in the driver's domain, the bare id."""
    if derived is not None and name in derived:
        return _derived_attribute(device, did, name, derived[name], cache if cache is not None else {})
    attrs = device.get("attributes") or {}
    if name in attrs:
        return attrs[name]
    i = name.find("/")
    if i < 0 or name[:i] != did[0]:
        return None
    return attrs.get(name[i + 1:])


class _SliceIndex:
    """The slices, indexed by how they select nodes; the pools of a node are computed once and
    kept while the slices are the same objects (upstream gathers them per Allocate call)."""

    def __init__(self, slices: list[dict[str, Any]], features: Features) -> None:
        self.slices = slices
        self.by_node: dict[str, list[dict[str, Any]]] = {}
        self.everywhere: list[dict[str, Any]] = []
        self.by_selector: list[tuple[dict[str, Any], NodeSelectorMatcher]] = []
        self.per_device: list[dict[str, Any]] = []
        self.node_pools: dict[str, list[_Pool]] = {}
        self.searches: dict[tuple[str, str], tuple[Any, ...]] = {}
        """General searches (:meth:`Allocator._search_key`): (claims signature, node name) →
        (node, versions, in-use container, pool versions, picks or None)."""
        self.partitionable = features.partitionable_devices
        self.binding_conditions = features.device_binding_conditions
        for s in slices:
            spec = s.get("spec") or {}
            if not features.partitionable_devices and spec.get("perDeviceNodeSelection") is not None:
                continue
            if spec.get("nodeName"):
                self.by_node.setdefault(spec["nodeName"], []).append(s)
            elif spec.get("allNodes"):
                self.everywhere.append(s)
            elif spec.get("nodeSelector") is not None:
                self.by_selector.append((s, _node_selector(spec["nodeSelector"])))
            elif spec.get("perDeviceNodeSelection"):
                self.per_device.append(s)
        self.cacheable = not self.by_selector and not self.per_device  # pools depend on the name only

    def pools(self, node: Any) -> list[_Pool]:
        name = node.metadata.name if node is not None else ""
        if self.cacheable:
            hit = self.node_pools.get(name)
            if hit is None:
                hit = self.node_pools[name] = self._gather(node)
            return hit
        return self._gather(node)

    def _gather(self, node: Any) -> list[_Pool]:
        """Upstream ``GatherPools``: the pools with slices that reach ``node``."""
        name = node.metadata.name if node is not None else ""
        labels = (node.metadata.labels or {}) if node is not None else {}
        candidates = list(self.by_node.get(name, ()))
        candidates.extend(self.everywhere)
        for s, m in self.by_selector:
            if node is not None and m.match(labels, name):
                candidates.append(s)
        for s in self.per_device:
            for d in dict_path(s, "spec", "devices") or ():
                if node_matches(node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector")):
                    candidates.append(s)
                    break
        pools: dict[tuple[str, str], _Pool] = {}
        partitionable = self.partitionable
        for s in candidates:
            spec = s["spec"]
            p = spec.get("pool") or {}
            key = (spec.get("driver", ""), p.get("name", ""))
            gen = int(p.get("generation") or 0)
            pool = pools.get(key)
            if pool is None:
                pool = pools[key] = _Pool(key[0], key[1], gen)
            elif gen < pool.generation:
                continue
            elif gen > pool.generation:
                pool.slices = []
                pool.generation = gen
            pool.slices.append(s)
        out = []
        for key in sorted(pools):
            pool = pools[key]
            count = int(dict_path(pool.slices[0], "spec", "pool", "resourceSliceCount") or 0)
            pool.incomplete = len(pool.slices) != count
            others: list[dict[str, Any]] = []
            if pool.incomplete and partitionable:
                # upstream GatherPools + checkSlicesInPool (v0.37.2 incubating pools L128-186): a slice
                # of the pool that does not reach the node (e.g. its shared counters) completes it
                every = [x for x in self.slices if (dict_path(x, "spec", "driver") or "", dict_path(
                    x, "spec", "pool", "name") or "") == key]
                if any(int(dict_path(x, "spec", "pool", "generation") or 0) > pool.generation for x in every):
                    continue  # obsolete generation: the driver is replacing it
                same = [x for x in every if int(dict_path(x, "spec", "pool", "generation") or 0) == pool.generation]
                if len(same) != count:
                    out.append(pool)
                    continue
                pool.incomplete = False
                ids = {id(x) for x in pool.slices}
                others = [x for x in same if id(x) not in ids]
            device_slices = pool.slices
            if partitionable:
                device_slices = sorted((x for x in pool.slices if not x["spec"].get("sharedCounters")),
                                       key=lambda x: dict_path(x, "metadata", "name") or "")
            seen: set[str] = set()
            pool.per_device = any(x["spec"].get("perDeviceNodeSelection") for x in device_slices)
            for s in device_slices:
                for d in s["spec"].get("devices") or ():
                    n = d.get("name", "")
                    if n in seen and not pool.invalid:
                        pool.invalid, pool.invalid_reason = True, f"duplicate device name {n}"
                    seen.add(n)
                    pool.devices.append(((pool.driver, pool.pool, n), d, s))
            if partitionable and not pool.invalid:
                _build_counters(pool, [x for x in pool.slices + others if x["spec"].get("sharedCounters")],
                                [x for x in others if not x["spec"].get("sharedCounters")])
            out.append(pool)
        if self.binding_conditions:
            # upstream GatherPools (v0.37.2 incubating L186-199): pools with binding conditions last
            out = ([p for p in out if not _has_binding_conditions(p)]
                   + [p for p in out if _has_binding_conditions(p)])
        return out


def _has_binding_conditions(pool: _Pool) -> bool:
    return any(d.get("bindingConditions") is not None for _did, d, _s in pool.devices)


def _build_counters(pool: _Pool, counter_slices: list[dict[str, Any]], other_slices: list[dict[str, Any]]) -> None:
    """Upstream ``buildPool``'s counter part (v0.37.2 incubating ``pools_incubating.go`` L296-400):
    the pool's counter sets (a name twice → invalid), and every device's ``consumesCounters`` must
    name a known set and counter (else the pool is invalid)."""
    sets: dict[str, dict[str, int]] = {}
    for sl in counter_slices:
        for cs in sl["spec"].get("sharedCounters") or ():
            name = cs.get("name", "")
            if name in sets:
                pool.invalid, pool.invalid_reason = True, f"duplicate counter set name {name}"
                return
            sets[name] = {k: nano_value((v or {}).get("value", "0")) for k, v in (cs.get("counters") or {}).items()}
    pool.counter_sets = sets
    pool.other_devices = [d for sl in other_slices for d in sl["spec"].get("devices") or ()]
    for d in [t[1] for t in pool.devices] + pool.other_devices:
        for use in d.get("consumesCounters") or ():
            cs = sets.get(use.get("counterSet", ""))
            if cs is None:
                pool.invalid, pool.invalid_reason = True, f"counter set {use.get('counterSet', '')} not found"
                return
            for k in use.get("counters") or {}:
                if k not in cs:
                    pool.invalid = True
                    pool.invalid_reason = f"counter {k} not found in counter set {use.get('counterSet', '')}"
                    return


_INDEX: list[Any] = [None, None, None]
"""[slice ids, features, index]: the last index built."""


def _slice_index(slices: list[dict[str, Any]], features: Features, stable: bool = False) -> _SliceIndex:
    """The index of ``slices`` (the last one is kept while the slices are the same objects).
    ``stable``: the caller never mutates ``slices``, so the same list object means the same slices."""
    index = _INDEX[2]
    if stable and index is not None and index.slices is slices and _INDEX[1] == features:
        return index
    ids = [id(s) for s in slices]
    if _INDEX[0] == ids and _INDEX[1] == features:
        if stable:
            index.slices = slices  # the same slices in a list the caller keeps unchanged
        return index
    index = _SliceIndex(slices, features)  # holds the slices: their ids stay theirs
    _INDEX[:] = [ids, features, index]
    return index


_ROW_POOLS = (__name__, "row_pools")


class _RowPools:
    """Per :class:`~kubesched.framework.node_table.NodeTable` (``table.derived``), for one
    :class:`_SliceIndex` (reset when the slices change): each row's pool when its node has exactly
    one usable pool (complete, valid, no per-device node selection), else -1 — kept per row
    generation (a new node in the row bumps it; the pools of a node depend on its name only, the
    index being ``cacheable``) — and, per simple request (:attr:`Allocator._memo_key`), each
    pool's first-fit match count (-1: undecided — a scan error, or the scan stopped at a device
    needing the general search) kept per pool in-use version, for :meth:`Allocator.first_fit_table`."""

    __slots__ = ("index", "pools", "lists", "nodes", "key_ordinals", "ordinal", "row_pool", "row_gen", "fits")

    def __init__(self) -> None:
        self.index: _SliceIndex | None = None
        self.reset(None)

    def reset(self, index: _SliceIndex | None) -> None:
        self.index = index
        self.pools: list[_Pool] = []
        """Ordinal → pool."""
        self.lists: list[list[_Pool]] = []
        """Ordinal → the node's pool list (``[pool]``) as :meth:`_SliceIndex.pools` gave it."""
        self.nodes: list[Any] = []
        """Ordinal → a node the pool reaches (the first-fit scan of a pool is the same on each)."""
        self.key_ordinals: dict[tuple[str, str], list[int]] = {}
        """(driver, pool) → ordinals (a pool reaching several nodes is a pool object per node)."""
        self.ordinal: dict[int, int] = {}
        """id(pool) → ordinal."""
        self.row_pool = np.full(0, -1, np.int64)
        self.row_gen = np.full(0, -1, np.int64)
        self.fits: dict[Any, list[Any]] = {}
        """Memo key → [versions, in-use container, counts ``int64[pools]``, matches per pool, pools
        scanned (ordinals below it), :class:`PoolVersions` log position read (-1: none)]."""

    def row_pools(self, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        """The pool ordinal of each of ``rows`` (-1: not exactly one usable pool)."""
        cap = table.capacity
        if len(self.row_gen) < cap:
            grow = cap - len(self.row_gen)
            self.row_pool = np.concatenate([self.row_pool, np.full(grow, -1, np.int64)])
            self.row_gen = np.concatenate([self.row_gen, np.full(grow, -1, np.int64)])
        gen = table.generation
        stale = rows[self.row_gen[rows] != gen[rows]]
        if len(stale):
            index = self.index
            assert index is not None
            nodes = table.nodes
            for row in stale.tolist():
                node = nodes[row]
                o = -1
                if node is not None:
                    pools = index.pools(node)
                    if len(pools) == 1:
                        pool = pools[0]
                        if not (pool.incomplete or pool.invalid or pool.per_device):
                            o = self.ordinal.get(id(pool), -1)
                            if o < 0:
                                o = self.ordinal[id(pool)] = len(self.pools)
                                self.pools.append(pool)
                                self.lists.append(pools)
                                self.nodes.append(node)
                                self.key_ordinals.setdefault(pool.key, []).append(o)
                self.row_pool[row] = o
                self.row_gen[row] = gen[row]
        return self.row_pool[rows]

    def pool_counts(self, a: Allocator, rd: _Req, memo_key: tuple[Any, ...]
                    ) -> tuple[np.ndarray, list[Any]]:
        """Each known pool's first-fit match count for ``rd`` (-1: undecided) and its matches.
        The pools to scan again are those whose in-use version moved: read from the
        :class:`PoolVersions` log since the last call, or (a plain dict) compared one by one."""
        versions, in_use = a.versions, a.allocated
        assert versions is not None
        n = len(self.pools)
        entry = self.fits.get(memo_key)
        if entry is None or entry[0] is not versions or entry[1] is not in_use:
            if len(self.fits) > 64:
                self.fits.clear()
            entry = self.fits[memo_key] = [versions, in_use, np.full(n, -1, np.int64), [()] * n, 0, -1]
        counts, matches, known, pos = entry[2], entry[3], entry[4], entry[5]
        if len(counts) < n:
            counts = entry[2] = np.concatenate([counts, np.full(n - len(counts), -1, np.int64)])
            matches.extend([()] * (n - len(matches)))
        stale: Iterable[int]
        if isinstance(versions, PoolVersions) and pos >= versions.base:
            ordinals = self.key_ordinals
            changed = {o for k in versions.log[pos - versions.base:] for o in ordinals.get(k, ())}
            stale = sorted(changed.union(range(known, n))) if known < n else changed
            entry[5] = versions.base + len(versions.log)
        else:
            stale = range(n)
            entry[5] = versions.base + len(versions.log) if isinstance(versions, PoolVersions) else -1
        entry[4] = n
        for o in stale:
            try:
                hit = a._pool_fit(self.pools[o], rd, memo_key, True, self.nodes[o])
            except AllocatorError:
                counts[o] = -1  # allocate_run raises it per node
                if entry[5] >= 0:
                    entry[4] = min(entry[4], o)  # (scan it again next time)
                continue
            counts[o], matches[o] = (-1 if hit[4] else len(hit[3])), hit[3]
        return counts, matches


class PoolVersions(dict[tuple[str, str], int]):
    """(driver, pool) → a counter bumped whenever a device of that pool enters or leaves the
    devices in use (:attr:`Allocator.versions`), with the log of the bumps (:meth:`bump`) so that
    a consumer finds the pools that changed since it last looked without comparing every pool.
    ``base`` + an index into ``log`` is a position; the oldest half is dropped past 100,000."""

    __slots__ = ("log", "base")

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, str]] = []
        self.base = 0

    def bump(self, key: tuple[str, str]) -> None:
        self[key] = self.get(key, 0) + 1
        log = self.log
        log.append(key)
        if len(log) > 100_000:
            drop = len(log) // 2
            del log[:drop]
            self.base += drop


class Allocator:
    """Allocates ``claims`` (unallocated ResourceClaim mappings) on one node at a time.

    ``allocated``: devices in use (``DeviceID`` container: allocated claims, claims being
    allocated by pods in flight); ``get_class``: DeviceClass by name (None if absent);
    ``slices``: every ResourceSlice mapping (``stable_slices``: the caller never mutates that list
    object, so its identity stands for its content, as :meth:`DRAManager.slices`).
    """

    def __init__(self, claims: list[dict[str, Any]], allocated: Container[DeviceID],
                 get_class: Callable[[str], dict[str, Any] | None], slices: list[dict[str, Any]],
                 features: Features | None = None, versions: dict[tuple[str, str], int] | None = None,
                 shared: dict[DeviceID, dict[str, int]] | None = None, stable_slices: bool = False) -> None:
        self.claims = claims
        self.allocated = allocated
        self.shared = shared if shared is not None else {}
        """DRAConsumableCapacity: device → capacity (nanos) its allocated shares hold (a key with
        an empty mapping: shared without capacity)."""
        self.versions = versions
        """Optional (driver, pool) → a counter bumped whenever a device of that pool enters or leaves
        ``allocated``: lets the free devices of a pool be listed once, not per node and pod."""
        self.get_class = get_class
        self.features = features or Features()
        self.index = _slice_index(slices, self.features, stable_slices)
        self._classes: dict[str, dict[str, Any] | None] = {}
        # requests that do not depend on the node (no "All"): validated once, reused per node
        self._static: dict[tuple[int, int, int], _Req] | None = None
        self._static_error: AllocatorError | None = None
        if not any(_uses_all(c) for c in claims):
            probe = _Run(self, None, static=True)
            try:
                probe.prepare()
                self._static = probe.req
            except AllocatorError as e:
                self._static_error = e
        self._simple: _Req | None = None
        self._memo_key: tuple[Any, ...] = ()
        """The simple request's key of its pools' first-fit scans (:attr:`_Pool.fits`), the
        node declaring the optional-operations feature (``_memo_key_no_ops``: not declaring it)."""
        self._memo_key_no_ops: tuple[Any, ...] = ()
        self._signature: str | None = None
        """The claims' specs, their classes and the features, as the key of general searches."""
        if self._static is not None and len(claims) == 1 and len(self._static) == 1:
            rd = next(iter(self._static.values()))
            if (rd.parent is None and not rd.admin and rd.mode == "ExactCount"
                    and not dict_path(claims[0], "spec", "devices", "constraints")
                    and rd.num_devices <= ALLOCATION_RESULTS_MAX_SIZE):
                self._simple = rd
                f = self.features
                self._memo_key = (rd.sel_key, rd.num_devices, repr(rd.tolerations), f.partitionable_devices,
                                  f.consumable_capacity, f.device_taints, f.fractional_capacity_range, True)
                self._memo_key_no_ops = (*self._memo_key[:-1], False)

    def class_(self, name: str) -> dict[str, Any] | None:
        if name not in self._classes:
            self._classes[name] = self.get_class(name)
        return self._classes[name]

    def claims_to_allocate(self) -> list[dict[str, Any]]:
        return self.claims

    def gather_pools(self, node: Any) -> list[_Pool]:
        """Upstream ``GatherPools``: the pools with slices that reach ``node``."""
        return self.index.pools(node)

    # ── allocation ──

    def allocate(self, node: Any) -> list[dict[str, Any]] | None:
        """The allocation results (one per claim, in order) on ``node``, or None when the claims
        do not fit there. Raises :class:`AllocatorError`."""
        run = self.allocate_run(node)
        return run.results() if run is not None else None

    def allocate_run(self, node: Any, timeout_s: float = 0.0) -> _Run | None:
        """Like :meth:`allocate`, but the results are built only when asked (``results()``):
        Filter runs this on every node, Reserve needs the results of one. ``timeout_s`` > 0
        limits the search (:class:`AllocatorTimeout`)."""
        if self._static_error is not None:
            raise self._static_error
        rd = self._simple
        if rd is None:
            memo = self._search_key(node)
            if memo is not None:
                hit = self.index.searches.get(memo[0])
                if hit is not None and hit[:4] == memo[1:] and hit[0] is node:
                    return None if hit[4] is None else _Replayed(self, node, hit[4])  # type: ignore[return-value]
            run = _Run(self, node)
            if timeout_s > 0:
                run.deadline = time.monotonic() + timeout_s
            ok = run.run()
            if memo is not None and not run.shares:
                searches = self.index.searches
                if len(searches) > 100_000:
                    searches.clear()
                searches[memo[0]] = (*memo[1:], self._picks(run) if ok else None)
            return run if ok else None
        # one request, first fit (see _Run._run_simple), with the device checks inlined
        index = self.index
        pools = index.node_pools.get(node.metadata.name) if index.cacheable and node is not None else None
        if pools is None:
            pools = index.pools(node)
        need = rd.num_devices
        if self.features.consumable_capacity and (rd.capacity_requests or self.shared):
            run = _Run(self, node)  # capacity bookkeeping: the general search
            run.full = True
            if timeout_s > 0:
                run.deadline = time.monotonic() + timeout_s
            return run if run.run() else None
        versions = self.versions
        # DRAOptionalNodeOperations: devices of slices skipping node operations need the node's feature
        skip_ops_ok = (not self.features.optional_node_operations
                       or node_declares(node, OPTIONAL_NODE_OPERATIONS_FEATURE))
        memo_key = self._memo_key if skip_ops_ok else self._memo_key_no_ops
        picked: list[tuple[DeviceID, dict[str, Any], dict[str, Any]]] = []
        for pool in pools:
            if pool.incomplete or pool.invalid:
                continue
            if versions is None or pool.per_device:
                matches, full = self._first_fit(pool, pool.devices, rd, skip_ops_ok, node)
            else:
                hit = self._pool_fit(pool, rd, memo_key, skip_ops_ok, node)
                matches, full = hit[3], hit[4]
            rem = need - len(picked)
            if len(matches) >= rem:
                picked.extend(matches[:rem])
                return _Solution(self, node, pools, picked)  # type: ignore[return-value]
            if full:
                run = _Run(self, node)  # shared counters / shares: the general search keeps count
                run.full = True
                if timeout_s > 0:
                    run.deadline = time.monotonic() + timeout_s
                return run if run.run() else None
            picked.extend(matches)
        if any(p.invalid for p in pools):
            raise AllocatorError("invalid resource pools were encountered", failed_on_node=True)
        return None

    def _pool_fit(self, pool: _Pool, rd: _Req, memo_key: tuple[Any, ...], skip_ops_ok: bool, node: Any
                  ) -> tuple[Any, ...]:
        """The pool's first fit for the simple request (:attr:`_Pool.fits`), kept while the pool's
        devices in use are the same (the scan is pure in the device, the request and the node's
        optional-operations feature; per-device node selection is not cached): (in-use version,
        versions, in-use container, matches, stopped at a device needing the general search).
        Raises :class:`AllocatorError` (a selector's CEL error)."""
        versions, in_use = self.versions, self.allocated
        assert versions is not None
        v = versions.get(pool.key, 0)
        hit = pool.fits.get(memo_key)
        if hit is None or hit[0] != v or hit[1] is not versions or hit[2] is not in_use:
            if pool.free_version != v or pool.free_owner is not versions:
                pool.free = [t for t in pool.devices if t[0] not in in_use]
                pool.free_version, pool.free_owner = v, versions
            if len(pool.fits) > 64:
                pool.fits.clear()
            hit = pool.fits[memo_key] = (v, versions, in_use, *self._first_fit(pool, pool.free, rd, skip_ops_ok, node))
        return hit

    def first_fit_table(self, table: NodeTable, rows: np.ndarray, out: dict[str, Any]
                        ) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`first_fit_rows` over rows of a :class:`~kubesched.framework.node_table.NodeTable`,
        with numpy instead of a loop over the rows: each row's single pool (:class:`_RowPools`, kept
        per row generation) and each pool's first-fit match count for the simple request (kept per
        pool in-use version) are gathered, and a row is rejected where the count is below the
        request's, decided (a :class:`_Solution` in ``out``) where it is not, undecided where the
        node has not exactly one usable pool or its scan needs the general search. Returns
        (rejected, undecided) indexes into ``rows`` (``int64`` arrays), or None when no row can be
        decided so (the same answers as :meth:`allocate_run`)."""
        rd = self._simple
        f = self.features
        versions = self.versions
        if (rd is None or self._static_error is not None or versions is None or not self.index.cacheable
                or f.optional_node_operations or (f.consumable_capacity and (rd.capacity_requests or self.shared))):
            return None
        rp: _RowPools = table.derived(_ROW_POOLS, lambda _t: _RowPools())
        if rp.index is not self.index:
            rp.reset(self.index)
        p = rp.row_pools(table, rows)
        counts, matches = rp.pool_counts(self, rd, self._memo_key)
        if not len(counts):
            return np.zeros(0, np.int64), np.arange(len(rows), dtype=np.int64)
        c = np.where(p >= 0, counts[p], -1)
        need = rd.num_devices
        feasible = np.flatnonzero(c >= need)
        if len(feasible):
            if isinstance(out, NodeAllocations):
                out.add_rows(self, table, rows[feasible], p[feasible], rp.lists, list(matches), need)
            else:
                names, nodes, lists = table.names, table.nodes, rp.lists
                for row, o in zip(rows[feasible].tolist(), p[feasible].tolist()):
                    m = matches[o]
                    out[names[row]] = _Solution(self, nodes[row], lists[o], m if len(m) == need else m[:need])
        return np.flatnonzero((c >= 0) & (c < need)), np.flatnonzero(c < 0)

    def first_fit_rows(self, nodes: Sequence[Any], rows: list[int], out: dict[str, Any]
                       ) -> tuple[list[int], list[int]] | None:
        """:meth:`allocate_run` over ``nodes[row]`` for each of ``rows`` where the answer is a
        look-up: a simple request (one ExactCount request, first fit), a node with one pool whose
        first fit for the request is kept (:attr:`_Pool.fits`, same in-use version) and needs no
        general search; for other claims, a node whose general search is kept (equal claims
        searched it before, :meth:`_search_key`) and still holds. Such a node's solution goes to
        ``out[node name]``, as Filter keeps it. Returns (indexes into ``rows`` the claims do not
        fit, indexes left undecided — for :meth:`allocate_run`), or None when no node can be
        decided so (the same answers as :meth:`allocate_run`, without a call and a dozen
        attribute reads per node)."""
        rd = self._simple
        if rd is None:
            return self._replayed_rows(nodes, rows, out)
        f = self.features
        versions = self.versions
        if (self._static_error is not None or versions is None or not self.index.cacheable
                or f.optional_node_operations or (f.consumable_capacity and (rd.capacity_requests or self.shared))):
            return None
        node_pools = self.index.node_pools
        in_use, memo_key, need = self.allocated, self._memo_key, rd.num_devices
        rejected: list[int] = []
        undecided: list[int] = []
        for i, row in enumerate(rows):
            node = nodes[row]
            name = node.metadata.name
            pools = node_pools.get(name)
            if pools is None or len(pools) != 1:
                undecided.append(i)
                continue
            pool = pools[0]
            hit = pool.fits.get(memo_key)
            if (hit is None or pool.incomplete or pool.invalid or pool.per_device or hit[4]
                    or hit[0] != versions.get(pool.key, 0) or hit[1] is not versions or hit[2] is not in_use):
                undecided.append(i)
                continue
            matches = hit[3]
            if len(matches) < need:
                rejected.append(i)
                continue
            out[name] = _Solution(self, node, pools, matches if len(matches) == need else matches[:need])
        return rejected, undecided

    def _search_key(self, node: Any) -> tuple[Any, ...] | None:
        """The key of this node's general search in :attr:`_SliceIndex.searches`, and what the
        outcome depends on besides the claims' specs, their classes and the features: (key, node,
        versions, in-use container, the versions of the node's pools); None when not cacheable
        (no versions, claims asking for all devices, shares in use)."""
        versions = self.versions
        if versions is None or self._static is None or self.shared or node is None:
            return None
        pools = self.index.pools(node)
        return ((self._search_signature(), node.metadata.name), node, versions, self.allocated,
                tuple(versions.get(p.key, 0) for p in pools))

    def _search_signature(self) -> str:
        sig = self._signature
        if sig is None:
            classes = sorted((k, v) for k, v in self._classes.items())
            sig = self._signature = json.dumps([[c.get("spec") for c in self.claims], classes, repr(self.features)],
                                               sort_keys=True, default=str)
        return sig

    def _replayed_rows(self, nodes: Sequence[Any], rows: list[int], out: dict[str, Any]
                       ) -> tuple[list[int], list[int]] | None:
        """:meth:`first_fit_rows` for claims the general search serves: the nodes whose kept
        search (:meth:`_search_key`) still holds are decided from it, the rest left undecided."""
        versions = self.versions
        if (versions is None or self._static is None or self.shared or self._static_error is not None
                or not self.index.cacheable):
            return None
        node_pools, searches, in_use = self.index.node_pools, self.index.searches, self.allocated
        sig = self._search_signature()
        rejected: list[int] = []
        undecided: list[int] = []
        for i, row in enumerate(rows):
            node = nodes[row]
            name = node.metadata.name
            hit = searches.get((sig, name))
            pools = node_pools.get(name)
            if (hit is None or pools is None or hit[0] is not node or hit[1] is not versions or hit[2] is not in_use
                    or hit[3] != tuple([versions.get(p.key, 0) for p in pools])):
                undecided.append(i)
            elif hit[4] is None:
                rejected.append(i)
            else:
                out[name] = _Replayed(self, node, hit[4])
        return rejected, undecided

    def _picks(self, run: _Run) -> tuple[Any, ...]:
        """A successful search's outcome without this allocator's request objects: per claim,
        ((request key, device id, device, slice), ...), and the chosen subrequests."""
        keys = {id(rd): k for k, rd in run.req.items()}
        return (tuple(tuple((keys[id(rd)], did, d, s) for rd, did, d, s in res) for res in run.result),
                dict(getattr(run, "chosen", None) or {}))

    def _replay(self, node: Any, picks: tuple[Any, ...]) -> _Run:
        """A run with the outcome of an earlier search of the same claims on ``node`` (same
        devices in use): its results are the ones that search would build."""
        run = _Run(self, node, static=True)
        req = run.req = self._static or {}
        run.constraints = [[] for _ in self.claims]
        run.result = [[(req[k], did, d, s) for k, did, d, s in res] for res in picks[0]]
        if picks[1]:
            run.chosen = dict(picks[1])
        return run

    def _first_fit(self, pool: _Pool, devices: list[tuple[DeviceID, dict[str, Any], dict[str, Any]]], rd: _Req,
                   skip_ops_ok: bool, node: Any
                   ) -> tuple[tuple[tuple[DeviceID, dict[str, Any], dict[str, Any]], ...], bool]:
        """The first-fit scan of one pool for the simple request ``rd``: the first (at most
        ``num_devices``) free, selectable devices it may take, in order, and whether the scan
        stopped at a device that needs the general search (shared counters, shares) first."""
        in_use = self.allocated
        need = rd.num_devices
        plain = not self.features.partitionable_devices
        taints = self.features.device_taints
        plain_multi = not self.features.consumable_capacity
        fractional = self.features.fractional_capacity_range
        key = rd.sel_key
        kind_key = ("__kind__", plain, plain_multi, taints, fractional)
        out: list[tuple[DeviceID, dict[str, Any], dict[str, Any]]] = []
        for t in devices:
            did, d, s = t
            if did in in_use or (not skip_ops_ok and s["spec"].get("skipNodeOperations")):
                continue
            entry = _DEVICES.get(id(d))
            if entry is None or entry.device is not d or entry.driver != did[0]:
                entry = _DEVICES[id(d)] = _DeviceCache(d, did[0])
            ok = entry.results.get(key)
            if ok is None:
                ok = _Run(self, node, static=True)._selectable(0, rd, s, d, did)
                if not s["spec"].get("perDeviceNodeSelection"):
                    entry.results[key] = ok
            if not ok:
                continue
            kind: int | None = entry.results.get(kind_key)
            if kind is None:
                kind = entry.results[kind_key] = _simple_kind(d, plain, plain_multi, taints, fractional)
            if kind:
                if kind == _SKIP:
                    continue
                if kind == _FULL:
                    return tuple(out), True
                if taint_prevents_allocation(d, rd.tolerations):
                    continue
            out.append(t)
            if len(out) == need:
                break
        return tuple(out), False


_SKIP, _FULL, _TAINTED = 1, 2, 3

_USES: dict[int, tuple[Any, tuple[tuple[str, tuple[tuple[str, int], ...]], ...]]] = {}
"""id(a device's ``consumesCounters``) → (that list, its counters parsed): slices are replaced,
never mutated, so a list's identity pins its content (the entry holds it: the id stays its)."""


def _parsed_uses(uses: Any) -> tuple[tuple[str, tuple[tuple[str, int], ...]], ...]:
    """A device's ``consumesCounters`` as ((counter set, ((counter, nanos), ...)), ...), parsed
    once per list object (the search reserves and releases the same device's counters often)."""
    hit = _USES.get(id(uses))
    if hit is not None and hit[0] is uses:
        return hit[1]
    out = tuple((str(use.get("counterSet", "")), tuple((k, nano_value((v or {}).get("value", "0")))
                                                       for k, v in (use.get("counters") or {}).items()))
                for use in uses)
    if len(_USES) > 200_000:
        _USES.clear()
    _USES[id(uses)] = (uses, out)
    return out


def _simple_kind(d: dict[str, Any], plain: bool, plain_multi: bool, taints: bool, fractional: bool = False) -> int:
    """How the first-fit path treats a selectable, free device (cached per device and features):
    0 take it, ``_SKIP`` never (consumes counters without DRAPartitionableDevices; a dedicated
    device whose capacity policy rejects its own value), ``_FULL`` hand over to the general search
    (shared counters, shares), ``_TAINTED`` take it if the request tolerates its taints."""
    if not plain_multi and "capacity" in d and not d.get("allowMultipleAllocations") and \
            not request_fits_capacity(None, d["capacity"], {}, {}, fractional):
        return _SKIP
    if d.get("consumesCounters"):
        return _SKIP if plain else _FULL
    if d.get("allowMultipleAllocations") and not plain_multi:
        return _FULL
    if taints and "taints" in d:
        return _TAINTED
    return 0


class _Replayed:
    """A general search's outcome replayed on the same node (same devices in use): the
    :class:`_Run` that builds its results (:meth:`Allocator._replay`) is made on demand — Filter
    keeps one per feasible node, Reserve asks one of them for its results."""

    __slots__ = ("a", "node", "picks")

    def __init__(self, a: Allocator, node: Any, picks: tuple[Any, ...]) -> None:
        self.a, self.node, self.picks = a, node, picks

    def request_names(self) -> list[list[str]]:
        """As :meth:`_Run.request_names`, from the picks' request keys."""
        req = self.a._static or {}
        return [[req[k].full_name for k, _did, _d, _s in res] for res in self.picks[0]]

    def results(self) -> list[dict[str, Any]]:
        return self.a._replay(self.node, self.picks).results()


class NodeAllocations(dict[str, Any]):
    """Node name → the allocator's solution there (Filter keeps one per feasible node, Reserve
    and Score read them by name). :meth:`Allocator.first_fit_table` adds its decided rows as a
    batch (:meth:`add_rows`): a node's :class:`_Solution` is made when it is asked for (``get``,
    ``[]``, ``in``) — the table does not change during the cycle — and every batch's when the
    mapping is iterated or measured."""

    __slots__ = ("batches",)

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[tuple[Allocator, NodeTable, np.ndarray, list[list[_Pool]], list[Any], int]] = []

    def add_rows(self, a: Allocator, table: NodeTable, rows: np.ndarray, ordinals: np.ndarray,
                 lists: list[list[_Pool]], matches: list[Any], need: int) -> None:
        """``rows`` of ``table`` are feasible: each takes the first ``need`` of its pool's
        ``matches[ordinal]``, its pool list ``lists[ordinal]``."""
        slot = np.full(table.capacity, -1, np.int64)
        slot[rows] = ordinals
        self.batches.append((a, table, slot, lists, matches, need))

    def _lazy(self, name: str) -> Any:
        for a, table, slot, lists, matches, need in self.batches:
            row = table.row_of.get(name)
            if row is not None and row < len(slot) and (o := int(slot[row])) >= 0:
                m = matches[o]
                sol = _Solution(a, table.nodes[row], lists[o], m if len(m) == need else m[:need])
                dict.__setitem__(self, name, sol)
                return sol
        return None

    def _materialize(self) -> None:
        batches, self.batches = self.batches, []
        for a, table, slot, lists, matches, need in batches:
            names, nodes = table.names, table.nodes
            for row in np.flatnonzero(slot >= 0).tolist():
                if names[row] not in self:
                    m = matches[int(slot[row])]
                    dict.__setitem__(self, names[row], _Solution(a, nodes[row], lists[int(slot[row])],
                                                                 m if len(m) == need else m[:need]))

    def get(self, name: str, default: Any = None) -> Any:
        hit = dict.get(self, name)
        if hit is None and self.batches:
            hit = self._lazy(name)
        return default if hit is None else hit

    def __getitem__(self, name: str) -> Any:
        hit = self.get(name)
        if hit is None:
            raise KeyError(name)
        return hit

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or (bool(self.batches) and isinstance(name, str)
                                                 and self._lazy(name) is not None)

    def __bool__(self) -> bool:
        return dict.__len__(self) > 0 or bool(self.batches)

    def __len__(self) -> int:
        self._materialize()
        return dict.__len__(self)

    def __iter__(self) -> Any:
        self._materialize()
        return dict.__iter__(self)

    def keys(self) -> Any:
        self._materialize()
        return dict.keys(self)

    def values(self) -> Any:
        self._materialize()
        return dict.values(self)

    def items(self) -> Any:
        self._materialize()
        return dict.items(self)


class _Solution:
    """A first-fit solution of the allocator's simple request: the picked (device id, device,
    slice) in order; the :class:`_Run` that builds its results is made on demand."""

    __slots__ = ("a", "node", "pools", "picked")

    def __init__(self, a: Allocator, node: Any, pools: list[_Pool], picked: Sequence[Any]) -> None:
        self.a, self.node, self.pools, self.picked = a, node, pools, picked

    def request_names(self) -> list[list[str]]:
        """The request (``<request>`` or ``<request>/<subrequest>``) of each picked device."""
        rd = self.a._simple
        assert rd is not None  # (made for the simple request only)
        return [[rd.full_name] * len(self.picked)]

    def results(self) -> list[dict[str, Any]]:
        rd = self.a._simple
        assert rd is not None
        run = _Run(self.a, self.node, static=True)
        run.pools, run.req, run.constraints = self.pools, self.a._static or {}, [[]]
        run.result = [[(rd, did, d, s) for did, d, s in self.picked]]
        return run.results()


def _uses_all(claim: dict[str, Any]) -> bool:
    for r in dict_path(claim, "spec", "devices", "requests") or ():
        if (r.get("exactly") or {}).get("allocationMode") == "All":
            return True
        if any(sub.get("allocationMode") == "All" for sub in r.get("firstAvailable") or ()):
            return True
    return False


class _Run:
    """One ``Allocate`` call (upstream's unexported ``allocator``)."""

    def __init__(self, a: Allocator, node: Any, static: bool = False) -> None:
        self.a = a
        self.node = node
        self.claims = a.claims
        self.static = static
        self.pools: list[_Pool] = [] if static else a.gather_pools(node)
        self.req: dict[tuple[int, int, int], _Req] = {}
        self.constraints: list[list[_MatchAttribute | _DistinctAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.result: list[list[tuple[_Req, DeviceID, dict[str, Any], dict[str, Any]]]] = []
        self.in_use = a.allocated
        self.deadline = 0.0
        self._steps = 0
        self.full = False
        """Run the general search even for a claim the first-fit shortcut could take."""
        self._share_seq = 0
        self._available: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
        self._groups: dict[tuple[str, str], dict[str, _GroupIntersection]] = {}
        """DRADeviceCompatibilityGroups: pool → counter set → running intersection."""
        self._group_saves: list[list[tuple[tuple[str, str], str, _GroupIntersection | None]]] = []
        """One entry per device whose counters are reserved (LIFO, as the search backtracks)."""
        self.allocating_capacity: dict[DeviceID, dict[str, int]] = {}
        """DRAConsumableCapacity: capacity (nanos) the shares picked so far take, per device."""
        self.shares: dict[tuple[int, int], tuple[str, dict[str, str]]] = {}
        """(claim index, result index) → (shareID, consumedCapacity texts) of a shared result."""
        self._consumed: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
        self._overdrawn: set[tuple[str, str]] = set()
        """Pools whose allocated devices already use more than a counter holds."""

    def prepare(self) -> None:
        """Validate the requests (upstream ``validateDeviceRequest``) and build the constraints."""
        static = self.a._static
        for ci, claim in enumerate(self.claims):
            if static is None:
                min_devices = 0
                for ri, request in enumerate(dict_path(claim, "spec", "devices", "requests") or ()):
                    subs = request.get("firstAvailable") or []
                    rname = request.get("name", "")
                    if subs:
                        if not self.a.features.prioritized_list:
                            raise AllocatorError(f"claim {_kobj(claim)}, request {rname}: has subrequests, "
                                                 "but the DRAPrioritizedList feature is disabled")
                        least = None
                        for si, sub in enumerate(subs):
                            rd = self._validate(claim, ci, ri, si, _Req(sub.get("name", ""), rname, sub, None))
                            least = rd.num_devices if least is None else min(least, rd.num_devices)
                        min_devices += least or 0
                    else:
                        spec = request.get("exactly") or {}
                        rd = self._validate(claim, ci, ri, 0, _Req(rname, None, spec, None))
                        min_devices += rd.num_devices
                if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                    raise AllocatorError(f"claim {_kobj(claim)}: number of requested devices {min_devices} "
                                         f"exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            cons: list[_MatchAttribute | _DistinctAttribute] = []
            list_types = self.a.features.list_type_attributes
            for i, c in enumerate(dict_path(claim, "spec", "devices", "constraints") or ()):
                if c.get("matchAttribute"):
                    cons.append(_MatchAttribute(list(c.get("requests") or ()), c["matchAttribute"], list_types))
                elif c.get("distinctAttribute") and self.a.features.consumable_capacity:
                    cons.append(_DistinctAttribute(list(c.get("requests") or ()), c["distinctAttribute"], list_types))
                else:
                    raise AllocatorError(f"claim {_kobj(claim)}, constraint #{i}: empty constraint "
                                         "(unsupported constraint type?)")
            self.constraints.append(cons)
            self.result.append([])
        if static is not None:
            self.req = static

    def run(self) -> bool:
        simple = self.a._simple
        if simple is not None and not self.full:
            return self._run_simple(simple)
        self.prepare()
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise AllocatorError("invalid resource pools were encountered", failed_on_node=True)
            return False
        if self.a._static is not None:
            # the shared requests remember the chosen subrequests of this node's solution
            self.chosen = {k: rd.selected_sub for k, rd in self.req.items() if rd.parent is not None}
        return True

    def _run_simple(self, rd: _Req) -> bool:
        """One claim with one ExactCount request, no constraints, no admin access: the depth-first
        search takes the first ``count`` free, selectable devices in pool order (same result,
        without the recursion)."""
        self.constraints = [[]]
        self.req = self.a._static or {}
        picked: list[tuple[_Req, DeviceID, dict[str, Any], dict[str, Any]]] = []
        self.result = [picked]
        need = rd.num_devices
        in_use = self.in_use
        counters_ok = self.a.features.partitionable_devices
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for did, d, s in pool.devices:
                if did in in_use:
                    continue
                if not self._selectable(0, rd, s, d, did):
                    continue
                if d.get("consumesCounters") or (self.a.features.consumable_capacity and (
                        d.get("allowMultipleAllocations") or rd.capacity_requests or self.a.shared
                        or ("capacity" in d and not request_fits_capacity(
                            None, d["capacity"], {}, {}, self.a.features.fractional_capacity_range)))):
                    if not counters_ok and d.get("consumesCounters"):
                        continue
                    self.full = True  # shared counters / capacity: the general search keeps count
                    self.constraints, self.result = [], []
                    return self.run()
                if self.a.features.device_taints and taint_prevents_allocation(d, rd.tolerations):
                    continue
                picked.append((rd, did, d, s))
                if len(picked) == need:
                    return True
        if any(p.invalid for p in self.pools):
            raise AllocatorError("invalid resource pools were encountered", failed_on_node=True)
        return False

    def request_names(self) -> list[list[str]]:
        """Per claim, the request (``<request>`` or ``<request>/<subrequest>``) of each device of
        the solution: what the results' ``request`` fields will say, without building them."""
        return [[rd.full_name for rd, _did, _d, _s in res] for res in self.result]

    def results(self) -> list[dict[str, Any]]:
        chosen = getattr(self, "chosen", None)
        if chosen:
            for k, sub in chosen.items():
                self.req[k].selected_sub = sub
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def _validate(self, claim: dict[str, Any], ci: int, ri: int, si: int, rd: _Req) -> _Req:
        spec = rd.spec
        if spec.get("derivedAttributes") and self.a.features.derived_attributes:
            # experimental allocator validateDeviceRequest L553-567 (off: the incubating allocator,
            # which the API server's field dropping leaves nothing to see, ignores them)
            rd.derived = {str(x.get("name")): str(x.get("expression") or "") for x in spec["derivedAttributes"]}
        for i, sel in enumerate(spec.get("selectors") or ()):
            if not dict_path(sel, "cel", "expression"):
                raise AllocatorError(f"claim {_kobj(claim)}, request {rd.name}, selector #{i}: "
                                     "CEL expression empty (unsupported selector type?)")
        if not self.a.features.admin_access and spec.get("adminAccess") is not None and rd.parent is None:
            raise AllocatorError(f"claim {_kobj(claim)}, request {rd.name}: admin access is requested, "
                                 "but the feature is disabled")
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise AllocatorError(f"claim {_kobj(claim)}, request {rd.name}: missing device class name "
                                 "(unsupported request type?)")
        cls = self.a.class_(class_name)
        if cls is None:
            raise AllocatorError(f"claim {_kobj(claim)}, request {rd.name}: could not retrieve device class "
                                 f'{class_name}: deviceclass.resource.k8s.io "{class_name}" not found')
        rd.class_ = cls
        rd.selectors = ([(dict_path(x, "cel", "expression") or "", i, True)
                         for i, x in enumerate(DeviceClassView(cls).selectors)]
                        + [(dict_path(x, "cel", "expression") or "", i, False)
                           for i, x in enumerate(spec.get("selectors") or ())])
        rd.sel_key = (str(self.a.features.device_binding_conditions),) + tuple(e for e, _, _ in rd.selectors)
        self.req[(ci, ri, si)] = rd
        mode = rd.mode
        if mode == "ExactCount":
            rd.num_devices = int(spec.get("count") or 1)
        elif mode == "All":
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocatorError(f"claim {_kobj(claim)}, request {rd.name}: asks for all devices, "
                                         f"but resource pool {pool.id} is currently being updated")
                if pool.invalid:
                    raise AllocatorError(f"claim {_kobj(claim)}, request {rd.name}: asks for all devices, "
                                         f"but resource pool {pool.id} is currently invalid")
                for did, d, s in pool.devices:
                    if self._selectable(ci, rd, s, d, did):
                        rd.all_devices.append((did, d, s, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocatorError(f"claim {_kobj(claim)}, request {rd.name}: unsupported count mode {mode}")
        return rd

    def _selectable(self, ci: int, rd: _Req, s: dict[str, Any], d: dict[str, Any], did: DeviceID) -> bool:
        if d.get("bindingConditions") and not self.a.features.device_binding_conditions:
            return False
        for expr, i, from_class in rd.selectors:
            try:
                if not device_matches(did[0], d, expr):
                    return False
            except CELError as e:
                where = (f"class {dict_path(rd.class_, 'metadata', 'name')}" if from_class
                         else f"claim {_kobj(self.claims[ci])}")
                if e.compile:
                    raise AllocatorError(f"{where}: selector #{i}: CEL compile error: {e.message}") from None
                raise AllocatorError(f"{where}: selector #{i} on device {did[0]}/{did[1]}/{did[2]}: "
                                     f"CEL runtime error: {e.message}") from None
        if s["spec"].get("perDeviceNodeSelection"):
            return node_matches(self.node, d.get("nodeName") or "", bool(d.get("allNodes")), d.get("nodeSelector"))
        return True

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        self._steps += 1
        if self.deadline and not self._steps & 255 and time.monotonic() > self.deadline:
            raise AllocatorTimeout
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        requests = claim["spec"]["devices"]["requests"]
        if ri >= len(requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        rk = (ci, ri, si)
        rd = self.req[rk]
        if not in_sub and rd.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.req:
                try:
                    ok = self._allocate_one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if ok:
                    self.req[rk].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        if rd.mode == "All":
            if not rd.all_devices:
                return False
        if di >= rd.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if rd.mode == "All":
            did, d, s, pool = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, d, s, must=True, pool=pool)
            if undo is None:
                return False
            try:
                done = self._allocate_one(ci, ri, si, di + 1, in_sub)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        in_use, allocating, admin = self.in_use, self.allocating, rd.admin
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for did, d, s in pool.devices:
                if admin:
                    if ci in allocating.get(did, ()):
                        continue
                elif did in in_use or allocating.get(did):
                    continue
                if not self._selectable(ci, rd, s, d, did):
                    continue
                undo = self._allocate_device(ci, rd, did, d, s, must=False, pool=pool)
                if undo is None:
                    continue
                try:
                    done = self._allocate_one(ci, ri, si, di + 1, in_sub)
                except BaseException:
                    undo()
                    raise
                if done:
                    return True
                undo()
        return False

    def _allocate_device(self, ci: int, rd: _Req, did: DeviceID, d: dict[str, Any], s: dict[str, Any],
                         must: bool, pool: _Pool | None = None) -> Callable[[], None] | None:
        if rd.admin:
            if ci in self.allocating.get(did, ()):
                return None
        elif did in self.in_use or self.allocating.get(did):
            return None
        consumable = self.a.features.consumable_capacity
        multi = consumable and bool(d.get("allowMultipleAllocations"))
        # allocator_experimental.go L1588-1597: optional node operations need the node's feature
        if self.a.features.optional_node_operations and s["spec"].get("skipNodeOperations") \
                and not node_declares(self.node, OPTIONAL_NODE_OPERATIONS_FEATURE):
            return None
        uses = d.get("consumesCounters")
        if uses and not self.a.features.partitionable_devices:
            return None
        if uses and multi and (did in self.a.shared or did in self.allocating_capacity):
            uses = None  # a share of a device in use: its counters are already charged
        if uses:
            if pool is None or not self._reserve_counters(pool, uses):
                return None
        # might be tainted: then a toleration is needed (upstream allocateDevice, stable L1194-1199)
        if self.a.features.device_taints and taint_prevents_allocation(d, rd.tolerations):
            if uses:
                self._release_counters(pool, uses)  # type: ignore[arg-type]
            return None
        base, sub = (rd.name, None) if rd.parent is None else (rd.parent, rd.name)
        cons = self.constraints[ci]
        for i, c in enumerate(cons):
            if not c.add(base, sub, d, did, rd.derived):
                if uses:
                    self._release_counters(pool, uses)  # type: ignore[arg-type]
                if must:
                    raise AllocatorError(f"claim {_kobj(self.claims[ci])}, request {rd.name}: cannot add device "
                                         f"{did[0]}/{did[1]}/{did[2]} because a claim constraint would not be "
                                         "satisfied")
                for e in range(i):
                    cons[e].remove(base, sub)
                return None
        share: tuple[str, dict[str, str]] | None = None
        taken: dict[str, int] = {}
        existed = True
        if consumable:
            caps = d.get("capacity") or {}
            fractional = self.a.features.fractional_capacity_range
            if not request_fits_capacity(rd.capacity_requests, caps, self.a.shared.get(did, {}),
                                         self.allocating_capacity.get(did, {}), fractional):
                for c in cons:
                    c.remove(base, sub)
                if uses:
                    self._release_counters(pool, uses)  # type: ignore[arg-type]
                return None
            if multi:
                texts: dict[str, str] = {}
                for name, cap in caps.items():
                    taken[name], texts[name] = consumed_capacity((rd.capacity_requests or {}).get(name), cap,
                                                                 fractional)
                n = self._share_seq = self._share_seq + 1
                share = (str(uuid.uuid5(uuid.NAMESPACE_URL, f"kubesched/{_kobj(self.claims[ci])}/{rd.full_name}/"
                                                            f"{did[0]}/{did[1]}/{did[2]}/{n}")), texts)
                existed = did in self.allocating_capacity
                acc = self.allocating_capacity.setdefault(did, {})
                for name, v in taken.items():
                    acc[name] = acc.get(name, 0) + v
        if not multi:
            self.allocating.setdefault(did, set()).add(ci)
        res = self.result[ci]
        if share is not None:
            self.shares[(ci, len(res))] = share
        res.append((rd, did, d, s))

        def undo() -> None:
            for c in cons:
                c.remove(base, sub)
            if not multi:
                self.allocating[did].discard(ci)
            res.pop()
            if share is not None:
                del self.shares[(ci, len(res))]
                acc = self.allocating_capacity[did]
                for name, v in taken.items():
                    acc[name] -= v
                if not existed:
                    del self.allocating_capacity[did]
            if uses:
                self._release_counters(pool, uses)  # type: ignore[arg-type]

        return undo

    # ── shared counters (DRAPartitionableDevices) ──

    def _reserve_counters(self, pool: _Pool, uses: list[dict[str, Any]]) -> bool:
        """Upstream ``checkAvailableCounters`` (v0.37.2 incubating L1570-1681): the pool's counters
        less what its allocated devices consume (computed once per run; may go negative), less
        what the devices picked so far consume, must stay ≥ 0 for **every** counter of the pool;
        on success the device's consumption is kept (released by :meth:`_release_counters`).
        With DRADeviceCompatibilityGroups the groups are checked first (experimental
        ``checkAndConsumeCompatibilityGroups`` L2054-2110, before the counters L1625-1640)."""
        saves: list[tuple[tuple[str, str], str, _GroupIntersection | None]] = []
        if self.a.features.compatibility_groups:
            running = self._groups.get(pool.key)
            if running is None:
                running = self._groups[pool.key] = self._group_baseline(pool)
            for use in uses:
                name = str(use.get("counterSet", ""))
                cur = running.get(name) or _GroupIntersection()
                groups = frozenset(use.get("compatibilityGroups") or ())
                if not cur.admits(groups):
                    for key, n, prev in reversed(saves):
                        self._restore_group(key, n, prev)
                    return False
                saves.append((pool.key, name, running.get(name)))
                running[name] = cur.add(groups)
        self._group_saves.append(saves)
        avail = self._available.get(pool.key)
        if avail is None:
            avail = {name: dict(c) for name, c in pool.counter_sets.items()}
            in_use = self.in_use
            for d in [t[1] for t in pool.devices] + pool.other_devices:
                did = (pool.driver, pool.pool, d.get("name", ""))
                if did not in in_use and did not in self.a.shared:  # upstream IsDeviceAllocated
                    continue
                for set_name, parsed in _parsed_uses(d.get("consumesCounters") or ()):
                    cs = avail.get(set_name)
                    if cs is None:
                        continue
                    for k, v in parsed:
                        if k in cs:
                            cs[k] -= v
            self._available[pool.key] = avail
            if any(have < 0 for counters in avail.values() for have in counters.values()):
                self._overdrawn.add(pool.key)  # every counter is checked: nothing fits this pool
        consumed = self._consumed.setdefault(pool.key, {})
        parsed_uses = _parsed_uses(uses)
        for set_name, parsed in parsed_uses:
            cs = consumed.setdefault(set_name, {})
            for k, v in parsed:
                cs[k] = cs.get(k, 0) + v
        # Every counter must cover what is used; only the ones this device uses changed since the
        # last check passed (releases only lower the use), so those are the ones to look at.
        ok = pool.key not in self._overdrawn
        for set_name, parsed in parsed_uses if ok else ():
            have_set = avail.get(set_name)
            if have_set is None:
                continue
            used = consumed[set_name]
            for k, _v in parsed:
                have = have_set.get(k)
                if have is not None and have < used[k]:
                    ok = False
                    break
            if not ok:
                break
        if not ok:
            self._release_counters(pool, uses)
        return ok

    def _group_baseline(self, pool: _Pool) -> dict[str, _GroupIntersection]:
        """Upstream ``compatibilityGroupsBaselineForPool`` (L2020-2052): the groups of the pool's
        allocated devices, per counter set."""
        out: dict[str, _GroupIntersection] = {}
        for d in [t[1] for t in pool.devices] + pool.other_devices:
            did = (pool.driver, pool.pool, d.get("name", ""))
            if did not in self.in_use and did not in self.a.shared:  # upstream IsDeviceAllocated
                continue
            for use in d.get("consumesCounters") or ():
                name = str(use.get("counterSet", ""))
                out[name] = (out.get(name) or _GroupIntersection()).add(
                    frozenset(use.get("compatibilityGroups") or ()))
        return out

    def _restore_group(self, key: tuple[str, str], name: str, prev: _GroupIntersection | None) -> None:
        if prev is None:
            self._groups[key].pop(name, None)
        else:
            self._groups[key][name] = prev

    def _release_counters(self, pool: _Pool, uses: list[dict[str, Any]]) -> None:
        """Upstream ``deallocateCountersForDevice`` (and the compatibility groups' rollback)."""
        if self._group_saves:
            for key, name, prev in reversed(self._group_saves.pop()):
                self._restore_group(key, name, prev)
        consumed = self._consumed.get(pool.key, {})
        for set_name, counters in _parsed_uses(uses):
            cs = consumed.get(set_name, {})
            for k, v in counters:
                cs[k] = cs.get(k, 0) - v

    # ── results ──

    def _result(self, ci: int, claim: dict[str, Any]) -> dict[str, Any]:
        results = []
        shares = getattr(self, "shares", {})
        for i, (rd, did, dev, sl) in enumerate(self.result[ci]):
            r: dict[str, Any] = {"request": rd.full_name, "driver": did[0], "pool": did[1], "device": did[2]}
            if rd.admin:
                r["adminAccess"] = True
            tol = rd.spec.get("tolerations")
            if tol:
                r["tolerations"] = tol
            if self.a.features.device_binding_conditions and dev.get("bindingConditions"):
                r["bindingConditions"] = list(dev["bindingConditions"])
                if dev.get("bindingFailureConditions"):
                    r["bindingFailureConditions"] = list(dev["bindingFailureConditions"])
            share = shares.get((ci, i))
            if share is not None:
                r["shareID"] = share[0]
                if share[1]:
                    r["consumedCapacity"] = share[1]
            if self.a.features.optional_node_operations and sl["spec"].get("skipNodeOperations"):
                r["skipNodeOperations"] = list(sl["spec"]["skipNodeOperations"])  # experimental L408
            results.append(r)
        requests = dict_path(claim, "spec", "devices", "requests") or ()
        config: list[dict[str, Any]] = []
        class_ranges: dict[str, tuple[int, int]] = {}
        for ri in range(len(requests)):
            rd = self.req[(ci, ri, 0)]
            if rd.parent is not None:
                rd = self.req[(ci, ri, rd.selected_sub)]
            cls = rd.class_
            if cls is None:
                continue
            cview = DeviceClassView(cls)
            cname = cview.name
            if cname in class_ranges:
                start, end = class_ranges[cname]
                for i in range(start, end):
                    config[i]["requests"].append(rd.full_name)
                continue
            start = len(config)
            for c in cview.config:
                entry = {"source": "FromClass", "requests": [rd.full_name]}
                entry.update({k: v for k, v in c.items() if k != "requests"})
                config.append(entry)
            class_ranges[cname] = (start, len(config))
        for c in ResourceClaimView(claim).config:
            reqs = list(c.get("requests") or ())
            body = {k: v for k, v in c.items() if k != "requests"}
            if not reqs:
                config.append({"source": "FromClaim", **body})
                continue
            for ri, request in enumerate(requests):
                if request.get("name") in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
                    continue
                rd = self.req[(ci, ri, 0)]
                if rd.parent is None:
                    continue
                chosen = self.req[(ci, ri, rd.selected_sub)]
                if chosen.full_name in reqs:
                    config.append({"source": "FromClaim", "requests": reqs, **body})
        for entry in config:
            if "requests" in entry and len(entry["requests"]) == len(requests):
                del entry["requests"]
        out: dict[str, Any] = {"devices": {"results": results}}
        if config:
            out["devices"]["config"] = config
        ns = self._node_selector(ci)
        if ns is not None:
            out["nodeSelector"] = ns
        return out

    def _node_selector(self, ci: int) -> dict[str, Any] | None:
        fields: list[dict[str, Any]] = []
        exprs: list[dict[str, Any]] = []
        for _rd, _did, d, s in self.result[ci]:
            spec = s["spec"]
            if spec.get("perDeviceNodeSelection"):
                node_name, sel = d.get("nodeName"), d.get("nodeSelector")
            else:
                node_name, sel = spec.get("nodeName"), spec.get("nodeSelector")
            if not node_name and self.a.features.device_binding_conditions and d.get("bindsToNode") \
                    and self.node is not None:
                node_name = self.node.metadata.name  # binds to the node it is allocated for (incubating)
            if node_name:
                return {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
            if sel is not None:
                terms = sel.get("nodeSelectorTerms") or []
                if len(terms) == 1:
                    _add_new(terms[0].get("matchFields") or [], fields)
                    _add_new(terms[0].get("matchExpressions") or [], exprs)
                elif len(terms) > 1:
                    raise AllocatorError(f"create NodeSelector for claim "
                                         f"{dict_path(self.claims[ci], 'metadata', 'name')}: unsupported "
                                         f"ResourceSlice.NodeSelector with {len(terms)} terms")
        if fields or exprs:
            term: dict[str, Any] = {}
            if exprs:
                term["matchExpressions"] = exprs
            if fields:
                term["matchFields"] = fields
            return {"nodeSelectorTerms": [term]}
        return None


def _add_new(src: list[dict[str, Any]], dst: list[dict[str, Any]]) -> None:
    for r in src:
        vals = set(r.get("values") or ())
        if not any(e.get("key") == r.get("key") and e.get("operator") == r.get("operator")
                   and set(e.get("values") or ()) == vals for e in dst):
            dst.append(r)
