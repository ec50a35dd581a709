"""VolumeBinding (upstream ``pkg/scheduler/framework/plugins/volumebinding``, v1.34).

What is modelled, exactly as upstream:

* PreFilter ``podHasPVCs``: a pod without PVC (or generic ephemeral) volumes writes an empty
  state and returns **Skip** (no lookups, no node loop). For each claim: missing →
  UnschedulableAndUnresolvable ``persistentvolumeclaim "<name>" not found`` (ephemeral:
  ``waiting for ephemeral volume controller to create the persistentvolumeclaim "<name>"``);
  phase Lost → ``persistentvolumeclaim "<n>" bound to non-existent persistentvolume "<pv>"``;
  being deleted → ``persistentvolumeclaim "<n>" is being deleted``.
* Claim classification (``GetPodVolumeClaims``): fully bound = ``spec.volumeName`` set and the
  ``pv.kubernetes.io/bind-completed`` annotation present; unbound with an Immediate (or absent /
  unknown) StorageClass, or pre-bound → UnschedulableAndUnresolvable
  ``"pod has unbound immediate PersistentVolumeClaims"``; a StorageClass without
  ``volumeBindingMode`` → Error ``VolumeBindingMode not set for StorageClass "<c>"``.
* Bound claims: no PreFilterResult (upstream removed the reduction by the local PVs'
  ``kubernetes.io/hostname`` values in #127584, issue #125336); Filter checks each bound PV's
  required node affinity against the node labels → UnschedulableAndUnresolvable
  ``"node(s) didn't match PersistentVolume's node affinity"``, or
  ``"node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"`` when the PV
  is missing. Reserve/PreBind have nothing to do for bound claims (allBound).
* PreScore returns Skip (StorageCapacityScoring is off by default in v1.34), so Score never runs.

Not modelled (the plugin returns an **Error** status naming the limitation rather than a wrong
answer): unbound claims with ``WaitForFirstConsumer`` binding (static PV matching, dynamic
provisioning, CSIStorageCapacity), and bound PVs of in-tree volume types subject to CSI
migration translation (gcePersistentDisk, awsElasticBlockStore, azureDisk, azureFile, cinder,
vsphereVolume, portworxVolume). kubesched's ``Volume`` view has only ``persistentVolumeClaim``;
``ephemeral`` is read with ``getattr`` so it works once the API view carries it.

Objects other than pods/nodes come from ``handle.lister.get(kind, namespace, name)`` and may be
plain mappings (camelCase JSON) or objects with snake_case attributes; :func:`field` reads both.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kubesched.api.nodeselector import NodeSelectorMatcher
from kubesched.api.objects import NodeSelector, decode
from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import Code, PreFilterResult, Status

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_info import NodeInfo
    from kubesched.framework.node_table import NodeTable

__all__ = [
    "ANN_BIND_COMPLETED", "BETA_STORAGE_CLASS_ANNOTATION", "ERR_REASON_BIND_CONFLICT", "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE", "ERR_REASON_PV_NOT_EXIST", "ERR_UNBOUND_IMMEDIATE", "NAME", "VolumeBinding",
    "check_pv_node_affinity", "field", "new", "not_found", "pod_pvc_names",
    "pvc_storage_class",
]

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
LABEL_HOSTNAME = "kubernetes.io/hostname"
_MIGRATABLE_IN_TREE = ("gcePersistentDisk", "awsElasticBlockStore", "azureDisk", "azureFile", "cinder",
                       "vsphereVolume", "portworxVolume")

# ───────────────────────────── shared helpers (used by the other volume plugins) ─────────────────────────────

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def field(obj: Any, *path: str) -> Any:
    """Read a field by its JSON (camelCase) path from a mapping or a snake_case object; None if absent."""
    for name in path:
        if obj is None:
            return None
        if isinstance(obj, dict):
            obj = obj.get(name)
        else:
            obj = getattr(obj, _CAMEL.sub("_", name).lower(), None)
    return obj


def not_found(resource: str, name: str) -> str:
    """The apiserver/lister NotFound message, e.g. ``persistentvolumeclaim "x" not found``."""
    return f'{resource} "{name}" not found'


def pod_pvc_names(pod: Pod) -> list[tuple[str, bool, Any]]:
    """``(claim name, is_ephemeral, volume)`` for every PVC-backed volume of the pod, in order
    (generic ephemeral volumes use the claim ``<pod name>-<volume name>``)."""
    out: list[tuple[str, bool, Any]] = []
    for vol in pod.spec.volumes:
        if vol.persistent_volume_claim is not None:
            out.append((vol.persistent_volume_claim.claim_name, False, vol))
        elif getattr(vol, "ephemeral", None) is not None:
            out.append((f"{pod.metadata.name}-{vol.name}", True, vol))
    return out


def pvc_storage_class(pvc: Any) -> str:
    """Upstream ``GetPersistentVolumeClaimClass``: the beta annotation wins over ``spec.storageClassName``."""
    ann = field(pvc, "metadata", "annotations") or {}
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return ann[BETA_STORAGE_CLASS_ANNOTATION]
    return field(pvc, "spec", "storageClassName") or ""


def ephemeral_is_for_pod(pod: Pod, pvc: Any) -> str | None:
    """Upstream ``ephemeral.VolumeIsForPod``: the error message, or None when the pod owns the PVC."""
    for ref in field(pvc, "metadata", "ownerReferences") or []:
        if field(ref, "controller") and field(ref, "uid") == pod.metadata.uid:
            return None
    return (f"PVC {pod.metadata.namespace}/{field(pvc, 'metadata', 'name')} was not created for pod "
            f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)")


def _node_selector(obj: Any) -> NodeSelector | None:
    if obj is None:
        return None
    if isinstance(obj, NodeSelector):
        return obj
    if isinstance(obj, dict):
        return decode(NodeSelector, obj)
    import msgspec

    return decode(NodeSelector, msgspec.to_builtins(obj))


def check_pv_node_affinity(pv: Any, node_labels: dict[str, str]) -> bool:
    """Upstream ``volume.CheckNodeAffinity``: True when the PV has no required node affinity or
    its terms match the labels (an invalid selector never matches)."""
    required = _node_selector(field(pv, "spec", "nodeAffinity", "required"))
    if required is None:
        return True
    m = NodeSelectorMatcher(required)
    if m.errors:
        return False
    return m.match(node_labels, "")


def _migratable_in_tree(pv: Any) -> str | None:
    for src in _MIGRATABLE_IN_TREE:
        if field(pv, "spec", src) is not None:
            return src
    return None


# ───────────────────────────── the plugin ─────────────────────────────


class StateData:
    """Upstream ``stateData``: the pod's bound claims and whether all volumes are bound."""

    __slots__ = ("bound_claims", "all_bound", "has_pvcs")

    def __init__(self, bound_claims: list[Any] | None = None, has_pvcs: bool = False) -> None:
        self.bound_claims = bound_claims or []
        self.all_bound = False
        self.has_pvcs = has_pvcs

    def clone(self) -> StateData:
        return self


class VolumeBinding:
    """PreFilter, Filter, PreScore, Score, Reserve, PreBind. See the module docstring."""

    name = NAME

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    # ─── PreFilter ───
    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        claims = pod_pvc_names(pod) if pod.spec.volumes else []
        if not claims:
            state.write(STATE_KEY, StateData())
            return None, Status(Code.SKIP)
        ns = pod.metadata.namespace
        pvcs: list[Any] = []
        for claim_name, eph, _ in claims:  # podHasPVCs
            pvc = self.handle.lister.get("PersistentVolumeClaim", ns, claim_name)
            if pvc is None:
                msg = (f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim_name}"'
                       if eph else not_found("persistentvolumeclaim", claim_name))
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))
            name = field(pvc, "metadata", "name") or claim_name
            if field(pvc, "status", "phase") == "Lost":
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                    f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{field(pvc, "spec", "volumeName") or ""}"',))
            if field(pvc, "metadata", "deletionTimestamp") is not None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                    f'persistentvolumeclaim "{name}" is being deleted',))
            if eph:
                err = ephemeral_is_for_pod(pod, pvc)
                if err is not None:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (err,))
            pvcs.append(pvc)
        bound: list[Any] = []
        immediate = 0
        delayed = 0
        for pvc in pvcs:  # GetPodVolumeClaims
            volume_name = field(pvc, "spec", "volumeName") or ""
            ann = field(pvc, "metadata", "annotations") or {}
            if volume_name and ANN_BIND_COMPLETED in ann:
                bound.append(pvc)
                continue
            delay = False
            cls_name = pvc_storage_class(pvc)
            if cls_name:
                sc = self.handle.lister.get("StorageClass", "", cls_name)
                if sc is not None:
                    mode = field(sc, "volumeBindingMode")
                    if mode is None:
                        return None, Status(Code.ERROR, (f'VolumeBindingMode not set for StorageClass "{cls_name}"',))
                    delay = mode == "WaitForFirstConsumer"
            if delay and not volume_name:
                delayed += 1
            else:
                immediate += 1
        if immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_UNBOUND_IMMEDIATE,))
        if delayed:
            return None, Status(Code.ERROR, (
                "kubesched VolumeBinding: unbound PersistentVolumeClaims with WaitForFirstConsumer binding "
                "(volume matching / provisioning) are not supported",))
        # No PreFilterResult from bound local PVs: upstream dropped that node reduction (#127584,
        # issue #125336) because it took kubernetes.io/hostname values for node names.
        state.write(STATE_KEY, StateData(bound, True))
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # ─── Filter ───
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        s = read_state(state, STATE_KEY, StateData)
        bound_ok, pvs_found = True, True
        labels = node_info.node.metadata.labels
        for pvc in s.bound_claims:  # checkBoundClaims
            pv = self.handle.lister.get("PersistentVolume", "", field(pvc, "spec", "volumeName"))
            if pv is None:
                pvs_found = False
                break
            src = _migratable_in_tree(pv)
            if src is not None:
                return Status(Code.ERROR, (
                    f"kubesched VolumeBinding: in-tree {src} PersistentVolumes (CSI migration) are not supported",))
            if not check_pv_node_affinity(pv, labels):
                bound_ok = False
                break
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons))
        return None

    # ─── PreScore / Score ───
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: Any) -> Status | None:
        return Status(Code.SKIP)  # no scorer: StorageCapacityScoring is disabled by default

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, None]:
        return 0, None

    # ─── Reserve / PreBind ───
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = read_state(state, STATE_KEY, StateData)
        except Exception as e:  # noqa: BLE001
            return Status(Code.ERROR, (str(e),), e)
        s.all_bound = True  # only fully bound claims get this far: nothing to assume
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = read_state(state, STATE_KEY, StateData)
        except Exception as e:  # noqa: BLE001
            return Status(Code.ERROR, (str(e),), e)
        if s.all_bound:
            return None
        return Status(Code.ERROR, ("kubesched VolumeBinding: binding volumes is not supported",))

    # ─── queueing hints ───
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM,
                                              ActionType.ADD | ActionType.UPDATE),
                                 is_schedulable_after_pvc_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_TAINT)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE)),
        ]


def is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """Queue when the added/updated PVC is one the pod uses (same namespace and name)."""
    if field(new, "metadata", "namespace") != pod.metadata.namespace:
        return QueueingHint.SKIP
    name = field(new, "metadata", "name")
    for claim, _, _ in pod_pvc_names(pod):
        if claim == name:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: Any, handle: Any) -> VolumeBinding:
    return VolumeBinding(handle)
