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

PodGroups (DRAWorkloadResourceClaims; upstream ``syncPodGroup`` / ``handlePodGroupClaim`` /
``handleClaim`` of the v1.37.2 controller):

* :func:`create_pod_group_claims` — a PodGroup's ``spec.resourceClaims`` entries with a
  ``resourceClaimTemplateName`` get one claim each (``<podgroup>-<claim>-`` + 5 characters, the
  PodGroup as controlling owner, the same annotation), recorded in the PodGroup's
  ``status.resourceClaimStatuses``.
* :func:`create_pod_claims` with ``workload_claims`` — a member's template entry that matches one
  of its PodGroup's entries (``resourceclaim.BindTo``) gets no claim of its own: its status names
  the PodGroup's claim (once that exists).
* :func:`release_pod_claims` leaves a claim reserved for the pod's PodGroup alone;
  :func:`release_pod_group_claims` (the PodGroup is gone) drops the group's reservations
  (deallocating claims reserved by nobody any more) and deletes the claims it owns.

All work on a :class:`~kubesched.sim.store.ClusterStore` (claims are raw mappings there).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import msgspec

from kubesched.api.hashing import ALPHANUMS
from kubesched.api.objects import Pod, PodResourceClaimStatus
from kubesched.controllers.workloads import POD_CLAIM_NAME_ANNOTATION, claim_name_prefix

__all__ = ["POD_CLAIM_NAME_ANNOTATION", "claim_name_prefix", "create_pod_claims", "create_pod_group_claims",
           "release_pod_claims", "release_pod_group_claims"]


def _as_raw(obj: Any) -> dict[str, Any]:
    return obj if isinstance(obj, dict) else msgspec.to_builtins(obj)


def _pod_group_claim(store: Any, pod_group: dict[str, Any], claim_name: str) -> dict[str, Any] | None:
    """Upstream ``findPodGroupResourceClaim``: the claim the PodGroup owns (controller) whose
    ``resource.kubernetes.io/pod-claim-name`` annotation names ``claim_name``."""
    meta = pod_group.get("metadata") or {}
    ns, uid, name = meta.get("namespace") or "default", meta.get("uid"), meta.get("name")
    for c in store.list("ResourceClaim", ns):
        c = _as_raw(c)
        cm = c.get("metadata") or {}
        if (cm.get("namespace") or "default") != ns:
            continue
        if (cm.get("annotations") or {}).get(POD_CLAIM_NAME_ANNOTATION) != claim_name:
            continue
        if any(o.get("controller") and o.get("kind") == "PodGroup" and o.get("name") == name
               and (not uid or o.get("uid") == uid) for o in cm.get("ownerReferences") or ()):
            return c
    return None


def create_pod_group_claims(store: Any, pod_group: dict[str, Any], rng: random.Random | None = None) -> dict[str, Any]:
    """Create the PodGroup's template claims in ``store`` (upstream ``handlePodGroupClaim``);
    returns the PodGroup with ``status.resourceClaimStatuses`` updated (the same object when
    nothing changed). The caller stores it."""
    spec = pod_group.get("spec") or {}
    entries = spec.get("resourceClaims") or []
    if not entries:
        return pod_group
    rng = rng or random.Random(0)
    meta = pod_group.get("metadata") or {}
    ns, pg_name = meta.get("namespace") or "default", meta.get("name") or ""
    statuses = list((pod_group.get("status") or {}).get("resourceClaimStatuses") or [])
    done = {s.get("name") for s in statuses}
    changed = False
    for e in entries:
        tname = e.get("resourceClaimTemplateName")
        if tname is None or e.get("name") in done:
            continue
        claim = _pod_group_claim(store, pod_group, e.get("name", ""))  # an orphan from before
        if claim is None:
            tpl = store.get("ResourceClaimTemplate", ns, tname)
            if tpl is None:
                continue  # upstream: a FailedResourceClaimCreation event; retried on template events
            tpl = _as_raw(tpl)
            tmeta = (tpl.get("spec") or {}).get("metadata") or {}
            prefix = claim_name_prefix(pg_name, e.get("name", ""))
            while True:
                cname = prefix + "".join(rng.choices(ALPHANUMS, k=5))
                if store.get("ResourceClaim", ns, cname) is None:
                    break
            owner: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "name": pg_name,
                                     "controller": True}
            if meta.get("uid"):
                owner["uid"] = meta["uid"]
            cmeta: dict[str, Any] = {"name": cname, "generateName": prefix, "namespace": ns,
                                     "annotations": {**(tmeta.get("annotations") or {}),
                                                     POD_CLAIM_NAME_ANNOTATION: e.get("name", "")},
                                     "ownerReferences": [owner]}
            if tmeta.get("labels"):
                cmeta["labels"] = dict(tmeta["labels"])
            claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": cmeta,
                     "spec": copy.deepcopy((tpl.get("spec") or {}).get("spec") or {}), "status": {}}
            store.put_object("ResourceClaim", claim)
        statuses.append({"name": e.get("name", ""), "resourceClaimName": claim["metadata"]["name"]})
        changed = True
    if not changed:
        return pod_group
    return {**pod_group, "status": {**(pod_group.get("status") or {}), "resourceClaimStatuses": statuses}}


def _shared_with_group(pod: Pod, pod_group: dict[str, Any] | None, rc: Any) -> bool:
    """``resourceclaim.BindTo`` names the PodGroup for this entry."""
    if pod_group is None:
        return False
    for e in (pod_group.get("spec") or {}).get("resourceClaims") or ():
        if (e.get("name") == rc.name and e.get("resourceClaimName") == rc.resource_claim_name
                and e.get("resourceClaimTemplateName") == rc.resource_claim_template_name):
            return True
    return False


def create_pod_claims(store: Any, pod: Pod, raw: dict[str, Any] | None = None,
                      rng: random.Random | None = None, workload_claims: bool = False,
                      generic_workload: bool = False) -> Pod:
    """Create the pod's template claims in ``store``; returns the pod with its updated status
    (``raw``, the pod's input mapping, is updated too). The caller adds the pod.
    ``workload_claims`` (DRAWorkloadResourceClaims): an entry the pod's PodGroup shares resolves
    to the PodGroup's claim instead (none yet: the entry stays unresolved). ``generic_workload``:
    a pod naming a PodGroup that does not exist gets nothing (upstream ``syncPod`` fails on
    ``getPodGroup`` and retries)."""
    entries = pod.spec.resource_claims
    if not entries:
        return pod
    rng = rng or random.Random(0)
    ns = pod.metadata.namespace or "default"
    statuses = list(pod.status.resource_claim_statuses)
    done = {s.name for s in statuses}
    changed = False
    pod_group: dict[str, Any] | None = None
    sg = pod.spec.scheduling_group
    if (generic_workload or workload_claims) and sg is not None and sg.pod_group_name:
        pg = store.get("PodGroup", ns, sg.pod_group_name)
        if pg is None:
            return pod
        pod_group = _as_raw(pg) if workload_claims else None
    for rc in entries:
        if rc.resource_claim_template_name is None or rc.name in done:
            continue
        if _shared_with_group(pod, pod_group, rc):
            assert pod_group is not None
            shared = _pod_group_claim(store, pod_group, rc.name)
            if shared is not None:
                statuses.append(PodResourceClaimStatus(name=rc.name, resource_claim_name=shared["metadata"]["name"]))
                changed = True
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
        claim = _as_raw(claim)
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


def release_pod_group_claims(store: Any, pod_group: dict[str, Any]) -> None:
    """The PodGroup is gone (upstream ``syncClaim`` for ``podgroups`` reservations, then the
    garbage collector): claims drop its reservation (deallocated when nobody is left) and the
    claims it owns are deleted."""
    meta = pod_group.get("metadata") or {}
    ns, name, uid = meta.get("namespace") or "default", meta.get("name"), meta.get("uid")

    def is_group(r: dict[str, Any]) -> bool:
        return r.get("resource") == "podgroups" and r.get("name") == name and (not uid or r.get("uid") == uid)

    for c in list(store.list("ResourceClaim", ns)):
        c = _as_raw(c)
        cm = c.get("metadata") or {}
        owned = any(o.get("controller") and o.get("kind") == "PodGroup" and o.get("name") == name
                    and (not uid or o.get("uid") == uid) for o in cm.get("ownerReferences") or ())
        reserved = (c.get("status") or {}).get("reservedFor") or []
        if any(is_group(r) for r in reserved):
            c = copy.deepcopy(c)
            left = [r for r in reserved if not is_group(r)]
            if left:
                c["status"]["reservedFor"] = left
            else:
                c["status"].pop("reservedFor", None)
                c["status"].pop("allocation", None)
            store.put_object("ResourceClaim", c)
        if owned:
            store.remove_object("ResourceClaim", ns, cm.get("name"))
