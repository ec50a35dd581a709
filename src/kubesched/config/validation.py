"""Validation of a defaulted ``KubeSchedulerConfiguration``.

Ported from ``pkg/scheduler/apis/config/validation/validation.go``,
``pkg/scheduler/apis/config/validation/validation_pluginargs.go`` and
``staging/src/k8s.io/component-base/config/validation/validation.go``. All errors are
collected and raised as one :class:`~kubesched.errors.ConfigError` whose message is upstream's
aggregate (``path: Invalid value: 5: detail`` or ``[e1, e2]``) and whose ``errors`` attribute
holds the individual :class:`~kubesched.config._field.FieldError` objects.

Deviations: NodeResourcesFit args are validated here (upstream validates them when the plugin
is built, because the validation table keys them as "NodeResourcesFitArgs"); unknown plugin
names are checked by the framework, which owns the registry.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kubesched.config._field import (
    FieldError,
    aggregate_message,
    duplicate,
    forbidden,
    invalid,
    is_extended_resource_name,
    is_qualified_name,
    label_name_errors,
    not_supported,
    required,
)
from kubesched.config.args import (
    LIST_DEFAULTING,
    MAX_CUSTOM_PRIORITY_SCORE,
    REQUESTED_TO_CAPACITY_RATIO,
    SYSTEM_DEFAULTING,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from kubesched.config.types import (
    API_VERSION,
    EXTENSION_POINT_JSON,
    EXTENSION_POINTS,
    Extender,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    PluginSet,
    parse_duration,
)
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate, default_feature_gate

__all__ = [
    "REMOVED_PLUGINS",
    "collect_errors",
    "validate_args",
    "validate_config",
]

#: Plugins removed from the v1 API (``invalidPluginsByVersion``).
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
_SCORING_STRATEGIES = ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]


def validate_config(cfg: KubeSchedulerConfiguration, features: FeatureGate | None = None) -> KubeSchedulerConfiguration:
    """Raise one :class:`ConfigError` listing every problem of (defaulted) ``cfg``; else return it.
    ``features``: the gates in force (default: v1.37 defaults); some args depend on them."""
    errors = collect_errors(cfg, features)
    if errors:
        err = ConfigError(errors[0].body(), errors[0].field) if len(errors) == 1 \
            else ConfigError(aggregate_message(errors))
        err.errors = errors  # type: ignore[attr-defined]
        raise err
    return cfg


def collect_errors(cfg: KubeSchedulerConfiguration, features: FeatureGate | None = None) -> list[FieldError]:
    """All validation errors of ``cfg``, in upstream order."""
    fg = features if features is not None else default_feature_gate()
    errs: list[FieldError] = []
    cc = cfg.client_connection
    if cc is not None and cc.burst < 0:
        errs.append(invalid("clientConnection.burst", cc.burst, "must be non-negative"))
    le = cfg.leader_election
    if le is not None:
        errs.extend(_leader_election_errors(le))
        if le.leader_elect and le.resource_lock != "leases":
            errs.append(invalid("leaderElection.resourceLock", le.resource_lock,
                                'resourceLock value must be "leases"'))
    if cfg.parallelism is not None and cfg.parallelism <= 0:
        errs.append(invalid("parallelism", cfg.parallelism, "should be an integer value greater than zero"))

    if not cfg.profiles:
        errs.append(required("profiles"))
    else:
        seen: dict[str, int] = {}
        for i, prof in enumerate(cfg.profiles):
            path = f"profiles[{i}]"
            errs.extend(_profile_errors(path, cfg.api_version, prof, fg))
            name = prof.scheduler_name or ""
            if name in seen:
                errs.append(duplicate(f"{path}.schedulerName", name))
            seen[name] = i
        errs.extend(_common_queue_sort_errors(cfg.profiles))

    errs.extend(_percentage_errors("percentageOfNodesToScore", cfg.percentage_of_nodes_to_score))
    initial = cfg.pod_initial_backoff_seconds
    if initial is not None and initial <= 0:
        errs.append(invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    maximum = cfg.pod_max_backoff_seconds
    if maximum is not None and initial is not None and maximum < initial:
        errs.append(invalid("podMaxBackoffSeconds", maximum,
                            "must be greater than or equal to PodInitialBackoffSeconds"))
    errs.extend(_extender_errors(cfg.extenders))
    return errs


# --------------------------------------------------------------------------- top level parts


def _duration(path: str, value: str | None, errs: list[FieldError]) -> float | None:
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as e:
        errs.append(invalid(path, value, str(e)))
        return None


def _leader_election_errors(le: Any) -> list[FieldError]:
    errs: list[FieldError] = []
    lease = _duration("leaderElection.leaseDuration", le.lease_duration, errs)
    renew = _duration("leaderElection.renewDeadline", le.renew_deadline, errs)
    retry = _duration("leaderElection.retryPeriod", le.retry_period, errs)
    if errs or not le.leader_elect:  # unparsable durations: the range checks would only echo them
        return errs
    lease, renew, retry = lease or 0.0, renew or 0.0, retry or 0.0
    if lease <= 0:
        errs.append(invalid("leaderElection.leaseDuration", le.lease_duration, "must be greater than zero"))
    if renew <= 0:
        errs.append(invalid("leaderElection.renewDeadline", le.renew_deadline, "must be greater than zero"))
    if retry <= 0:
        errs.append(invalid("leaderElection.retryPeriod", le.retry_period, "must be greater than zero"))
    if lease <= renew:
        errs.append(invalid("leaderElection.leaseDuration", le.renew_deadline,
                            "must be greater than `RenewDeadline`"))
    for key, attr in (("resourceLock", "resource_lock"), ("resourceNamespace", "resource_namespace"),
                      ("resourceName", "resource_name")):
        if not getattr(le, attr):
            errs.append(required(f"leaderElection.{key}"))
    return errs


def _percentage_errors(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [invalid(path, value, "not in valid range [0-100]")]
    return []


def _profile_errors(path: str, api_version: str, prof: KubeSchedulerProfile,
                    fg: FeatureGate) -> list[FieldError]:
    errs: list[FieldError] = []
    if not prof.scheduler_name:
        errs.append(required(f"{path}.schedulerName"))
    errs.extend(_percentage_errors(f"{path}.percentageOfNodesToScore", prof.percentage_of_nodes_to_score))
    removed_msg = (f'was invalid in version "{API_VERSION}" '
                   f'(KubeSchedulerConfiguration is version "{api_version}")')
    if prof.plugins is not None:
        for point in EXTENSION_POINTS:
            for k, plugin in enumerate(getattr(prof.plugins, point).enabled):
                if plugin.name in REMOVED_PLUGINS:
                    errs.append(invalid(f"{path}.plugins.{EXTENSION_POINT_JSON[point]}.enabled[{k}]",
                                        plugin.name, removed_msg))
    seen: set[str] = set()
    for j, pc in enumerate(prof.plugin_config):
        pc_path = f"{path}.pluginConfig[{j}]"
        if pc.name in seen:
            errs.append(duplicate(pc_path, pc.name))
        seen.add(pc.name)
        if pc.name in REMOVED_PLUGINS:
            errs.append(invalid(pc_path, pc.name, removed_msg))
        else:
            errs.extend(validate_args(f"{pc_path}.args", pc.args, fg))
    return errs


def _common_queue_sort_errors(profiles: list[KubeSchedulerProfile]) -> list[FieldError]:
    errs: list[FieldError] = []
    first = profiles[0]
    canon = first.plugins.queue_sort if first.plugins is not None else PluginSet()
    name = canon.enabled[0].name if canon.enabled else ""
    if len(canon.enabled) > 1:
        errs.append(invalid("profiles[0].plugins.queueSort.enabled", len(canon.enabled),
                            "only one queue sort plugin can be enabled"))
    canon_args = None
    for pc in first.plugin_config:
        if name and pc.name == name:
            canon_args = pc.args
    for i, prof in enumerate(profiles[1:], start=1):
        curr = prof.plugins.queue_sort if prof.plugins is not None else PluginSet()
        if curr != canon:
            errs.append(invalid(f"profiles[{i}].plugins.queueSort", curr, "must be the same for all profiles"))
        for pc in prof.plugin_config:
            if pc.name == name and pc.args != canon_args:
                errs.append(invalid(f"profiles[{i}].pluginConfig.args", pc.args,
                                    "queueSort must be the same for all profiles"))
    return errs


def _extender_errors(extenders: list[Extender]) -> list[FieldError]:
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, ext in enumerate(extenders):
        path = f"extenders[{i}]"
        if ext.prioritize_verb and ext.weight <= 0:
            errs.append(invalid(f"{path}.weight", ext.weight, "must have a positive weight applied to it"))
        if ext.bind_verb:
            binders += 1
        _duration(f"{path}.httpTimeout", ext.http_timeout, errs)
        for j, res in enumerate(ext.managed_resources):
            rpath = f"{path}.managedResources[{j}].name"
            problems = is_qualified_name(res.name)
            if problems:
                errs.extend(invalid(rpath, res.name, m) for m in problems)
            elif not is_extended_resource_name(res.name):
                errs.append(invalid(rpath, res.name, "is an invalid extended resource name"))
            if res.name in managed:
                errs.append(invalid(rpath, res.name, "duplicate extender managed resource name"))
            managed.add(res.name)
    if binders > 1:
        errs.append(invalid("extenders", f"found {binders} extenders implementing bind",
                            "only one extender can implement bind"))
    return errs


# --------------------------------------------------------------------------- plugin args


def validate_args(path: str, args: Any, features: FeatureGate | None = None) -> list[FieldError]:
    """Errors of typed plugin ``args`` located at ``path``; raw (unknown plugin) args give [].
    ``features``: the gates in force (default: v1.37 defaults)."""
    fg = features if features is not None else default_feature_gate()
    if isinstance(args, DefaultPreemptionArgs):
        return _default_preemption_errors(path, args)
    if isinstance(args, InterPodAffinityArgs):
        w = args.hard_pod_affinity_weight or 0
        if not 0 <= w <= 100:
            return [invalid(f"{path}.hardPodAffinityWeight", w, "not in valid range [0, 100]")]
        return []
    if isinstance(args, NodeAffinityArgs):
        return _node_affinity_errors(path, args)
    if isinstance(args, NodeResourcesBalancedAllocationArgs):
        return _balanced_allocation_errors(path, args)
    if isinstance(args, NodeResourcesFitArgs):
        return _fit_errors(path, args)
    if isinstance(args, PodTopologySpreadArgs):
        return _topology_spread_errors(path, args)
    if isinstance(args, VolumeBindingArgs):
        return _volume_binding_errors(path, args, fg)
    if isinstance(args, DynamicResourcesArgs):
        return _dynamic_resources_errors(path, args, fg)
    return []


def _default_preemption_errors(path: str, args: DefaultPreemptionArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    pct, absolute = args.min_candidate_nodes_percentage or 0, args.min_candidate_nodes_absolute or 0
    if not 0 <= pct <= 100:
        errs.append(invalid(f"{path}.minCandidateNodesPercentage", pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(invalid(f"{path}.minCandidateNodesAbsolute", absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errs.append(invalid(f"{path}.minCandidateNodesPercentage", pct,
                            "cannot be zero at the same time as minCandidateNodesAbsolute"))
        errs.append(invalid(f"{path}.minCandidateNodesAbsolute", absolute,
                            "cannot be zero at the same time as minCandidateNodesPercentage"))
    return errs


def _shape_errors(path: str, shape: list[UtilizationShapePoint]) -> list[FieldError]:
    if not shape:
        return [required(path, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(invalid(f"{path}[{i}].utilization", shape[i].utilization,
                                "values must be sorted in increasing order"))
            break
    for i, p in enumerate(shape):
        if not 0 <= p.utilization <= 100:
            errs.append(invalid(f"{path}[{i}].utilization", p.utilization, "not in valid range [0, 100]"))
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(invalid(f"{path}[{i}].score", p.score,
                                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"))
    return errs


def _resource_weight_errors(path: str, resources: list[ResourceSpec]) -> list[FieldError]:
    return [invalid(f"{path}[{i}].weight", r.weight, f"resource weight of {r.name} not in valid range (0, 100]")
            for i, r in enumerate(resources) if not 0 < r.weight <= 100]


def _balanced_allocation_errors(path: str, args: NodeResourcesBalancedAllocationArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, r in enumerate(args.resources):
        if r.name in seen:
            errs.append(duplicate(f"{path}.resources[{i}].name", r.name))
        seen.add(r.name)
        if r.weight != 1:
            errs.append(invalid(f"{path}.resources[{i}].weight", r.weight, "must be 1"))
    return errs


def _fit_errors(path: str, args: NodeResourcesFitArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, res in enumerate(args.ignored_resources):
        errs.extend(label_name_errors(f"{path}.ignoredResources[{i}]", res))
    for i, group in enumerate(args.ignored_resource_groups):
        gpath = f"{path}.ignoredResourceGroups[{i}]"
        if "/" in group:
            errs.append(invalid(gpath, group, "resource group name can't contain '/'"))
        errs.extend(label_name_errors(gpath, group))
    spath = f"{path}.scoringStrategy"
    strategy = args.scoring_strategy
    if strategy is None:
        errs.append(required(spath, "ScoringStrategy field is required"))
        return errs
    if strategy.type not in _SCORING_STRATEGIES:
        errs.append(not_supported(f"{spath}.type", strategy.type, _SCORING_STRATEGIES))
    errs.extend(_resource_weight_errors(f"{spath}.resources", strategy.resources))
    rpath = f"{spath}.requestedToCapacityRatio"
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        if strategy.requested_to_capacity_ratio is None:
            errs.append(required(rpath, "must be specified when type is RequestedToCapacityRatio"))
        else:
            errs.extend(_shape_errors(f"{rpath}.shape", strategy.requested_to_capacity_ratio.shape))
    elif strategy.requested_to_capacity_ratio is not None:
        errs.append(forbidden(rpath, "must be nil when type is not RequestedToCapacityRatio"))
    return errs


def _topology_spread_errors(path: str, args: PodTopologySpreadArgs) -> list[FieldError]:
    errs: list[FieldError] = []
    dtype, constraints = args.defaulting_type, args.default_constraints
    if dtype not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(not_supported(f"{path}.defaultingType", dtype, [SYSTEM_DEFAULTING, LIST_DEFAULTING]))
    elif dtype == SYSTEM_DEFAULTING and constraints:
        errs.append(invalid(f"{path}.defaultingType", dtype, "when .defaultConstraints are not empty"))
    cpath = f"{path}.defaultConstraints"
    for i, c in enumerate(constraints):
        p = f"{cpath}[{i}]"
        if c.max_skew <= 0:
            errs.append(invalid(f"{p}.maxSkew", c.max_skew, "not in valid range (0, inf)"))
        if not c.topology_key:
            errs.append(required(f"{p}.topologyKey", "can not be empty"))
        else:
            errs.extend(label_name_errors(f"{p}.topologyKey", c.topology_key))
        if not c.when_unsatisfiable:
            errs.append(required(f"{p}.whenUnsatisfiable", "can not be empty"))
        elif c.when_unsatisfiable not in ("DoNotSchedule", "ScheduleAnyway"):
            errs.append(not_supported(f"{p}.whenUnsatisfiable", c.when_unsatisfiable,
                                      ["DoNotSchedule", "ScheduleAnyway"]))
        if c.label_selector is not None:
            errs.append(forbidden(f"{p}.labelSelector",
                                  "constraint must not define a selector, as they deduced for each pod"))
        for other in constraints[:i]:
            if (other.topology_key, other.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable):
                errs.append(duplicate(p, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
                break
    return errs


def _volume_binding_errors(path: str, args: VolumeBindingArgs, fg: FeatureGate) -> list[FieldError]:
    errs: list[FieldError] = []
    if (args.bind_timeout_seconds or 0) < 0:
        errs.append(invalid(f"{path}.bindTimeoutSeconds", args.bind_timeout_seconds,
                            "invalid BindTimeoutSeconds, should not be a negative value"))
    if fg.enabled("StorageCapacityScoring"):
        errs.extend(_shape_errors(f"{path}.shape", args.shape or []))
    elif args.shape is not None:
        errs.append(invalid(f"{path}.shape", args.shape,
                            "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
    return errs


def _dynamic_resources_errors(path: str, args: DynamicResourcesArgs, fg: FeatureGate) -> list[FieldError]:
    """``ValidateDynamicResourcesArgs`` (v1.37.2 ``apis/config/validation/validation_pluginargs.go``)."""
    errs: list[FieldError] = []
    fpath = f"{path}.filterTimeout"
    if not fg.enabled("DRASchedulerFilterTimeout"):
        if args.filter_timeout is not None:
            errs.append(forbidden(fpath, "DRASchedulingFilterTimeout feature gate is disabled"))
    else:
        seconds = _duration(fpath, args.filter_timeout, errs)
        if seconds is not None and seconds < 0:
            errs.append(invalid(fpath, args.filter_timeout, "must be zero or positive"))
    bpath = f"{path}.bindingTimeout"
    if fg.enabled("DRADeviceBindingConditions") and fg.enabled("DRAResourceClaimDeviceStatus"):
        seconds = _duration(bpath, args.binding_timeout, errs)
        if seconds is not None and seconds < 1:
            errs.append(invalid(bpath, args.binding_timeout, "must be at least 1 second"))
    elif args.binding_timeout is not None:
        errs.append(forbidden(bpath, "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                                     "feature gate is disabled"))
    return errs


# --------------------------------------------------------------------------- node affinity

_NODE_SELECTOR_OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


def _requirement_errors(p: str, expr: Any, fields: bool) -> list[FieldError]:
    if not isinstance(expr, dict):
        return [invalid(p, expr, "must be a node selector requirement")]
    op, values, key = expr.get("operator"), expr.get("values") or [], expr.get("key", "")
    if fields:
        if op not in ("In", "NotIn"):
            return [not_supported(f"{p}.operator", op, ["In", "NotIn"])]
        return [] if len(values) == 1 else [invalid(f"{p}.values", values, "must have one element")]
    if op not in _NODE_SELECTOR_OPS:
        return [not_supported(f"{p}.operator", op, _NODE_SELECTOR_OPS)]
    errs = label_name_errors(f"{p}.key", key)
    if op in ("In", "NotIn") and not values:
        errs.append(invalid(f"{p}.values", values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(invalid(f"{p}.values", values, "values set must be empty for exists and does not exist"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(invalid(f"{p}.values", values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        else:
            try:
                int(str(values[0]), 10)
            except ValueError:
                errs.append(invalid(f"{p}.values[0]", values[0],
                                    "for 'Gt', 'Lt' operators, the value must be an integer"))
    return errs


def _term_errors(path: str, term: Any) -> list[FieldError]:
    if not isinstance(term, dict):
        return [invalid(path, term, "must be a node selector term")]
    errs: list[FieldError] = []
    for k, expr in enumerate(term.get("matchExpressions") or []):
        errs.extend(_requirement_errors(f"{path}.matchExpressions[{k}]", expr, fields=False))
    for k, expr in enumerate(term.get("matchFields") or []):
        errs.extend(_requirement_errors(f"{path}.matchFields[{k}]", expr, fields=True))
    return errs


def _node_affinity_errors(path: str, args: NodeAffinityArgs) -> list[FieldError]:
    aff = args.added_affinity
    if not aff:
        return []
    if not isinstance(aff, dict):  # a typed kubesched.api.objects.NodeAffinity
        aff = msgspec.to_builtins(aff)
    errs: list[FieldError] = []
    base = f"{path}.addedAffinity"
    req = aff.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, dict):
        for i, term in enumerate(req.get("nodeSelectorTerms") or []):
            errs.extend(_term_errors(f"{base}.requiredDuringSchedulingIgnoredDuringExecution"
                                     f".nodeSelectorTerms[{i}]", term))
    for i, pref in enumerate(aff.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        if isinstance(pref, dict) and pref.get("weight"):
            # upstream locates preference errors at the term index itself (no ".preference")
            errs.extend(_term_errors(f"{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}]",
                                     pref.get("preference") or {}))
    return errs
