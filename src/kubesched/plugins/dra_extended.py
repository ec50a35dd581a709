"""Extended resources backed by DRA: the pure parts of DynamicResources' DRAExtendedResource path
(upstream v1.37.2 ``pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go``).

A pod requesting an extended resource (``example.com/gpu: 1``) or an implicit
``deviceclass.resource.kubernetes.io/<class>`` that a DeviceClass maps
(:func:`~kubesched.plugins.helper.extendedresources.device_class_mapping`) gets one special
ResourceClaim for all of them. PreFilter starts it in memory (:func:`new_special_claim`, name
``<extended-resources>``, the pod as controlling owner, the ``resource.kubernetes.io/extended-resource-claim``
annotation) unless a prior cycle already wrote one (:func:`find_extended_resource_claim`); Filter
gives each node its variant with one ``ExactCount`` device request per container
(:func:`create_requests_and_mappings`) for the resources the node does not offer as allocatable.

Claims and pods are plain mappings / typed pods as elsewhere in the DRA plugin.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import msgspec

from kubesched.api.quantity import QuantityError, to_int
from kubesched.api.storage import ObjectView
from kubesched.plugins.helper.extendedresources import EXTENDED_RESOURCE_CLAIM_ANNOTATION

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Container, Pod

__all__ = ["SPECIAL_CLAIM_NAME", "create_requests_and_mappings", "extended_claim_owners",
           "find_extended_resource_claim", "is_special_claim", "new_special_claim"]

SPECIAL_CLAIM_NAME = "<extended-resources>"
"""Upstream ``specialClaimInMemName`` (extendeddynamicresources.go L78-86): never a valid claim name."""


def is_special_claim(claim: dict[str, Any] | None) -> bool:
    """Upstream ``isSpecialClaimName``: the claim exists only in memory (not written yet)."""
    return claim is not None and ObjectView(claim).name == SPECIAL_CLAIM_NAME


_OWNERS: dict[int, tuple[Any, tuple[tuple[str, str], ...]]] = {}
"""id(claim object) → (the object, the (name, UID) of its controlling owners when it carries the
extended-resource-claim annotation ``"true"``, else ()): claims are replaced, never mutated, so an
object's identity pins its content (the entry holds it: the id stays its)."""


def extended_claim_owners(c: Any) -> tuple[tuple[str, str], ...]:
    """The (name, UID) of the claim's controlling owners when it carries the extended-resource-claim
    annotation ``"true"`` (what :func:`find_extended_resource_claim` matches a pod against), else ()."""
    d = c if isinstance(c, dict) else msgspec.to_builtins(c)
    meta = d.get("metadata") or {}
    annotations = meta.get("annotations")
    if not annotations or annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
        return ()
    return tuple((ref.get("name"), ref.get("uid") or "") for ref in meta.get("ownerReferences") or ()
                 if ref.get("controller"))


def find_extended_resource_claim(pod: Pod, claims: list[Any]) -> dict[str, Any] | None:
    """Upstream ``findExtendedResourceClaim`` (L118-131): the first claim with the
    extended-resource-claim annotation ``"true"`` whose controlling owner is the pod (name and
    UID). ``claims``: mappings or API objects (the one found is returned as a mapping); called per
    pod over every claim, so each claim object's owners are read once."""
    owner = (pod.metadata.name, pod.metadata.uid or "")
    index = _OWNERS
    if len(index) > 4 * len(claims) + 10_000:
        index.clear()  # drop the objects no longer listed
    for c in claims:
        hit = index.get(id(c))
        if hit is None or hit[0] is not c:
            hit = index[id(c)] = (c, extended_claim_owners(c))
        if hit[1] and owner in hit[1]:
            return c if isinstance(c, dict) else msgspec.to_builtins(c)
    return None


def new_special_claim(pod: Pod) -> dict[str, Any]:
    """The in-memory claim of PreFilter (L183-205). Its UID is upstream's temporary random one;
    here it is derived from the pod (``<extended-resources>/<pod uid or ns/name>``), deterministic."""
    owner: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "name": pod.metadata.name, "controller": True}
    if pod.metadata.uid:
        owner["uid"] = pod.metadata.uid
    ident = pod.metadata.uid or f"{pod.metadata.namespace}/{pod.metadata.name}"
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"namespace": pod.metadata.namespace, "name": SPECIAL_CLAIM_NAME,
                     "uid": f"{SPECIAL_CLAIM_NAME}/{ident}", "generateName": pod.metadata.name + "-extended-resources-",
                     "ownerReferences": [owner], "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}},
        "spec": {},
        "status": {},
    }


def node_claim(claim: dict[str, Any], requests: list[dict[str, Any]]) -> dict[str, Any]:
    """A node's variant of the special claim (upstream ``DeepCopy`` + ``Spec.Devices.Requests``)."""
    c = copy.deepcopy(claim)
    c["spec"] = {"devices": {"requests": requests}}  # may be empty: nothing from DRA on this node
    return c


def _int_request(container: Container, resource: str) -> int:
    """``Quantity.AsInt64`` of the container's request (0 when absent or not an integer)."""
    q = (container.resources.requests or {}).get(resource)
    if q is None:
        return 0
    try:
        v = to_int(resource, q)
        if to_int("cpu", q) != v * 1000:  # not a whole number: AsInt64 fails
            return 0
    except QuantityError:
        return 0
    return v


def _request_and_mappings(index: int, container: Container, resource: str, class_name: str,
                          reusable: list[dict[str, Any] | None]) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """Upstream ``createResourceRequestAndMappings`` (L322-384)."""
    requests = container.resources.requests or {}
    if resource not in requests:
        return None, []
    crq = _int_request(container, resource)
    if crq == 0:
        return None, []
    mappings: list[dict[str, str]] = []
    total = 0
    for r in reusable:
        if r is None:
            continue
        total += r["exactly"]["count"]
        mappings.append({"containerName": container.name, "resourceName": resource, "requestName": r["name"]})
        if total >= crq:
            return None, mappings
    ridx = sorted(requests).index(resource)
    name = f"container-{index}-request-{ridx}"
    req = {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                     "count": crq - total}}
    mappings.append({"containerName": container.name, "resourceName": resource, "requestName": name})
    return req, mappings


def create_requests_and_mappings(pod: Pod, resources: dict[str, int], mapping: dict[str, dict[str, Any]]
                                 ) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Upstream ``createRequestsAndMappings`` (L386-470): the device requests (sorted by name) and
    the pod's ``status.extendedResourceClaimStatus.requestMappings`` for ``resources`` (the names
    DRA provides on the node). Containers are indexed init containers first; a long-lived one
    (regular or sidecar) gets its own request, a short-lived init container reuses the requests of
    the long-lived containers after it and then one request for the largest remainder."""
    containers = list(pod.spec.init_containers) + list(pod.spec.containers)
    n_init = len(pod.spec.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= n_init or c.restart_policy == "Always"]
    short_lived = [i for i in range(n_init) if containers[i].restart_policy != "Always"]
    device_requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in sorted(resources):
        dc = mapping.get(resource)
        if dc is None:
            continue
        class_name = str((dc.get("metadata") or {}).get("name") or "")
        long_maps: list[dict[str, str]] = []
        short_maps: list[dict[str, str]] = []
        long_reqs: list[dict[str, Any] | None] = [None] * len(containers)
        for i in long_lived:
            req, ms = _request_and_mappings(i, containers[i], resource, class_name, [])
            long_reqs[i] = req
            long_maps += ms
        max_short: dict[str, Any] | None = None
        short_names: set[str] = set()
        for i in short_lived:
            req, ms = _request_and_mappings(i, containers[i], resource, class_name, long_reqs[i:])
            if req is not None:
                short_names.add(req["name"])
                if max_short is None or max_short["exactly"]["count"] < req["exactly"]["count"]:
                    max_short = req
            short_maps += ms
        if max_short is not None and len(short_names) > 1:
            short_names.discard(max_short["name"])
            for m in short_maps:
                if m["requestName"] in short_names:
                    m["requestName"] = max_short["name"]
        if max_short is not None:
            device_requests.append(max_short)
        device_requests += [r for r in long_reqs if r is not None]
        mappings += long_maps + short_maps
    device_requests.sort(key=lambda r: r["name"])
    return device_requests, mappings
