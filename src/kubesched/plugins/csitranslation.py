"""In-tree → CSI volume translation, as the scheduler uses it (upstream
``staging/src/k8s.io/csi-translation-lib``: ``translate.go`` and ``plugins/*.go``, v1.34;
``pkg/scheduler/framework/plugins/nodevolumelimits/utils.go`` ``isCSIMigrationOn`` and
``volumebinding/binder.go`` ``isCSIMigrationOnForPlugin`` / ``isPluginMigratedToCSIOnNode``).

Objects are plain JSON mappings (camelCase), as the listers hand them out. Only what the
scheduler reads from a translated volume is produced: the CSI ``driver`` and ``volumeHandle``
(NodeVolumeLimits' unique volume names) and the node affinity with the zone topology rewritten to
the driver's key (VolumeBinding's ``tryTranslatePVToCSI`` before ``CheckNodeAffinity``).

Plugins registered in v1.34 (RBD was removed in v1.31):

================  ==============================  =====================================
volume source     in-tree plugin name             CSI driver (topology key)
================  ==============================  =====================================
awsElasticBlock…  kubernetes.io/aws-ebs           ebs.csi.aws.com (topology.ebs.csi.aws.com/zone)
gcePersistentDisk kubernetes.io/gce-pd            pd.csi.storage.gke.io (topology.gke.io/zone)
azureDisk         kubernetes.io/azure-disk        disk.csi.azure.com (topology.disk.csi.azure.com/zone)
azureFile         kubernetes.io/azure-file        file.csi.azure.com (no topology)
cinder            kubernetes.io/cinder            cinder.csi.openstack.org (topology.cinder.csi.openstack.org/zone)
vsphereVolume     kubernetes.io/vsphere-volume    csi.vsphere.vmware.com (no zone rewrite here)
portworxVolume    kubernetes.io/portworx-volume   pxd.portworx.com (no topology)
================  ==============================  =====================================

Migration switches in v1.34 (feature gates GA/removed): AWS EBS, GCE PD, Azure Disk and Cinder
are always on; Portworx is behind ``CSIMigrationPortworx`` (on by default since v1.31) and, for
NodeVolumeLimits, additionally needs the plugin listed in the CSINode annotation
``storage.alpha.kubernetes.io/migrated-plugins``. VolumeBinding translates a PV only when the
plugin is on *and* listed in that annotation of the node's CSINode.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "MIGRATED_PLUGINS_ANNOTATION",
    "PLUGINS",
    "csi_name_from_in_tree_name",
    "in_tree_plugin_of_pv",
    "in_tree_plugin_of_volume",
    "is_csi_migration_on",
    "is_migratable_in_tree_plugin",
    "is_migration_on_for_plugin",
    "is_plugin_migrated_on_node",
    "translate_inline_volume",
    "translate_pv",
]

MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
LABEL_ZONE_GA = "topology.kubernetes.io/zone"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_GA = "topology.kubernetes.io/region"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"
LABEL_MULTI_ZONE_DELIMITER = "__"

#: volume source field → (in-tree plugin name, CSI driver name, CSI zone topology key or None)
PLUGINS: dict[str, tuple[str, str, str | None]] = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com", "topology.ebs.csi.aws.com/zone"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io", "topology.gke.io/zone"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com", "topology.disk.csi.azure.com/zone"),
    "azureFile": ("kubernetes.io/azure-file", "file.csi.azure.com", None),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org", "topology.cinder.csi.openstack.org/zone"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com", None),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com", None),
}
_BY_PLUGIN = {plugin: (src, csi) for src, (plugin, csi, _) in PLUGINS.items()}
#: the Go snake_case attribute of each source on kubesched's typed ``Volume`` view
_ATTR = {"awsElasticBlockStore": "aws_elastic_block_store", "gcePersistentDisk": "gce_persistent_disk",
         "azureDisk": "azure_disk", "azureFile": "azure_file", "cinder": "cinder",
         "vsphereVolume": "vsphere_volume", "portworxVolume": "portworx_volume"}

#: feature gate CSIMigrationPortworx (v1.34 default: on)
CSI_MIGRATION_PORTWORX = True


def _spec(pv: Any) -> dict[str, Any]:
    return (pv.get("spec") if isinstance(pv, dict) else None) or {}


def in_tree_plugin_of_pv(pv: Any) -> str | None:
    """``GetInTreePluginNameFromSpec(pv, nil)``: the in-tree plugin name of a migratable PV, else None
    (``IsPVMigratable`` is ``in_tree_plugin_of_pv(pv) is not None``)."""
    spec = _spec(pv)
    for src, (plugin, _, _) in PLUGINS.items():
        if spec.get(src) is not None:
            return plugin
    return None


def in_tree_plugin_of_volume(vol: Any) -> tuple[str, str, dict[str, Any]] | None:
    """``IsInlineMigratable`` + ``GetInTreePluginNameFromSpec(nil, vol)`` for a pod volume (typed
    ``Volume`` or mapping): ``(source field, plugin name, source)`` or None."""
    for src, (plugin, _, _) in PLUGINS.items():
        s = vol.get(src) if isinstance(vol, dict) else getattr(vol, _ATTR[src], None)
        if s is not None:
            return src, plugin, s
    return None


def is_migratable_in_tree_plugin(name: str) -> bool:
    """``IsMigratableIntreePluginByName``."""
    return name in _BY_PLUGIN


def csi_name_from_in_tree_name(name: str) -> str | None:
    """``GetCSINameFromInTreeName``; None for an unknown plugin."""
    hit = _BY_PLUGIN.get(name)
    return hit[1] if hit else None


def _migrated_set(csi_node: Any) -> set[str]:
    ann = ((csi_node or {}).get("metadata") or {}).get("annotations") or {}
    mpa = ann.get(MIGRATED_PLUGINS_ANNOTATION) or ""
    return set(mpa.split(",")) if mpa else set()


def is_csi_migration_on(csi_node: Any, plugin: str) -> bool:
    """NodeVolumeLimits' ``isCSIMigrationOn``: needs a CSINode; AWS EBS, GCE PD, Azure Disk and
    Cinder → on; Portworx → gate and listed in the migrated-plugins annotation; others → off."""
    if csi_node is None or not plugin:
        return False
    if plugin in ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                  "kubernetes.io/cinder"):
        return True
    if plugin == "kubernetes.io/portworx-volume":
        return CSI_MIGRATION_PORTWORX and plugin in _migrated_set(csi_node)
    return False


def is_migration_on_for_plugin(plugin: str) -> bool:
    """VolumeBinding's ``isCSIMigrationOnForPlugin`` (v1.34)."""
    if plugin in ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                  "kubernetes.io/cinder"):
        return True
    if plugin == "kubernetes.io/portworx-volume":
        return CSI_MIGRATION_PORTWORX
    return False


def is_plugin_migrated_on_node(plugin: str, csi_node: Any) -> bool:
    """VolumeBinding's ``isPluginMigratedToCSIOnNode``: listed in the CSINode's annotation."""
    return csi_node is not None and plugin in _migrated_set(csi_node)


# ───────────────────────────── handles ─────────────────────────────


def _ebs_volume_id(volume_id: str) -> str:
    """``KubernetesVolumeIDToEBSVolumeID``: ``aws://<zone>/vol-…`` → ``vol-…``."""
    if volume_id.startswith("aws://"):
        return volume_id.rstrip("/").rsplit("/", 1)[-1]
    return volume_id


def _handle(src: str, s: dict[str, Any], zone: str = "UNSPECIFIED") -> str:
    if src == "awsElasticBlockStore":
        return _ebs_volume_id(str(s.get("volumeID") or ""))
    if src == "gcePersistentDisk":
        return f"projects/UNSPECIFIED/zones/{zone}/disks/{s.get('pdName') or ''}"
    if src == "azureDisk":
        return str(s.get("diskURI") or "")
    if src == "azureFile":
        return f"#{s.get('secretName') or ''}#{s.get('shareName') or ''}#"
    if src == "cinder":
        return str(s.get("volumeID") or "")
    if src == "vsphereVolume":
        return str(s.get("volumePath") or "")
    if src == "portworxVolume":
        return str(s.get("volumeID") or "")
    return ""


def translate_inline_volume(vol: Any) -> tuple[str, str] | None:
    """``TranslateInTreeInlineVolumeToCSI``: ``(driver, volumeHandle)`` of a migratable inline
    volume, else None."""
    hit = in_tree_plugin_of_volume(vol)
    if hit is None:
        return None
    src, plugin, s = hit
    s = s if isinstance(s, dict) else _builtins(s)
    return PLUGINS[src][1], _handle(src, s)


def _builtins(obj: Any) -> dict[str, Any]:
    import msgspec

    out = msgspec.to_builtins(obj)
    return out if isinstance(out, dict) else {}


# ───────────────────────────── topology ─────────────────────────────


def _terms(pv: dict[str, Any]) -> list[dict[str, Any]]:
    return ((((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {})
            .get("nodeSelectorTerms") or [])


def _topology_values(pv: dict[str, Any], key: str) -> list[str]:
    out: list[str] = []
    for term in _terms(pv):
        for req in term.get("matchExpressions") or []:
            if req.get("key") == key:
                out.extend(req.get("values") or [])
    return out


def _key_exists(pv: dict[str, Any], key: str) -> bool:
    return any(req.get("key") == key for term in _terms(pv) for req in term.get("matchExpressions") or [])


def _topology_labels(pv: dict[str, Any]) -> tuple[str, str]:
    """``getTopologyLabel``: the zone/region labels this PV uses (node affinity first, then its
    labels; GA by default)."""
    if _key_exists(pv, LABEL_ZONE_GA):
        return LABEL_ZONE_GA, LABEL_REGION_GA
    if _key_exists(pv, LABEL_ZONE_BETA):
        return LABEL_ZONE_BETA, LABEL_REGION_BETA
    labels = (pv.get("metadata") or {}).get("labels") or {}
    if LABEL_ZONE_GA in labels:
        return LABEL_ZONE_GA, LABEL_REGION_GA
    if LABEL_ZONE_BETA in labels:
        return LABEL_ZONE_BETA, LABEL_REGION_BETA
    return LABEL_ZONE_GA, LABEL_REGION_GA


def _replace_key(pv: dict[str, Any], old: str, new: str) -> None:
    for term in _terms(pv):
        for req in term.get("matchExpressions") or []:
            if req.get("key") == old:
                req["key"] = new


def _add_topology(pv: dict[str, Any], key: str, zones: list[str]) -> None:
    spec = pv.setdefault("spec", {})
    na = spec.get("nodeAffinity") or {}
    spec["nodeAffinity"] = na
    req = na.get("required") or {}
    na["required"] = req
    terms = req.get("nodeSelectorTerms") or []
    if not terms:
        terms = [{}]
    req["nodeSelectorTerms"] = terms
    for term in terms:
        term["matchExpressions"] = list(term.get("matchExpressions") or []) + [
            {"key": key, "operator": "In", "values": list(zones)}]


def translate_pv(pv: dict[str, Any]) -> dict[str, Any]:
    """``TranslateInTreePVToCSI`` for a migratable PV: a copy with ``spec.csi`` (driver,
    volumeHandle) in place of the in-tree source and the zone topology translated
    (``translateTopologyFromInTreeToCSI``: zone requirements in the node affinity get the
    driver's key; without any, the PV's zone label becomes one; beta region → GA region).
    Returns ``pv`` itself when it is not migratable."""
    spec = _spec(pv)
    src = next((s for s in PLUGINS if spec.get(s) is not None), None)
    if src is None:
        return pv
    out = copy.deepcopy(pv)
    ospec = out.setdefault("spec", {})
    s = ospec.pop(src) or {}
    _, driver, topo_key = PLUGINS[src]
    zone_label, region_label = _topology_labels(out)
    zones = _topology_values(out, zone_label)
    labels = (out.get("metadata") or {}).get("labels") or {}
    if not zones and zone_label in labels:
        zones_from_label = [z for z in str(labels[zone_label]).split(LABEL_MULTI_ZONE_DELIMITER) if z]
    else:
        zones_from_label = []
    zone = zones[0] if len(zones) == 1 else (zones_from_label[0] if len(zones_from_label) == 1 else "UNSPECIFIED")
    ospec["csi"] = {"driver": driver, "volumeHandle": _handle(src, s, zone),
                    "readOnly": bool(s.get("readOnly", False))}
    if topo_key is not None and not _topology_values(out, topo_key):
        if zones:
            _replace_key(out, zone_label, topo_key)
        elif zones_from_label:
            _add_topology(out, topo_key, zones_from_label)
        if region_label == LABEL_REGION_BETA and _topology_values(out, LABEL_REGION_BETA):
            _replace_key(out, LABEL_REGION_BETA, LABEL_REGION_GA)
    return out
