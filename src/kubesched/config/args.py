"""Typed plugin args of the in-tree plugins, with upstream defaults.

Types: ``staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go`` (and
``DynamicResourcesArgs`` in ``types.go``). Defaults: ``pkg/scheduler/apis/config/v1/defaults.go``
(``SetDefaults_*Args``), with the feature gates of a :class:`~kubesched.features.FeatureGate`:
``StorageCapacityScoring`` (on in 1.37: ``VolumeBindingArgs.shape`` defaults to {0→10, 100→0}),
``DRASchedulerFilterTimeout``.

Units: ``bind_timeout_seconds`` in seconds; ``filter_timeout`` a Go duration string ("10s");
percentages 0-100; resource weights 1-100; shape utilization 0-100, score 0-10.

:func:`decode_args` mirrors upstream ``PluginConfig.decodeNestedObjects`` + ``scheme.Default``:
args of a plugin listed in :data:`ARGS_TYPES` are decoded strictly (optionally carrying
``apiVersion``/``kind: <Name>Args``) and defaulted; other plugins' args stay raw.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.api.objects import NodeAffinity
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate, default_feature_gate

__all__ = [
    "PluginArgs",
    "ARGS_TYPES",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PodTopologySpreadArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "TopologySpreadConstraint",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
    "decode_args",
    "default_args",
    "set_args_defaults",
    "strict_convert",
]


LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
#: ``config.MaxCustomPriorityScore``: upper bound of a shape point's score.
MAX_CUSTOM_PRIORITY_SCORE = 10


class PluginArgs(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """The one base of plugin args, in-tree (this module) and out-of-tree
    (:mod:`kubesched.framework.plugin_args`): camelCase keys, unknown keys rejected, keyword-only
    fields. Override :meth:`validate` to check values (raise ``InputError(message,
    "fieldName")``); the in-tree args are validated by :mod:`kubesched.config.validation` instead."""

    def validate(self) -> None:
        """Check the decoded values; raise :class:`~kubesched.errors.InputError` whose ``path``
        is the field (camelCase, e.g. ``"keepPercentage"``)."""


class ResourceSpec(PluginArgs):
    """A resource and its weight (0 is defaulted to 1)."""

    name: str
    weight: int = 0


class UtilizationShapePoint(PluginArgs):
    """A point of a piecewise-linear scoring shape: utilization 0-100 (%), score 0-10."""

    utilization: int = 0
    score: int = 0


class RequestedToCapacityRatioParam(PluginArgs):
    """Args of the RequestedToCapacityRatio strategy."""

    shape: list[UtilizationShapePoint] = msgspec.field(default_factory=list)


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


class ScoringStrategy(PluginArgs):
    """NodeResourcesFit scoring: LeastAllocated | MostAllocated | RequestedToCapacityRatio."""

    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = msgspec.field(default_factory=_default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


class DefaultPreemptionArgs(PluginArgs):
    """DefaultPreemption: candidates = max(nodes * percentage / 100, absolute)."""

    min_candidate_nodes_percentage: int | None = 10
    min_candidate_nodes_absolute: int | None = 100


class InterPodAffinityArgs(PluginArgs):
    """InterPodAffinity: score weight of existing pods' required affinity terms (0-100)."""

    hard_pod_affinity_weight: int | None = 1
    ignore_preferred_terms_of_existing_pods: bool = False


class NodeAffinityArgs(PluginArgs):
    """NodeAffinity: ``added_affinity`` (core/v1 NodeAffinity) is ANDed with every pod's affinity.

    Note: :class:`kubesched.api.objects.NodeAffinity` ignores unknown keys, so decoding is not
    strict below ``addedAffinity`` (upstream's is).
    """

    added_affinity: NodeAffinity | None = None


class NodeResourcesFitArgs(PluginArgs):
    """NodeResourcesFit: resources ignored by Filter, and the Score strategy."""

    ignored_resources: list[str] = msgspec.field(default_factory=list)
    ignored_resource_groups: list[str] = msgspec.field(default_factory=list)
    scoring_strategy: ScoringStrategy | None = msgspec.field(default_factory=ScoringStrategy)


class NodeResourcesBalancedAllocationArgs(PluginArgs):
    """NodeResourcesBalancedAllocation: resources to balance (weights must be 1)."""

    resources: list[ResourceSpec] = msgspec.field(default_factory=_default_resources)


class TopologySpreadConstraint(PluginArgs):
    """A core/v1 TopologySpreadConstraint as used in ``defaultConstraints`` (no labelSelector allowed)."""

    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: dict[str, Any] | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = msgspec.field(default_factory=list)


class PodTopologySpreadArgs(PluginArgs):
    """PodTopologySpread: cluster default constraints; ``defaulting_type`` System | List."""

    default_constraints: list[TopologySpreadConstraint] = msgspec.field(default_factory=list)
    defaulting_type: str = SYSTEM_DEFAULTING


class VolumeBindingArgs(PluginArgs):
    """VolumeBinding: PreBind wait in seconds (0 = no wait); ``shape`` needs StorageCapacityScoring."""

    bind_timeout_seconds: int | None = 600
    shape: list[UtilizationShapePoint] | None = None


class DynamicResourcesArgs(PluginArgs):
    """DynamicResources: per-node Filter time limit, a duration string ("0s" disables it), and
    (1.37, DRADeviceBindingConditions + DRAResourceClaimDeviceStatus) how long PreBind waits for
    binding conditions (``bindingTimeout``, default 10m)."""

    filter_timeout: str | None = "10s"
    binding_timeout: str | None = None


#: In-tree plugin name -> its typed args (upstream: kinds ``<Name>Args`` registered in the v1 scheme).
ARGS_TYPES: dict[str, type] = {
    "DefaultPreemption": DefaultPreemptionArgs,
    "DynamicResources": DynamicResourcesArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "VolumeBinding": VolumeBindingArgs,
}


def set_args_defaults(args: Any, features: FeatureGate | None = None) -> Any:
    """Apply upstream ``SetDefaults_<Kind>`` to typed args, in place; returns ``args``.

    ``features`` (default: v1.37 defaults) decides the gate-dependent defaults: VolumeBinding's
    ``shape`` (StorageCapacityScoring), DynamicResources' ``filterTimeout`` (DRASchedulerFilterTimeout)
    and ``bindingTimeout`` (DRADeviceBindingConditions and DRAResourceClaimDeviceStatus).
    """
    fg = features if features is not None else default_feature_gate()
    if isinstance(args, DefaultPreemptionArgs):
        if args.min_candidate_nodes_percentage is None:
            args.min_candidate_nodes_percentage = 10
        if args.min_candidate_nodes_absolute is None:
            args.min_candidate_nodes_absolute = 100
    elif isinstance(args, InterPodAffinityArgs):
        if args.hard_pod_affinity_weight is None:
            args.hard_pod_affinity_weight = 1
    elif isinstance(args, VolumeBindingArgs):
        if args.bind_timeout_seconds is None:
            args.bind_timeout_seconds = 600
        if not args.shape and fg.enabled("StorageCapacityScoring"):
            args.shape = [UtilizationShapePoint(utilization=0, score=MAX_CUSTOM_PRIORITY_SCORE),
                          UtilizationShapePoint(utilization=100, score=0)]
    elif isinstance(args, NodeResourcesBalancedAllocationArgs):
        if not args.resources:
            args.resources = _default_resources()
        for r in args.resources:
            if r.weight == 0:
                r.weight = 1
    elif isinstance(args, PodTopologySpreadArgs):
        if not args.defaulting_type:
            args.defaulting_type = SYSTEM_DEFAULTING
    elif isinstance(args, NodeResourcesFitArgs):
        if args.scoring_strategy is None:
            args.scoring_strategy = ScoringStrategy()
        if not args.scoring_strategy.resources:
            args.scoring_strategy.resources = _default_resources()
        for r in args.scoring_strategy.resources:
            if r.weight == 0:
                r.weight = 1
    elif isinstance(args, DynamicResourcesArgs):
        if args.filter_timeout is None and fg.enabled("DRASchedulerFilterTimeout"):
            args.filter_timeout = "10s"
        if (args.binding_timeout is None and fg.enabled("DRADeviceBindingConditions")
                and fg.enabled("DRAResourceClaimDeviceStatus")):
            args.binding_timeout = "10m0s"
    return args


def default_args(plugin_name: str, features: FeatureGate | None = None) -> Any | None:
    """Defaulted typed args of an in-tree plugin, or None when the plugin has no args type."""
    typ = ARGS_TYPES.get(plugin_name)
    return None if typ is None else set_args_defaults(typ(), features)


def _validation_message(err: msgspec.ValidationError, base: str) -> tuple[str, str]:
    """Split msgspec's "<problem> - at `$.a[0].b`" into (upstream-ish message, field path)."""
    text = str(err)
    where = ""
    if " - at `$" in text:
        text, _, where = text.rpartition(" - at `$")
        where = where.rstrip("`")
        if where.startswith("."):
            where = where[1:]
    if text.startswith("Object contains unknown field `"):
        text = f'unknown field "{text[len("Object contains unknown field `"):-1]}"'
    elif text.startswith("Object missing required field `"):
        text = f'missing required field "{text[len("Object missing required field `"):-1]}"'
    else:
        text = text.replace("`", "")
        text = text[:1].lower() + text[1:]
    if not where:
        return text, base
    if not base:
        return text, where
    return text, f"{base}{where}" if where.startswith("[") else f"{base}.{where}"


def strict_convert(data: Any, typ: type, path: str) -> Any:
    """``msgspec.convert`` that raises :class:`ConfigError` located at ``path`` + the inner path."""
    try:
        return msgspec.convert(data, typ)
    except msgspec.ValidationError as err:
        message, where = _validation_message(err, path)
        raise ConfigError(message, where or None) from None


def decode_args(plugin_name: str, raw: Any, path: str, features: FeatureGate | None = None) -> Any:
    """Decode and default the args of ``plugin_name`` found at field path ``path``.

    Known plugins (:data:`ARGS_TYPES`) give a typed, defaulted Struct; ``raw`` may be None
    (all defaults), a mapping, or already the typed Struct. Unknown plugins return ``raw``
    unchanged (out-of-tree plugins interpret their own args). Raises :class:`ConfigError`.
    """
    typ = ARGS_TYPES.get(plugin_name)
    if typ is None:
        return raw
    if isinstance(raw, typ):
        return set_args_defaults(raw, features)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"args for plugin {plugin_name} must be an object, got {type(raw).__name__}", path)
    raw = dict(raw)
    want_kind = f"{plugin_name}Args"
    kind = raw.pop("kind", None)
    api_version = raw.pop("apiVersion", None)
    if kind is not None and kind != want_kind:
        raise ConfigError(f"args for plugin {plugin_name} were not of type {want_kind}, got {kind}", path)
    if api_version is not None and api_version != "kubescheduler.config.k8s.io/v1":
        raise ConfigError(f'Unsupported value: "{api_version}": supported values: '
                          f'"kubescheduler.config.k8s.io/v1"', f"{path}.apiVersion")
    if typ is NodeResourcesFitArgs and isinstance(raw.get("scoringStrategy"), dict):
        # Upstream only defaults ``type`` when the whole scoringStrategy is absent.
        raw["scoringStrategy"] = {"type": "", "resources": [], **raw["scoringStrategy"]}
    args = strict_convert(raw, typ, path)
    return set_args_defaults(args, features)
