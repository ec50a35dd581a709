"""The field manager of a plain create (``POST``): its ``Update`` entry in ``managedFields``.

Follows k8s.io/apiserver@v0.37.2 ``pkg/endpoints/handlers/create.go`` (``FieldManager.UpdateNoErrors``
of an empty live object with the decoded request object, before admission: the creator owns the
fields it sent and the defaults the decoding added, not what mutating admission or the registry
strategy adds later) and ``managerOrUserAgent`` (``fieldManager``, else the User-Agent's first
segment: ``kubectl-create``, ``kubectl-client-side-apply``, …). The field sets are
:mod:`kubesched.apiserver.apply`'s.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Protocol

from kubesched.apiserver import apply as ssa

if TYPE_CHECKING:
    from collections.abc import Callable

    from kubesched.apiserver.crd import Registry as CRDs
    from kubesched.apiserver.resources import ResourceInfo

__all__ = ["track_create"]


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
