"""VolumeRestrictions (upstream ``pkg/scheduler/framework/plugins/volumerestrictions``, v1.34).

PreFilter: a pod without volumes returns **Skip** at once. Otherwise each
``persistentVolumeClaim`` volume's PVC is looked up (``handle.lister``): a missing one →
UnschedulableAndUnresolvable ``persistentvolumeclaim "<name>" not found`` — in the default
profile this PreFilter runs before VolumeBinding's, so this plugin produces that message.
PVCs with the ``ReadWriteOncePod`` access mode that are already used by a pod in the snapshot
are counted (``conflictingPVCRefCount``); when the pod has no GCE PD / AWS EBS / RBD / iSCSI
volume and that count is 0 → Skip.

Filter: a disk conflict with a pod on the node (same GCE PD unless all read-only, same EBS
volume ID, same iSCSI IQN / RBD image unless all read-only) → Unschedulable
``"node(s) had no available disk"``; then ``conflictingPVCRefCount > 0`` → Unschedulable
``"node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access
mode"`` (cluster-wide, so every node). PreFilterExtensions add/remove pods from the count.

PVC usage (upstream ``StorageInfos().IsPVCUsedByPods``) is kept incrementally by a NodeTable
listener (``namespace/claimName`` → number of pods). kubesched's ``Volume`` view has only
``persistentVolumeClaim``; the in-tree disk sources are read with ``getattr`` so the disk
conflict check works once the API view carries them (today it never triggers).

Queueing hints: Pod Delete (queue when the deleted pod had a conflicting disk or shares a PVC
name, same namespace), Node Add, PVC Add (queue when the pod uses that claim).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.storage import PersistentVolumeClaimView
from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    assigned_pod_resource,
)
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, Status
from kubesched.framework.signers import VOLUMES_SIGNER_NAME, volumes_signer
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize
from kubesched.plugins.volumebinding import not_found

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import PodInfo
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = ["ERR_REASON_DISK_CONFLICT", "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT", "NAME", "VolumeRestrictions",
           "is_volume_conflict", "new", "satisfy_volume_conflicts"]

NAME = "VolumeRestrictions"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod")
_DISK_SOURCES = ("gce_persistent_disk", "aws_elastic_block_store", "rbd", "iscsi")


def _src(vol: Any, name: str) -> Any:
    return getattr(vol, name, None)


def needs_restrictions_check(vol: Any) -> bool:
    return any(_src(vol, s) is not None for s in _DISK_SOURCES)


def is_volume_conflict(vol: Any, pod: Pod) -> bool:
    """Upstream ``isVolumeConflict``: ``vol`` conflicts with one of ``pod``'s volumes."""
    for ev in pod.spec.volumes:
        a, b = _src(vol, "gce_persistent_disk"), _src(ev, "gce_persistent_disk")
        if a is not None and b is not None and a.get("pdName") == b.get("pdName") \
                and not (a.get("readOnly") and b.get("readOnly")):
            return True
        a, b = _src(vol, "aws_elastic_block_store"), _src(ev, "aws_elastic_block_store")
        if a is not None and b is not None and a.get("volumeID") == b.get("volumeID"):
            return True
        a, b = _src(vol, "iscsi"), _src(ev, "iscsi")
        if a is not None and b is not None and a.get("iqn") == b.get("iqn") \
                and not (a.get("readOnly") and b.get("readOnly")):
            return True
        a, b = _src(vol, "rbd"), _src(ev, "rbd")
        if a is not None and b is not None:
            if set(a.get("monitors") or ()) & set(b.get("monitors") or ()) \
                    and a.get("pool") == b.get("pool") and a.get("image") == b.get("image") \
                    and not (a.get("readOnly") and b.get("readOnly")):
                return True
    return False


def satisfy_volume_conflicts(pod: Pod, pods_on_node: list[PodInfo]) -> bool:
    for vol in pod.spec.volumes:
        if not needs_restrictions_check(vol):
            continue
        for p in pods_on_node:
            if is_volume_conflict(vol, p.pod):
                return False
    return True


def _claims(pod: Pod) -> list[str]:
    return [v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim is not None]


class PreFilterState:
    __slots__ = ("rwop_pvcs", "conflicting_pvc_ref_count", "needs_check")

    def __init__(self, rwop_pvcs: set[str], count: int, needs_check: bool) -> None:
        self.rwop_pvcs = rwop_pvcs
        self.conflicting_pvc_ref_count = count
        self.needs_check = needs_check

    def clone(self) -> PreFilterState:
        return PreFilterState(self.rwop_pvcs, self.conflicting_pvc_ref_count, self.needs_check)

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        self.conflicting_pvc_ref_count += multiplier * sum(1 for c in _claims(pod) if c in self.rwop_pvcs)


_USAGE_KEY = (__name__, "PVCUsage")


class _PVCUsage:
    """``namespace/claimName`` → number of pods in the table using it (a NodeTable listener)."""

    def __init__(self, table: NodeTable) -> None:
        self.counts: dict[str, int] = {}
        self._by_row: dict[int, list[str]] = {}
        for row, pods in enumerate(table.pods):
            for p in pods:
                self.on_pod_added(table, row, p)
        table.add_listener(self)

    def on_node_set(self, table: NodeTable, row: int, old: Any) -> None:
        pass

    def on_node_removed(self, table: NodeTable, row: int, old: Any) -> None:
        for key in self._by_row.pop(row, ()):
            self._dec(key)

    def _dec(self, key: str) -> None:
        n = self.counts.get(key, 0) - 1
        if n > 0:
            self.counts[key] = n
        else:
            self.counts.pop(key, None)

    def on_pod_added(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        pod = pod_info.pod
        if not pod.spec.volumes:
            return
        for c in _claims(pod):
            key = f"{pod.metadata.namespace}/{c}"
            self.counts[key] = self.counts.get(key, 0) + 1
            self._by_row.setdefault(row, []).append(key)

    def on_pod_removed(self, table: NodeTable, row: int, pod_info: PodInfo) -> None:
        pod = pod_info.pod
        if not pod.spec.volumes:
            return
        keys = self._by_row.get(row, [])
        for c in _claims(pod):
            key = f"{pod.metadata.namespace}/{c}"
            if key in keys:
                keys.remove(key)
                self._dec(key)


class VolumeRestrictions:
    """PreFilter (+extensions) and Filter (both shapes). See the module docstring."""

    name = NAME
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (volume_restrictions.go L175-178, L322-325)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 volume_restrictions.go ``SignPod``): the non-ConfigMap/Secret volume sources."""
        return [(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        table = handle.nodes if handle is not None else None
        if table is not None:
            self._usage_for(table)

    @staticmethod
    def _usage_for(table: NodeTable) -> _PVCUsage:
        """The table's PVC usage counts (one per table, owned by it, shared by profiles)."""
        return table.derived(_USAGE_KEY, _PVCUsage)

    # ─── PreFilter ───
    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        if not pod.spec.volumes:
            return None, SKIP_STATUS
        needs_check = any(needs_restrictions_check(v) for v in pod.spec.volumes)
        lister = self.handle.lister if self.handle is not None else None
        rwop: set[str] = set()
        for claim in _claims(pod):
            pvc = lister.get("PersistentVolumeClaim", pod.metadata.namespace, claim) if lister is not None else None
            if pvc is None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (not_found("persistentvolumeclaim", claim),))
            claim_view = PersistentVolumeClaimView(pvc)
            if "ReadWriteOncePod" in claim_view.access_modes:
                rwop.add(claim_view.name or claim)
        usage = self._usage_for(nodes)
        count = sum(1 for c in rwop if usage.counts.get(f"{pod.metadata.namespace}/{c}", 0) > 0)
        if not needs_check and count == 0:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(rwop, count, needs_check))
        return None, None

    def pre_filter_extensions(self) -> VolumeRestrictions:
        return self

    def add_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_add: PodInfo,
                node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, PreFilterState).update_with_pod(pod_info_to_add.pod, 1)
        return None

    def remove_pod(self, state: CycleState, pod_to_schedule: Pod, pod_info_to_remove: PodInfo,
                   node_info: NodeInfo) -> Status | None:
        read_state(state, PRE_FILTER_STATE_KEY, PreFilterState).update_with_pod(pod_info_to_remove.pod, -1)
        return None

    # ─── Filter ───
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        if not satisfy_volume_conflicts(pod, node_info.pods):
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,))
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        if s.conflicting_pvc_ref_count > 0:
            return Status(Code.UNSCHEDULABLE, (ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,))
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = read_state(state, PRE_FILTER_STATE_KEY, PreFilterState)
        failed = np.zeros(len(rows), np.int64)
        if s.needs_check:
            for i, row in enumerate(rows.tolist()):
                if not satisfy_volume_conflicts(pod, nodes.pods[row]):
                    failed[i] = 1
        if s.conflicting_pvc_ref_count > 0:
            failed[failed == 0] = 2
        if not failed.any():
            return None
        return FilterResult(failed, (ERR_REASON_DISK_CONFLICT, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT),
                            (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE))

    # ─── queueing hints ───
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(assigned_pod_resource(self.handle), ActionType.DELETE),
                                 is_schedulable_after_pod_deleted),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                                 is_schedulable_after_pvc_added),
        ]


def is_schedulable_after_pvc_added(pod: Pod, old: Any, new: Any) -> QueueingHint:
    claim = PersistentVolumeClaimView(new)
    if claim.namespace != pod.metadata.namespace:
        return QueueingHint.SKIP
    return QueueingHint.QUEUE if claim.name in _claims(pod) else QueueingHint.SKIP


def is_schedulable_after_pod_deleted(pod: Pod, old: Any, new: Any) -> QueueingHint:
    deleted = old
    if deleted is None:
        return QueueingHint.QUEUE
    if deleted.metadata.namespace != pod.metadata.namespace:
        return QueueingHint.SKIP
    for vol in pod.spec.volumes:
        if needs_restrictions_check(vol) and is_volume_conflict(vol, deleted):
            return QueueingHint.QUEUE
    claims = set(_claims(pod))
    if any(c in claims for c in _claims(deleted)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: Any, handle: Any) -> VolumeRestrictions:
    return with_deferred_resize(VolumeRestrictions(handle), handle)
