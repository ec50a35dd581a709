"""NodeVolumeLimits — upstream's CSILimits (``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``
and ``utils.go``, v1.34; in-tree translation from ``csi-translation-lib``, see
:mod:`kubesched.plugins.csitranslation`).

PreFilter: **Skip** unless the pod has a PVC, a generic ephemeral volume, or an inline in-tree
volume that is CSI-migratable (awsElasticBlockStore, gcePersistentDisk, azureDisk, azureFile,
cinder, vsphereVolume, portworxVolume).

Filter, per node (``CSINode`` read with ``handle.lister.get("CSINode", "", node)``; may be absent):

* the new pod's volumes are resolved to unique names ``<driver>/<volumeHandle>``: a missing PVC →
  UnschedulableAndUnresolvable ``looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not
  found``; a bound PVC whose PV has ``spec.csi`` → its driver/handle; a PV of a migratable in-tree
  type → translated when migration is on for the node (``isCSIMigrationOn``: a CSINode exists and
  the plugin is AWS EBS, GCE PD, Azure Disk or Cinder, or Portworx listed in the CSINode's
  ``storage.alpha.kubernetes.io/migrated-plugins``), else not counted; an unbound PVC (or a
  missing PV) → the StorageClass provisioner (an in-tree provisioner name is mapped to its CSI
  driver under the same migration rule) and a per-claim handle; inline migratable volumes →
  translated under the same rule;
* limits per driver: the CSINode's ``spec.drivers[*].allocatable.count`` only (upstream
  ``getVolumeLimits``; the node's ``attachable-volumes-csi-<driver>`` allocatable is not a source
  in v1.34–v1.37); no new CSI volume or no limit → pass;
* otherwise the volumes of the pods on the node are counted per driver (a volume shared with the
  new pod counts once) and ``attached + new > limit`` → Unschedulable
  ``"node(s) exceed max volume count"``.

VolumeLimitScaling (gate: alpha off 1.35–1.36, beta on 1.37; v1.37.2 csi.go L296-307, L365-390):
once the new pod's CSI volumes are known (before the limits, so also on nodes without any), a
volume whose driver has a CSIDriver object with ``spec.preventPodSchedulingIfMissing: true`` and is
not among the node's CSINode ``spec.drivers`` (or the node has no CSINode) → Unschedulable
``"<driver> CSI driver is not installed on the node"``; no CSIDriver object → allowed. Upstream
walks the new volumes in Go map order; kubesched takes them in volume order (only the reason's
driver name can differ, when several drivers are missing on one node).

Not modelled: VolumeAttachment objects of volumes still attached to a node whose pods are gone.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.storage import (
    CSIDriverView,
    CSINodeView,
    PersistentVolumeClaimView,
    PersistentVolumeView,
    StorageClassView,
)
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    assigned_pod_resource,
)
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, Status
from kubesched.framework.signers import VOLUMES_SIGNER_NAME, volumes_signer
from kubesched.plugins.csitranslation import (
    csi_name_from_in_tree_name,
    in_tree_plugin_of_pv,
    in_tree_plugin_of_volume,
    is_csi_migration_on,
    is_migratable_in_tree_plugin,
    translate_inline_volume,
    translate_pv,
)
from kubesched.plugins.helper.gates import features_of
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize
from kubesched.plugins.volumebinding import (
    ephemeral_is_for_pod,
    not_found,
    pvc_storage_class,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NAME", "NodeVolumeLimits", "csi_attach_limit_key", "new"]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
_VOLUME_ID_PREFIX = "kubesched-sc"
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
RESOURCE_NAME_LENGTH_LIMIT = 63


def csi_attach_limit_key(driver: str) -> str:
    """Upstream ``GetCSIAttachLimitKey``: ``attachable-volumes-csi-<driver>``; a name that would
    reach 63 characters keeps the driver's first 23 characters and 16 hex digits of its SHA-1."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= RESOURCE_NAME_LENGTH_LIMIT:
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + hashlib.sha1(driver.encode()).hexdigest()[:16]
    return CSI_ATTACH_LIMIT_PREFIX + driver


class _NotFound(Exception):
    pass


def _migration_key(csi_node: Any) -> tuple[bool, str]:
    """What ``isCSIMigrationOn`` reads of a CSINode: whether it exists and its migrated plugins."""
    if csi_node is None:
        return (False, "")
    ann = CSINodeView(csi_node).annotations
    return (True, ann.get("storage.alpha.kubernetes.io/migrated-plugins", ""))


class NodeVolumeLimits:
    """PreFilter + Filter (per node). See the module docstring."""

    name = NAME
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (nodevolumelimits/csi.go L241-244, L262-265)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 csi.go ``SignPod``): the non-ConfigMap/Secret volume sources."""
        return [(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.enable_volume_limit_scaling = features_of(handle).enabled("VolumeLimitScaling")
        self._limits_cache: dict[str, tuple[Any, Any, dict[str, int], int | None]] = {}
        self._consulted = False

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        for vol in pod.spec.volumes:
            if (vol.persistent_volume_claim is not None or getattr(vol, "ephemeral", None) is not None
                    or in_tree_plugin_of_volume(vol) is not None):
                return None, None
        return None, SKIP_STATUS

    def pre_filter_extensions(self) -> None:
        return None

    def _driver_from_sc(self, csi_node: Any, pvc: Any) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfoFromSC``."""
        sc_name = pvc_storage_class(pvc)
        if not sc_name:
            return "", ""
        sc = self.handle.lister.get("StorageClass", "", sc_name)
        if sc is None:
            return "", ""
        provisioner = StorageClassView(sc).provisioner
        claim = PersistentVolumeClaimView(pvc)
        handle = f"{_VOLUME_ID_PREFIX}-{claim.namespace}/{claim.name}"
        if is_migratable_in_tree_plugin(provisioner):
            self._consulted = True
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            provisioner = csi_name_from_in_tree_name(provisioner) or ""
        return provisioner, handle

    def _driver_info(self, csi_node: Any, pvc: Any) -> tuple[str, str]:
        """Upstream ``getCSIDriverInfo``."""
        pv_name = PersistentVolumeClaimView(pvc).volume_name
        if not pv_name:
            return self._driver_from_sc(csi_node, pvc)
        pv = self.handle.lister.get("PersistentVolume", "", pv_name)
        if pv is None:
            return self._driver_from_sc(csi_node, pvc)
        csi = PersistentVolumeView(pv).csi
        if csi is None:
            plugin = in_tree_plugin_of_pv(pv) if isinstance(pv, dict) else None
            self._consulted = True
            if plugin is None or not is_csi_migration_on(csi_node, plugin):
                return "", ""
            csi = PersistentVolumeView(translate_pv(pv)).csi
            if csi is None:
                return "", ""
        return csi.get("driver") or "", csi.get("volumeHandle") or ""

    def _attachable(self, pod: Pod, csi_node: Any, new_pod: bool, out: dict[str, str]) -> None:
        """Upstream ``filterAttachableVolumes``: unique volume name → driver."""
        ns = pod.metadata.namespace
        for vol in pod.spec.volumes:
            if vol.persistent_volume_claim is not None:
                claim, eph = vol.persistent_volume_claim.claim_name, False
            elif getattr(vol, "ephemeral", None) is not None:
                claim, eph = f"{pod.metadata.name}-{vol.name}", True
            else:  # checkAttachableInlineVolume
                hit = in_tree_plugin_of_volume(vol)
                if hit is not None:
                    self._consulted = True
                if hit is None or not is_csi_migration_on(csi_node, hit[1]):
                    continue
                tr = translate_inline_volume(vol)
                if tr is not None and tr[0] and tr[1]:
                    out[f"{tr[0]}/{tr[1]}"] = tr[0]
                continue
            if not claim:
                raise ValueError("PersistentVolumeClaim had no name")
            pvc = self.handle.lister.get("PersistentVolumeClaim", ns, claim)
            if pvc is None:
                if new_pod:
                    raise _NotFound(f"looking up PVC {ns}/{claim}: {not_found('persistentvolumeclaim', claim)}")
                continue
            if eph:
                err = ephemeral_is_for_pod(pod, pvc)
                if err is not None:
                    raise ValueError(err)
            driver, handle = self._driver_info(csi_node, pvc)
            if not driver or not handle:
                continue
            out[f"{driver}/{handle}"] = driver

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        if not pod.spec.volumes:
            return None
        csi_node = self.handle.lister.get("CSINode", "", node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable(pod, csi_node, True, new_volumes)
        except _NotFound as e:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        except ValueError as e:
            return Status(Code.ERROR, (str(e),), e)
        st = self._driver_not_installed(csi_node, new_volumes)
        if st is not None:
            return st
        try:
            return self._check(node_info, csi_node, new_volumes)
        except ValueError as e:
            return Status(Code.ERROR, (str(e),), e)

    def _driver_not_installed(self, csi_node: Any, new_volumes: dict[str, str]) -> Status | None:
        """VolumeLimitScaling (upstream Filter L296-307 with ``checkCSIDriverOnNode``)."""
        if not self.enable_volume_limit_scaling:
            return None
        for driver in new_volumes.values():
            csi_driver = self.handle.lister.get("CSIDriver", "", driver)
            if csi_driver is None or not CSIDriverView(csi_driver).prevent_pod_scheduling_if_missing:
                continue
            if csi_node is not None and CSINodeView(csi_node).has_driver(driver):
                continue
            return Status(Code.UNSCHEDULABLE, (f"{driver} CSI driver is not installed on the node",))
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        """Batch Filter, the same decisions as :meth:`filter` per row: the new pod's volumes are
        resolved once (once per distinct migration state of the CSINodes when a migratable
        in-tree volume is involved), node limits are cached per (Node, CSINode) object, and the
        pods on a node are resolved only when their volume count could reach a limit (attached
        volumes ≤ the volume entries of the node's pods)."""
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        if not pod.spec.volumes:
            return None
        from kubesched.framework.node_table import NodeInfo

        get = self.handle.lister.get
        names, table_nodes, table_pods = nodes.names, nodes.nodes, nodes.pods
        resolved: dict[Any, dict[str, str] | Status] = {}
        failed: list[tuple[int, Status]] = []
        independent: dict[str, str] | Status | None = None
        limits_cache = self._limits_cache
        for i, r in enumerate(rows.tolist()):
            name = names[r]
            csi_node = get("CSINode", "", name)
            nv = independent
            if nv is None:
                key = _migration_key(csi_node)
                nv = resolved.get(key)
                if nv is None:
                    vols: dict[str, str] = {}
                    self._consulted = False
                    try:
                        self._attachable(pod, csi_node, True, vols)
                        nv = vols
                    except _NotFound as e:
                        nv = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
                    resolved[key] = nv
                    if not self._consulted:  # no migration rule was read: the same on every node
                        independent = nv
            if isinstance(nv, Status):
                failed.append((i, nv))
                continue
            if not nv:
                continue
            if self.enable_volume_limit_scaling:
                st = self._driver_not_installed(csi_node, nv)
                if st is not None:
                    failed.append((i, st))
                    continue
            node = table_nodes[r]
            hit = limits_cache.get(name)
            if hit is None or hit[0] is not node or hit[1] is not csi_node:
                self._limits(NodeInfo(nodes, r), csi_node)
                hit = limits_cache[name]
            min_limit = hit[3]
            if min_limit is None:
                continue  # no limits on this node
            bound = len(nv)
            for p in table_pods[r]:
                bound += len(p.pod.spec.volumes)
            if bound <= min_limit:
                continue  # even all-distinct volumes of one driver cannot exceed any limit
            st = self._check(NodeInfo(nodes, r), csi_node, dict(nv))
            if st is not None:
                failed.append((i, st))
        if not failed:
            return None
        out: list[Status | None] = [None] * len(rows)
        for i, st in failed:
            out[i] = st
        return FilterResult.from_statuses(out)

    def _limits(self, node_info: NodeInfo, csi_node: Any) -> dict[str, int]:
        """Upstream ``getVolumeLimits`` (csi.go L571-585 in v1.34.12, the same in v1.37.2): only
        the CSINode's ``spec.drivers[*].allocatable.count``; the node's ``attachable-volumes-csi-*``
        allocatable is not read. Cached per (Node, CSINode) object."""
        node = node_info.node
        hit = self._limits_cache.get(node_info.name)
        if hit is not None and hit[0] is node and hit[1] is csi_node:
            return hit[2]
        limits: dict[str, int] = {}
        for d in CSINodeView(csi_node).drivers if csi_node is not None else ():
            count = d.allocatable_count
            if count is not None:
                limits[csi_attach_limit_key(d.name)] = count
        self._limits_cache[node_info.name] = (node, csi_node, limits, min(limits.values()) if limits else None)
        return limits

    def _check(self, node_info: NodeInfo, csi_node: Any, new_volumes: dict[str, str]) -> Status | None:
        """The node part of upstream's Filter once the new pod's volumes are known. Raises
        ValueError for an existing pod's bad volume."""
        if not new_volumes:
            return None
        limits = self._limits(node_info, csi_node)
        if not limits:
            return None
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        pods = node_info.pods
        bound = 0
        for p in pods:
            bound += len(p.pod.spec.volumes)
        if all(bound + c <= limits.get(csi_attach_limit_key(d), bound + c) for d, c in new_count.items()):
            return None  # even if every volume on the node were distinct and of that driver
        attached: dict[str, str] = {}
        for p in pods:
            self._attachable(p.pod, csi_node, False, attached)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(csi_attach_limit_key(driver))
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(assigned_pod_resource(self.handle), ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)),
        ]


def new(args: Any, handle: Any) -> NodeVolumeLimits:
    return with_deferred_resize(NodeVolumeLimits(handle), handle)
