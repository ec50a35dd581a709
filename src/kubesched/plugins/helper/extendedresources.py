"""Extended resources backed by DRA (DRAExtendedResource): which DeviceClass serves a resource name.

Upstream: the scheduler's ``DeviceClassResolver`` (``SharedDRAManager.DeviceClassResolver()``,
v1.37.2 ``pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go`` L94-104), an
``extendedresourcecache.ExtendedResourceCache`` (dynamic-resource-allocation v0.37.2
``deviceclass/extendedresourcecache/extendedresourcecache.go``) fed by DeviceClass informer events:

* every class maps its implicit name ``deviceclass.resource.kubernetes.io/<class>``;
* a class with ``spec.extendedResourceName`` maps that name too; when several classes name the same
  resource the oldest (``metadata.creationTimestamp``) wins, ties to the smaller name
  (``updateResourceName2class`` L170-190).

Here the mapping is computed from the listed DeviceClasses (the lister is the informer's view), so
it does not depend on the order events arrived in. One event-order quirk is not reproduced:
upstream's cache skips the *implicit* name of a class that lost an explicit-name conflict when that
class arrived after the winner; here every class keeps its implicit name.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.api.dra import DeviceClassView
from kubesched.plugins.dra_cel import CELError
from kubesched.plugins.dra_structured import allocated_devices, device_matches, node_matches
from kubesched.plugins.helper.resourcenames import is_extended_resource_name

__all__ = ["DEVICE_CLASS_PREFIX", "EXTENDED_RESOURCE_CLAIM_ANNOTATION", "DRAScoreState", "device_class_mapping",
           "dra_score_state", "is_dra_extended_resource_name"]

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
"""Upstream ``resourceapi.ResourceDeviceClassPrefix`` (k8s.io/api v0.37.2 resource/v1/types.go L49)."""
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
"""Upstream ``resourceapi.ExtendedResourceClaimAnnotation`` (types.go L37): marks the claim the
scheduler creates for a pod's DRA-backed extended resources."""

_CACHE: dict[int, tuple[tuple[int, ...], list[Any], dict[str, dict[str, Any]]]] = {}


def is_dra_extended_resource_name(name: str) -> bool:
    """Upstream ``schedutil.IsDRAExtendedResourceName`` (v1.37.2 ``pkg/scheduler/util/utils.go``
    L208-210): an extended resource name, or an implicit ``deviceclass.resource.kubernetes.io/*`` one."""
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def _as_dict(obj: Any) -> dict[str, Any]:
    return obj if isinstance(obj, dict) else msgspec.to_builtins(obj)


def device_class_mapping(lister: Any) -> dict[str, dict[str, Any]]:
    """Resource name → the DeviceClass (a mapping) that serves it, from ``lister.list("DeviceClass")``
    (see the module docstring). Cached per lister while the listed objects are the same ones."""
    if lister is None:
        return {}
    objs = lister.list("DeviceClass")
    if not objs:
        return {}  # no DeviceClass (most clusters): nothing to map, nothing to cache
    ids = tuple(id(o) for o in objs)
    hit = _CACHE.get(id(lister))
    if hit is not None and hit[0] == ids:
        return hit[2]
    out: dict[str, dict[str, Any]] = {}
    explicit: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for obj in objs:
        dc = _as_dict(obj)
        view = DeviceClassView(dc)
        name = view.name
        out[DEVICE_CLASS_PREFIX + name] = dc
        ext = view.extended_resource_name
        if ext:
            # RFC 3339 timestamps of one format order as strings; a missing one is the zero time
            key = (view.creation_timestamp, name)
            cur = explicit.get(ext)
            if cur is None or key < cur[:2]:
                explicit[ext] = (*key, dc)
    for ext, (_, _, dc) in explicit.items():
        out[ext] = dc
    _CACHE[id(lister)] = (ids, list(objs), out)  # holds the objects: their ids stay theirs
    return out


class DRAScoreState:
    """Upstream ``draPreScoreState`` (v1.37.2 ``balanced_allocation.go`` L54-60), read by the
    NodeResourcesFit / BalancedAllocation scorers for a scored resource a node has 0 allocatable
    of: :meth:`totals` counts the devices of the mapped DeviceClass on the node and how many of
    them are allocated (``calculateDRAResourceTotals``, ``resource_allocation.go`` L338-445).

    ``mapping``: resource name → DeviceClass; ``allocated``: the allocated / assumed / in-flight
    devices ``(driver, pool, device)`` (upstream ``GatherAllocatedState``); ``slices``: every
    ResourceSlice. Results are cached per (node, resource) for the cycle.
    """

    def __init__(self, mapping: dict[str, dict[str, Any]], allocated: Any, slices: list[dict[str, Any]]) -> None:
        self.mapping = mapping
        self.allocated = allocated
        self.slices = slices
        self._cache: dict[tuple[str, str], tuple[int, int]] = {}
        self._by_node: dict[str, list[dict[str, Any]]] | None = None
        self._general: list[dict[str, Any]] = []

    def maps(self, resource: str) -> bool:
        return resource in self.mapping

    def totals(self, node: Any, resource: str) -> tuple[int, int]:
        """(devices of the class on ``node``, allocated ones); (0, 0) when the resource is not
        mapped or a selector fails (upstream logs the error and scores the resource as absent)."""
        dc = self.mapping.get(resource)
        if dc is None or node is None:
            return 0, 0
        key = (node.metadata.name, resource)
        hit = self._cache.get(key)
        if hit is None:
            try:
                hit = self._count(node, dc)
            except (CELError, ValueError):
                hit = (0, 0)
            self._cache[key] = hit
        return hit

    def _node_slices(self, name: str) -> list[dict[str, Any]]:
        """The slices that can hold devices of node ``name``: those published for that node alone
        (``spec.nodeName`` without a selector, all nodes or per-device selection: indexed once per
        cycle) and every other slice, which :meth:`_count` checks against the node. A slice of
        another node alone contributes nothing to ``name``'s count, so skipping it changes no sum
        and evaluates no selector the plain scan would have."""
        if self._by_node is None:
            self._by_node = {}
            for sl in self.slices:
                spec = sl.get("spec") or {}
                sn = spec.get("nodeName") or ""
                if (sn and not spec.get("perDeviceNodeSelection") and not spec.get("allNodes")
                        and spec.get("nodeSelector") is None):
                    self._by_node.setdefault(sn, []).append(sl)
                else:
                    self._general.append(sl)
        own = self._by_node.get(name)
        return self._general + own if own else self._general

    def _count(self, node: Any, dc: dict[str, Any], slices: list[dict[str, Any]] | None = None) -> tuple[int, int]:
        """``calculateDRAResourceTotals`` for ``node``: over :meth:`_node_slices` (``slices``: these
        instead, the plain scan of every slice the tests compare with)."""
        name = node.metadata.name
        exprs = [sel["cel"]["expression"] for sel in (dc.get("spec") or {}).get("selectors") or ()
                 if isinstance(sel, dict) and isinstance(sel.get("cel"), dict)]
        capacity = allocated = 0
        for sl in self._node_slices(name) if slices is None else slices:
            spec = sl.get("spec") or {}
            if spec.get("perDeviceNodeSelection"):
                devices = []
                for d in spec.get("devices") or ():
                    dn, every = d.get("nodeName") or "", bool(d.get("allNodes"))
                    if every or (dn and dn == name):
                        devices.append(d)
                    elif d.get("nodeSelector") is not None and node_matches(node, dn, every, d["nodeSelector"]):
                        devices.append(d)
            else:
                sn, every = spec.get("nodeName") or "", bool(spec.get("allNodes"))
                if not every and sn != name and spec.get("nodeSelector") is not None:
                    if not node_matches(node, sn, every, spec["nodeSelector"]):
                        continue
                elif not every and sn and sn != name:
                    continue
                devices = spec.get("devices") or []
            driver = str(spec.get("driver") or "")
            pool = str((spec.get("pool") or {}).get("name") or "")
            for d in devices:
                if not all(device_matches(driver, d, e) for e in exprs):
                    continue
                capacity += 1
                if (driver, pool, d.get("name", "")) in self.allocated:
                    allocated += 1
        return capacity, allocated


def dra_score_state(handle: Any, resources: list[str]) -> DRAScoreState | None:
    """Upstream ``getDRAPreScoredParams`` (``resource_allocation.go`` L278-310): None unless one of
    the scored ``resources`` is a DRA extended resource name a DeviceClass maps. The allocated
    devices are the scheduler's DRA manager's (the DynamicResources plugin of the handle's
    framework: allocated, assumed and in-flight claims), else those of the listed claims."""
    lister = getattr(handle, "lister", None)
    if lister is None:
        return None
    mapping = device_class_mapping(lister)
    if not mapping or not any(is_dra_extended_resource_name(r) and r in mapping for r in resources):
        return None
    fw = getattr(handle, "framework", None)
    plugin = (getattr(fw, "plugins", None) or {}).get("DynamicResources") if fw is not None else None
    mgr = getattr(plugin, "manager", None)
    allocated: set[tuple[str, str, str]]
    if mgr is not None:
        mgr.sync()
        allocated = set(mgr.in_use) | set(mgr.shared)
    else:
        allocated = {did for c in lister.list("ResourceClaim") for did in allocated_devices(_as_dict(c), False)}
    return DRAScoreState(mapping, allocated, [_as_dict(x) for x in lister.list("ResourceSlice")])
