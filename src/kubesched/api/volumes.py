"""PersistentVolume / PersistentVolumeClaim helpers shared by the scheduler and the PV controller.

Follows ``k8s.io/component-helpers@v0.37.2/storage/volume`` (``helpers.go``, ``pv_helpers.go``),
which upstream's VolumeBinding plugin and kube-controller-manager's PV controller both import:
the binding annotations, ``GetPersistentVolumeClaimClass`` (:func:`claim_class`) and
``IsVolumeBoundToClaim`` (:func:`claim_ref_matches`). Objects are JSON mappings (camelCase keys).
The controller side (binding, provisioning, default classes) is
:mod:`kubesched.controllers.pvcontroller`.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ANN_BETA_STORAGE_PROVISIONER",
    "ANN_BIND_COMPLETED",
    "ANN_BOUND_BY_CONTROLLER",
    "ANN_PROVISIONED_BY",
    "ANN_SELECTED_NODE",
    "ANN_STORAGE_PROVISIONER",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "NOT_SUPPORTED_PROVISIONER",
    "claim_class",
    "claim_key",
    "claim_ref_matches",
]

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def claim_key(pvc: dict[str, Any]) -> tuple[str, str]:
    """``(namespace, name)`` of a claim; ``""`` for a missing field."""
    m = _meta(pvc)
    return m.get("namespace") or "", m.get("name") or ""


def claim_class(pvc: dict[str, Any]) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation wins over ``spec.storageClassName``."""
    ann = _meta(pvc).get("annotations") or {}
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[BETA_STORAGE_CLASS_ANNOTATION])
    return str((pvc.get("spec") or {}).get("storageClassName") or "")


def claim_ref_matches(pv: dict[str, Any], pvc: dict[str, Any]) -> bool:
    """``IsVolumeBoundToClaim``: the PV's ``claimRef`` names the claim (and its UID, when set)."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    ns, name = claim_key(pvc)
    if ref.get("name") != name or (ref.get("namespace") or "") != ns:
        return False
    uid = ref.get("uid") or ""
    return not uid or uid == (_meta(pvc).get("uid") or "")
