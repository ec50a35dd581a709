"""The field manager of a plain create (``POST``): its ``Update`` entry in ``managedFields``.

Follows k8s.io/apiserver@v0.37.2 ``pkg/endpoints/handlers/create.go`` (``FieldManager.UpdateNoErrors``
of an empty live object with the decoded request object, before admission: the creator owns the
fields it sent and the defaults the decoding added, not what mutating admission or the registry
strategy adds later) and ``managerOrUserAgent`` (``fieldManager``, else the User-Agent's first
segment: ``kubectl-create``, ``kubectl-client-side-apply``, …). The field sets are
:mod:`kubesched.apiserver.apply`'s.

The box's own components write as the real ones do (their User-Agent's first segment, checked
against v1.37.2 with ``tools/upstream/managers_compare.py``): the workload controllers as
:data:`CONTROLLER_MANAGER` (``Update``; status writes with subresource ``status``), the simulated
kubelets as :data:`KUBELET` (``pods/status``, ``nodes/status``). A successful binding records
no entry (``pkg/registry/core/pod/storage/storage.go`` ``BindingREST`` writes the pod through
``GuaranteedUpdate``, around the field manager). :func:`track_write` records such an entry for
a write that goes straight to the store.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from kubesched.apiserver import apply as ssa

if TYPE_CHECKING:
    from collections.abc import Callable

    from kubesched.apiserver.crd import Registry as CRDs
    from kubesched.apiserver.resources import ResourceInfo

__all__ = ["CONTROLLER_MANAGER", "KUBELET", "track_create", "track_write"]

#: the field manager of kube-controller-manager's writes (its User-Agent's first segment)
CONTROLLER_MANAGER = "kube-controller-manager"
#: the field manager of the kubelet's status writes
KUBELET = "kubelet"


class _Server(Protocol):
    """What :func:`track_create` reads of the registry: the CRDs and the apply schema of a resource."""

    crds: CRDs

    def _ssa_schema(self, info: ResourceInfo) -> tuple[Any, Callable[[Any], Any]]: ...


def track_create(server: _Server, info: ResourceInfo, decoded: dict[str, Any], stored: dict[str, Any],
                 manager: str) -> None:
    """Set ``stored['metadata']['managedFields']`` (in place) to the creator's Update entry over
    ``decoded`` (the request object) defaulted as decoding defaults it; custom resources: as
    stored (pruned, schema defaults)."""
    from kubesched.apiserver.admission import apply_defaults
    from kubesched.apiserver.metatime import now_rfc3339

    custom = server.crds.of_info(info) is not None
    schema, resolve = server._ssa_schema(info)
    key = None if custom else _shape_key(info, decoded, resolve)
    if key is not None and (fields := _CREATE_FIELDS.get(key)) is not None:
        # an object like one created before (templated pods): the same field set
        mf = [ssa.managed_fields_entry(manager, "Update", info.api_version, now_rfc3339(), orjson.loads(fields))] \
            if fields != b"{}" else None
    else:
        if custom:
            seen = _copy(stored)
        else:
            seen = _copy(decoded)
            apply_defaults(info.plural, seen)
        seen.setdefault("metadata", {})["managedFields"] = (decoded.get("metadata") or {}).get("managedFields")
        if not seen["metadata"]["managedFields"]:
            seen["metadata"].pop("managedFields")
        ssa.track_update({}, seen, schema, resolve, manager=manager, api_version=info.api_version,
                         now=now_rfc3339(), strip_status="status" in info.subresources, unstructured=custom)
        mf = seen["metadata"].get("managedFields")
        if key is not None:
            if len(_CREATE_FIELDS) >= _CREATE_FIELDS_SIZE:
                _CREATE_FIELDS.clear()
            _CREATE_FIELDS[key] = orjson.dumps(mf[0]["fieldsV1"]) if mf else b"{}"
    if mf:
        stored.setdefault("metadata", {})["managedFields"] = mf
    else:
        stored.get("metadata", {}).pop("managedFields", None)


#: a create's field set (``fieldsV1``, encoded) by the created object's shape (:func:`_shape_key`)
_CREATE_FIELDS: dict[tuple[Any, ...], bytes] = {}
_CREATE_FIELDS_SIZE = 256


#: kinds whose defaulting (``admission.apply_defaults``) does nothing, so their field sets do not
#: depend on scalar values outside lists (see :func:`_skeleton`): every Event of one form shares one
_NO_DEFAULTS = frozenset(("events",))


def _shape_key(info: ResourceInfo, decoded: dict[str, Any], resolve: Any) -> tuple[Any, ...] | None:
    """What the creator's field set of a built-in kind depends on: the kind, the definitions
    (``resolve``, one per API release) and the request object but for the metadata fields never
    owned (``name``, ``uid``, ...; ``apply.STRIP_META``): pods of one template share it; for
    :data:`_NO_DEFAULTS` kinds only the object's :func:`_skeleton`. None when the request carries
    managedFields (then the entries depend on them) or is not plain JSON."""
    md = decoded.get("metadata")
    if isinstance(md, dict):
        if md.get("managedFields"):
            return None
        decoded = {**decoded, "metadata": {k: v for k, v in md.items() if k not in ssa.STRIP_META}}
    if info.plural in _NO_DEFAULTS:
        decoded = _skeleton(decoded)
    try:
        return info.group, info.version, info.plural, resolve, orjson.dumps(decoded)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _skeleton(x: Any) -> Any:
    """``x`` with every string and number outside a list replaced by its type's zero value: what
    a field set reads of an object with no defaulting is its maps' keys, which values are null,
    maps or lists, and the lists whole (list-map keys and set values are fields themselves)."""
    if isinstance(x, dict):
        # a scalar value is zeroed in place: one call per map, not one per field (an Event: 18 -> 6)
        return {k: _skeleton(v) if isinstance(v, dict) else v.__class__() if v.__class__ in _ZEROED else v
                for k, v in x.items()}
    if x.__class__ in _ZEROED:
        return x.__class__()
    return x


#: the scalar types :func:`_skeleton` replaces by their zero value (``bool`` is kept: ``False`` is not ``True``)
_ZEROED = frozenset((str, int, float))


def _copy(obj: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a decoded JSON object (an orjson round trip: ~10x ``copy.deepcopy``'s speed);
    ``copy.deepcopy`` for what JSON cannot carry (YAML bodies may hold other types)."""
    try:
        out: dict[str, Any] = orjson.loads(orjson.dumps(obj))
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(obj)
    return out


def track_write(server: object, space: str, old: dict[str, Any], new: dict[str, Any], manager: str,
                subresource: str = "") -> None:
    """Record ``manager``'s ``Update`` entry (``subresource`` ``""`` or ``"status"``) in
    ``new['metadata']['managedFields']`` (in place) for a write of ``new`` over ``old`` that goes
    straight to the store (store space ``space``, e.g. ``apps/replicasets``), as the API server's
    update handler would (``managedfieldsupdater.go``). A space the box does not serve, or a
    server without schemas: no-op."""
    from kubesched.apiserver import resources as served
    from kubesched.apiserver.metatime import now_rfc3339

    info = next((r for r in served.RESOURCES if r.key == space and r.plural != "bindings"), None)
    schemas = getattr(server, "_ssa_schema", None)  # None: a stand-in server of unit tests
    if info is None or schemas is None:
        return
    schema, resolve = schemas(info)
    ssa.track_update(old, new, schema, resolve, manager=manager, api_version=info.api_version, now=now_rfc3339(),
                     subresource=subresource, strip_status=subresource == "" and "status" in info.subresources)
