"""Typed read-only views over the storage objects the scheduler keeps as camelCase JSON mappings.

PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities reach the plugins from ``handle.lister`` as the mappings the store holds
(the assume caches copy and rewrite them, the apiserver serves them back byte for byte). Rather
than decoding them into structs (a copy per object and a second source of truth), each view wraps
the mapping and exposes the fields the volume plugins read, snake_case and typed, with
upstream's defaults for absent fields. A view costs one small object and reads the mapping on each
access; it never copies or mutates it (``raw`` is the mapping itself).

Field names and defaults follow ``k8s.io/api@v0.37.2`` ``core/v1/types.go``
(PersistentVolume, PersistentVolumeClaim, ObjectMeta) and ``storage/v1/types.go`` (StorageClass,
CSINode, CSIDriver, CSIStorageCapacity). An absent or null field reads as the type's empty value
(``""``, ``{}``, ``[]``, ``False``) except where upstream distinguishes "unset" (pointers), which
read as ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.api.volumes import BETA_STORAGE_CLASS_ANNOTATION

__all__ = [
    "CSIDriverView", "CSINodeDriverView", "CSINodeView", "CSIStorageCapacityView", "MappingView", "ObjectView",
    "PersistentVolumeClaimView", "PersistentVolumeView", "SpecView", "StorageClassView", "mapping_at",
]

_EMPTY: Mapping[str, Any] = {}


def mapping_at(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``obj[key]``, an empty mapping when absent or null (JSON objects only hold mappings there)."""
    v: Mapping[str, Any] = obj.get(key) or _EMPTY
    return v


class MappingView:
    """A read-only view over one camelCase mapping, ``raw`` (never copied or changed)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw


class ObjectView(MappingView):
    """``metadata`` of any object (upstream ``ObjectMeta``), over the raw mapping ``raw``
    (``metadata``: that mapping's ``metadata``, empty when absent)."""

    __slots__ = ("metadata",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.metadata: Mapping[str, Any] = raw.get("metadata") or _EMPTY

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "")

    @property
    def uid(self) -> str:
        return str(self.metadata.get("uid") or "")

    @property
    def key(self) -> str:
        """``namespace/name``, or ``name`` for a cluster-scoped object."""
        ns = self.namespace
        return f"{ns}/{self.name}" if ns else self.name

    @property
    def resource_version(self) -> int:
        """``metadata.resourceVersion`` as an integer (0 when absent or not a number)."""
        try:
            return int(self.metadata.get("resourceVersion") or 0)
        except (TypeError, ValueError):
            return 0

    @property
    def labels(self) -> Mapping[str, str]:
        return mapping_at(self.metadata, "labels")

    @property
    def annotations(self) -> Mapping[str, str]:
        return mapping_at(self.metadata, "annotations")

    @property
    def owner_references(self) -> list[Mapping[str, Any]]:
        return list(self.metadata.get("ownerReferences") or ())

    @property
    def deletion_timestamp(self) -> str | None:
        return self.metadata.get("deletionTimestamp")

    @property
    def creation_timestamp(self) -> str:
        """``metadata.creationTimestamp`` (RFC 3339), "" when unset (the zero time)."""
        return str(self.metadata.get("creationTimestamp") or "")

    @property
    def finalizers(self) -> list[str]:
        return list(self.metadata.get("finalizers") or ())


class SpecView(ObjectView):
    """An object with a ``spec``, read once (empty when absent)."""

    __slots__ = ("spec",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.metadata = raw.get("metadata") or _EMPTY
        self.spec: Mapping[str, Any] = raw.get("spec") or _EMPTY


class _VolumeView(SpecView):
    """What PersistentVolumes and PersistentVolumeClaims share: ``spec`` with its class, mode and
    access modes, and ``status.phase``."""

    __slots__ = ()

    @property
    def storage_class_name(self) -> str:
        """``spec.storageClassName`` alone (:attr:`storage_class` adds the beta annotation)."""
        return str(self.spec.get("storageClassName") or "")

    @property
    def storage_class(self) -> str:
        """Upstream ``GetPersistentVolumeClass`` / ``GetPersistentVolumeClaimClass``
        (``component-helpers/storage/volume/helpers.go``): the
        ``volume.beta.kubernetes.io/storage-class`` annotation wins over ``spec.storageClassName``."""
        ann = self.metadata.get("annotations")
        if ann and BETA_STORAGE_CLASS_ANNOTATION in ann:
            return str(ann[BETA_STORAGE_CLASS_ANNOTATION])
        return str(self.spec.get("storageClassName") or "")

    @property
    def volume_mode(self) -> str:
        """``spec.volumeMode``, ``Filesystem`` when unset (the API default)."""
        return str(self.spec.get("volumeMode") or "Filesystem")

    @property
    def volume_attributes_class_name(self) -> str:
        return str(self.spec.get("volumeAttributesClassName") or "")

    @property
    def access_modes(self) -> list[str]:
        return list(self.spec.get("accessModes") or ())

    @property
    def phase(self) -> str:
        return str(mapping_at(self.raw, "status").get("phase") or "")


class PersistentVolumeClaimView(_VolumeView):
    """A PersistentVolumeClaim."""

    __slots__ = ()

    @property
    def volume_name(self) -> str:
        return str(self.spec.get("volumeName") or "")

    @property
    def selector(self) -> Mapping[str, Any] | None:
        """``spec.selector`` (a LabelSelector mapping), None when unset."""
        return self.spec.get("selector")

    @property
    def requests(self) -> Mapping[str, Any]:
        """``spec.resources.requests`` (quantities as given)."""
        return mapping_at(mapping_at(self.spec, "resources"), "requests")


class PersistentVolumeView(_VolumeView):
    """A PersistentVolume."""

    __slots__ = ()

    @property
    def capacity(self) -> Mapping[str, Any]:
        return mapping_at(self.spec, "capacity")

    @property
    def claim_ref(self) -> Mapping[str, Any] | None:
        """``spec.claimRef``, None when unset."""
        return self.spec.get("claimRef")

    @property
    def node_affinity_required(self) -> Mapping[str, Any] | None:
        """``spec.nodeAffinity.required`` (a NodeSelector mapping), None when unset."""
        return mapping_at(self.spec, "nodeAffinity").get("required")

    @property
    def csi(self) -> Mapping[str, Any] | None:
        """``spec.csi`` (CSIPersistentVolumeSource), None for other volume sources."""
        return self.spec.get("csi")


class StorageClassView(ObjectView):
    """A StorageClass (top-level fields, no ``spec``)."""

    __slots__ = ()

    @property
    def provisioner(self) -> str:
        return str(self.raw.get("provisioner") or "")

    @property
    def volume_binding_mode(self) -> str | None:
        """``volumeBindingMode``; None when unset (the scheduler reports that as an error)."""
        return self.raw.get("volumeBindingMode")

    @property
    def allowed_topologies(self) -> list[Mapping[str, Any]]:
        """``allowedTopologies`` terms, each ``{"matchLabelExpressions": [{"key", "values"}]}``."""
        return list(self.raw.get("allowedTopologies") or ())


class CSINodeDriverView(MappingView):
    """One ``spec.drivers[]`` entry of a CSINode."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return str(self.raw.get("name") or "")

    @property
    def allocatable_count(self) -> int | None:
        """``allocatable.count`` (max volumes attachable), None when unset."""
        count = mapping_at(self.raw, "allocatable").get("count")
        return None if count is None else int(count)


class CSINodeView(ObjectView):
    """A CSINode: the CSI drivers installed on one node."""

    __slots__ = ()

    @property
    def drivers(self) -> list[CSINodeDriverView]:
        return [CSINodeDriverView(d) for d in mapping_at(self.raw, "spec").get("drivers") or ()]

    def has_driver(self, name: str) -> bool:
        return any((d.get("name") or "") == name for d in mapping_at(self.raw, "spec").get("drivers") or ())


class CSIDriverView(ObjectView):
    """A CSIDriver (``spec`` flags the scheduler reads)."""

    __slots__ = ()

    @property
    def storage_capacity(self) -> bool:
        return bool(mapping_at(self.raw, "spec").get("storageCapacity"))

    @property
    def prevent_pod_scheduling_if_missing(self) -> bool:
        """``spec.preventPodSchedulingIfMissing`` is exactly true (alpha field, default false)."""
        return mapping_at(self.raw, "spec").get("preventPodSchedulingIfMissing") is True


class CSIStorageCapacityView(ObjectView):
    """A CSIStorageCapacity (top-level fields, no ``spec``)."""

    __slots__ = ()

    @property
    def storage_class_name(self) -> str:
        return str(self.raw.get("storageClassName") or "")

    @property
    def capacity(self) -> Any:
        """``capacity`` (a quantity as given), None when unset."""
        return self.raw.get("capacity")

    @property
    def maximum_volume_size(self) -> Any:
        """``maximumVolumeSize`` (a quantity as given), None when unset."""
        return self.raw.get("maximumVolumeSize")

    @property
    def node_topology(self) -> Mapping[str, Any] | None:
        """``nodeTopology`` (a LabelSelector mapping), None when unset."""
        return self.raw.get("nodeTopology")
