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
    if custom:
        seen = copy.deepcopy(stored)
    else:
        seen = copy.deepcopy(decoded)
        apply_defaults(info.plural, seen)
    seen.setdefault("metadata", {})["managedFields"] = (decoded.get("metadata") or {}).get("managedFields")
    if not seen["metadata"]["managedFields"]:
        seen["metadata"].pop("managedFields")
    schema, resolve = server._ssa_schema(info)
    ssa.track_update({}, seen, schema, resolve, manager=manager, api_version=info.api_version, now=now_rfc3339(),
                     strip_status="status" in info.subresources, unstructured=custom)
    mf = seen["metadata"].get("managedFields")
    if mf:
        stored.setdefault("metadata", {})["managedFields"] = mf
    else:
        stored.get("metadata", {}).pop("managedFields", None)


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
