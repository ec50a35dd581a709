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

from kubesched.plugins.noderesources.resource_allocation import is_extended_resource_name

__all__ = ["DEVICE_CLASS_PREFIX", "EXTENDED_RESOURCE_CLAIM_ANNOTATION", "device_class_mapping",
           "is_dra_extended_resource_name"]

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
    ids = tuple(id(o) for o in objs)
    hit = _CACHE.get(id(lister))
    if hit is not None and hit[0] == ids:
        return hit[2]
    out: dict[str, dict[str, Any]] = {}
    explicit: dict[str, tuple[str, str, dict[str, Any]]] = {}
    for obj in objs:
        dc = _as_dict(obj)
        meta = dc.get("metadata") or {}
        name = str(meta.get("name") or "")
        out[DEVICE_CLASS_PREFIX + name] = dc
        ext = (dc.get("spec") or {}).get("extendedResourceName")
        if ext:
            # RFC 3339 timestamps of one format order as strings; a missing one is the zero time
            key = (str(meta.get("creationTimestamp") or ""), name)
            cur = explicit.get(ext)
            if cur is None or key < cur[:2]:
                explicit[ext] = (*key, dc)
    for ext, (_, _, dc) in explicit.items():
        out[ext] = dc
    _CACHE[id(lister)] = (ids, list(objs), out)  # holds the objects: their ids stay theirs
    return out
