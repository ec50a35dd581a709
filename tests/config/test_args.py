"""Typed plugin args: decoding and upstream SetDefaults_*Args (pkg/scheduler/apis/config/v1/defaults_test.go)."""

from __future__ import annotations

import pytest

from kubesched.config.args import (
    ARGS_TYPES,
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    TopologySpreadConstraint,
    UtilizationShapePoint,
    VolumeBindingArgs,
    decode_args,
    default_args,
)
from kubesched.config.types import parse_duration
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate

FG_134 = FeatureGate(emulated_version=(1, 34))

CPU_MEM = [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


def test_args_types_cover_the_in_tree_plugins_with_args():
    assert sorted(ARGS_TYPES) == ["DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity",
                                  "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread",
                                  "VolumeBinding"]


def test_python_constructed_args_have_upstream_defaults():
    assert DefaultPreemptionArgs() == DefaultPreemptionArgs(min_candidate_nodes_percentage=10,
                                                            min_candidate_nodes_absolute=100)
    assert InterPodAffinityArgs().hard_pod_affinity_weight == 1
    assert InterPodAffinityArgs().ignore_preferred_terms_of_existing_pods is False
    assert NodeAffinityArgs().added_affinity is None
    fit = NodeResourcesFitArgs()
    assert fit.ignored_resources == [] and fit.ignored_resource_groups == []
    assert fit.scoring_strategy == ScoringStrategy(type="LeastAllocated", resources=CPU_MEM)
    assert fit.scoring_strategy.requested_to_capacity_ratio is None
    assert NodeResourcesBalancedAllocationArgs().resources == CPU_MEM
    assert PodTopologySpreadArgs() == PodTopologySpreadArgs(default_constraints=[], defaulting_type="System")
    assert VolumeBindingArgs() == VolumeBindingArgs(bind_timeout_seconds=600, shape=None)
    assert DynamicResourcesArgs().filter_timeout == "10s"


def test_default_args():
    # the struct defaults are v1.34's gate defaults (StorageCapacityScoring off, no bindingTimeout)
    for name, typ in ARGS_TYPES.items():
        assert default_args(name, FG_134) == typ()
    assert default_args("PrioritySort") is None


def test_default_args_follow_the_gates_of_v137():
    """v1.37.2 apis/config/v1/defaults.go L198 (shape when StorageCapacityScoring) and L250-258
    (bindingTimeout 10m when DRADeviceBindingConditions and DRAResourceClaimDeviceStatus)."""
    assert default_args("VolumeBinding").shape == [UtilizationShapePoint(utilization=0, score=10),
                                                   UtilizationShapePoint(utilization=100, score=0)]
    assert default_args("DynamicResources") == DynamicResourcesArgs(filter_timeout="10s", binding_timeout="10m0s")
    off = FeatureGate().with_overrides(DRADeviceBindingConditions=False)
    assert default_args("DynamicResources", off).binding_timeout is None
    assert default_args("VolumeBinding", FeatureGate().with_overrides(StorageCapacityScoring=False)).shape is None


def test_default_lists_are_not_shared():
    a, b = NodeResourcesFitArgs(), NodeResourcesFitArgs()
    a.scoring_strategy.resources[0].weight = 50
    assert b.scoring_strategy.resources[0].weight == 1


@pytest.mark.parametrize("name, raw, expected", [
    ("DefaultPreemption", None, DefaultPreemptionArgs()),
    ("DefaultPreemption", {"minCandidateNodesAbsolute": 5},
     DefaultPreemptionArgs(min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=5)),
    ("DefaultPreemption", {"minCandidateNodesPercentage": None}, DefaultPreemptionArgs()),
    ("InterPodAffinity", {"ignorePreferredTermsOfExistingPods": True},
     InterPodAffinityArgs(hard_pod_affinity_weight=1, ignore_preferred_terms_of_existing_pods=True)),
    ("VolumeBinding", {"bindTimeoutSeconds": 30}, VolumeBindingArgs(bind_timeout_seconds=30)),
    ("DynamicResources", {"filterTimeout": None}, DynamicResourcesArgs(filter_timeout="10s")),
    ("DynamicResources", {"filterTimeout": "1m"}, DynamicResourcesArgs(filter_timeout="1m")),
    ("PodTopologySpread", {"defaultingType": ""}, PodTopologySpreadArgs(defaulting_type="System")),
    ("NodeResourcesBalancedAllocation", {"resources": []}, NodeResourcesBalancedAllocationArgs(resources=CPU_MEM)),
    ("NodeResourcesBalancedAllocation", {"resources": [{"name": "cpu"}, {"name": "example.com/gpu", "weight": 0}]},
     NodeResourcesBalancedAllocationArgs(resources=[ResourceSpec(name="cpu", weight=1),
                                                    ResourceSpec(name="example.com/gpu", weight=1)])),
    ("NodeResourcesFit", {"scoringStrategy": None}, NodeResourcesFitArgs()),
    ("NodeResourcesFit", {"ignoredResources": ["example.com/a"]},
     NodeResourcesFitArgs(ignored_resources=["example.com/a"])),
])
def test_decode_and_default(name, raw, expected):
    assert decode_args(name, raw, "args", FG_134) == expected


def test_fit_requested_to_capacity_ratio_without_resources_gets_cpu_memory():
    got = decode_args("NodeResourcesFit", {"scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]},
    }}, "args")
    assert got.scoring_strategy == ScoringStrategy(
        type="RequestedToCapacityRatio", resources=CPU_MEM,
        requested_to_capacity_ratio=RequestedToCapacityRatioParam(shape=[
            UtilizationShapePoint(utilization=0, score=0), UtilizationShapePoint(utilization=100, score=10)]))


def test_fit_resource_weight_zero_becomes_one():
    got = decode_args("NodeResourcesFit", {"scoringStrategy": {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 0}, {"name": "memory", "weight": 5}]}},
        "args")
    assert got.scoring_strategy.resources == [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=5)]


def test_fit_strategy_without_type_is_not_defaulted_like_upstream():
    got = decode_args("NodeResourcesFit", {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 2}]}}, "a")
    assert got.scoring_strategy.type == ""


def test_pod_topology_spread_constraints_decoded():
    got = decode_args("PodTopologySpread", {"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3,
         "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore", "matchLabelKeys": ["app"]}]}, "a")
    assert got.default_constraints == [TopologySpreadConstraint(
        max_skew=2, topology_key="zone", when_unsatisfiable="DoNotSchedule", min_domains=3,
        node_affinity_policy="Honor", node_taints_policy="Ignore", match_label_keys=["app"])]


def test_typed_args_pass_through_and_get_defaulted():
    args = NodeResourcesFitArgs(scoring_strategy=None)
    assert decode_args("NodeResourcesFit", args, "a") is args
    assert args.scoring_strategy == ScoringStrategy()


def test_unknown_plugins_keep_raw_args():
    raw = {"whatever": 1}
    assert decode_args("MyPlugin", raw, "a") is raw
    assert decode_args("MyPlugin", None, "a") is None


def test_strict_unknown_field_path():
    with pytest.raises(ConfigError) as info:
        decode_args("InterPodAffinity", {"hardPodAffinityWieght": 3}, "profiles[0].pluginConfig[2].args")
    assert str(info.value) == 'profiles[0].pluginConfig[2].args: unknown field "hardPodAffinityWieght"'


def test_nested_type_error_path():
    with pytest.raises(ConfigError) as info:
        decode_args("VolumeBinding", {"shape": [{"utilization": "x"}]}, "p.args")
    assert str(info.value) == "p.args.shape[0].utilization: expected int, got str"


@pytest.mark.parametrize("text, seconds", [
    ("0", 0.0), ("10s", 10.0), ("1m30s", 90.0), ("1.5h", 5400.0), ("300ms", 0.3), ("-2s", -2.0),
    ("+1m", 60.0), ("1h2m3s4ms", 3723.004), ("10us", 1e-5), ("5ns", 5e-9), (".5s", 0.5),
])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text, message", [
    ("", 'time: invalid duration ""'),
    ("10", 'time: missing unit in duration "10"'),
    ("10x", 'time: unknown unit "x" in duration "10x"'),
    ("s", 'time: invalid duration "s"'),
    ("1s ", 'time: invalid duration "1s "'),
    ("-", 'time: invalid duration "-"'),
])
def test_parse_duration_errors(text, message):
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    assert str(info.value) == message
