"""Create manifest objects through the API, as ``kubectl create -f`` does.

The kinds are mapped to REST paths with the server's discovery documents (``/api/v1``,
``/apis``, ``/apis/<group>/<version>``: kubectl's ``RESTMapper``), not a table of our own, so
what the box serves is what can be applied. Objects are created one at a time, in the order
:func:`creation_order` gives: Namespaces, CustomResourceDefinitions, PriorityClasses, Nodes,
every other non-Pod object, then Pods (each group in input order) — a pod's namespace and
PriorityClass exist before it, and the nodes a bound pod names exist before the pod. Pods that
carry ``spec.nodeName`` are created bound, as on any API server. The CRDs created are waited
for until Established, then discovery is read again, so custom resources in the same input
are created after their CRD (``kubectl apply`` would fail on them: "ensure CRDs are installed
first"). A kind the server still does not serve is skipped, with one notice per kind
(:attr:`ApplyResult.notices`), as ``simulate`` loads what it models and leaves the rest.

Errors are :class:`~kubesched.errors.ManifestError` located at ``file:line`` of the field the
API server names (else of the object), with the server's ``Status`` message (``Pod "x" is
invalid: spec.containers[0]...``). An object
that already exists (a re-used ``--data-dir``, or one the server bootstraps, such as the
``default`` Namespace or the ``system-node-critical`` PriorityClass) is left as it is and counted.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import KubeschedError, ManifestError
from kubesched.kube.client import APIClient, APIError
from kubesched.sim.manifests import RawObject, locate

__all__ = ["ApplyError", "ApplyResult", "RESTMapper", "apply_objects", "creation_order"]


class ApplyError(KubeschedError):
    """The API server failed to create an object (not the input's fault)."""

_FIRST = {"Namespace": 0, "PriorityClass": 2, "Node": 3}
_CRD = 1
_PODS = 5
_OTHER = 4
#: seconds to wait for a created CRD to be Established
ESTABLISH_TIMEOUT = 30.0


def creation_order(raws: Sequence[RawObject]) -> list[RawObject]:
    """Namespaces, CRDs, PriorityClasses, Nodes, the other kinds, Pods; stable within each group."""
    def rank(r: RawObject) -> int:
        if r.kind == "Pod" and r.api_version == "v1":
            return _PODS
        if r.kind == "CustomResourceDefinition" and r.api_version == "apiextensions.k8s.io/v1":
            return _CRD
        return _FIRST.get(r.kind, _OTHER)

    return sorted(raws, key=lambda r: (rank(r), r.index))


@dataclass(frozen=True, slots=True)
class _Resource:
    plural: str
    namespaced: bool


class RESTMapper:
    """``(apiVersion, kind)`` → collection path, from the server's discovery documents."""

    def __init__(self, resources: dict[tuple[str, str], _Resource]) -> None:
        self._resources = resources

    @classmethod
    async def discover(cls, client: APIClient) -> RESTMapper:
        """Read ``/api/v1`` and every ``/apis/<group>/<version>`` the server lists.

        Raises :class:`APIError` / :class:`APIConnectionError` when discovery fails."""
        found: dict[tuple[str, str], _Resource] = {}

        def add(gv: str, doc: dict[str, Any]) -> None:
            for r in doc.get("resources") or []:
                name = r.get("name") or ""
                if "/" in name or not r.get("kind"):
                    continue  # subresources
                found.setdefault((gv, r["kind"]), _Resource(name, bool(r.get("namespaced"))))

        add("v1", await client.get("/api/v1"))
        groups = await client.get("/apis")
        for g in groups.get("groups") or []:
            for v in g.get("versions") or []:
                gv = v.get("groupVersion")
                if gv:
                    add(gv, await client.get(f"/apis/{gv}"))
        return cls(found)

    def path(self, api_version: str, kind: str, namespace: str | None) -> tuple[str, bool] | None:
        """The collection path for the kind (in ``namespace`` when namespaced) and whether it is
        namespaced; None when the server does not serve the kind."""
        r = self._resources.get((api_version, kind))
        if r is None:
            return None
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if r.namespaced:
            return f"{prefix}/namespaces/{namespace or 'default'}/{r.plural}", True
        return f"{prefix}/{r.plural}", False


@dataclass
class ApplyResult:
    """``created``: objects created; ``existing``: objects left as they were (already there);
    ``skipped``: ``{(apiVersion, kind): count}`` of the kinds the server does not serve."""

    created: int = 0
    existing: int = 0
    pods_bound: int = 0
    pods_pending: int = 0
    skipped: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def notices(self) -> list[str]:
        """One line per skipped kind (without the ``notice:`` prefix)."""
        return [f'{n} {kind} object(s) not created: no matches for kind "{kind}" in version "{av}" '
                "(the box does not serve it)" for (av, kind), n in self.skipped.items()]


def _where(r: RawObject, e: APIError) -> str:
    """``file:line`` of the first field the API server's 422 names (``details.causes[].field``),
    else of the object."""
    details = e.body.get("details") if isinstance(e.body, dict) else None
    causes = details.get("causes") if isinstance(details, dict) else None
    if isinstance(causes, list) and causes and isinstance(causes[0], dict):
        field = causes[0].get("field")
        if isinstance(field, str) and field:
            return locate(r, field)
    return r.source


async def apply_objects(client: APIClient, raws: Sequence[RawObject], *,
                        on_created: Callable[[RawObject], None] | None = None) -> ApplyResult:
    """Create ``raws`` through the API in :func:`creation_order`.

    Raises :class:`~kubesched.errors.ManifestError` (``file:line: Kind ns/name: message``) for an
    object the server rejects (4xx); :class:`ApplyError` when the server fails (5xx, 429) or a
    CRD is not Established in time; :class:`APIConnectionError` when it cannot be reached. A kind
    the server does not serve is counted in :attr:`ApplyResult.skipped`.
    """
    mapper = await RESTMapper.discover(client)
    out = ApplyResult()
    crds: list[RawObject] = []
    for r in creation_order(raws):
        if crds and not _is_crd(r):
            await _wait_established(client, crds)
            crds = []
            mapper = await RESTMapper.discover(client)
        where = mapper.path(r.api_version, r.kind, r.namespace)
        if where is None:
            key = (r.api_version, r.kind)
            out.skipped[key] = out.skipped.get(key, 0) + 1
            continue
        path, _ = where
        try:
            await client.create(path, r.data)
        except APIError as e:
            if e.reason == "AlreadyExists":
                out.existing += 1
                continue
            if e.status >= 500 or e.status == 429:
                raise ApplyError(f"{r.source}: {r.describe()}: the API server failed: {e}") from None
            raise ManifestError(f"{r.describe()}: {e.message or e}", _where(r, e)) from None
        out.created += 1
        if _is_crd(r):
            crds.append(r)
        if r.kind == "Pod":
            if (r.data.get("spec") or {}).get("nodeName"):
                out.pods_bound += 1
            else:
                out.pods_pending += 1
        if on_created is not None:
            on_created(r)
    return out


def _is_crd(r: RawObject) -> bool:
    return r.kind == "CustomResourceDefinition" and r.api_version == "apiextensions.k8s.io/v1"


async def _wait_established(client: APIClient, crds: Sequence[RawObject]) -> None:
    """Poll each created CRD until its ``Established`` condition is True (``kubectl wait
    --for=condition=Established``). Raises :class:`ApplyError` after :data:`ESTABLISH_TIMEOUT` s."""
    deadline = time.monotonic() + ESTABLISH_TIMEOUT
    for r in crds:
        while True:
            obj = await client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{r.name}")
            conds = (obj.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Established" and c.get("status") == "True" for c in conds):
                break
            if time.monotonic() > deadline:
                raise ApplyError(f"{r.source}: {r.describe()}: not Established after {ESTABLISH_TIMEOUT:.0f} s")
            await asyncio.sleep(0.05)
