"""A minimal resourceclaim controller for the simulator (upstream
``pkg/controller/resourceclaim/controller.go``, v1.34): the part the scheduler depends on.

* :func:`create_pod_claims` — for each ``spec.resourceClaims[]`` entry of a pod with a
  ``resourceClaimTemplateName`` and no ``status.resourceClaimStatuses`` entry yet, create the
  ResourceClaim from the template (``generateName`` ``<pod>-<claim>-`` truncated proportionally
  to 57 characters as upstream, plus 5 random characters from the apiserver's alphabet; the
  ``resource.kubernetes.io/pod-claim-name`` annotation; the pod as controlling owner; the
  template's labels, annotations and spec) and record it in the pod's status. A missing template
  leaves the entry unresolved (the scheduler reports ``ResourceClaim not created yet``).
* :func:`release_pod_claims` — a pod is gone: claims it owns are deallocated, then deleted;
  other claims drop it from ``status.reservedFor`` and, reserved by nobody any more, are
  deallocated (as upstream does for structured-parameter allocations). Each deallocation is an
  update event: pods waiting for devices are requeued by it.

Both work on a :class:`~kubesched.sim.store.ClusterStore` (claims are raw mappings there).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import msgspec

from kubesched.api.objects import Pod, PodResourceClaimStatus
from kubesched.api.workloads import ALPHANUMS, POD_CLAIM_NAME_ANNOTATION, claim_name_prefix

__all__ = ["POD_CLAIM_NAME_ANNOTATION", "claim_name_prefix", "create_pod_claims", "release_pod_claims"]


def create_pod_claims(store: Any, pod: Pod, raw: dict[str, Any] | None = None,
                      rng: random.Random | None = None) -> Pod:
    """Create the pod's template claims in ``store``; returns the pod with its updated status
    (``raw``, the pod's input mapping, is updated too). The caller adds the pod."""
    entries = pod.spec.resource_claims
    if not entries:
        return pod
    rng = rng or random.Random(0)
    ns = pod.metadata.namespace or "default"
    statuses = list(pod.status.resource_claim_statuses)
    done = {s.name for s in statuses}
    changed = False
    for rc in entries:
        if rc.resource_claim_template_name is None or rc.name in done:
            continue
        tpl = store.get("ResourceClaimTemplate", ns, rc.resource_claim_template_name)
        if tpl is None:
            continue  # upstream: an event, and the pod waits
        if not isinstance(tpl, dict):
            tpl = msgspec.to_builtins(tpl)
        tmeta = (tpl.get("spec") or {}).get("metadata") or {}
        prefix = claim_name_prefix(pod.metadata.name, rc.name)
        while True:
            name = prefix + "".join(rng.choices(ALPHANUMS, k=5))
            if store.get("ResourceClaim", ns, name) is None:
                break
        owner: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "name": pod.metadata.name,
                                 "controller": True, "blockOwnerDeletion": True}
        if pod.metadata.uid:
            owner["uid"] = pod.metadata.uid
        meta: dict[str, Any] = {"name": name, "generateName": prefix, "namespace": ns,
                                "annotations": {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME_ANNOTATION: rc.name},
                                "ownerReferences": [owner]}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta,
                 "spec": copy.deepcopy((tpl.get("spec") or {}).get("spec") or {}), "status": {}}
        store.put_object("ResourceClaim", claim)
        statuses.append(PodResourceClaimStatus(name=rc.name, resource_claim_name=name))
        changed = True
    if not changed:
        return pod
    if raw is not None:
        raw.setdefault("status", {})["resourceClaimStatuses"] = [
            {"name": s.name, "resourceClaimName": s.resource_claim_name} for s in statuses]
    return msgspec.structs.replace(pod, status=msgspec.structs.replace(pod.status, resource_claim_statuses=statuses))


def release_pod_claims(store: Any, pod: Pod) -> None:
    """The pod was deleted: delete the claims it owns, unreserve (and deallocate) the others."""
    ns = pod.metadata.namespace or "default"
    names = [s.resource_claim_name for s in pod.status.resource_claim_statuses if s.resource_claim_name]
    names += [rc.resource_claim_name for rc in pod.spec.resource_claims if rc.resource_claim_name]
    ext = pod.status.extended_resource_claim_status  # DRAExtendedResource: the scheduler's claim
    if ext and ext.get("resourceClaimName"):
        names.append(ext["resourceClaimName"])
    for name in names:
        claim = store.get("ResourceClaim", ns, name)
        if claim is None:
            continue
        owners = (claim.get("metadata") or {}).get("ownerReferences") or []
        if any(o.get("controller") and o.get("kind") == "Pod" and o.get("name") == pod.metadata.name
               and o.get("uid", "") == (pod.metadata.uid or "") for o in owners):
            if (claim.get("status") or {}).get("allocation") is not None:
                # upstream: the controller first drops the reservation and the allocation (an
                # update that wakes pods waiting for devices), then the garbage collector deletes
                c = copy.deepcopy(claim)
                c["status"].pop("reservedFor", None)
                c["status"].pop("allocation", None)
                store.put_object("ResourceClaim", c)
            store.remove_object("ResourceClaim", ns, name)
            continue
        status = claim.get("status") or {}
        reserved = [r for r in status.get("reservedFor") or ()
                    if not (r.get("name") == pod.metadata.name and r.get("uid", "") == (pod.metadata.uid or ""))]
        if len(reserved) == len(status.get("reservedFor") or ()):
            continue
        c = copy.deepcopy(claim)
        c["status"]["reservedFor"] = reserved
        if not reserved:
            c["status"].pop("reservedFor", None)
            c["status"].pop("allocation", None)
        store.put_object("ResourceClaim", c)
