"""Defaulting, ported from pkg/scheduler/apis/config/v1/defaults_test.go and default_plugins_test.go."""

from __future__ import annotations

import copy

import pytest

from kubesched.config import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINT_JSON,
    EXTENSION_POINTS,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
    decode_config,
    default_config,
    default_plugins,
    load_config,
    set_defaults,
)
from kubesched.config.args import (
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    VolumeBindingArgs,
)
from kubesched.config.defaults import plugin_names
from kubesched.features import FeatureGate

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

# v1.34.12 pkg/scheduler/apis/config/v1/default_plugins.go (getDefaultPlugins + applyFeatureGates)
UPSTREAM_DEFAULT_MULTI_POINT_134 = [
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
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
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
]

# v1.37.2 default_plugins.go L32-58 + applyFeatureGates (NodeDeclaredFeatures GA, DynamicResources weight 2)
UPSTREAM_DEFAULT_MULTI_POINT = [
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
    ("DynamicResources", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
]

DEFAULT_PLUGIN_CONFIG_134 = [
    PluginConfig(name="DefaultPreemption", args=DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=100)),
    PluginConfig(name="DynamicResources", args=DynamicResourcesArgs(filter_timeout="10s")),
    PluginConfig(name="InterPodAffinity", args=InterPodAffinityArgs(hard_pod_affinity_weight=1)),
    PluginConfig(name="NodeAffinity", args=NodeAffinityArgs()),
    PluginConfig(name="NodeResourcesBalancedAllocation", args=NodeResourcesBalancedAllocationArgs(
        resources=[ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)])),
    PluginConfig(name="NodeResourcesFit", args=NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
        type="LeastAllocated",
        resources=[ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]))),
    PluginConfig(name="PodTopologySpread", args=PodTopologySpreadArgs(defaulting_type="System")),
    PluginConfig(name="VolumeBinding", args=VolumeBindingArgs(bind_timeout_seconds=600)),
]

# v1.37: StorageCapacityScoring (beta, on) defaults VolumeBinding's shape; DRADeviceBindingConditions and
# DRAResourceClaimDeviceStatus (on) default DynamicResources' bindingTimeout to 10m (defaults.go L198, L250-258)
DEFAULT_PLUGIN_CONFIG = [
    PluginConfig(name="DefaultPreemption", args=DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=100)),
    PluginConfig(name="DynamicResources", args=DynamicResourcesArgs(filter_timeout="10s", binding_timeout="10m0s")),
    PluginConfig(name="InterPodAffinity", args=InterPodAffinityArgs(hard_pod_affinity_weight=1)),
    PluginConfig(name="NodeAffinity", args=NodeAffinityArgs()),
    PluginConfig(name="NodeResourcesBalancedAllocation", args=NodeResourcesBalancedAllocationArgs(
        resources=[ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)])),
    PluginConfig(name="NodeResourcesFit", args=NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
        type="LeastAllocated",
        resources=[ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]))),
    PluginConfig(name="PodTopologySpread", args=PodTopologySpreadArgs(defaulting_type="System")),
    PluginConfig(name="VolumeBinding", args=VolumeBindingArgs(bind_timeout_seconds=600, shape=[
        UtilizationShapePoint(utilization=0, score=10), UtilizationShapePoint(utilization=100, score=0)])),
]

FG_134 = FeatureGate(emulated_version=(1, 34))


def names_weights(ps: PluginSet) -> list[tuple[str, int | None]]:
    return [(p.name, p.weight) for p in ps.enabled]


def test_default_plugins_are_upstream_v137_multi_point():
    plugins = default_plugins()
    assert names_weights(plugins.multi_point) == UPSTREAM_DEFAULT_MULTI_POINT
    assert plugins.multi_point.disabled == []
    for point in EXTENSION_POINTS:
        assert getattr(plugins, point) == PluginSet()


def test_default_plugins_at_emulated_134_are_upstream_v134_multi_point():
    assert names_weights(default_plugins(FG_134).multi_point) == UPSTREAM_DEFAULT_MULTI_POINT_134
    cfg = default_config(FG_134)
    assert cfg.profiles[0].plugin_config == DEFAULT_PLUGIN_CONFIG_134


@pytest.mark.parametrize("emulated, gates, added, weight", [
    ((1, 35), {}, [], None),  # NodeDeclaredFeatures alpha (off) in 1.35
    ((1, 35), {"NodeDeclaredFeatures": True}, ["NodeDeclaredFeatures"], None),
    ((1, 36), {}, ["NodeDeclaredFeatures"], None),  # beta, on
])
def test_gate_driven_default_plugins(emulated, gates, added, weight):
    fg = FeatureGate(emulated_version=emulated).with_overrides(**gates)
    got = names_weights(default_plugins(fg).multi_point)
    assert ("DynamicResources", 2) in got  # weight 2 since 1.35
    assert ("NodeUnschedulable", None) in got[:4] and got.index(("NodeUnschedulable", None)) == 2  # 1.37 swapped
    assert [n for n, _ in got[19:]] == added


def test_disabling_dynamic_resource_allocation_drops_the_plugin():
    # its dependants must go too (component-base's dependency check, kube_features.go dependencies)
    fg = FeatureGate(emulated_version=(1, 34)).with_overrides(
        DynamicResourceAllocation=False, DRAAdminAccess=False, DRAPrioritizedList=False,
        DRASchedulerFilterTimeout=False)
    assert "DynamicResources" not in [n for n, _ in names_weights(default_plugins(fg).multi_point)]


def test_default_plugins_returns_fresh_copies():
    a = default_plugins()
    a.multi_point.enabled[0].weight = 99
    assert default_plugins().multi_point.enabled[0].weight is None


def test_extension_point_constants():
    assert EXTENSION_POINTS == ("pre_enqueue", "queue_sort", "pre_filter", "filter", "post_filter",
                                "pre_score", "score", "reserve", "permit", "pre_bind", "bind", "post_bind",
                                "placement_generate", "placement_score", "pod_group_post_filter")
    assert EXTENSION_POINT_JSON["pre_enqueue"] == "preEnqueue"
    assert EXTENSION_POINT_JSON["post_bind"] == "postBind"
    assert EXTENSION_POINT_JSON["filter"] == "filter"
    assert list(EXTENSION_POINT_JSON) == list(EXTENSION_POINTS)


def test_empty_config_gets_all_upstream_defaults():
    cfg = decode_config(HEADER)
    assert cfg.parallelism == 16
    assert cfg.percentage_of_nodes_to_score is None
    assert cfg.pod_initial_backoff_seconds == 1
    assert cfg.pod_max_backoff_seconds == 10
    assert cfg.enable_profiling is True
    assert cfg.enable_contention_profiling is True
    assert cfg.delay_cache_until_active is False
    assert cfg.extenders == []
    le = cfg.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.retry_period) == (True, "15s", "10s", "2s")
    assert (le.resource_lock, le.resource_name, le.resource_namespace) == ("leases", "kube-scheduler", "kube-system")
    cc = cfg.client_connection
    assert (cc.content_type, cc.qps, cc.burst, cc.kubeconfig) == ("application/vnd.kubernetes.protobuf", 50.0, 100, "")
    assert len(cfg.profiles) == 1
    prof = cfg.profiles[0]
    assert prof.scheduler_name == DEFAULT_SCHEDULER_NAME == "default-scheduler"
    assert prof.percentage_of_nodes_to_score is None
    assert names_weights(prof.plugins.multi_point) == UPSTREAM_DEFAULT_MULTI_POINT
    assert prof.plugin_config == DEFAULT_PLUGIN_CONFIG


def test_default_config_and_load_none_equal_decoded_empty():
    assert default_config() == decode_config(HEADER)
    assert load_config(None) == default_config()


def test_default_plugin_config_order_is_sorted_names():
    assert [pc.name for pc in default_config().profiles[0].plugin_config] == sorted(
        pc.name for pc in DEFAULT_PLUGIN_CONFIG)


def test_explicit_values_are_kept():
    cfg = decode_config(HEADER + """
parallelism: 8
percentageOfNodesToScore: 20
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
enableProfiling: false
delayCacheUntilActive: true
leaderElection:
  leaderElect: false
  leaseDuration: 30s
  resourceName: my-sched
clientConnection:
  qps: 10
  burst: 20
  contentType: application/json
  kubeconfig: /etc/kube.conf
profiles:
- schedulerName: custom
  percentageOfNodesToScore: 50
""")
    assert cfg.parallelism == 8 and cfg.percentage_of_nodes_to_score == 20
    assert (cfg.pod_initial_backoff_seconds, cfg.pod_max_backoff_seconds) == (2, 20)
    # contention profiling is only defaulted when profiling is on
    assert cfg.enable_profiling is False and cfg.enable_contention_profiling is None
    assert cfg.delay_cache_until_active is True
    le = cfg.leader_election
    assert (le.leader_elect, le.lease_duration, le.renew_deadline, le.resource_name) == (False, "30s", "10s", "my-sched")
    cc = cfg.client_connection
    assert (cc.qps, cc.burst, cc.content_type, cc.kubeconfig) == (10.0, 20, "application/json", "/etc/kube.conf")
    assert cfg.profiles[0].scheduler_name == "custom"
    assert cfg.profiles[0].percentage_of_nodes_to_score == 50


def test_zero_durations_are_defaulted_like_go_zero_values():
    cfg = decode_config(HEADER + "leaderElection:\n  leaseDuration: 0s\n  retryPeriod: '0'\n")
    assert cfg.leader_election.lease_duration == "15s"
    assert cfg.leader_election.retry_period == "2s"


def test_scheduler_name_defaulted_only_for_single_profile():
    cfg = KubeSchedulerConfiguration(profiles=[KubeSchedulerProfile(), KubeSchedulerProfile(scheduler_name="b")])
    set_defaults(cfg)
    assert cfg.profiles[0].scheduler_name is None
    assert cfg.profiles[1].scheduler_name == "b"


def test_every_profile_gets_default_plugins_and_args():
    cfg = decode_config(HEADER + "profiles:\n- schedulerName: a\n- schedulerName: b\n")
    for prof in cfg.profiles:
        assert names_weights(prof.plugins.multi_point) == UPSTREAM_DEFAULT_MULTI_POINT
        assert prof.plugin_config == DEFAULT_PLUGIN_CONFIG


def test_user_args_are_decoded_defaulted_and_others_appended():
    cfg = decode_config(HEADER + """
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 5
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 0
        - name: example.com/gpu
          weight: 3
  - name: MyOutOfTree
    args:
      foo: [1, 2]
""")
    pcs = {pc.name: pc.args for pc in cfg.profiles[0].plugin_config}
    names = [pc.name for pc in cfg.profiles[0].plugin_config]
    # user entries first, in the user's order; then defaults for the other arg-carrying plugins, sorted
    assert names[:3] == ["InterPodAffinity", "NodeResourcesFit", "MyOutOfTree"]
    assert names[3:] == ["DefaultPreemption", "DynamicResources", "NodeAffinity",
                         "NodeResourcesBalancedAllocation", "PodTopologySpread", "VolumeBinding"]
    assert pcs["InterPodAffinity"] == InterPodAffinityArgs(hard_pod_affinity_weight=5)
    fit = pcs["NodeResourcesFit"]
    assert fit.scoring_strategy.type == "MostAllocated"
    assert fit.scoring_strategy.resources == [ResourceSpec(name="cpu", weight=1),
                                              ResourceSpec(name="example.com/gpu", weight=3)]
    assert pcs["MyOutOfTree"] == {"foo": [1, 2]}


def test_args_only_for_enabled_plugins():
    cfg = decode_config(HEADER + """
profiles:
- plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled: [{name: PrioritySort}, {name: NodeResourcesFit}, {name: DefaultBinder}]
    score:
      enabled: [{name: InterPodAffinity}]
""")
    assert [pc.name for pc in cfg.profiles[0].plugin_config] == ["InterPodAffinity", "NodeResourcesFit"]


def test_plugin_names_is_sorted_union_over_all_points():
    p = Plugins(multi_point=PluginSet(enabled=[Plugin(name="B")]),
                filter=PluginSet(enabled=[Plugin(name="A"), Plugin(name="B")]),
                queue_sort=PluginSet(enabled=[Plugin(name="C")], disabled=[Plugin(name="Z")]))
    assert plugin_names(p) == ["A", "B", "C"]
    assert plugin_names(None) == []


def test_set_defaults_is_idempotent():
    cfg = default_config()
    again = set_defaults(copy.deepcopy(cfg))
    assert again == cfg


@pytest.mark.parametrize("name", ["DefaultPreemption", "InterPodAffinity", "NodeAffinity",
                                  "NodeResourcesBalancedAllocation", "NodeResourcesFit",
                                  "PodTopologySpread", "VolumeBinding", "DynamicResources"])
def test_default_args_match_defaults_of_an_empty_args_mapping(name):
    cfg = decode_config(HEADER + f"profiles:\n- pluginConfig:\n  - name: {name}\n    args: {{}}\n")
    expected = next(pc.args for pc in DEFAULT_PLUGIN_CONFIG if pc.name == name)
    assert cfg.profiles[0].plugin_config[0] == PluginConfig(name=name, args=expected)
