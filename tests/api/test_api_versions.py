"""The API of the emulated version: matchLabelKeys (merge + preferred/legacy validation), gated
fields (``schedulingGroup``, ``status.declaredFeatures``, toleration ``Lt``/``Gt``) and the
schemas of each release.

Cases are ported from upstream v1.37.2's own tables — ``pkg/apis/core/validation/validation_test.go``
(``TestValidateTopologySpreadConstraints``, ``TestNumericTolerationsWithFeatureGate``, the
``matchLabelKeys`` cases of ``TestValidatePod``), ``pkg/registry/core/pod/strategy_test.go``
(``Test_mutateTopologySpreadConstraints``) — with upstream's message texts.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api import schemas, strategy
from kubesched.api.validation import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    PodValidationOptions,
    invalid_message,
    pod_validation_options,
    validate_node,
    validate_pod,
    validate_pod_update,
    validate_tolerations,
)
from kubesched.features import FeatureGate

MERGE = PodValidationOptions()
LEGACY = PodValidationOptions(allow_match_label_keys_in_pod_topology_spread_selector_merge=False)


def pod(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": "p", "namespace": "default", "labels": dict(labels or {})},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    body["spec"].update(spec)
    return body


def tsc(selector: Any = None, keys: list[str] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"maxSkew": 1, "topologyKey": "k8s.io/zone", "whenUnsatisfiable": "DoNotSchedule"}
    if selector is not None:
        c["labelSelector"] = selector
    if keys is not None:
        c["matchLabelKeys"] = keys
    return c


def errors(p: dict[str, Any], opts: PodValidationOptions = MERGE) -> list[tuple[str, str]]:
    return [(e.path, e.type) for e in validate_pod(p, opts)]


C0 = "spec.topologySpreadConstraints[0]"
TWO_NOT_IN = {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["value1"]},
                                   {"key": "foo", "operator": "NotIn", "values": ["value2", "value3"]}]}


# ---- TestValidateTopologySpreadConstraints (validation_test.go L26123+), matchLabelKeys rows -------

@pytest.mark.parametrize("opts", [MERGE, LEGACY], ids=["merge", "legacy"])
def test_key_in_match_label_keys_not_a_label_name(opts: PodValidationOptions) -> None:
    assert errors(pod(topologySpreadConstraints=[tsc({}, ["/simple"])]), opts) == [
        (f"{C0}.matchLabelKeys[0]", INVALID)]


def test_key_in_both_preferred_rule_reports_the_constraint_path_indexed() -> None:
    # "key exists in both MatchLabelKeys and LabelSelector": field.Invalid(subFldPath0.Index(0), ...)
    # (the TODO about #129900 in upstream's test: the path is the constraint's, indexed by the key)
    assert errors(pod(topologySpreadConstraints=[tsc(TWO_NOT_IN, ["foo"])])) == [(f"{C0}[0]", INVALID)]


def test_key_in_both_legacy_rule() -> None:
    sel = {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["value1", "value2"]}]}
    assert errors(pod(topologySpreadConstraints=[tsc(sel, ["foo"])]), LEGACY) == [
        (f"{C0}.matchLabelKeys[0]", INVALID)]


@pytest.mark.parametrize("opts", [MERGE, LEGACY], ids=["merge", "legacy"])
def test_match_label_keys_forbidden_without_label_selector(opts: PodValidationOptions) -> None:
    assert errors(pod(topologySpreadConstraints=[tsc(None, ["foo"])]), opts) == [
        (f"{C0}.matchLabelKeys", FORBIDDEN)]


def test_old_pod_violating_the_preferred_rule_keeps_the_legacy_one() -> None:
    # "invalid MatchLabelKeys when OldPodViolatesMatchLabelKeysValidation is true/false"
    p = pod(topologySpreadConstraints=[tsc(TWO_NOT_IN, ["foo"])])
    assert errors(p, PodValidationOptions(old_pod_violates_match_label_keys_validation=False)) == [
        (f"{C0}[0]", INVALID)]
    assert errors(p, PodValidationOptions(old_pod_violates_match_label_keys_validation=True)) == [
        (f"{C0}.matchLabelKeys[0]", INVALID)]


def test_old_pod_violating_the_legacy_rule_keeps_the_preferred_one() -> None:
    merged = {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}
    p = pod(topologySpreadConstraints=[tsc(merged, ["foo"])])
    assert errors(p, LEGACY) == [(f"{C0}.matchLabelKeys[0]", INVALID)]
    assert errors(p, PodValidationOptions(allow_match_label_keys_in_pod_topology_spread_selector_merge=False,
                                          old_pod_violates_legacy_match_label_keys_validation=True)) == []


def test_options_from_the_old_pod_spec() -> None:
    """``GetValidationOptionsFromPodSpecAndMeta``: the old spec decides which rule an update keeps."""
    fg = FeatureGate()
    bad_for_preferred = pod(topologySpreadConstraints=[tsc(TWO_NOT_IN, ["foo"])])["spec"]
    assert pod_validation_options(fg, bad_for_preferred).old_pod_violates_match_label_keys_validation
    assert not pod_validation_options(fg, None).old_pod_violates_match_label_keys_validation
    off = fg.with_overrides(MatchLabelKeysInPodTopologySpreadSelectorMerge=False)
    merged = pod(topologySpreadConstraints=[tsc({"matchExpressions": [
        {"key": "foo", "operator": "In", "values": ["bar"]}]}, ["foo"])])["spec"]
    opts = pod_validation_options(off, merged)
    assert not opts.allow_match_label_keys_in_pod_topology_spread_selector_merge
    assert opts.old_pod_violates_legacy_match_label_keys_validation


def test_exact_message_of_a_key_already_in_the_selector() -> None:
    p = pod({"foo": "bar"}, topologySpreadConstraints=[tsc(
        {"matchLabels": {"foo": "bar"}, "matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]},
        ["foo"])])
    assert invalid_message("Pod", "p", validate_pod(p)) == (
        'Pod "p" is invalid: spec.topologySpreadConstraints[0][0]: Invalid value: "foo": '
        "exists in both matchLabelKeys and labelSelector")


def test_a_stored_pod_with_the_merged_expression_is_valid() -> None:
    """What a real API server stores for ``matchLabelKeys: [pod-template-hash]`` (the merged
    ``In`` expression) is valid under the preferred rule; the legacy rule (kubesched before)
    rejected every such pod of a dump."""
    stored = pod({"app": "web", "pod-template-hash": "abc"}, topologySpreadConstraints=[tsc(
        {"matchLabels": {"app": "web"},
         "matchExpressions": [{"key": "pod-template-hash", "operator": "In", "values": ["abc"]}]},
        ["pod-template-hash"])])
    assert validate_pod(stored) == []
    assert errors(stored, LEGACY) == [(f"{C0}.matchLabelKeys[0]", INVALID)]


def test_key_in_match_labels_passes_only_without_a_merged_expression() -> None:
    """ref §8c: a key in both matchLabelKeys and matchLabels is rejected only when the merge
    added an expression for it (the pod carries the label)."""
    spec = [tsc({"matchLabels": {"app": "web"}}, ["app"])]
    without_label = pod({}, topologySpreadConstraints=copy.deepcopy(spec))
    strategy.prepare_pod_for_create(without_label)
    assert validate_pod(without_label) == []
    with_label = pod({"app": "web"}, topologySpreadConstraints=copy.deepcopy(spec))
    strategy.prepare_pod_for_create(with_label)
    assert errors(with_label) == [(f"{C0}[0]", INVALID)]


# ---- pod (anti-)affinity terms: ValidateMatchLabelKeysAndMismatchLabelKeys (TestValidatePod) -------

AFF = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"


def affinity_pod(term: dict[str, Any]) -> dict[str, Any]:
    return pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "k8s.io/zone", **term}]}})


def test_affinity_key_in_both_match_label_keys_and_label_selector() -> None:
    # "invalid hard pod affinity, key exists in both matchLabelKeys and labelSelector"
    p = affinity_pod({"labelSelector": {"matchExpressions": [
        {"key": "key", "operator": "In", "values": ["value1"]},  # created from MatchLabelKeys
        {"key": "key", "operator": "In", "values": ["value2"]}]}, "matchLabelKeys": ["key"]})
    assert [(e.path, e.type, e.detail) for e in validate_pod(p)] == [
        (f"{AFF}[0]", INVALID, "exists in both matchLabelKeys and labelSelector")]


def test_affinity_key_in_both_match_and_mismatch_label_keys() -> None:
    p = affinity_pod({"labelSelector": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]},
                      "matchLabelKeys": ["samekey"], "mismatchLabelKeys": ["samekey"]})
    assert [(e.path, e.type, e.detail) for e in validate_pod(p)] == [
        (f"{AFF}.matchLabelKeys[0]", INVALID, "exists in both matchLabelKeys and mismatchLabelKeys")]


def test_affinity_label_selector_may_have_the_mismatch_key() -> None:
    # "LabelSelector can have the same key as MismatchLabelKeys"
    p = affinity_pod({"labelSelector": {"matchExpressions": [
        {"key": "key2", "operator": "In", "values": ["value1"]},
        {"key": "key2", "operator": "NotIn", "values": ["value1"]}]}, "mismatchLabelKeys": ["key2"]})
    assert validate_pod(p) == []


# ---- Test_mutateTopologySpreadConstraints (strategy_test.go L2733) ---------------------------------

JP = {"country": "Japan", "city": "Tokyo"}


def spread_after_create(p: dict[str, Any], fg: FeatureGate | None = None) -> list[dict[str, Any]]:
    strategy.prepare_pod_for_create(p, fg)
    return p["spec"]["topologySpreadConstraints"]


def test_match_label_keys_are_merged_with_in() -> None:
    out = spread_after_create(pod(JP, topologySpreadConstraints=[tsc({}, ["country", "city"])]))
    assert out[0]["labelSelector"] == {"matchExpressions": [
        {"key": "country", "operator": "In", "values": ["Japan"]},
        {"key": "city", "operator": "In", "values": ["Tokyo"]}]}
    assert out[0]["matchLabelKeys"] == ["country", "city"]


def test_keys_missing_from_the_pod_labels_are_ignored() -> None:
    out = spread_after_create(pod(JP, topologySpreadConstraints=[tsc({}, ["country", "not-found"])]))
    assert out[0]["labelSelector"] == {"matchExpressions": [{"key": "country", "operator": "In", "values": ["Japan"]}]}


def test_nil_label_selector_is_left_alone() -> None:
    out = spread_after_create(pod(JP, topologySpreadConstraints=[tsc(None, ["country"])]))
    assert "labelSelector" not in out[0]


def test_no_merge_when_the_selector_merge_gate_is_off() -> None:
    fg = FeatureGate().with_overrides(MatchLabelKeysInPodTopologySpreadSelectorMerge=False)
    out = spread_after_create(pod(JP, topologySpreadConstraints=[tsc({}, ["country", "city"])]), fg)
    assert out[0]["labelSelector"] == {}


def test_affinity_match_and_mismatch_keys_merged() -> None:
    p = affinity_pod({"labelSelector": {}, "matchLabelKeys": ["country"], "mismatchLabelKeys": ["city"]})
    p["metadata"]["labels"] = dict(JP)
    strategy.prepare_pod_for_create(p)
    term = p["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["labelSelector"] == {"matchExpressions": [
        {"key": "country", "operator": "In", "values": ["Japan"]},
        {"key": "city", "operator": "NotIn", "values": ["Tokyo"]}]}


# ---- TestNumericTolerationsWithFeatureGate (validation_test.go L32459) ------------------------------

CMP_ON = PodValidationOptions(allow_taint_toleration_comparison_operators=True)


CANON = "must be a valid decimal integer in canonical form"


@pytest.mark.parametrize(("op", "value", "gate", "message"), [
    ("Gt", "950", True, None),
    ("Lt", "800", True, None),
    ("Gt", "-100", True, None),
    ("Gt", "high", True, f'tolerations[0].value: Invalid value: "high": {CANON}'),
    ("Gt", "0950", True, f'tolerations[0].value: Invalid value: "0950": {CANON}'),
    ("Gt", "0", True, None),
    ("Gt", "95.5", True, f'tolerations[0].value: Invalid value: "95.5": {CANON}'),
    ("Gt", "-", True, f'tolerations[0].value: Invalid value: "-": {CANON}'),
    ("Gt", "+100", True, f'tolerations[0].value: Invalid value: "+100": {CANON}'),
    ("Gt", "95 0", True, f'tolerations[0].value: Invalid value: "95 0": {CANON}'),
    ("Gt", "", True, 'tolerations[0].value: Invalid value: "": must be non-empty'),
    ("Lt", "950", False, "Unsupported value"),
    ("Gt", "9223372036854775807", True, None),
    ("Gt", "9223372036854775808", True, 'tolerations[0].value: Invalid value: "9223372036854775808": '
                                         'strconv.ParseInt: parsing "9223372036854775808": value out of range'),
])
def test_numeric_tolerations(op: str, value: str, gate: bool, message: str | None) -> None:
    tol = {"key": "node.kubernetes.io/sla", "operator": op, "value": value, "effect": "NoSchedule"}
    errs = validate_tolerations([tol], "tolerations", CMP_ON if gate else PodValidationOptions())
    if message is None:
        assert errs == []
    else:
        assert any(message in str(e) for e in errs), [str(e) for e in errs]


def test_lt_gt_unsupported_lists_all_four_operators_and_old_pod_keeps_them() -> None:
    tol = {"key": "sla", "operator": "Lt", "value": "5", "effect": "NoSchedule"}
    assert [str(e) for e in validate_tolerations([tol], "spec.tolerations")] == [
        'spec.tolerations[0].operator: Unsupported value: "Lt": supported values: "Equal", "Exists", "Lt", "Gt"']
    assert pod_validation_options(FeatureGate(), {"tolerations": [tol]}).allow_taint_toleration_comparison_operators
    on = FeatureGate().with_overrides(TaintTolerationComparisonOperators=True)
    assert pod_validation_options(on).allow_taint_toleration_comparison_operators
    assert not pod_validation_options(FeatureGate()).allow_taint_toleration_comparison_operators


# ---- spec.schedulingGroup (GenericWorkload) ----------------------------------------------------------

def test_scheduling_group_dropped_on_create_when_generic_workload_is_off() -> None:
    p = pod(schedulingGroup={"podGroupName": "pg"})
    strategy.prepare_pod_for_create(p, FeatureGate())
    assert "schedulingGroup" not in p["spec"]
    q = pod(schedulingGroup={"podGroupName": "pg"})
    strategy.prepare_pod_for_create(q, FeatureGate().with_overrides(GenericWorkload=True))
    assert q["spec"]["schedulingGroup"] == {"podGroupName": "pg"}


def test_scheduling_group_kept_on_update_when_the_old_pod_has_it() -> None:
    old = pod(schedulingGroup={"podGroupName": "pg"})
    new = copy.deepcopy(old)
    strategy.prepare_pod_for_update(new, old, FeatureGate())
    assert new["spec"]["schedulingGroup"] == {"podGroupName": "pg"}


def test_scheduling_group_validation_and_immutability() -> None:
    bad = pod(schedulingGroup={"podGroupName": "Bad_Name"})
    [err] = validate_pod(bad)
    assert str(err).startswith('spec.schedulingGroup.podGroupName: Invalid value: "Bad_Name": a lowercase RFC 1123')
    [err] = validate_pod(pod(schedulingGroup={}))
    assert str(err) == "spec.schedulingGroup.podGroupName: Invalid value: null: must specify one of: `podGroupName`"
    old = pod(schedulingGroup={"podGroupName": "pg"})
    new = pod(schedulingGroup={"podGroupName": "other"})
    [err] = validate_pod_update(new, old)
    assert err.type == FORBIDDEN and err.path == "spec"
    assert "- spec.schedulingGroup.podGroupName: \"pg\"" in err.detail


# ---- node status.declaredFeatures (NodeDeclaredFeatures) ---------------------------------------------

def node(features: list[str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"declaredFeatures": features}}


def test_declared_features_validation() -> None:
    assert validate_node(node(["FeatureA", "FeatureB/sub"])) == []
    errs = validate_node(node(["b", "FeatureB", "FeatureA", "FeatureA"]))
    assert [(e.path, e.type) for e in errs] == [
        ("status.declaredFeatures[0]", INVALID), ("status.declaredFeatures[1]", INVALID),
        ("status.declaredFeatures[2]", INVALID), ("status.declaredFeatures[3]", DUPLICATE)]
    assert errs[0].detail.startswith('invalid feature name "b": must start with an UpperCamelCase segment')
    assert errs[2].detail == "list must be sorted alphabetically"


@pytest.mark.parametrize(("version", "kept"), [((1, 35), False), ((1, 36), True), ((1, 37), True)])
def test_declared_features_dropped_where_the_gate_is_off(version: tuple[int, int], kept: bool) -> None:
    n = node(["FeatureA"])
    strategy.prepare_node(n, None, FeatureGate(emulated_version=version))
    assert ("declaredFeatures" in n["status"]) == kept
    old = node(["FeatureA"])
    upd = node(["FeatureA", "FeatureB"])
    strategy.prepare_node(upd, old, FeatureGate(emulated_version=(1, 35)))
    assert upd["status"]["declaredFeatures"] == ["FeatureA", "FeatureB"]  # in use by the old node


# ---- schemas per release -------------------------------------------------------------------------

def test_schemas_per_release() -> None:
    assert schemas.schema_version((1, 34)) == "v1.34.0-local"
    assert schemas.schema_version() == "v1.37.0-local"
    p = pod(schedulingGroup={"podGroupName": "pg"})
    assert schemas.unknown_field_paths(("", "v1", "Pod"), p, (1, 34)) == ["spec.schedulingGroup"]
    assert schemas.unknown_field_paths(("", "v1", "Pod"), p, (1, 37)) == []
    n = node(["FeatureA"])
    assert schemas.unknown_fields(("", "v1", "Node"), n, (1, 34)) == ['unknown field "status.declaredFeatures"']
    assert schemas.unknown_fields(("", "v1", "Node"), n, (1, 35)) == []
    assert schemas.decode_error(("", "v1", "Pod"), pod(schedulingGroup="pg"), (1, 37)) == (
        "json: cannot unmarshal string into Go struct field PodSpec.spec.schedulingGroup of type v1.PodSchedulingGroup")
    assert schemas.known_kind("scheduling.k8s.io/v1beta1", "PodGroup", (1, 37))
    assert not schemas.known_kind("scheduling.k8s.io/v1beta1", "PodGroup", (1, 34))
    with pytest.raises(ValueError, match="no API schemas for version 1.33"):
        schemas.schema_version((1, 33))


# ---- DRA fields behind their gates (resourceslice/resourceclaim/deviceclass strategy.go) -----------

def _slice() -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": "n1",
                     "sharedCounters": [{"name": "c", "counters": {"mem": {"value": "1Gi"}}}],
                     "devices": [{"name": "dev0", "taints": [{"key": "k", "effect": "NoSchedule"}],
                                  "consumesCounters": [{"counterSet": "c", "counters": {"mem": {"value": "1Gi"}}}]}]}}


@pytest.mark.parametrize(("version", "kept"), [((1, 35), False), ((1, 36), True), ((1, 37), True)])
def test_resource_slice_taints_and_counters_follow_their_gates(version: tuple[int, int], kept: bool) -> None:
    s = _slice()
    strategy.drop_disabled_dra_fields(s, None, FeatureGate(emulated_version=version))
    dev = s["spec"]["devices"][0]
    assert ("taints" in dev, "consumesCounters" in dev, "sharedCounters" in s["spec"]) == (kept, kept, kept)
    # an update keeps what the stored slice already uses
    upd = _slice()
    strategy.drop_disabled_dra_fields(upd, _slice(), FeatureGate(emulated_version=(1, 35)))
    assert "taints" in upd["spec"]["devices"][0]


def test_claim_capacity_and_device_class_extended_resource() -> None:
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                 "deviceClassName": "gpu", "capacity": {"requests": {"mem": "1Gi"}}}}]}}}
    at35 = copy.deepcopy(claim)
    strategy.drop_disabled_dra_fields(at35, None, FeatureGate(emulated_version=(1, 35)))
    assert at35["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "gpu"}
    at37 = copy.deepcopy(claim)
    strategy.drop_disabled_dra_fields(at37, None, FeatureGate())
    assert at37 == claim
    dc = {"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"extendedResourceName": "example.com/gpu"}}
    strategy.drop_disabled_dra_fields(dc, None, FeatureGate(emulated_version=(1, 35)))
    assert dc["spec"] == {}
