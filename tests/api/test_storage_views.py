"""The typed storage views (kubesched.api.storage) read exactly what the camelCase mapping holds,
with the API's defaults for absent or null fields (k8s.io/api core/v1 and storage/v1 types)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from tests.api.view_strategies import LABELS as _labels
from tests.api.view_strategies import NAME as _name
from tests.api.view_strategies import SETTINGS as _SETTINGS
from tests.api.view_strategies import metadata
from tests.api.view_strategies import partial as _partial

from kubesched.api.storage import (
    CSIDriverView,
    CSINodeView,
    CSIStorageCapacityView,
    PersistentVolumeClaimView,
    PersistentVolumeView,
    StorageClassView,
)

_modes = st.lists(st.sampled_from(["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]),
                  max_size=3)
_qty = st.sampled_from(["1Gi", "500Mi", "10", "2G"])
_selector = st.fixed_dictionaries({"matchLabels": _labels})
_node_selector = st.fixed_dictionaries({"nodeSelectorTerms": st.just([{"matchExpressions": [
    {"key": "zone", "operator": "In", "values": ["a"]}]}])})

_meta = metadata()
_pvc = _partial({"metadata": _meta, "status": _partial({"phase": st.sampled_from(["Pending", "Bound", "Lost"])}),
                 "spec": _partial({"storageClassName": _name, "volumeName": _name, "accessModes": _modes,
                                   "volumeMode": st.sampled_from(["Filesystem", "Block"]),
                                   "volumeAttributesClassName": _name, "selector": _selector,
                                   "resources": _partial({"requests": _partial({"storage": _qty})})})})
_pv = _partial({"metadata": _meta, "status": _partial({"phase": st.sampled_from(["Available", "Bound"])}),
                "spec": _partial({"storageClassName": _name, "accessModes": _modes, "capacity": _partial(
                    {"storage": _qty}), "claimRef": st.fixed_dictionaries({"name": _name, "namespace": _name}),
                    "volumeMode": st.sampled_from(["Filesystem", "Block"]), "volumeAttributesClassName": _name,
                    "nodeAffinity": _partial({"required": _node_selector}),
                    "csi": st.fixed_dictionaries({"driver": _name, "volumeHandle": _name})})})


def _get(obj: dict[str, Any], *path: str) -> Any:
    for key in path:
        obj = (obj or {}).get(key)
    return obj


def _check_meta(view: Any, obj: dict[str, Any]) -> None:
    assert view.raw is obj
    assert view.name == (_get(obj, "metadata", "name") or "")
    assert view.namespace == (_get(obj, "metadata", "namespace") or "")
    assert view.key == (f"{view.namespace}/{view.name}" if view.namespace else view.name)
    assert view.uid == (_get(obj, "metadata", "uid") or "")
    assert dict(view.labels) == (_get(obj, "metadata", "labels") or {})
    assert dict(view.annotations) == (_get(obj, "metadata", "annotations") or {})
    assert view.owner_references == (_get(obj, "metadata", "ownerReferences") or [])
    assert view.deletion_timestamp == _get(obj, "metadata", "deletionTimestamp")
    assert view.resource_version == int(_get(obj, "metadata", "resourceVersion") or 0)


@_SETTINGS
@given(_pvc)
def test_pvc_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = PersistentVolumeClaimView(obj)
    _check_meta(v, obj)
    assert v.storage_class_name == (_get(obj, "spec", "storageClassName") or "")
    assert v.volume_name == (_get(obj, "spec", "volumeName") or "")
    assert v.access_modes == (_get(obj, "spec", "accessModes") or [])
    assert v.volume_mode == (_get(obj, "spec", "volumeMode") or "Filesystem")
    assert v.volume_attributes_class_name == (_get(obj, "spec", "volumeAttributesClassName") or "")
    assert v.selector == _get(obj, "spec", "selector")
    assert dict(v.requests) == (_get(obj, "spec", "resources", "requests") or {})
    assert v.phase == (_get(obj, "status", "phase") or "")


@_SETTINGS
@given(_pv)
def test_pv_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = PersistentVolumeView(obj)
    _check_meta(v, obj)
    assert v.storage_class_name == (_get(obj, "spec", "storageClassName") or "")
    assert dict(v.capacity) == (_get(obj, "spec", "capacity") or {})
    assert v.claim_ref == _get(obj, "spec", "claimRef")
    assert v.access_modes == (_get(obj, "spec", "accessModes") or [])
    assert v.volume_mode == (_get(obj, "spec", "volumeMode") or "Filesystem")
    assert v.volume_attributes_class_name == (_get(obj, "spec", "volumeAttributesClassName") or "")
    assert v.node_affinity_required == _get(obj, "spec", "nodeAffinity", "required")
    assert v.csi == _get(obj, "spec", "csi")
    assert v.phase == (_get(obj, "status", "phase") or "")


@_SETTINGS
@given(_partial({"metadata": _meta, "provisioner": _name,
                 "volumeBindingMode": st.sampled_from(["Immediate", "WaitForFirstConsumer"]),
                 "allowedTopologies": st.lists(st.fixed_dictionaries({"matchLabelExpressions": st.just([])}),
                                               max_size=2)}))
def test_storage_class_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = StorageClassView(obj)
    _check_meta(v, obj)
    assert v.provisioner == (obj.get("provisioner") or "")
    assert v.volume_binding_mode == obj.get("volumeBindingMode")  # unset stays None: an error upstream
    assert v.allowed_topologies == (obj.get("allowedTopologies") or [])


@_SETTINGS
@given(_partial({"metadata": _meta, "spec": _partial({"drivers": st.lists(_partial(
    {"name": _name, "allocatable": _partial({"count": st.integers(0, 64)})}), max_size=3)})}), _name)
def test_csinode_view_reads_the_mapping(obj: dict[str, Any], probe: str) -> None:
    v = CSINodeView(obj)
    _check_meta(v, obj)
    drivers = _get(obj, "spec", "drivers") or []
    assert [(d.name, d.allocatable_count) for d in v.drivers] == [
        (d.get("name") or "", _get(d, "allocatable", "count")) for d in drivers]
    for d in drivers:
        if d.get("name"):
            assert v.has_driver(d["name"])
    assert v.has_driver(probe) == any(d.get("name") == probe for d in drivers)


@_SETTINGS
@given(_partial({"metadata": _meta, "spec": _partial({"storageCapacity": st.booleans(),
                                                       "preventPodSchedulingIfMissing": st.booleans()})}))
def test_csidriver_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = CSIDriverView(obj)
    _check_meta(v, obj)
    assert v.storage_capacity == bool(_get(obj, "spec", "storageCapacity"))
    assert v.prevent_pod_scheduling_if_missing == (_get(obj, "spec", "preventPodSchedulingIfMissing") is True)


@_SETTINGS
@given(_partial({"metadata": _meta, "storageClassName": _name, "capacity": _qty, "maximumVolumeSize": _qty,
                 "nodeTopology": _selector}))
def test_csistoragecapacity_view_reads_the_mapping(obj: dict[str, Any]) -> None:
    v = CSIStorageCapacityView(obj)
    _check_meta(v, obj)
    assert v.storage_class_name == (obj.get("storageClassName") or "")
    assert v.capacity == obj.get("capacity")
    assert v.maximum_volume_size == obj.get("maximumVolumeSize")
    assert v.node_topology == obj.get("nodeTopology")


def test_views_never_copy_or_mutate() -> None:
    obj: dict[str, Any] = {"spec": {"accessModes": ["ReadWriteOnce"]}}
    v = PersistentVolumeClaimView(obj)
    v.access_modes.append("ReadWriteMany")
    assert obj == {"spec": {"accessModes": ["ReadWriteOnce"]}}
    obj["spec"]["volumeName"] = "pv1"
    assert v.volume_name == "pv1"
