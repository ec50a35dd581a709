"""VolumeZone (upstream ``pkg/scheduler/framework/plugins/volumezone``, v1.34).

PreFilter (``getPVbyPod``): for each PVC (or generic ephemeral) volume: an empty claim name →
UU ``"PersistentVolumeClaim had no name"``; a missing PVC / PV / StorageClass → UU with the
NotFound message (``persistentvolumeclaim "x" not found``, ``persistentvolume "x" not found``,
``storageclass.storage.k8s.io "x" not found``); an unbound PVC: no class → UU
``"PersistentVolumeClaim had no pv name and storageClass name"``, a class without
``volumeBindingMode`` → UU ``VolumeBindingMode not set for StorageClass "x"``,
``WaitForFirstConsumer`` → skipped, otherwise UU ``"PersistentVolume had no name"``. Each bound
PV contributes its zone/region labels (beta and GA keys; values split on ``"__"``, trimmed,
a value with an empty element is ignored). No topology → **Skip** (a pod without volumes
returns Skip before any lookup).

Filter: a node carrying none of the four zone/region labels passes; otherwise every PV topology
must match the node's value for that key (a beta key falls back to the node's GA label), else
UnschedulableAndUnresolvable ``"node(s) had no available volume zone"``. The batch shape works
on the NodeTable's dictionary-encoded label columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.storage import PersistentVolumeClaimView, PersistentVolumeView, StorageClassView
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import SKIP_STATUS, Code, FilterResult, Status
from kubesched.framework.signers import VOLUMES_SIGNER_NAME, volumes_signer
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize
from kubesched.plugins.volumebinding import (
    is_schedulable_after_pvc_change,
    not_found,
    pod_pvc_names,
    pvc_storage_class,
)

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = ["ERR_REASON_CONFLICT", "NAME", "TOPOLOGY_LABELS", "VolumeZone", "label_zones_to_set", "new"]

NAME = "VolumeZone"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)
_TO_GA = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}


def label_zones_to_set(value: str) -> set[str] | None:
    """Upstream ``LabelZonesToSet``: split on ``"__"``, trim; None when an element is empty."""
    out = set()
    for z in value.split("__"):
        z = z.strip()
        if not z:
            return None
        out.add(z)
    return out


class PreFilterState:
    __slots__ = ("topologies",)

    def __init__(self, topologies: list[tuple[str, set[str]]]) -> None:
        self.topologies = topologies

    def clone(self) -> PreFilterState:
        return self


def _uu(msg: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))


class VolumeZone:
    """PreFilter + Filter (both shapes). See the module docstring."""

    name = NAME
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (volume_zone.go L120-123, L202-205)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 volume_zone.go ``SignPod``): the non-ConfigMap/Secret volume sources."""
        return [(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def get_pv_topologies(self, pod: Pod) -> tuple[list[tuple[str, set[str]]], Status | None]:
        out: list[tuple[str, set[str]]] = []
        for claim, _, _ in pod_pvc_names(pod):
            if not claim:
                return [], _uu("PersistentVolumeClaim had no name")
            pvc = self.handle.lister.get("PersistentVolumeClaim", pod.metadata.namespace, claim)
            if pvc is None:
                return [], _uu(not_found("persistentvolumeclaim", claim))
            pv_name = PersistentVolumeClaimView(pvc).volume_name
            if not pv_name:
                sc_name = pvc_storage_class(pvc)
                if not sc_name:
                    return [], _uu("PersistentVolumeClaim had no pv name and storageClass name")
                sc = self.handle.lister.get("StorageClass", "", sc_name)
                if sc is None:
                    return [], _uu(not_found("storageclass.storage.k8s.io", sc_name))
                mode = StorageClassView(sc).volume_binding_mode
                if mode is None:
                    return [], _uu(f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if mode == "WaitForFirstConsumer":
                    continue
                return [], _uu("PersistentVolume had no name")
            pv = self.handle.lister.get("PersistentVolume", "", pv_name)
            if pv is None:
                return [], _uu(not_found("persistentvolume", pv_name))
            labels = PersistentVolumeView(pv).labels
            for key in TOPOLOGY_LABELS:
                if key in labels:
                    zones = label_zones_to_set(labels[key])
                    if zones is not None:
                        out.append((key, zones))
        return out, None

    # ─── PreFilter ───
    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        if not pod.spec.volumes:
            return None, SKIP_STATUS
        topologies, st = self.get_pv_topologies(pod)
        if st is not None:
            return None, st
        if not topologies:
            return None, SKIP_STATUS
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(topologies))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    def _topologies(self, state: CycleState, pod: Pod) -> tuple[list[tuple[str, set[str]]], Status | None]:
        s = state.get(PRE_FILTER_STATE_KEY)
        if isinstance(s, PreFilterState):
            return s.topologies, None
        return self.get_pv_topologies(pod)  # upstream falls back to computing it here

    # ─── Filter ───
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        if not pod.spec.volumes:
            return None
        topologies, st = self._topologies(state, pod)
        if st is not None:
            return st
        labels = node_info.node.metadata.labels
        if not any(k in labels for k in TOPOLOGY_LABELS):
            return None
        for key, values in topologies:
            v = labels.get(key)
            if v is None:
                v = labels.get(_TO_GA.get(key, key))
            if v is None or v not in values:
                return _uu(ERR_REASON_CONFLICT)
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        if not pod.spec.volumes:
            return None
        topologies, st = self._topologies(state, pod)
        if st is not None:
            raise RuntimeError(st.message())
        has = np.zeros(len(rows), bool)
        for k in TOPOLOGY_LABELS:
            col = nodes.label_column(k)
            if col is not None:
                has |= col[rows] >= 0
        if not has.any():
            return None
        bad = np.zeros(len(rows), bool)
        for key, values in topologies:
            ok = np.zeros(len(rows), bool)
            col = nodes.label_column(key)
            present = col[rows] >= 0 if col is not None else np.zeros(len(rows), bool)
            if col is not None:
                ids = [nodes.label_value_id(key, v) for v in values]
                ok |= present & np.isin(col[rows], ids)
            ga = _TO_GA.get(key, key)
            gcol = nodes.label_column(ga)
            if gcol is not None:
                ids = [nodes.label_value_id(ga, v) for v in values]
                ok |= ~present & np.isin(gcol[rows], ids)
            bad |= ~ok
        fail = has & bad
        if not fail.any():
            return None
        return FilterResult.single(fail, ERR_REASON_CONFLICT, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD)),
            # Add|UpdateNodeLabel as upstream with QueueingHints; before 1.37 the queue adds
            # Node/UpdateNodeTaint itself (buildQueueingHintMap), 1.37 dropped that
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM,
                                              ActionType.ADD | ActionType.UPDATE),
                                 is_schedulable_after_pvc_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)),
        ]


def new(args: Any, handle: Any) -> VolumeZone:
    return with_deferred_resize(VolumeZone(handle), handle)
