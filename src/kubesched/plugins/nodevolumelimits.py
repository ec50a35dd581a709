"""NodeVolumeLimits — upstream's CSILimits (``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go``, v1.34).

PreFilter: **Skip** unless the pod has a PVC or generic ephemeral volume (upstream also counts
in-tree inline volumes that are CSI-migratable; kubesched's ``Volume`` view cannot carry those).

Filter, per node (``CSINode`` read with ``handle.lister.get("CSINode", "", node)``):

* the new pod's volumes are resolved to ``(driver, volumeHandle)``: a missing PVC →
  UnschedulableAndUnresolvable ``looking up PVC <ns>/<name>: persistentvolumeclaim "<name>"
  not found``; a bound PVC whose PV has ``spec.csi`` → its driver/handle; an unbound PVC (or a
  missing PV) → the StorageClass provisioner and a per-claim handle; no class / no driver →
  not counted;
* no new CSI volume, or no ``spec.drivers[*].allocatable.count`` on the CSINode → pass;
* otherwise the volumes of the pods on the node are counted per driver (a volume shared with
  the new pod counts once) and ``attached + new > limit`` → Unschedulable
  ``"node(s) exceed max volume count"``.

Not modelled (**Error** status): PVs of in-tree types subject to CSI migration translation
(gcePersistentDisk, awsElasticBlockStore, azureDisk, cinder, …) and StorageClasses whose
provisioner is an in-tree plugin name (``kubernetes.io/...``), when a node has limits to check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import Code, Status
from kubesched.plugins.volumebinding import (
    _migratable_in_tree,
    ephemeral_is_for_pod,
    field,
    not_found,
    pod_pvc_names,
    pvc_storage_class,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.node_table import NodeTable

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NAME", "NodeVolumeLimits", "Unsupported", "new"]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
_VOLUME_ID_PREFIX = "kubesched-sc"


class Unsupported(Exception):
    """A volume kubesched cannot resolve faithfully (becomes an Error status)."""


class _NotFound(Exception):
    pass


class NodeVolumeLimits:
    """PreFilter + Filter (per node). See the module docstring."""

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        for vol in pod.spec.volumes:
            if vol.persistent_volume_claim is not None or getattr(vol, "ephemeral", None) is not None:
                return None, None
        return None, Status(Code.SKIP)

    def pre_filter_extensions(self) -> None:
        return None

    def _driver_from_sc(self, pvc: Any) -> tuple[str, str]:
        sc_name = pvc_storage_class(pvc)
        if not sc_name:
            return "", ""
        sc = self.handle.lister.get("StorageClass", "", sc_name)
        if sc is None:
            return "", ""
        provisioner = field(sc, "provisioner") or ""
        if provisioner.startswith("kubernetes.io/"):
            raise Unsupported(f"in-tree provisioner {provisioner}")
        handle = f"{_VOLUME_ID_PREFIX}-{field(pvc, 'metadata', 'namespace')}/{field(pvc, 'metadata', 'name')}"
        return provisioner, handle

    def _driver_info(self, pvc: Any) -> tuple[str, str]:
        pv_name = field(pvc, "spec", "volumeName") or ""
        if not pv_name:
            return self._driver_from_sc(pvc)
        pv = self.handle.lister.get("PersistentVolume", "", pv_name)
        if pv is None:
            return self._driver_from_sc(pvc)
        csi = field(pv, "spec", "csi")
        if csi is None:
            src = _migratable_in_tree(pv)
            if src is not None:
                raise Unsupported(f"in-tree {src} PersistentVolume")
            return "", ""
        return field(csi, "driver") or "", field(csi, "volumeHandle") or ""

    def _attachable(self, pod: Pod, new_pod: bool, out: dict[str, str]) -> None:
        """Upstream ``filterAttachableVolumes``: unique volume name → driver."""
        ns = pod.metadata.namespace
        for claim, eph, _ in pod_pvc_names(pod):
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
            driver, handle = self._driver_info(pvc)
            if not driver or not handle:
                continue
            out[f"{driver}/{handle}"] = driver

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if not pod.spec.volumes:
            return None
        csi_node = self.handle.lister.get("CSINode", "", node_info.name)
        new_volumes: dict[str, str] = {}
        try:
            self._attachable(pod, True, new_volumes)
        except _NotFound as e:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (str(e),))
        except Unsupported as e:
            return Status(Code.ERROR, (f"kubesched NodeVolumeLimits: {e} is not supported",))
        except ValueError as e:
            return Status(Code.ERROR, (str(e),), e)
        if not new_volumes:
            return None
        limits: dict[str, int] = {}
        for d in field(csi_node, "spec", "drivers") or []:
            count = field(d, "allocatable", "count")
            if count is not None:
                limits[field(d, "name")] = int(count)
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for p in node_info.pods:
                self._attachable(p.pod, False, attached)
        except Unsupported as e:
            return Status(Code.ERROR, (f"kubesched NodeVolumeLimits: {e} is not supported",))
        except ValueError as e:
            return Status(Code.ERROR, (str(e),), e)
        attached_count: dict[str, int] = {}
        for unique, driver in attached.items():
            new_volumes.pop(unique, None)
            attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for driver in new_volumes.values():
            new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status(Code.UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)),
        ]


def new(args: Any, handle: Any) -> NodeVolumeLimits:
    return NodeVolumeLimits(handle)
