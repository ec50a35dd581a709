"""What the storage controllers do to objects, as pure functions on JSON mappings.

Both simulated clusters use them — the simulator's in-memory store (``kubesched.sim.store``) and
the box API server's controllers (``kubesched.apiserver.controllers``) — so that a scheduler's
VolumeBinding PreBind sees the same answer in both:

* :func:`bind_claim` — kube-controller-manager's PV controller (``pkg/controller/volume/
  persistentvolume/pv_controller.go`` ``bind``: ``bindVolumeToClaim`` + ``bindClaimToVolume``):
  the PV gets ``claimRef`` and phase ``Bound``; the PVC gets ``spec.volumeName``, the
  ``pv.kubernetes.io/bind-completed`` annotation (and ``bound-by-controller`` when the PV
  carried it), phase ``Bound``, ``status.capacity`` and ``status.accessModes``.
* :func:`provisioned_volume` — a CSI external-provisioner answering a claim annotated with
  ``volume.kubernetes.io/selected-node``: a PV ``pvc-<claim uid>`` of the claim's size, access
  modes, volume mode and class, pre-bound to the claim, with the class's reclaim policy and a
  required node affinity on the selected node's ``kubernetes.io/hostname`` (simplification: the
  driver's topology segments are not modelled; the volume is reachable from that node only).
* :func:`default_storage_class` / :func:`with_default_class` — the DefaultStorageClass admission
  plugin (``plugin/pkg/admission/storage/storageclass/setdefault/admission.go:86``) and the PV
  controller's retroactive assignment (``pv_controller.go:968`` ``assignDefaultStorageClass``): a
  claim without a class gets the default StorageClass's name.
* :func:`new_volume_phase` — the PV controller's ``syncVolume`` for a PV no one bound yet
  (``pv_controller.go`` ``syncVolume``: no ``claimRef`` → phase ``Available``).
* :func:`ephemeral_claim` — the ephemeral-volume controller (``pkg/controller/volume/ephemeral``):
  the PVC ``<pod>-<volume>`` from ``ephemeral.volumeClaimTemplate``, owned by the pod.

Functions never mutate their arguments; they return new mappings. What the scheduler's
VolumeBinding shares with this controller (annotations, ``claimRef`` matching, a claim's class) is
:mod:`kubesched.api.volumes`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from kubesched.api.volumes import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_PROVISIONED_BY,
    ANN_SELECTED_NODE,
    BETA_STORAGE_CLASS_ANNOTATION,
    NOT_SUPPORTED_PROVISIONER,
    claim_key,
)

__all__ = [
    "bind_claim",
    "claim_has_class",
    "default_storage_class",
    "ephemeral_claim",
    "ephemeral_claims",
    "needs_provisioning",
    "provisioned_volume",
    "with_default_class",
    "new_volume_phase",
]

def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


IS_DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_IS_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"


def _created_ns(obj: dict[str, Any]) -> int:
    """``CreationTimestamp.UnixNano()``: 0 when unset or unparsable, as Go's zero time sorts first."""
    ts = _meta(obj).get("creationTimestamp")
    if not isinstance(ts, str) or not ts:
        return -(1 << 62)
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return -(1 << 62)
    return int(dt.timestamp()) * 10**9 + dt.microsecond * 1000


def default_storage_class(classes: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """``GetDefaultClass`` (pkg/volume/util/storageclass.go:40): among the classes annotated
    ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta key), the newest by
    ``creationTimestamp``, ties by name ascending; None when there is none."""
    defaults = [c for c in classes if isinstance(c, dict) and (
        (_meta(c).get("annotations") or {}).get(IS_DEFAULT_CLASS_ANNOTATION) == "true"
        or (_meta(c).get("annotations") or {}).get(BETA_IS_DEFAULT_CLASS_ANNOTATION) == "true")]
    if not defaults:
        return None
    defaults.sort(key=lambda c: (-_created_ns(c), str(_meta(c).get("name") or "")))
    return defaults[0]


def claim_has_class(pvc: dict[str, Any]) -> bool:
    """``PersistentVolumeClaimHasClass``: the beta annotation present, or ``spec.storageClassName``
    set (even to ``""``, which asks for no class)."""
    if BETA_STORAGE_CLASS_ANNOTATION in (_meta(pvc).get("annotations") or {}):
        return True
    return (pvc.get("spec") or {}).get("storageClassName") is not None


def with_default_class(pvc: dict[str, Any], classes: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The claim with ``spec.storageClassName`` set to the default class, or None when it has a
    class already or there is no default (then nothing changes). DefaultStorageClass admission
    applies it on create; the PV controller to unbound claims (``spec.volumeName`` empty)."""
    if claim_has_class(pvc):
        return None
    default = default_storage_class(classes)
    if default is None:
        return None
    out = copy.deepcopy(pvc)
    spec = out.get("spec")
    if not isinstance(spec, dict):
        spec = out["spec"] = {}
    spec["storageClassName"] = str(_meta(default).get("name") or "")
    return out


def new_volume_phase(pv: dict[str, Any]) -> str | None:
    """The phase the PV controller gives a PV stored without one (or ``Pending``, as the API server
    creates it): ``Available`` when no claim is
    named (``syncVolume``: ``volume.Spec.ClaimRef == nil`` → ``updateVolumePhase(Available)``),
    else None (binding to the named claim decides)."""
    if (pv.get("status") or {}).get("phase") not in (None, "", "Pending"):
        return None
    return None if (pv.get("spec") or {}).get("claimRef") else "Available"


def bind_claim(pv: dict[str, Any], pvc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The PV controller's ``bind(volume, claim)``: returns ``(pv, pvc)`` both ``Bound``."""
    pv = copy.deepcopy(pv)
    pvc = copy.deepcopy(pvc)
    pv_meta = pv.setdefault("metadata", {})
    pvc_meta = pvc.setdefault("metadata", {})
    spec = pv.setdefault("spec", {})
    ns, name = claim_key(pvc)
    ref = spec.get("claimRef") or {}
    spec["claimRef"] = {**ref, "kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": ns,
                        "name": name, "uid": pvc_meta.get("uid") or ref.get("uid") or ""}
    pv.setdefault("status", {})["phase"] = "Bound"
    ann = dict(pvc_meta.get("annotations") or {})
    ann[ANN_BIND_COMPLETED] = "yes"
    if ANN_BOUND_BY_CONTROLLER in (pv_meta.get("annotations") or {}):
        ann[ANN_BOUND_BY_CONTROLLER] = "yes"
    pvc_meta["annotations"] = ann
    pvc.setdefault("spec", {})["volumeName"] = _meta(pv).get("name") or ""
    st = pvc.setdefault("status", {})
    st["phase"] = "Bound"
    cap = (spec.get("capacity") or {})
    if cap:
        st["capacity"] = dict(cap)
    if spec.get("accessModes"):
        st["accessModes"] = list(spec["accessModes"])
    return pv, pvc


def needs_provisioning(pvc: dict[str, Any], storage_class: dict[str, Any] | None) -> bool:
    """A claim the provisioner acts on: unbound, annotated with a selected node, of a class with a
    provisioner (not ``kubernetes.io/no-provisioner``)."""
    if (pvc.get("spec") or {}).get("volumeName"):
        return False
    if not (_meta(pvc).get("annotations") or {}).get(ANN_SELECTED_NODE):
        return False
    if storage_class is None:
        return False
    prov = storage_class.get("provisioner") or ""
    return bool(prov) and prov != NOT_SUPPORTED_PROVISIONER


def provisioned_volume(pvc: dict[str, Any], storage_class: dict[str, Any], node: dict[str, Any] | None,
                       now: str = "") -> dict[str, Any]:
    """The PV a provisioner creates for ``pvc`` on its selected node (see the module docstring)."""
    ns, name = claim_key(pvc)
    meta = _meta(pvc)
    uid = meta.get("uid") or f"{ns}-{name}"
    selected = (meta.get("annotations") or {}).get(ANN_SELECTED_NODE, "")
    hostname = ((_meta(node).get("labels") or {}).get("kubernetes.io/hostname") if node else None) or selected
    spec = pvc.get("spec") or {}
    request = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "0")
    prov = storage_class.get("provisioner") or ""
    pv_spec: dict[str, Any] = {
        "capacity": {"storage": request},
        "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
        "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
        "storageClassName": (_meta(storage_class).get("name") or ""),
        "volumeMode": spec.get("volumeMode") or "Filesystem",
        "claimRef": {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": ns, "name": name,
                     "uid": meta.get("uid") or ""},
        "csi": {"driver": prov, "volumeHandle": f"pvc-{uid}"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [hostname]}]}]}},
    }
    if storage_class.get("mountOptions"):
        pv_spec["mountOptions"] = list(storage_class["mountOptions"])
    pv_meta: dict[str, Any] = {"name": f"pvc-{uid}", "annotations": {ANN_PROVISIONED_BY: prov}}
    if now:
        pv_meta["creationTimestamp"] = now
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": pv_meta, "spec": pv_spec,
            "status": {"phase": "Pending"}}


def ephemeral_claim(pod_name: str, pod_namespace: str, pod_uid: str, volume_name: str,
                    ephemeral: dict[str, Any]) -> dict[str, Any]:
    """The ephemeral-volume controller's PVC for one ``spec.volumes[].ephemeral`` volume."""
    tpl = (ephemeral or {}).get("volumeClaimTemplate") or {}
    tmeta = tpl.get("metadata") or {}
    meta: dict[str, Any] = {
        "name": f"{pod_name}-{volume_name}", "namespace": pod_namespace,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod_name, "uid": pod_uid,
                             "controller": True, "blockOwnerDeletion": True}],
    }
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": copy.deepcopy(tpl.get("spec") or {}), "status": {"phase": "Pending"}}


def ephemeral_claims(pod: dict[str, Any]) -> list[dict[str, Any]]:
    """Every ephemeral PVC a pod (JSON mapping) needs, in volume order."""
    meta = _meta(pod)
    out = []
    for vol in (pod.get("spec") or {}).get("volumes") or []:
        if isinstance(vol, dict) and vol.get("ephemeral") is not None:
            out.append(ephemeral_claim(meta.get("name") or "", meta.get("namespace") or "", meta.get("uid") or "",
                                       vol.get("name") or "", vol["ephemeral"]))
    return out
