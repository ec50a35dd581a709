"""Defaulting of ``KubeSchedulerConfiguration`` v1.

Ported from ``pkg/scheduler/apis/config/v1/defaults.go`` (``SetDefaults_KubeSchedulerConfiguration``,
``setDefaults_KubeSchedulerProfile``) and ``pkg/scheduler/apis/config/v1/default_plugins.go``
(``getDefaultPlugins``, ``mergePlugins``, ``mergePluginSet``), with the
feature gates and emulated version of a :class:`~kubesched.features.FeatureGate` (default: v1.37).

Deviation on purpose: ``percentageOfNodesToScore`` stays ``None`` when unset (upstream writes 0);
both mean "adaptive".
"""

from __future__ import annotations

import copy

from kubesched.config.args import ARGS_TYPES, decode_args, default_args
from kubesched.config.types import (
    EXTENSION_POINT_JSON,
    EXTENSION_POINTS,
    ClientConnectionConfiguration,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    parse_duration,
)
from kubesched.features import FeatureGate, default_feature_gate

__all__ = [
    "DEFAULT_PARALLELISM",
    "DEFAULT_POD_INITIAL_BACKOFF_SECONDS",
    "DEFAULT_POD_MAX_BACKOFF_SECONDS",
    "DEFAULT_SCHEDULER_NAME",
    "default_plugins",
    "defaulted_copy",
    "merge_plugin_set",
    "merge_plugins",
    "plugin_names",
    "set_defaults",
    "set_profile_defaults",
]

#: ``v1.DefaultSchedulerName`` (k8s.io/api/core/v1).
DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PARALLELISM = 16
DEFAULT_POD_INITIAL_BACKOFF_SECONDS = 1
DEFAULT_POD_MAX_BACKOFF_SECONDS = 10

# (name, score weight) in upstream getDefaultPlugins order (v1.37.2
# ``pkg/scheduler/apis/config/v1/default_plugins.go`` L32-58). Before 1.37 NodeUnschedulable came
# before NodeName (v1.34.12 default_plugins.go).
_DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeName", None),
    ("NodeUnschedulable", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)


def default_plugins(features: FeatureGate | None = None) -> Plugins:
    """A fresh copy of the default plugin set: everything enabled through ``multiPoint``.

    Upstream ``getDefaultPlugins`` + ``applyFeatureGates`` at ``features``' emulated version and
    gates (default: v1.37 defaults): NodeDeclaredFeatures appended (gate), DeferredPodScheduling
    before NodeResourcesFit (InPlacePodVerticalScalingSchedulerPreemption), DynamicResources before
    DefaultPreemption (DynamicResourceAllocation; weight 2 since 1.35), GangScheduling (GenericWorkload),
    TopologyPlacementGenerator + PodGroupPodsCount (TopologyAwareWorkloadScheduling).
    """
    fg = features if features is not None else default_feature_gate()
    order = list(_DEFAULT_MULTI_POINT)
    if not fg.at_least(1, 37):  # v1.34–1.36: NodeUnschedulable, then NodeName
        order[2], order[3] = order[3], order[2]
    enabled = [Plugin(name=n, weight=w) for n, w in order]
    if fg.enabled("NodeDeclaredFeatures"):  # appended after DefaultBinder (applyFeatureGates)
        enabled.append(Plugin(name="NodeDeclaredFeatures"))
    if fg.enabled("InPlacePodVerticalScalingSchedulerPreemption"):
        i = next(i for i, p in enumerate(enabled) if p.name == "NodeResourcesFit")
        enabled.insert(i, Plugin(name="DeferredPodScheduling"))
    if fg.enabled("DynamicResourceAllocation"):
        i = next(i for i, p in enumerate(enabled) if p.name == "DefaultPreemption")
        enabled.insert(i, Plugin(name="DynamicResources", weight=2 if fg.at_least(1, 35) else None))
    if fg.enabled("GenericWorkload"):  # 1.35-1.36's own GangScheduling gate is unknown to the 1.37 table
        enabled.append(Plugin(name="GangScheduling"))
    if fg.enabled("TopologyAwareWorkloadScheduling"):
        enabled.append(Plugin(name="TopologyPlacementGenerator"))
        enabled.append(Plugin(name="PodGroupPodsCount", weight=1))
    return Plugins(multi_point=PluginSet(enabled=enabled))


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Merge one extension point as upstream ``mergePluginSet``.

    ``disabled`` = custom disabled + default disabled (names only). Unless ``"*"`` is disabled,
    each default plugin not disabled is kept, replaced in place by a custom entry of the same
    name (its weight wins). Custom plugins that replaced nothing are appended in their order
    (duplicates included; the framework rejects them).
    """
    disabled = [Plugin(name=p.name) for p in custom.disabled] + [Plugin(name=p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    custom_by_name: dict[str, tuple[int, Plugin]] = {}
    for i, p in enumerate(custom.enabled):
        custom_by_name[p.name] = (i, p)  # the last duplicate wins, as in upstream's map
    replaced: set[int] = set()
    enabled: list[Plugin] = []
    if "*" not in disabled_names:
        for p in default.enabled:
            if p.name in disabled_names:
                continue
            hit = custom_by_name.get(p.name)
            if hit is not None:
                replaced.add(hit[0])
                p = hit[1]
            enabled.append(Plugin(name=p.name, weight=p.weight))
    enabled.extend(Plugin(name=p.name, weight=p.weight)
                   for i, p in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(enabled=enabled, disabled=disabled)


def merge_plugins(default: Plugins, custom: Plugins | None) -> Plugins:
    """Merge a profile's plugins into the defaults (``mergePlugins``); None keeps the defaults."""
    if custom is None:
        return default
    merged = {p: merge_plugin_set(getattr(default, p), getattr(custom, p))
              for p in ("multi_point", *EXTENSION_POINTS)}
    return Plugins(**merged)


def plugin_names(plugins: Plugins | None) -> list[str]:
    """Sorted names of every plugin enabled at any point (upstream ``pluginsNames``)."""
    if plugins is None:
        return []
    names = {p.name for point in ("multi_point", *EXTENSION_POINTS) for p in getattr(plugins, point).enabled}
    return sorted(names)


def set_profile_defaults(profile: KubeSchedulerProfile, path: str = "profiles[0]",
                         features: FeatureGate | None = None) -> KubeSchedulerProfile:
    """Merge default plugins, decode+default given args, append default args; in place.

    Records ``profile.plugin_paths`` (see :class:`KubeSchedulerProfile`) from the plugins as written,
    before they are merged into the defaults.
    """
    paths: dict[tuple[str, str], str] = {}
    if profile.plugins is not None:
        for point in ("multi_point", *EXTENSION_POINTS):
            json_name = "multiPoint" if point == "multi_point" else EXTENSION_POINT_JSON[point]
            for j, p in enumerate(getattr(profile.plugins, point).enabled):
                paths.setdefault((point, p.name), f"{path}.plugins.{json_name}.enabled[{j}].name")
    profile.plugin_paths = paths  # type: ignore[attr-defined]  # dict=True: not encoded
    profile.plugins = merge_plugins(default_plugins(features), profile.plugins)
    seen: set[str] = set()
    for j, pc in enumerate(profile.plugin_config):
        seen.add(pc.name)
        pc.args = decode_args(pc.name, pc.args, f"{path}.pluginConfig[{j}].args", features)
    for name in plugin_names(profile.plugins):
        if name in seen or name not in ARGS_TYPES:
            continue
        profile.plugin_config.append(PluginConfig(name=name, args=default_args(name, features)))
    return profile


def _zero_duration(value: str | None) -> bool:
    """True for an unset or zero duration (Go's zero ``metav1.Duration`` is defaulted)."""
    if not value:
        return True
    try:
        return parse_duration(value) == 0
    except ValueError:
        return False  # left for validation to report


def set_defaults(cfg: KubeSchedulerConfiguration, features: FeatureGate | None = None) -> KubeSchedulerConfiguration:
    """Apply upstream v1 defaults to ``cfg`` in place and return it; ``features`` (default: v1.37's
    defaults) chooses the default plugins and the gate-dependent args defaults.

    Plugin args already typed are only defaulted; raw mappings are decoded first, so a bad
    args mapping raises :class:`kubesched.errors.ConfigError` located at its field path.
    """
    if cfg.parallelism is None:
        cfg.parallelism = DEFAULT_PARALLELISM
    if not cfg.profiles:
        cfg.profiles = [KubeSchedulerProfile()]
    # Only a single profile gets the default name; validation requires names otherwise.
    if len(cfg.profiles) == 1 and cfg.profiles[0].scheduler_name is None:
        cfg.profiles[0].scheduler_name = DEFAULT_SCHEDULER_NAME
    for i, prof in enumerate(cfg.profiles):
        set_profile_defaults(prof, f"profiles[{i}]", features)

    le = cfg.leader_election if cfg.leader_election is not None else LeaderElectionConfiguration()
    cfg.leader_election = le
    if not le.resource_lock:
        le.resource_lock = "leases"
    if not le.resource_namespace:
        le.resource_namespace = "kube-system"
    if not le.resource_name:
        le.resource_name = "kube-scheduler"
    # component-base RecommendedDefaultLeaderElectionConfiguration
    if le.leader_elect is None:
        le.leader_elect = True
    if _zero_duration(le.lease_duration):
        le.lease_duration = "15s"
    if _zero_duration(le.renew_deadline):
        le.renew_deadline = "10s"
    if _zero_duration(le.retry_period):
        le.retry_period = "2s"

    cc = cfg.client_connection if cfg.client_connection is not None else ClientConnectionConfiguration()
    cfg.client_connection = cc
    if not cc.content_type:
        cc.content_type = "application/vnd.kubernetes.protobuf"
    if cc.qps == 0.0:
        cc.qps = 50.0
    if cc.burst == 0:
        cc.burst = 100

    if cfg.pod_initial_backoff_seconds is None:
        cfg.pod_initial_backoff_seconds = DEFAULT_POD_INITIAL_BACKOFF_SECONDS
    if cfg.pod_max_backoff_seconds is None:
        cfg.pod_max_backoff_seconds = DEFAULT_POD_MAX_BACKOFF_SECONDS
    if cfg.enable_profiling is None:
        cfg.enable_profiling = True
    if cfg.enable_profiling and cfg.enable_contention_profiling is None:
        cfg.enable_contention_profiling = True
    return cfg


def defaulted_copy(cfg: KubeSchedulerConfiguration, features: FeatureGate | None = None) -> KubeSchedulerConfiguration:
    """``set_defaults`` on a deep copy, leaving ``cfg`` untouched."""
    return set_defaults(copy.deepcopy(cfg), features)
