"""Validation rules and messages (pkg/scheduler/apis/config/validation/validation_test.go and
validation_pluginargs_test.go, component-base config validation)."""

from __future__ import annotations

import pytest

from kubesched.api.objects import NodeAffinity
from kubesched.config import decode_config, default_config, validate_config
from kubesched.config._field import aggregate_message, duplicate, invalid, is_qualified_name, required
from kubesched.errors import ConfigError
from kubesched.features import FeatureGate

HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def errors_of(body: str, features: FeatureGate | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        decode_config(HEADER + body, features=features)
    return [str(e) for e in info.value.errors]


def one_error(body: str) -> str:
    errs = errors_of(body)
    assert len(errs) == 1, errs
    return errs[0]


def args_error(plugin: str, args_yaml: str, features: FeatureGate | None = None) -> list[str]:
    body = f"profiles:\n- pluginConfig:\n  - name: {plugin}\n    args:\n"
    body += "".join(f"      {line}\n" for line in args_yaml.strip("\n").splitlines())
    return errors_of(body, features)


A = "profiles[0].pluginConfig[0].args"


def test_default_config_is_valid():
    assert validate_config(default_config()) is not None


# --------------------------------------------------------------------------- top level


@pytest.mark.parametrize("body, expected", [
    ("parallelism: 0\n", "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    ("parallelism: -3\n", "parallelism: Invalid value: -3: should be an integer value greater than zero"),
    ("percentageOfNodesToScore: 101\n", "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ("percentageOfNodesToScore: -1\n", "percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ("profiles:\n- percentageOfNodesToScore: 120\n",
     "profiles[0].percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]"),
    ("podInitialBackoffSeconds: 0\n", "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    ("podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
     "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to PodInitialBackoffSeconds"),
    ("clientConnection:\n  burst: -1\n", "clientConnection.burst: Invalid value: -1: must be non-negative"),
    ("leaderElection:\n  resourceLock: endpointsleases\n",
     'leaderElection.resourceLock: Invalid value: "endpointsleases": resourceLock value must be "leases"'),
    ("leaderElection:\n  leaseDuration: 10s\n  renewDeadline: 10s\n",
     'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`'),
    ("leaderElection:\n  retryPeriod: -1s\n",
     'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero'),
    ("leaderElection:\n  leaseDuration: 15x\n",
     'leaderElection.leaseDuration: Invalid value: "15x": time: unknown unit "x" in duration "15x"'),
])
def test_top_level_rules(body, expected):
    assert one_error(body) == expected


def test_percentage_boundaries_are_valid():
    for v in (0, 100):
        decode_config(HEADER + f"percentageOfNodesToScore: {v}\nprofiles:\n- percentageOfNodesToScore: {v}\n")


def test_equal_backoffs_are_valid():
    assert decode_config(HEADER + "podInitialBackoffSeconds: 3\npodMaxBackoffSeconds: 3\n")


def test_leader_election_timings_unchecked_when_not_electing():
    cfg = decode_config(HEADER + "leaderElection:\n  leaderElect: false\n  leaseDuration: 1s\n"
                                 "  renewDeadline: 5s\n  resourceLock: configmaps\n")
    assert cfg.leader_election.leader_elect is False


def test_duplicate_scheduler_name():
    assert one_error("profiles:\n- schedulerName: x\n- schedulerName: y\n- schedulerName: x\n") == \
        'profiles[2].schedulerName: Duplicate value: "x"'


def test_scheduler_name_required_with_multiple_profiles():
    errs = errors_of("profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 5\n")
    assert errs == ["profiles[1].schedulerName: Required value"]


def test_empty_scheduler_name_required_single_profile():
    assert one_error("profiles:\n- schedulerName: ''\n") == "profiles[0].schedulerName: Required value"


def test_queue_sort_must_match_across_profiles():
    body = """profiles:
- schedulerName: a
- schedulerName: b
  plugins:
    queueSort:
      enabled: [{name: CustomSort}]
      disabled: [{name: "*"}]
"""
    err = one_error(body)
    assert err.startswith("profiles[1].plugins.queueSort: Invalid value: ")
    assert err.endswith(": must be the same for all profiles")


def test_same_custom_queue_sort_everywhere_is_valid():
    qs = "  plugins:\n    queueSort:\n      enabled: [{name: CustomSort}]\n      disabled: [{name: '*'}]\n"
    decode_config(HEADER + "profiles:\n- schedulerName: a\n" + qs + "- schedulerName: b\n" + qs)


def test_queue_sort_args_must_match_across_profiles():
    qs = "  plugins:\n    queueSort:\n      enabled: [{name: CustomSort}]\n      disabled: [{name: '*'}]\n"
    body = ("profiles:\n- schedulerName: a\n" + qs + "  pluginConfig: [{name: CustomSort, args: {x: 1}}]\n"
            "- schedulerName: b\n" + qs + "  pluginConfig: [{name: CustomSort, args: {x: 2}}]\n")
    assert one_error(body) == \
        'profiles[1].pluginConfig.args: Invalid value: {"x":2}: queueSort must be the same for all profiles'


def test_only_one_queue_sort_plugin():
    body = "profiles:\n- plugins:\n    queueSort:\n      enabled: [{name: A}, {name: B}]\n"
    assert one_error(body) == \
        "profiles[0].plugins.queueSort.enabled: Invalid value: 2: only one queue sort plugin can be enabled"


def test_duplicate_plugin_config():
    body = ("profiles:\n- pluginConfig:\n  - name: Mine\n    args: {}\n  - name: Mine\n    args: {}\n")
    assert one_error(body) == 'profiles[0].pluginConfig[1]: Duplicate value: "Mine"'


@pytest.mark.parametrize("where", ["filter", "score"])
def test_removed_plugins_rejected(where):
    body = f"profiles:\n- plugins:\n    {where}:\n      enabled: [{{name: NodeName}}, {{name: EBSLimits}}]\n"
    assert one_error(body) == (
        f'profiles[0].plugins.{where}.enabled[1]: Invalid value: "EBSLimits": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")')


def test_removed_plugin_config_rejected():
    err = one_error("profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n")
    assert err.startswith('profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version')


def test_all_errors_collected_in_one_aggregate_message():
    with pytest.raises(ConfigError) as info:
        decode_config(HEADER + "parallelism: 0\npodInitialBackoffSeconds: 0\n")
    err = info.value
    assert err.path is None
    assert str(err) == ("[parallelism: Invalid value: 0: should be an integer value greater than zero, "
                        "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0]")
    assert len(err.errors) == 2


def test_single_error_sets_path():
    with pytest.raises(ConfigError) as info:
        decode_config(HEADER + "parallelism: 0\n")
    assert info.value.path == "parallelism"
    assert info.value.message == "Invalid value: 0: should be an integer value greater than zero"


# --------------------------------------------------------------------------- extenders


def test_extender_rules():
    body = """extenders:
- urlPrefix: http://a
  prioritizeVerb: prioritize
  bindVerb: bind
- urlPrefix: http://b
  bindVerb: bind
  httpTimeout: soon
  managedResources:
  - name: example.com/foo
  - name: example.com/foo
  - name: cpu
  - name: kubernetes.io/x
  - name: a/b/c
"""
    errs = errors_of(body)
    assert errs[0] == "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"
    assert errs[1] == 'extenders[1].httpTimeout: Invalid value: "soon": time: invalid duration "soon"'
    assert errs[2] == ('extenders[1].managedResources[1].name: Invalid value: "example.com/foo": '
                       "duplicate extender managed resource name")
    assert errs[3] == 'extenders[1].managedResources[2].name: Invalid value: "cpu": is an invalid extended resource name'
    assert errs[4] == ('extenders[1].managedResources[3].name: Invalid value: "kubernetes.io/x": '
                       "is an invalid extended resource name")
    assert errs[5].startswith('extenders[1].managedResources[4].name: Invalid value: "a/b/c": a qualified name must')
    assert errs[-1] == ('extenders: Invalid value: "found 2 extenders implementing bind": '
                        "only one extender can implement bind")


def test_valid_extender():
    decode_config(HEADER + "extenders:\n- urlPrefix: http://a\n  prioritizeVerb: p\n  weight: 1\n"
                           "  httpTimeout: 1m30s\n  managedResources: [{name: example.com/gpu}]\n")


# --------------------------------------------------------------------------- plugin args


@pytest.mark.parametrize("args, expected", [
    ("minCandidateNodesPercentage: -1", [f"{A}.minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]"]),
    ("minCandidateNodesPercentage: 101", [f"{A}.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]"]),
    ("minCandidateNodesAbsolute: -1", [f"{A}.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)"]),
    ("minCandidateNodesPercentage: 0\nminCandidateNodesAbsolute: 0", [
        f"{A}.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
        f"{A}.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage"]),
])
def test_default_preemption_args(args, expected):
    assert args_error("DefaultPreemption", args) == expected


def test_default_preemption_one_zero_is_valid():
    decode_config(HEADER + "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n"
                           "    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 10}\n")


@pytest.mark.parametrize("w", [-1, 101])
def test_inter_pod_affinity_weight(w):
    assert args_error("InterPodAffinity", f"hardPodAffinityWeight: {w}") == [
        f"{A}.hardPodAffinityWeight: Invalid value: {w}: not in valid range [0, 100]"]


def test_volume_binding_args():
    assert args_error("VolumeBinding", "bindTimeoutSeconds: -1") == [
        f"{A}.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"]
    errs = args_error("VolumeBinding", "shape: [{utilization: 0, score: 0}]", FeatureGate(emulated_version=(1, 34)))
    assert errs == [f'{A}.shape: Invalid value: [{{"utilization":0,"score":0}}]: unexpected field `shape`, '
                    "remove it or turn on the feature gate StorageCapacityScoring"]
    # 1.37: StorageCapacityScoring on, the shape is validated (validation_pluginargs.go ValidateVolumeBindingArgs)
    decode_config(HEADER + "profiles:\n- pluginConfig:\n  - {name: VolumeBinding, args: "
                  "{shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}\n")
    decode_config(HEADER + "profiles:\n- pluginConfig:\n  - {name: VolumeBinding, args: {bindTimeoutSeconds: 0}}\n")


def test_dynamic_resources_args():
    assert args_error("DynamicResources", "filterTimeout: -1s") == [
        f'{A}.filterTimeout: Invalid value: "-1s": must be zero or positive']
    assert args_error("DynamicResources", "filterTimeout: ten") == [
        f'{A}.filterTimeout: Invalid value: "ten": time: invalid duration "ten"']
    decode_config(HEADER + "profiles:\n- pluginConfig:\n  - {name: DynamicResources, args: {filterTimeout: 0s}}\n")


def test_dynamic_resources_binding_timeout():
    """v1.37.2 validation_pluginargs.go ValidateDynamicResourcesArgs: bindingTimeout ≥ 1s when
    DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on, forbidden otherwise."""
    assert args_error("DynamicResources", "bindingTimeout: 500ms") == [
        f'{A}.bindingTimeout: Invalid value: "500ms": must be at least 1 second']
    assert args_error("DynamicResources", "bindingTimeout: 1m", FeatureGate(emulated_version=(1, 35))) == [
        f"{A}.bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate "
        "is disabled"]
    decode_config(HEADER + "profiles:\n- pluginConfig:\n  - {name: DynamicResources, args: {bindingTimeout: 1s}}\n")


def test_balanced_allocation_args():
    errs = args_error("NodeResourcesBalancedAllocation",
                      "resources:\n- {name: cpu, weight: 2}\n- {name: memory}\n- {name: cpu}")
    assert errs == [f"{A}.resources[0].weight: Invalid value: 2: must be 1",
                    f'{A}.resources[2].name: Duplicate value: "cpu"']


S = f"{A}.scoringStrategy"
LEAST = "scoringStrategy:\n  type: LeastAllocated\n"
RTCR = "scoringStrategy:\n  type: RequestedToCapacityRatio\n"


@pytest.mark.parametrize("args, expected", [
    ("scoringStrategy:\n  type: Invalid",
     [f'{S}.type: Unsupported value: "Invalid": supported values: "LeastAllocated", "MostAllocated", '
      '"RequestedToCapacityRatio"']),
    ("scoringStrategy:\n  resources: [{name: cpu}]",
     [f'{S}.type: Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", '
      '"RequestedToCapacityRatio"']),
    (LEAST + "  resources:\n  - {name: cpu, weight: 101}\n  - {name: memory, weight: -1}",
     [f"{S}.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
      f"{S}.resources[1].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]"]),
    (RTCR, [f"{S}.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio"]),
    (RTCR + "  requestedToCapacityRatio: {}",
     [f"{S}.requestedToCapacityRatio.shape: Required value: at least one point must be specified"]),
    (LEAST + "  requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}]}",
     [f"{S}.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"]),
    (RTCR + "  requestedToCapacityRatio:\n    shape:\n    - {utilization: 50, score: 1}\n"
            "    - {utilization: 50, score: 2}\n    - {utilization: 40, score: 3}",
     [f"{S}.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order"]),
    (RTCR + "  requestedToCapacityRatio:\n    shape:\n    - {utilization: -10, score: 11}\n"
            "    - {utilization: 110, score: -1}",
     [f"{S}.requestedToCapacityRatio.shape[0].utilization: Invalid value: -10: not in valid range [0, 100]",
      f"{S}.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
      f"{S}.requestedToCapacityRatio.shape[1].utilization: Invalid value: 110: not in valid range [0, 100]",
      f"{S}.requestedToCapacityRatio.shape[1].score: Invalid value: -1: not in valid range [0, 10]"]),
    ("ignoredResourceGroups: [example.com/aaa]",
     [f'{A}.ignoredResourceGroups[0]: Invalid value: "example.com/aaa": resource group name can\'t contain \'/\'']),
    ("ignoredResources: ['-bad']",
     [f'{A}.ignoredResources[0]: Invalid value: "-bad": name part must consist of alphanumeric characters, '
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
      "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]),
])
def test_node_resources_fit_args(args, expected):
    assert args_error("NodeResourcesFit", args) == expected


def test_node_resources_fit_valid_variants():
    decode_config(HEADER + """
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo, nvidia.com/gpu]
      ignoredResourceGroups: [example.com]
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]
""")


P = f"{A}.defaultConstraints"


@pytest.mark.parametrize("args, expected", [
    ("defaultConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}",
     [f'{A}.defaultingType: Invalid value: "System": when .defaultConstraints are not empty']),
    ("defaultingType: Other", [f'{A}.defaultingType: Unsupported value: "Other": supported values: "System", "List"']),
    ("defaultingType: List\ndefaultConstraints:\n- {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}",
     [f"{P}[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"]),
    ("defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, whenUnsatisfiable: ScheduleAnyway}",
     [f"{P}[0].topologyKey: Required value: can not be empty"]),
    ("defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, topologyKey: zone}",
     [f"{P}[0].whenUnsatisfiable: Required value: can not be empty"]),
    ("defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Maybe}",
     [f'{P}[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"']),
    ("defaultingType: List\ndefaultConstraints:\n- maxSkew: 1\n  topologyKey: zone\n  whenUnsatisfiable: DoNotSchedule\n"
     "  labelSelector: {matchLabels: {a: b}}",
     [f"{P}[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"]),
    ("defaultingType: List\ndefaultConstraints:\n- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
     "- {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}",
     [f'{P}[1]: Duplicate value: "{{zone, DoNotSchedule}}"']),
])
def test_pod_topology_spread_args(args, expected):
    assert args_error("PodTopologySpread", args) == expected


def test_pod_topology_spread_list_valid():
    cfg = decode_config(HEADER + """
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule}
""")
    assert len(cfg.profiles[0].plugin_config[0].args.default_constraints) == 2


def test_pod_topology_spread_empty_list_valid():
    decode_config(HEADER + "profiles:\n- pluginConfig:\n  - {name: PodTopologySpread, args: {defaultingType: List}}\n")


NA = f"{A}.addedAffinity"


def test_node_affinity_args():
    errs = args_error("NodeAffinity", """
addedAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
    - matchExpressions:
      - {key: foo, operator: Near}
      - {key: foo, operator: In}
      - {key: foo, operator: Exists, values: [x]}
      - {key: foo, operator: Gt, values: ["1", "2"]}
      - {key: foo, operator: Lt, values: [abc]}
      matchFields:
      - {key: metadata.name, operator: In, values: [a, b]}
      - {key: metadata.name, operator: Exists}
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 1
    preference:
      matchExpressions:
      - {key: foo, operator: Bad}
  - weight: 0
    preference:
      matchExpressions:
      - {key: foo, operator: Bad}
""")
    t = f"{NA}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    assert errs == [
        f'{t}.matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", '
        '"Exists", "DoesNotExist", "Gt", "Lt"',
        f"{t}.matchExpressions[1].values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        f'{t}.matchExpressions[2].values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
        f"{t}.matchExpressions[3].values: Invalid value: [\"1\",\"2\"]: for 'Gt', 'Lt' operators, exactly one value is required",
        f"{t}.matchExpressions[4].values[0]: Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an integer",
        f'{t}.matchFields[0].values: Invalid value: ["a","b"]: must have one element',
        f'{t}.matchFields[1].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
        f'{NA}.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].operator: Unsupported value: '
        '"Bad": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
    ]


def test_node_affinity_args_valid():
    cfg = decode_config(HEADER + """
profiles:
- pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - {key: topology.kubernetes.io/zone, operator: In, values: [a, b]}
            - {key: cores, operator: Gt, values: ["4"]}
""")
    aff = cfg.profiles[0].plugin_config[0].args.added_affinity
    assert isinstance(aff, NodeAffinity)
    term = aff.required_during_scheduling_ignored_during_execution.node_selector_terms[0]
    assert [(r.key, r.operator, r.values) for r in term.match_expressions] == [
        ("topology.kubernetes.io/zone", "In", ["a", "b"]), ("cores", "Gt", ["4"])]


def test_unknown_plugin_args_are_not_validated():
    decode_config(HEADER + "profiles:\n- pluginConfig:\n  - {name: Mine, args: {minCandidateNodesPercentage: -5}}\n")


# --------------------------------------------------------------------------- helpers


def test_field_error_formats():
    assert str(invalid("a.b", "x", "bad")) == 'a.b: Invalid value: "x": bad'
    assert str(invalid("a", True, "d")) == "a: Invalid value: true: d"
    assert str(invalid("a", None, "d")) == "a: Invalid value: null: d"
    assert str(required("a")) == "a: Required value"
    assert str(required("a", "why")) == "a: Required value: why"
    assert str(duplicate("a", 3)) == "a: Duplicate value: 3"
    assert aggregate_message([required("a")]) == "a: Required value"
    assert aggregate_message([required("a"), required("b")]) == "[a: Required value, b: Required value]"


@pytest.mark.parametrize("name, ok", [
    ("cpu", True), ("example.com/foo", True), ("a" * 63, True), ("a" * 64, False), ("/x", False),
    ("Example.com/x", False), ("x/", False), ("-a", False), ("a_b.c-d", True), ("a/b/c", False),
])
def test_qualified_names(name, ok):
    assert (is_qualified_name(name) == []) is ok
