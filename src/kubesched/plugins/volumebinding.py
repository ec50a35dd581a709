"""VolumeBinding (upstream ``pkg/scheduler/framework/plugins/volumebinding``, v1.34:
``volume_binding.go``, ``binder.go``, ``assume_cache.go``, ``scorer.go``; matching from
``staging/src/k8s.io/component-helpers/storage/volume/pv_helpers.go``).

* PreFilter ``podHasPVCs``: a pod without PVC (or generic ephemeral) volumes writes an empty
  state and returns **Skip**. For each claim: missing → UnschedulableAndUnresolvable
  ``persistentvolumeclaim "<name>" not found`` (ephemeral: ``waiting for ephemeral volume
  controller to create the persistentvolumeclaim "<name>"``); phase Lost → ``persistentvolumeclaim
  "<n>" bound to non-existent persistentvolume "<pv>"``; being deleted → ``persistentvolumeclaim
  "<n>" is being deleted``; an ephemeral claim not owned by the pod → its ``VolumeIsForPod`` error.
* ``GetPodVolumeClaims``: fully bound = ``spec.volumeName`` and the ``pv.kubernetes.io/bind-completed``
  annotation; unbound with a ``WaitForFirstConsumer`` class and no ``volumeName`` → to bind (the
  class's PVs are listed once, through the PV assume cache); any other unbound claim (Immediate,
  no/unknown class, pre-bound) → UnschedulableAndUnresolvable ``pod has unbound immediate
  PersistentVolumeClaims``; a class without ``volumeBindingMode`` → Error.
* Filter (``FindPodVolumes``), reasons UnschedulableAndUnresolvable, in upstream's order:
  bound claims → the PV (translated to CSI when its in-tree plugin is migrated on the node's
  CSINode) must match the node (``node(s) didn't match PersistentVolume's node affinity`` — the
  v1.34 text of ``ErrReasonNodeConflict``), a missing PV → ``node(s) unavailable due to one or
  more pvc(s) bound to non-existent pv(s)``; claims to bind → a claim already annotated
  ``volume.kubernetes.io/selected-node`` for another node fails fast, the others are matched by
  increasing request with ``FindMatchingVolume`` (smallest available PV of the class that fits:
  capacity, access modes, volume mode, volumeAttributesClass, label selector, node affinity, not
  being deleted; a PV pre-bound to the claim wins), the rest are provisioned when the class has a
  provisioner whose ``allowedTopologies`` match the node and, for a CSIDriver with
  ``storageCapacity: true``, a ``CSIStorageCapacity`` of the class reachable from the node has
  room (``maximumVolumeSize`` preferred over ``capacity``) → else ``node(s) didn't find available
  persistent volumes to bind`` / ``node(s) did not have enough free storage``.
* PreScore/Score (``volume_binding.go`` L452-520 and ``scorer.go`` of v1.37.2, unchanged since
  v1.34): the scorer exists only with the StorageCapacityScoring gate (alpha, off, in v1.34-1.36;
  beta, on, since 1.37); then PreScore never Skips (even for pods without claims, which score
  0) and ``VolumeBindingArgs.shape`` (default {0→10, 100→0}; utilization 0-100 → score 0-10,
  scaled ×10) scores, per storage class, the static bindings' requested / PV capacity when the
  node has any, else the provisioned claims' requests against the capacity of the node's
  CSIStorageCapacity (not summed over claims of one class); classes averaged, rounded.
* Reserve (``AssumePodVolumes``): the chosen PVs are assumed pre-bound (``claimRef`` + the
  ``pv.kubernetes.io/bound-by-controller`` annotation) and the claims to provision assumed
  annotated with the selected node, in the plugin's assume caches (later pods see them); Unreserve
  restores them.
* PreBind (``BindPodVolumes``): PUTs the PVs, then the PVCs, through ``handle.client``
  (``update_persistent_volume`` / ``update_persistent_volume_claim``), then polls the informer
  state (``checkBindings``) every second, through the injected clock, until every claim is fully
  bound or ``bindTimeoutSeconds`` passed (``binding volumes: context deadline exceeded``).
  Difference: upstream's first poll comes after one second; here the state is checked once at
  once (the simulator's store binds synchronously, so no simulated time is spent).

Objects other than pods/nodes come from ``handle.lister.get(kind, namespace, name)`` as plain
mappings (camelCase JSON), read through the typed views of :mod:`kubesched.api.storage`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from kubesched.api.labels import Selector, selector_from_label_selector
from kubesched.api.nodeselector import NodeSelectorMatcher
from kubesched.api.objects import LabelSelector, NodeSelector, decode
from kubesched.api.quantity import parse_quantity
from kubesched.api.storage import (
    CSIDriverView,
    CSIStorageCapacityView,
    ObjectView,
    PersistentVolumeClaimView,
    PersistentVolumeView,
    StorageClassView,
)
from kubesched.api.volumes import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_SELECTED_NODE,
    BETA_STORAGE_CLASS_ANNOTATION,
    NOT_SUPPORTED_PROVISIONER,
    claim_ref_matches,
)
from kubesched.framework.cycle_state import read_state
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import (
    SKIP_STATUS,
    Code,
    FilterResult,
    PreBindPreFlightResult,
    PreFilterResult,
    Status,
)
from kubesched.framework.signers import VOLUMES_SIGNER_NAME, volumes_signer
from kubesched.plugins.csitranslation import (
    in_tree_plugin_of_pv,
    is_migration_on_for_plugin,
    is_plugin_migrated_on_node,
    translate_pv,
)
from kubesched.plugins.helper.resize import is_pod_resize_deferred, with_deferred_resize

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.objects import Pod
    from kubesched.framework.cycle_state import CycleState
    from kubesched.framework.node_table import NodeInfo, NodeTable

__all__ = [
    "ANN_BIND_COMPLETED", "ANN_SELECTED_NODE", "BETA_STORAGE_CLASS_ANNOTATION", "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT", "AssumeCache", "PodVolumes", "StateData", "bind_volume_to_claim",
    "find_matching_volume", "match_topology_selector_terms",
    "ERR_REASON_NOT_ENOUGH_SPACE", "ERR_REASON_PV_NOT_EXIST", "ERR_UNBOUND_IMMEDIATE", "NAME", "VolumeBinding",
    "check_pv_node_affinity", "new", "not_found", "pod_pvc_names",
    "pvc_storage_class",
]

NAME = "VolumeBinding"
STATE_KEY = NAME
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
LABEL_HOSTNAME = "kubernetes.io/hostname"

# ───────────────────────────── shared helpers (used by the other volume plugins) ─────────────────────────────

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
    return PersistentVolumeClaimView(pvc).storage_class


def ephemeral_is_for_pod(pod: Pod, pvc: Any) -> str | None:
    """Upstream ``ephemeral.VolumeIsForPod``: the error message, or None when the pod owns the PVC."""
    v = PersistentVolumeClaimView(pvc)
    for ref in v.owner_references:
        if ref.get("controller") and ref.get("uid") == pod.metadata.uid:
            return None
    return (f"PVC {pod.metadata.namespace}/{v.name} was not created for pod "
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
    required = _node_selector(PersistentVolumeView(pv).node_affinity_required)
    if required is None:
        return True
    m = NodeSelectorMatcher(required)
    if m.errors:
        return False
    return m.match(node_labels, "")


# ───────────────────────────── assume cache ─────────────────────────────


def _rv(obj: Any) -> int:
    return ObjectView(obj).resource_version


class AssumeCache:
    """Upstream ``AssumeCache`` over one kind of the lister: :meth:`assume` keeps an in-memory
    version of an object until the informer's version changes (a newer object replaces the
    assumed one, as upstream's update handler does) or :meth:`restore` drops it.

    Keys are ``name`` (cluster-scoped) or ``namespace/name``.
    """

    def __init__(self, lister: Any, kind: str) -> None:
        self.lister = lister
        self.kind = kind
        self._assumed: dict[str, tuple[Any, Any]] = {}

    @staticmethod
    def key_of(obj: Any) -> str:
        return ObjectView(obj).key

    def _api(self, key: str) -> Any:
        ns, _, name = key.rpartition("/")
        return self.lister.get(self.kind, ns, name)

    def get_api(self, key: str) -> Any:
        """The informer's object (upstream ``GetAPIObj``), None when absent."""
        return self._api(key)

    def get(self, key: str) -> Any:
        """The assumed object if still current, else the informer's (None when absent)."""
        api = self._api(key)
        hit = self._assumed.get(key)
        if hit is not None:
            if api is not None and hit[0] is api:
                return hit[1]
            del self._assumed[key]  # the informer moved on (or the object is gone)
        return api

    def overlay(self, obj: Any) -> Any:
        """``obj`` (an informer object) or its assumed version."""
        if not self._assumed:
            return obj
        hit = self._assumed.get(self.key_of(obj))
        if hit is None:
            return obj
        if hit[0] is obj:
            return hit[1]
        return obj

    def assume(self, obj: Any) -> None:
        """Upstream ``Assume``: errors when the object is unknown or ``obj`` is older."""
        key = self.key_of(obj)
        api = self._api(key)
        if api is None:
            raise ValueError(f'{self.kind} "{key}" not found')
        cur = self.get(key)
        if _rv(obj) < _rv(cur):
            raise ValueError(f'{self.kind} "{key}" is out of sync (stored: {_rv(cur)}, assume: {_rv(obj)})')
        self._assumed[key] = (api, obj)

    def restore(self, key: str) -> None:
        self._assumed.pop(key, None)

    def __len__(self) -> int:
        return len(self._assumed)


# ───────────────────────────── matching helpers (pv_helpers.go) ─────────────────────────────


def _storage_request(pvc: Any) -> int:
    q = PersistentVolumeClaimView(pvc).requests.get("storage")
    return int(parse_quantity(q)) if q is not None else 0


def _storage_capacity(pv: Any | PersistentVolumeView) -> int:
    vol = pv if isinstance(pv, PersistentVolumeView) else PersistentVolumeView(pv)
    q = vol.capacity.get("storage")
    return int(parse_quantity(q)) if q is not None else 0


def pv_storage_class(pv: Any) -> str:
    """Upstream ``GetPersistentVolumeClass``: the beta annotation wins over ``spec.storageClassName``."""
    return PersistentVolumeView(pv).storage_class


def _as_builtin(obj: Any) -> Any:
    if obj is None or isinstance(obj, dict):
        return obj
    import msgspec

    return msgspec.to_builtins(obj)


def _claim_selector(pvc: Any) -> Selector | None:
    raw = _as_builtin(PersistentVolumeClaimView(pvc).selector)
    if raw is None:
        return None
    return selector_from_label_selector(decode(LabelSelector, raw))


def find_matching_volume(pvc: Any, volumes: Sequence[Any], node_labels: dict[str, str] | None,
                         excluded: set[str] | dict[str, Any], delay_binding: bool = True) -> Any | None:
    """Upstream ``FindMatchingVolume`` (scheduler path when ``node_labels`` is given): a PV
    pre-bound to the claim (None if its node affinity does not match), else the smallest
    available PV that fits. Raises :class:`ValueError` for an invalid claim selector
    (``error creating internal label selector for claim: <ns/name>: <err>``)."""
    claim = PersistentVolumeClaimView(pvc)
    requested = _storage_request(pvc)
    requested_class = claim.storage_class
    requested_vac = claim.volume_attributes_class_name
    requested_mode = claim.volume_mode
    try:
        selector = _claim_selector(pvc)
    except Exception as e:  # noqa: BLE001 - SelectorError / InputError
        raise ValueError(f"error creating internal label selector for claim: "
                         f"{claim.namespace}/{claim.name}: {e}") from None
    smallest = None
    smallest_qty = 0
    for pv in volumes:
        vol = PersistentVolumeView(pv)
        if vol.name in excluded:
            continue
        bound_to_claim = claim_ref_matches(pv, pvc) if isinstance(pv, dict) and isinstance(pvc, dict) else False
        if vol.claim_ref is not None and not bound_to_claim:
            continue
        qty = _storage_capacity(vol)
        if qty < requested:
            continue
        if vol.volume_mode != requested_mode:
            continue
        if requested_vac != vol.volume_attributes_class_name:
            continue  # VolumeAttributesClass is GA (on) in v1.34
        if vol.deletion_timestamp is not None:
            continue
        affinity_ok = True
        if node_labels is not None:
            affinity_ok = check_pv_node_affinity(pv, node_labels)
        if bound_to_claim:
            return pv if affinity_ok else None
        if node_labels is None and delay_binding:
            continue
        if vol.phase != "Available":
            continue
        if selector is not None and not selector.matches(vol.labels):
            continue
        if vol.storage_class != requested_class:
            continue
        if not affinity_ok:
            continue
        if node_labels is not None:
            modes = set(vol.access_modes)
            if not all(m in modes for m in claim.access_modes):
                continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest


def bind_volume_to_claim(pv: dict[str, Any], pvc: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Upstream ``GetBindVolumeToClaim``: a copy of the PV with ``claimRef`` to the claim and the
    ``pv.kubernetes.io/bound-by-controller`` annotation when the binding is the controller's;
    ``dirty`` when anything changed."""
    out = copy.deepcopy(pv)
    dirty = False
    by_controller = not claim_ref_matches(pv, pvc)
    ref = PersistentVolumeView(pv).claim_ref or {}
    meta = PersistentVolumeClaimView(pvc).metadata
    if (not ref or ref.get("name") != meta.get("name") or (ref.get("namespace") or "") != (meta.get("namespace") or "")
            or (ref.get("uid") or "") != (meta.get("uid") or "")):
        out.setdefault("spec", {})["claimRef"] = {
            "kind": "PersistentVolumeClaim", "namespace": meta.get("namespace") or "", "name": meta.get("name") or "",
            "uid": meta.get("uid") or "", "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion") or ""}
        dirty = True
    ann = (out.setdefault("metadata", {}).get("annotations")) or {}
    if by_controller and ANN_BOUND_BY_CONTROLLER not in ann:
        out["metadata"]["annotations"] = {**ann, ANN_BOUND_BY_CONTROLLER: "yes"}
        dirty = True
    return out, dirty


def match_topology_selector_terms(terms: list[Any] | None, labels: dict[str, str]) -> bool:
    """Upstream ``MatchTopologySelectorTerms`` (StorageClass ``allowedTopologies``): no terms match
    everything; an empty term matches nothing; within a term every key must have one of its values."""
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or []
        if not exprs:
            continue
        if all(labels.get(e.get("key") or "") in set(e.get("values") or []) and
               (e.get("key") or "") in labels for e in exprs):
            return True
    return False


def _translate_if_migrated(pv: Any, csi_node: Any) -> Any:
    """``tryTranslatePVToCSI``."""
    if not isinstance(pv, dict):
        return pv
    plugin = in_tree_plugin_of_pv(pv)
    if plugin is None or not is_migration_on_for_plugin(plugin) or not is_plugin_migrated_on_node(plugin, csi_node):
        return pv
    return translate_pv(pv)


def _node_independent(pv: Any) -> bool:
    """The PV matches every node whatever its CSINode: no node affinity, and no zone topology a
    CSI translation could add."""
    vol = PersistentVolumeView(pv)
    if vol.node_affinity_required is not None:
        return False
    if in_tree_plugin_of_pv(pv) is None:
        return True
    labels = vol.labels
    return not any(k in labels for k in ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"))


# ───────────────────────────── the plugin ─────────────────────────────


class ProvisionedClaim:
    """Upstream ``DynamicProvision``: a claim to provision and the CSIStorageCapacity that fits it
    on the node (None when capacity is not tracked)."""

    __slots__ = ("node_capacity", "pvc")

    def __init__(self, pvc: Any, node_capacity: Any = None) -> None:
        self.pvc = pvc
        self.node_capacity = node_capacity


class PodVolumes:
    """Upstream ``PodVolumes``: ``static_bindings`` ``[(pv, pvc)]`` and ``dynamic_provisions``."""

    __slots__ = ("dynamic_provisions", "static_bindings")

    def __init__(self, static_bindings: list[tuple[Any, Any]] | None = None,
                 dynamic_provisions: list[ProvisionedClaim] | None = None) -> None:
        self.static_bindings = static_bindings or []
        self.dynamic_provisions = dynamic_provisions or []


class StateData:
    """Upstream ``stateData``: the pod's claims by kind, the PVs of their classes, the volumes
    found per node, whether any static binding was found, and whether all are bound (Reserve)."""

    __slots__ = ("all_bound", "bound_claims", "claims_to_bind", "has_pvcs", "has_static_bindings",
                 "node_independent", "pod_volumes_by_node", "unbound_pvs")

    def __init__(self, bound_claims: list[Any] | None = None, has_pvcs: bool = False,
                 claims_to_bind: list[Any] | None = None, unbound_pvs: dict[str, list[Any]] | None = None) -> None:
        self.bound_claims = bound_claims or []
        self.claims_to_bind = claims_to_bind or []
        self.unbound_pvs = unbound_pvs or {}
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.has_static_bindings = False
        self.node_independent = False
        self.all_bound = False
        self.has_pvcs = has_pvcs

    def clone(self) -> StateData:
        return self


class VolumeBindingError(Exception):
    """A Filter error (upstream ``FindPodVolumes`` error) raised from :meth:`VolumeBinding.filter_nodes`."""


class BindingError(Exception):
    """``BindPodVolumes`` failed (the message is upstream's)."""


class VolumeBinding:
    """PreFilter, Filter, PreScore, Score, Reserve, Unreserve, PreBind. See the module docstring."""

    name = NAME
    deferred_resize = False
    """InPlacePodVerticalScalingSchedulerPreemption (alpha, 1.37; set by the factory): a pod whose
    resize the kubelet deferred is skipped (volume_binding.go L351-354, L418-421)."""

    def sign_pod(self, pod: Pod) -> tuple[list[tuple[str, Any]], None]:
        """Batching signature (v1.37.2 volume_binding.go ``SignPod``): the non-ConfigMap/Secret volume sources."""
        return [(VOLUMES_SIGNER_NAME, volumes_signer(pod))], None

    def __init__(self, handle: Any, args: Any = None) -> None:
        self.handle = handle
        timeout = getattr(args, "bind_timeout_seconds", None)
        self.bind_timeout_s = float(600 if timeout is None else timeout)
        self.pv_cache = AssumeCache(handle.lister, "PersistentVolume")
        self.pvc_cache = AssumeCache(handle.lister, "PersistentVolumeClaim")
        self.scorer = None
        if handle.features.enabled("StorageCapacityScoring"):
            shape = getattr(args, "shape", None) or _DEFAULT_SHAPE
            self.scorer = _build_scorer([(int(_pt(p, "utilization")), int(_pt(p, "score")) * 10) for p in shape])

    # ─── PreFilter ───
    def pre_filter(self, state: CycleState, pod: Pod, nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None, SKIP_STATUS
        claims = pod_pvc_names(pod) if pod.spec.volumes else []
        if not claims:
            state.write(STATE_KEY, StateData())
            return None, SKIP_STATUS
        ns = pod.metadata.namespace
        pvcs: list[Any] = []
        for claim_name, eph, _ in claims:  # podHasPVCs
            pvc = self.pvc_cache.get(f"{ns}/{claim_name}" if ns else claim_name)
            if pvc is None:
                msg = (f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim_name}"'
                       if eph else not_found("persistentvolumeclaim", claim_name))
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,))
            claim = PersistentVolumeClaimView(pvc)
            name = claim.name or claim_name
            if claim.phase == "Lost":
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                    f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                    f'"{claim.volume_name}"',))
            if claim.deletion_timestamp is not None:
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                    f'persistentvolumeclaim "{name}" is being deleted',))
            if eph:
                err = ephemeral_is_for_pod(pod, pvc)
                if err is not None:
                    return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (err,))
            pvcs.append(pvc)
        bound: list[Any] = []
        to_bind: list[Any] = []
        immediate = 0
        for pvc in pvcs:  # GetPodVolumeClaims
            claim = PersistentVolumeClaimView(pvc)
            volume_name = claim.volume_name
            if volume_name and ANN_BIND_COMPLETED in claim.annotations:
                bound.append(pvc)
                continue
            delay = False
            cls_name = pvc_storage_class(pvc)
            if cls_name:
                sc = self.handle.lister.get("StorageClass", "", cls_name)
                if sc is not None:
                    mode = StorageClassView(sc).volume_binding_mode
                    if mode is None:
                        return None, Status(Code.ERROR, (f'VolumeBindingMode not set for StorageClass "{cls_name}"',))
                    delay = mode == "WaitForFirstConsumer"
            if delay and not volume_name:
                to_bind.append(pvc)
            else:
                immediate += 1
        if immediate:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_UNBOUND_IMMEDIATE,))
        unbound_pvs: dict[str, list[Any]] = {}
        if to_bind:  # pvCache.ListPVs(storageClassName), with the assumed versions
            classes = {pvc_storage_class(c) for c in to_bind}
            for pv in self.handle.lister.list("PersistentVolume"):
                pv = self.pv_cache.overlay(pv)
                c = pv_storage_class(pv)
                if c in classes:
                    unbound_pvs.setdefault(c, []).append(pv)
        s = StateData(bound, True, to_bind, unbound_pvs)
        if not to_bind:
            # Every bound PV matching every node (no node affinity, nothing a CSI translation could
            # add) makes Filter pass everywhere with empty PodVolumes: filter_nodes short-cuts it.
            for pvc in bound:
                pv = self.pv_cache.get(PersistentVolumeClaimView(pvc).volume_name)
                if pv is None or not _node_independent(pv):
                    break
            else:
                s.node_independent = True
        state.write(STATE_KEY, s)
        # No PreFilterResult from bound local PVs: upstream dropped that node reduction (#127584).
        return None, None

    def pre_filter_extensions(self) -> None:
        return None

    # ─── Filter ───
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = read_state(state, STATE_KEY, StateData)
        if not s.has_pvcs:
            return None
        node = node_info.node
        try:
            pv_result, reasons = self.find_pod_volumes(pod, s, node.metadata.name, node.metadata.labels)
        except (ValueError, LookupError) as e:
            return Status(Code.ERROR, (str(e),), e)
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons))
        s.pod_volumes_by_node[node.metadata.name] = pv_result
        if pv_result.static_bindings:
            s.has_static_bindings = True
        return None

    def filter_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> FilterResult | None:
        """Batch Filter: None (all pass) for the node-independent case, else :meth:`filter` per row
        (an Error status on any node raises, failing the cycle as upstream's Filter error does)."""
        if self.deferred_resize and is_pod_resize_deferred(pod):
            return None
        s = read_state(state, STATE_KEY, StateData)
        if not s.has_pvcs or s.node_independent:
            return None
        from kubesched.framework.node_table import NodeInfo

        statuses: list[Status | None] = []
        for r in rows:
            st = self.filter(state, pod, NodeInfo(nodes, int(r)))
            if st is not None and st.code == Code.ERROR:
                raise VolumeBindingError(st.message())
            statuses.append(st)
        return FilterResult.from_statuses(statuses)

    def find_pod_volumes(self, pod: Pod, s: StateData, node_name: str,
                         labels: dict[str, str]) -> tuple[PodVolumes, list[str]]:
        """Upstream ``FindPodVolumes``: ``(PodVolumes, reasons)``; raises ValueError/LookupError
        for upstream's errors (they become Error statuses)."""
        bound_ok = unbound_ok = storage_ok = pvs_found = True
        static: list[tuple[Any, Any]] = []
        dynamic: list[ProvisionedClaim] = []
        csi_node: Any = _UNSET
        if s.bound_claims:  # checkBoundClaims
            for pvc in s.bound_claims:
                pv = self.pv_cache.get(PersistentVolumeClaimView(pvc).volume_name)
                if pv is None:
                    pvs_found = False
                    break
                if in_tree_plugin_of_pv(pv) is not None:
                    if csi_node is _UNSET:
                        csi_node = self.handle.lister.get("CSINode", "", node_name)
                    pv = _translate_if_migrated(pv, csi_node)
                if not check_pv_node_affinity(pv, labels):
                    bound_ok = False
                    break
        if s.claims_to_bind:
            to_match: list[Any] = []
            to_provision: list[Any] = []
            fast_fail = False
            for claim in s.claims_to_bind:
                sel = PersistentVolumeClaimView(claim).annotations.get(ANN_SELECTED_NODE)
                if sel is not None:
                    if sel != node_name:
                        fast_fail = True
                        break
                    to_provision.append(claim)
                else:
                    to_match.append(claim)
            if fast_fail:
                unbound_ok = False
            else:
                if to_match:  # findMatchingVolumes
                    chosen: dict[str, Any] = {}
                    for pvc in sorted(to_match, key=_storage_request):
                        pv = find_matching_volume(pvc, s.unbound_pvs.get(pvc_storage_class(pvc), ()), labels, chosen)
                        if pv is None:
                            to_provision.append(pvc)
                            unbound_ok = False
                            continue
                        chosen[PersistentVolumeView(pv).name] = pv
                        static.append((pv, pvc))
                if to_provision:
                    unbound_ok, storage_ok, dynamic = self._check_volume_provisions(to_provision, labels)
        reasons: list[str] = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not storage_ok:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return PodVolumes(static, dynamic), reasons

    def _check_volume_provisions(self, claims: list[Any], labels: dict[str, str]
                                 ) -> tuple[bool, bool, list[ProvisionedClaim]]:
        """Upstream ``checkVolumeProvisions``: ``(provisionable, enough storage, provisions)``."""
        out: list[ProvisionedClaim] = []
        for claim in claims:
            cls_name = pvc_storage_class(claim)
            c = PersistentVolumeClaimView(claim)
            key = f"{c.namespace}/{c.name}"
            if not cls_name:
                raise ValueError(f'no class for claim "{key}"')
            sc = self.handle.lister.get("StorageClass", "", cls_name)
            if sc is None:
                raise LookupError(f'failed to find storage class "{cls_name}"')
            cls = StorageClassView(sc)
            provisioner = cls.provisioner
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology_selector_terms(cls.allowed_topologies, labels):
                return False, True, []
            ok, cap = self._has_enough_capacity(provisioner, claim, cls_name, labels)
            if not ok:
                return True, False, []
            out.append(ProvisionedClaim(claim, cap))
        return True, True, out

    def _has_enough_capacity(self, provisioner: str, claim: Any, cls_name: str,
                             labels: dict[str, str]) -> tuple[bool, Any]:
        """Upstream ``hasEnoughCapacity``: only for a CSIDriver with ``storageCapacity: true``."""
        requests = PersistentVolumeClaimView(claim).requests
        if "storage" not in requests:
            return True, None
        driver = self.handle.lister.get("CSIDriver", "", provisioner)
        if driver is None or not CSIDriverView(driver).storage_capacity:
            return True, None
        size = int(parse_quantity(requests["storage"]))
        for cap in self.handle.lister.list("CSIStorageCapacity"):
            cv = CSIStorageCapacityView(cap)
            if cv.storage_class_name != cls_name:
                continue
            limit = cv.maximum_volume_size
            if limit is None:
                limit = cv.capacity
            if limit is None or int(parse_quantity(limit)) < size:
                continue
            topo = _as_builtin(cv.node_topology)
            if topo is None:
                continue
            try:
                sel = selector_from_label_selector(decode(LabelSelector, topo))
            except Exception:  # noqa: BLE001 - an invalid selector never matches (upstream logs it)
                continue
            if sel.matches(labels):
                return True, cap
        return False, None

    # ─── PreScore / Score ───
    def pre_score(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: Any) -> Status | None:
        if self.scorer is None:
            return SKIP_STATUS  # StorageCapacityScoring off (default before v1.37)
        try:
            s = read_state(state, STATE_KEY, StateData)
        except Exception as e:  # noqa: BLE001
            return Status(Code.ERROR, (str(e),), e)
        if s.has_static_bindings or self.scorer is not None:
            return None
        return SKIP_STATUS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status | None]:
        if self.scorer is None:
            return 0, None
        s = read_state(state, STATE_KEY, StateData)
        return self._score_pod_volumes(s.pod_volumes_by_node.get(node_info.name)), None

    def scores_zero(self, state: CycleState, pod: Pod) -> bool:
        """True when :meth:`score_nodes` would return 0 on every node without error (no scorer, or
        no node with PodVolumes: a pod without claims); the framework may then leave it out of
        an unrecorded cycle's total (:meth:`Framework.run_score_plugins`)."""
        if self.scorer is None:
            return True
        s = state.get(STATE_KEY)
        return isinstance(s, StateData) and not s.pod_volumes_by_node

    def score_nodes(self, state: CycleState, pod: Pod, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        """Batch :meth:`score`: 0 on nodes without PodVolumes (every node for a pod without
        claims, which since v1.37 is scored too), the per-node score on the others."""
        out = np.zeros(len(rows), np.int64)
        if self.scorer is None:
            return out
        by_node = read_state(state, STATE_KEY, StateData).pod_volumes_by_node
        if not by_node:
            return out
        names = nodes.names
        for i, r in enumerate(rows.tolist()):
            pv = by_node.get(names[r])
            if pv is not None:
                out[i] = self._score_pod_volumes(pv)
        return out

    def _score_pod_volumes(self, pv: PodVolumes | None) -> int:
        """Upstream ``Score`` (v1.37.2 volume_binding.go L467-520) for one node's PodVolumes."""
        if pv is None or self.scorer is None:
            return 0
        classes: dict[str, list[int]] = {}
        if pv.static_bindings:
            for vol, claim in pv.static_bindings:
                r = classes.setdefault(PersistentVolumeView(vol).storage_class_name, [0, 0])
                r[0] += _storage_request(claim)
                r[1] += _storage_capacity(vol)
        else:
            for prov in pv.dynamic_provisions:
                if prov.node_capacity is None:
                    continue
                r = classes.setdefault(PersistentVolumeClaimView(prov.pvc).storage_class_name, [0, 0])
                cap = CSIStorageCapacityView(prov.node_capacity).capacity
                r[1] = int(parse_quantity(cap)) if cap is not None else 0
                r[0] += _storage_request(prov.pvc)
        return int(self.scorer(classes))

    # ─── Reserve / Unreserve ───
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            s = read_state(state, STATE_KEY, StateData)
        except Exception as e:  # noqa: BLE001
            return Status(Code.ERROR, (str(e),), e)
        pv = s.pod_volumes_by_node.get(node_name)
        if pv is None:
            s.all_bound = True  # no PVCs, or every one bound and matching everywhere
            return None
        try:
            s.all_bound = self.assume_pod_volumes(pod, node_name, pv)
        except ValueError as e:
            return Status(Code.ERROR, (str(e),), e)
        return None

    def assume_pod_volumes(self, pod: Pod, node_name: str, pv: PodVolumes) -> bool:
        """Upstream ``AssumePodVolumes``: True when every claim is already fully bound; else the
        bindings/provisionings are assumed and ``pv`` holds the objects to write."""
        if all(self._is_claim_bound(pod, claim) for claim, _, _ in pod_pvc_names(pod)):
            return True
        new_bindings: list[tuple[Any, Any]] = []
        for vol, claim in pv.static_bindings:
            new_pv, dirty = bind_volume_to_claim(vol, claim)
            if dirty:
                try:
                    self.pv_cache.assume(new_pv)
                except ValueError:
                    self._revert(new_bindings, [])
                    raise
            new_bindings.append((new_pv, claim))
        new_provisions: list[ProvisionedClaim] = []
        for prov in pv.dynamic_provisions:
            clone = copy.deepcopy(prov.pvc)
            meta = clone.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}), ANN_SELECTED_NODE: node_name}
            try:
                self.pvc_cache.assume(clone)
            except ValueError:
                self._revert(new_bindings, new_provisions)
                raise
            new_provisions.append(ProvisionedClaim(clone, prov.node_capacity))
        pv.static_bindings = new_bindings
        pv.dynamic_provisions = new_provisions
        return False

    def _is_claim_bound(self, pod: Pod, claim_name: str) -> bool:
        ns = pod.metadata.namespace
        pvc = self.pvc_cache.get(f"{ns}/{claim_name}" if ns else claim_name)
        return pvc is not None and _fully_bound(pvc)

    def _revert(self, bindings: list[tuple[Any, Any]], provisions: list[ProvisionedClaim]) -> None:
        for vol, _ in bindings:
            self.pv_cache.restore(AssumeCache.key_of(vol))
        for prov in provisions:
            self.pvc_cache.restore(AssumeCache.key_of(prov.pvc))

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        try:
            s = read_state(state, STATE_KEY, StateData)
        except Exception:  # noqa: BLE001
            return
        pv = s.pod_volumes_by_node.get(node_name)
        if pv is not None:
            self._revert(pv.static_bindings, pv.dynamic_provisions)

    # ─── PreBind ───
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod,
                            node_name: str) -> tuple[PreBindPreFlightResult, Status | None]:
        """Upstream ``PreBindPreFlight`` (``volume_binding.go`` L552-567): Skip when every
        volume is bound (set by Reserve), Success when PreBind will bind some; ``AllowParallel``."""
        result = PreBindPreFlightResult(allow_parallel=True)
        try:
            s = read_state(state, STATE_KEY, StateData)
        except Exception as e:  # noqa: BLE001
            return result, Status(Code.ERROR, (str(e),), e)
        if s.all_bound:
            return result, SKIP_STATUS
        if node_name not in s.pod_volumes_by_node:
            return result, Status(Code.ERROR, (f'no pod volume found for node "{node_name}"',))
        return result, None

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        try:
            s = read_state(state, STATE_KEY, StateData)
        except Exception as e:  # noqa: BLE001
            return Status(Code.ERROR, (str(e),), e)
        if s.all_bound:
            return None
        pv = s.pod_volumes_by_node.get(node_name)
        if pv is None:
            return Status(Code.ERROR, (f'no pod volumes found for node "{node_name}"',))
        return self._pre_bind(pod, node_name, pv)

    async def _pre_bind(self, pod: Pod, node_name: str, pv: PodVolumes) -> Status | None:
        try:
            await self.bind_pod_volumes(pod, node_name, pv)
        except BindingError as e:
            return Status(Code.ERROR, (str(e),), e)
        return None

    async def bind_pod_volumes(self, pod: Pod, node_name: str, pv: PodVolumes) -> None:
        """Upstream ``BindPodVolumes``: the API writes (``bindAPIUpdate``), then wait for the PV
        controller (``checkBindings``) up to ``bindTimeoutSeconds``. Raises :class:`BindingError`."""
        client = self.handle.client
        if client is None:
            raise BindingError("no client to bind volumes with")
        bindings = list(pv.static_bindings)
        provisions = list(pv.dynamic_provisions)
        written_pvs: list[Any] = []
        written_pvcs: list[Any] = []
        done_b = done_p = 0
        try:
            for vol, _claim in bindings:
                res = await client.update_persistent_volume(vol)
                written_pvs.append(res if res is not None else vol)
                done_b += 1
            for prov in provisions:
                res = await client.update_persistent_volume_claim(prov.pvc)
                written_pvcs.append(res if res is not None else prov.pvc)
                done_p += 1
        except Exception as e:  # noqa: BLE001 - BindError / API errors: revert what was not written
            self._revert(bindings[done_b:], provisions[done_p:])
            raise BindingError(getattr(e, "message", None) or str(e)) from None
        clock = self.handle.clock
        deadline = (clock.now() if clock is not None else 0.0) + self.bind_timeout_s
        while True:
            try:
                if self.check_bindings(pod, node_name, list(zip(written_pvs, [c for _, c in bindings], strict=True)),
                                       written_pvcs):
                    return
            except BindingError as e:
                raise BindingError(f"binding volumes: {e}") from None
            if clock is None or clock.now() + 1.0 > deadline:
                raise BindingError("binding volumes: context deadline exceeded")
            fut = clock.create_future()
            clock.call_later(1.0, lambda f=fut: f.done() or f.set_result(None))
            await fut

    def check_bindings(self, pod: Pod, node_name: str, bindings: list[tuple[Any, Any]],
                       claims: list[Any]) -> bool:
        """Upstream ``checkBindings`` on the informer objects: True when every claim is fully
        bound; False to keep waiting; :class:`BindingError` when binding must be retried."""
        lister = self.handle.lister
        node = lister.get("Node", "", node_name)
        if node is None:
            raise BindingError(f'failed to get node "{node_name}": node "{node_name}" not found')
        labels = node.metadata.labels
        csi_node = lister.get("CSINode", "", node_name)
        ns = pod.metadata.namespace
        if lister.get("Pod", ns, pod.metadata.name) is None:
            raise BindingError(f'pod does not exist any more: pod "{pod.metadata.name}" not found')
        for written, claim in bindings:
            name = PersistentVolumeView(written).name
            vol = self.pv_cache.get_api(name)
            if vol is None:
                raise BindingError(f'failed to check binding: PersistentVolume "{name}" not found')
            ckey = AssumeCache.key_of(claim)
            pvc = self.pvc_cache.get_api(ckey)
            if pvc is None:
                raise BindingError(f'failed to check binding: PersistentVolumeClaim "{ckey}" not found')
            if _rv(written) > _rv(vol):
                return False  # our write has not reached the informer yet
            vol = _translate_if_migrated(vol, csi_node)
            if not check_pv_node_affinity(vol, labels):
                raise BindingError(f'pv "{name}" node affinity doesn\'t match node "{node_name}": '
                                   "no matching NodeSelectorTerms")
            ref = PersistentVolumeView(vol).claim_ref
            if not ref or (not ref.get("uid") and PersistentVolumeClaimView(pvc).uid):
                raise BindingError(f'ClaimRef got reset for pv "{name}"')
            if not _fully_bound(pvc):
                return False
        for written in claims:
            ckey = AssumeCache.key_of(written)
            pvc = self.pvc_cache.get_api(ckey)
            if pvc is None:
                raise BindingError(f'failed to check provisioning pvc: PersistentVolumeClaim "{ckey}" not found')
            if _rv(written) > _rv(pvc):
                return False
            claim_view = PersistentVolumeClaimView(pvc)
            ann = claim_view.annotations
            cname = claim_view.name
            if not ann:
                raise BindingError(f'selectedNode annotation reset for PVC "{cname}"')
            if ann.get(ANN_SELECTED_NODE) != node_name:
                raise BindingError(f'provisioning failed for PVC "{cname}"')
            vname = claim_view.volume_name
            if vname:
                vol = self.pv_cache.get_api(vname)
                if vol is None:
                    return False  # not propagated yet
                vol = _translate_if_migrated(vol, csi_node)
                if not check_pv_node_affinity(vol, labels):
                    raise BindingError(f'pv "{vname}" node affinity doesn\'t match node "{node_name}": '
                                       "no matching NodeSelectorTerms")
            if not _fully_bound(pvc):
                return False
        return True

    # ─── queueing hints ───
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD | ActionType.UPDATE)),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM,
                                              ActionType.ADD | ActionType.UPDATE),
                                 is_schedulable_after_pvc_change),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE)),
            # Add|UpdateNodeLabel as upstream with QueueingHints; before 1.37 the queue adds
            # Node/UpdateNodeTaint itself (buildQueueingHintMap), 1.37 dropped that
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD | ActionType.UPDATE)),
        ]


_UNSET: Any = object()
_DEFAULT_SHAPE = ({"utilization": 0, "score": 10}, {"utilization": 100, "score": 0})


def _pt(p: Any, name: str) -> Any:
    return p.get(name) if isinstance(p, dict) else getattr(p, name)


def _fully_bound(pvc: Any) -> bool:
    claim = PersistentVolumeClaimView(pvc)
    return bool(claim.volume_name) and ANN_BIND_COMPLETED in claim.annotations


def _build_scorer(shape: list[tuple[int, int]]) -> Any:
    """Upstream ``buildScorerFunction``: per class ``broken_linear(requested*100/capacity)`` (100
    when capacity is 0 or exceeded), averaged over the classes, rounded."""
    from kubesched.plugins.noderesources.resource_allocation import broken_linear

    def f(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return broken_linear(shape, 100)
        return broken_linear(shape, requested * 100 // capacity)

    def score(classes: dict[str, list[int]]) -> int:
        if not classes:
            return 0
        total = sum(f(r, c) for r, c in classes.values())
        return int(math.floor(total / len(classes) + 0.5))

    return score


def is_schedulable_after_pvc_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """Queue when the added/updated PVC is one the pod uses (same namespace and name)."""
    changed = PersistentVolumeClaimView(new)
    if changed.namespace != pod.metadata.namespace:
        return QueueingHint.SKIP
    name = changed.name
    for claim, _, _ in pod_pvc_names(pod):
        if claim == name:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP


def new(args: Any, handle: Any) -> VolumeBinding:
    return with_deferred_resize(VolumeBinding(handle, args), handle)
