"""What kube-apiserver's registry strategies do to a Pod or Node before validating and storing it,
per emulated version and feature gates — shared by the box's admission and ``simulate``.

Follows v1.37.2:

* ``pkg/api/pod/util.go`` ``dropDisabledFields`` (L729): a field behind a disabled gate is
  dropped on create, and on update unless the old pod already uses it —
  ``spec.schedulingGroup`` (GenericWorkload, ``dropDisabledSchedulingGroup`` L2129),
  ``topologySpreadConstraints[*].matchLabelKeys`` (MatchLabelKeysInPodTopologySpread, L1310),
  pod (anti-)affinity ``matchLabelKeys``/``mismatchLabelKeys`` (MatchLabelKeysInPodAffinity,
  L1293); status ``nodeAllocatableResourceClaimStatuses`` (DRANodeAllocatableResources) and
  ``extendedResourceClaimStatus`` (DRAExtendedResource) (``dropDisabledPodStatusFields``);
* ``pkg/registry/core/pod/strategy.go`` ``PrepareForCreate`` (L87): ``mutatePodAffinity`` and
  ``mutateTopologySpreadConstraints`` (L910-950) append ``key In (value)`` (``NotIn`` for
  ``mismatchLabelKeys``) to ``labelSelector.matchExpressions`` for each listed key the pod has
  a label for — only on create, only when the selector is set, topology spread only with
  MatchLabelKeysInPodTopologySpread and …SelectorMerge on;
* ``pkg/registry/core/node/strategy.go`` ``dropDisabledFields`` (L95): ``status.declaredFeatures``
  (NodeDeclaredFeatures) and ``spec.podPreemptionPolicy``
  (InPlacePodVerticalScalingSchedulerPreemption);
* DRA (:func:`drop_disabled_dra_fields`): ``pkg/registry/resource/resourceslice/strategy.go``
  ``dropDisabledFields`` (L202: device taints, partitionable devices, binding conditions,
  consumable capacity, compatibility groups, node-allocatable resources, list-type attributes,
  partition type, optional node operations), ``pkg/api/resourceclaimspec/util.go``
  ``DropDisabledFields`` (L33: prioritized list, request tolerations, admin access, consumable
  capacity, derived attributes — for ResourceClaims and ResourceClaimTemplates) and
  ``pkg/registry/resource/deviceclass/strategy.go`` (L95: ``extendedResourceName``).

Fields a release does not have at all (``schedulingGroup`` at 1.34) never get here: decoding
with that release's schemas (:mod:`kubesched.api.schemas`) rejects or prunes them first.

All functions mutate plain dicts in place. ``features``: a
:class:`~kubesched.features.FeatureGate` (None: the default v1.37 gates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.features import FeatureGate

__all__ = [
    "POD_TOPOLOGY_LABELS",
    "pod_topology_labels",
    "drop_disabled_dra_fields",
    "drop_disabled_node_fields",
    "drop_disabled_pod_fields",
    "mutate_pod_affinity",
    "mutate_topology_spread_constraints",
    "prepare_node",
    "prepare_pod_for_create",
    "prepare_pod_for_update",
]


def _gates(features: FeatureGate | None) -> FeatureGate:
    if features is None:
        from kubesched.features import default_feature_gate

        return default_feature_gate()
    return features


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _affinity_terms(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The (anti-)affinity terms of a pod spec, required and preferred (``podAffinityTerm``)."""
    out: list[dict[str, Any]] = []
    affinity = _dict(spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        a = _dict(affinity.get(kind))
        out.extend(t for t in _list(a.get("requiredDuringSchedulingIgnoredDuringExecution")) if isinstance(t, dict))
        for w in _list(a.get("preferredDuringSchedulingIgnoredDuringExecution")):
            term = _dict(w).get("podAffinityTerm")
            if isinstance(term, dict):
                out.append(term)
    return out


def drop_disabled_pod_fields(pod: dict[str, Any], old_pod: Mapping[str, Any] | None,
                             features: FeatureGate | None = None) -> None:
    """``DropDisabledPodFields`` (``pkg/api/pod/util.go`` L705) for the fields listed in the
    module docstring: cleared when their gate is off and ``old_pod`` (None on create) does not
    use them."""
    fg = _gates(features)
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    old_spec = _dict(_dict(old_pod).get("spec")) if old_pod is not None else None
    if not fg.enabled("GenericWorkload") and (old_spec is None or old_spec.get("schedulingGroup") is None):
        spec.pop("schedulingGroup", None)
    if not fg.enabled("MatchLabelKeysInPodTopologySpread") and not (
            old_spec and any(_dict(c).get("matchLabelKeys") for c in _list(old_spec.get("topologySpreadConstraints")))):
        for c in _list(spec.get("topologySpreadConstraints")):
            if isinstance(c, dict):
                c.pop("matchLabelKeys", None)
    if not fg.enabled("MatchLabelKeysInPodAffinity") and not (
            old_spec and any(t.get("matchLabelKeys") or t.get("mismatchLabelKeys") for t in _affinity_terms(old_spec))):
        for t in _affinity_terms(spec):
            t.pop("matchLabelKeys", None)
            t.pop("mismatchLabelKeys", None)
    status = pod.get("status")
    if isinstance(status, dict):
        old_status = _dict(_dict(old_pod).get("status"))
        if not fg.enabled("DRANodeAllocatableResources") and not old_status.get("nodeAllocatableResourceClaimStatuses"):
            status.pop("nodeAllocatableResourceClaimStatuses", None)
        if not fg.enabled("DRAExtendedResource") and old_status.get("extendedResourceClaimStatus") is None:
            status.pop("extendedResourceClaimStatus", None)


def _apply_label_keys(selector: dict[str, Any], keys: list[Any], operator: str, labels: Mapping[str, Any]) -> None:
    """``applyLabelKeysToLabelSelector`` (strategy.go L883)."""
    for key in keys:
        if isinstance(key, str) and key in labels:
            exprs = selector.get("matchExpressions")
            if not isinstance(exprs, list):
                exprs = selector["matchExpressions"] = []
            exprs.append({"key": key, "operator": operator, "values": [labels[key]]})


def mutate_topology_spread_constraints(pod: dict[str, Any], features: FeatureGate | None = None) -> None:
    """``mutateTopologySpreadConstraints`` (strategy.go L940): merge each constraint's
    ``matchLabelKeys`` into its ``labelSelector`` (create only)."""
    fg = _gates(features)
    if not (fg.enabled("MatchLabelKeysInPodTopologySpread")
            and fg.enabled("MatchLabelKeysInPodTopologySpreadSelectorMerge")):
        return
    labels = _dict(_dict(pod.get("metadata")).get("labels"))
    for c in _list(_dict(pod.get("spec")).get("topologySpreadConstraints")):
        c = _dict(c)
        keys = _list(c.get("matchLabelKeys"))
        sel = c.get("labelSelector")
        if keys and isinstance(sel, dict):
            _apply_label_keys(sel, keys, "In", labels)


def mutate_pod_affinity(pod: dict[str, Any], features: FeatureGate | None = None) -> None:
    """``mutatePodAffinity`` (strategy.go L910): merge each (anti-)affinity term's
    ``matchLabelKeys`` (``In``) and ``mismatchLabelKeys`` (``NotIn``) into its selector."""
    if not _gates(features).enabled("MatchLabelKeysInPodAffinity"):
        return
    labels = _dict(_dict(pod.get("metadata")).get("labels"))
    for t in _affinity_terms(_dict(pod.get("spec"))):
        match, mismatch = _list(t.get("matchLabelKeys")), _list(t.get("mismatchLabelKeys"))
        sel = t.get("labelSelector")
        if (match or mismatch) and isinstance(sel, dict):
            _apply_label_keys(sel, match, "In", labels)
            _apply_label_keys(sel, mismatch, "NotIn", labels)


def _create_step_is_a_no_op(pod: dict[str, Any]) -> bool:
    """Whether :func:`prepare_pod_for_create` has nothing to do for ``pod``, whatever the gates:
    no ``schedulingGroup``, no spread constraints, no pod (anti-)affinity and neither gated status
    field (most pods: the create step then reads no gate and walks nothing). False: maybe."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return True  # drop_disabled_pod_fields returns, the merges find no term
    if "schedulingGroup" in spec or spec.get("topologySpreadConstraints"):
        return False
    affinity = spec.get("affinity")
    if isinstance(affinity, dict) and (affinity.get("podAffinity") or affinity.get("podAntiAffinity")):
        return False
    status = pod.get("status")
    return not (isinstance(status, dict) and ("nodeAllocatableResourceClaimStatuses" in status
                                              or "extendedResourceClaimStatus" in status))


def prepare_pod_for_create(pod: dict[str, Any], features: FeatureGate | None = None) -> None:
    """The spec part of the pod strategy's ``PrepareForCreate`` (strategy.go L87-104): drop
    disabled fields, then merge ``matchLabelKeys`` into the affinity and spread selectors."""
    if _create_step_is_a_no_op(pod):
        return
    drop_disabled_pod_fields(pod, None, features)
    mutate_pod_affinity(pod, features)
    mutate_topology_spread_constraints(pod, features)


def prepare_pod_for_update(pod: dict[str, Any], old_pod: Mapping[str, Any],
                           features: FeatureGate | None = None) -> None:
    """``PrepareForUpdate`` (strategy.go L107): drop disabled fields the old pod does not use
    (no merge: selectors were merged at create)."""
    drop_disabled_pod_fields(pod, old_pod, features)


#: the node labels PodTopologyLabels admission copies (plugin/pkg/admission/podtopologylabels/admission.go L40-42)
POD_TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")


def pod_topology_labels(node_labels: Mapping[str, Any] | None, features: FeatureGate | None = None) -> dict[str, str]:
    """The labels kube-apiserver's PodTopologyLabels admission (gate PodTopologyLabelsAdmission:
    beta, on since 1.35) puts on a pod bound to a node with these labels — on ``pods/binding`` and
    on a pod created with ``spec.nodeName`` — overwriting the pod's own (``storage.go``
    copyLabelsWithOverwriting). ``{}`` when the gate is off or the node has none."""
    if not _gates(features).enabled("PodTopologyLabelsAdmission") or not node_labels:
        return {}
    return {k: str(node_labels[k]) for k in POD_TOPOLOGY_LABELS if k in node_labels}


def drop_disabled_node_fields(node: dict[str, Any], old_node: Mapping[str, Any] | None,
                              features: FeatureGate | None = None) -> None:
    """The node strategy's ``dropDisabledFields`` (``pkg/registry/core/node/strategy.go`` L95)
    for ``status.declaredFeatures`` and ``spec.podPreemptionPolicy``."""
    # the common node has neither field: nothing to drop, no gate to read
    status = node.get("status")
    drop_features = isinstance(status, dict) and "declaredFeatures" in status
    spec = node.get("spec")
    drop_policy = isinstance(spec, dict) and "podPreemptionPolicy" in spec
    if not (drop_features or drop_policy):
        return
    fg = _gates(features)
    old = _dict(old_node) if old_node is not None else {}
    if drop_features and not fg.enabled("NodeDeclaredFeatures") and \
            _dict(old.get("status")).get("declaredFeatures") is None:
        status.pop("declaredFeatures", None)  # type: ignore[union-attr]  # drop_features: a dict
    if drop_policy and not fg.enabled("InPlacePodVerticalScalingSchedulerPreemption") and \
            _dict(old.get("spec")).get("podPreemptionPolicy") is None:
        spec.pop("podPreemptionPolicy", None)  # type: ignore[union-attr]  # drop_policy: a dict


def prepare_node(node: dict[str, Any], old_node: Mapping[str, Any] | None,
                 features: FeatureGate | None = None) -> None:
    """The node strategy's ``PrepareForCreate`` / ``PrepareForUpdate`` (L81-93) for the gated
    fields (``old_node`` None on create)."""
    drop_disabled_node_fields(node, old_node, features)


# ---- DRA ---------------------------------------------------------------------------------------------

#: gate(s) that must all be on → the fields they cover (``[]`` walks a list, ``{}`` a map's values).
_CLAIM_SPEC: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("DRAPrioritizedList",), ("devices.requests[].firstAvailable",)),
    (("DRADeviceTaints",), ("devices.requests[].exactly.tolerations",
                            "devices.requests[].firstAvailable[].tolerations")),
    (("DRAAdminAccess",), ("devices.requests[].exactly.adminAccess",)),
    (("DRAConsumableCapacity",), ("devices.constraints[].distinctAttribute", "devices.requests[].exactly.capacity",
                                  "devices.requests[].firstAvailable[].capacity")),
    (("DRADerivedAttributes",), ("devices.requests[].exactly.derivedAttributes",
                                 "devices.requests[].firstAvailable[].derivedAttributes")),
)
_DRA_FIELDS: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {
    "ResourceSlice": (
        (("DRADeviceTaints",), ("spec.devices[].taints",)),
        (("DRAPartitionableDevices",), ("spec.sharedCounters", "spec.perDeviceNodeSelection",
                                        "spec.devices[].consumesCounters", "spec.devices[].nodeName",
                                        "spec.devices[].nodeSelector", "spec.devices[].allNodes")),
        (("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"), (
            "spec.devices[].bindingConditions", "spec.devices[].bindingFailureConditions",
            "spec.devices[].bindsToNode")),
        (("DRAConsumableCapacity",), ("spec.devices[].allowMultipleAllocations",
                                      "spec.devices[].capacity{}.requestPolicy")),
        (("DRADeviceCompatibilityGroups",), ("spec.devices[].consumesCounters[].compatibilityGroups",)),
        (("DRANodeAllocatableResources",), ("spec.devices[].nodeAllocatableResources",)),
        (("DRAListTypeAttributes",), tuple(f"spec.devices[].attributes{{}}.{k}" for k in (
            "boolValues", "intValues", "stringValues", "versionValues"))),
        (("DRAPartitionableDevicesType",), ("spec.partitionTypeAttribute",)),
        (("DRAOptionalNodeOperations",), ("spec.skipNodeOperations",)),
    ),
    "ResourceClaim": tuple((g, tuple(f"spec.{p}" for p in paths)) for g, paths in _CLAIM_SPEC),
    "ResourceClaimTemplate": tuple((g, tuple(f"spec.spec.{p}" for p in paths)) for g, paths in _CLAIM_SPEC),
    "DeviceClass": ((("DRAExtendedResource",), ("spec.extendedResourceName",)),),
}


def _holders(obj: Any, path: str) -> list[tuple[dict[str, Any], str]]:
    """The ``(dict, key)`` pairs a field path names in ``obj`` (the key may be absent)."""
    parts = path.split(".")
    nodes: list[Any] = [obj]
    for part in parts[:-1]:
        key, walk = part, ""
        if part.endswith("[]"):
            key, walk = part[:-2], "list"
        elif part.endswith("{}"):
            key, walk = part[:-2], "map"
        nxt: list[Any] = []
        for n in nodes:
            v = n.get(key) if isinstance(n, dict) else None
            if walk == "list":
                nxt.extend(_list(v))
            elif walk == "map":
                nxt.extend(_dict(v).values())
            elif v is not None:
                nxt.append(v)
        nodes = nxt
    return [(n, parts[-1]) for n in nodes if isinstance(n, dict)]


def _in_use(obj: Any, paths: tuple[str, ...]) -> bool:
    return any(d.get(k) not in (None, [], {}) for p in paths for d, k in _holders(obj, p))


def drop_disabled_dra_fields(obj: dict[str, Any], old: Mapping[str, Any] | None,
                             features: FeatureGate | None = None, kind: str | None = None) -> None:
    """The DRA registry strategies' ``dropDisabledFields`` for a ResourceSlice, ResourceClaim,
    ResourceClaimTemplate or DeviceClass (``kind``, default ``obj["kind"]``; other kinds:
    nothing): each field group whose gates are not all on is dropped unless ``old`` (None on
    create) uses it."""
    groups = _DRA_FIELDS.get(kind or str(obj.get("kind") or ""))
    if not groups:
        return
    fg = _gates(features)
    for gates, paths in groups:
        if all(fg.enabled(g) for g in gates) or (old is not None and _in_use(old, paths)):
            continue
        for p in paths:
            for d, k in _holders(obj, p):
                d.pop(k, None)
