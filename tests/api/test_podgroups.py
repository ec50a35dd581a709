"""The workload API (:mod:`kubesched.api.podgroups`) and the Job controller's Workload/PodGroup
(:mod:`kubesched.controllers.workloads`), ported case by case from upstream v1.37.2's tables:
``pkg/registry/scheduling/podgroup/strategy_test.go`` (TestStrategyCreate, TestStrategyUpdate,
TestStatusStrategyUpdate), ``pkg/apis/scheduling/validation/validation_test.go``
(TestValidateWorkload, TestValidatePodGroupStatusUpdate), ``pkg/apis/scheduling/v1beta1/defaults_test.go``,
``plugin/pkg/admission/priority/admission_test.go`` (PodGroup cases) and
``pkg/controller/job/job_scheduling_manager_test.go`` (names, management modes). Expected
texts are upstream's (the strategy test's message fragments; full messages as the real
kube-apiserver v1.37.2 answers them, see tests/upstream/test_podgroups_upstream.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api import podgroups
from kubesched.api.validation import invalid_message
from kubesched.controllers.workloads import Controllers, job_scheduling_policy, pod_group_name, workload_name
from kubesched.features import FeatureGate

GATES = FeatureGate().with_overrides(GenericWorkload=True)


def pod_group(**spec: Any) -> dict[str, Any]:
    """strategy_test.go's ``podGroup``: gang minCount 5, disruptionMode single."""
    base = {"workloadRef": {"workloadName": "w", "templateName": "t"},
            "schedulingPolicy": {"gang": {"minCount": 5}}, "disruptionMode": {"single": {}}}
    base.update(spec)
    return {"apiVersion": podgroups.V1BETA1, "kind": "PodGroup",
            "metadata": {"name": "foo", "namespace": "default"}, "spec": base}


def create(obj: dict[str, Any], features: FeatureGate = GATES) -> tuple[dict[str, Any], list[str]]:
    """PrepareForCreate + Validate (+ declarative), as the strategy test runs them."""
    out = copy.deepcopy(obj)
    podgroups.prepare_for_create(out, features)
    return out, [str(e) for e in podgroups.validate(out)]


def with_constraints(*keys: str) -> dict[str, Any]:
    return pod_group(schedulingConstraints={"topology": [{"key": k} for k in keys]})


# ───────────────────────────── TestStrategyCreate ─────────────────────────────

TAS = GATES.with_overrides(TopologyAwareWorkloadScheduling=True)
PGPP = GATES.with_overrides(PodGroupPreemptionPolicy=True)

CREATE_CASES = [
    # (upstream name, object, gates, expected error fragment or None, expected spec or None)
    ("simple", pod_group(), GATES, None, pod_group()["spec"]),
    ("negative min count", pod_group(schedulingPolicy={"gang": {"minCount": -1}}), GATES,
     "must be greater than or equal to 1", None),
    ("two scheduling policies", pod_group(schedulingPolicy={"gang": {"minCount": 5}, "basic": {}}), GATES,
     "must specify exactly one of: `basic`, `gang`", None),
    ("no scheduling policy is set", pod_group(schedulingPolicy={}), GATES,
     "must specify one of: `basic`, `gang`", None),
    ("multiple topology constraints, topology aware scheduling enabled", with_constraints("foo", "bar"), TAS,
     "must have at most 1 item", None),
    ("multiple topology constraints, topology aware scheduling disabled", with_constraints("foo", "bar"), GATES,
     None, pod_group()["spec"]),
    ("invalid topology key, topology aware scheduling enabled", with_constraints("foo-"), TAS,
     'Invalid value: "foo-"', None),
    ("invalid topology key, topology aware scheduling disabled", with_constraints("foo-"), GATES,
     None, pod_group()["spec"]),
    ("disruption mode all", pod_group(disruptionMode={"all": {}}), GATES, None,
     pod_group(disruptionMode={"all": {}})["spec"]),
    ("both disruption modes set", pod_group(disruptionMode={"single": {}, "all": {}}), GATES,
     "must specify exactly one of", None),
    ("invalid priorityClassName", pod_group(priorityClassName="invalid/priority/class/name"), GATES,
     "lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters", None),
    ("priorityClassName set", pod_group(priorityClassName="high-priority"), GATES, None,
     pod_group(priorityClassName="high-priority")["spec"]),
    ("priority set", pod_group(priority=1000), GATES, None, pod_group(priority=1000)["spec"]),
    ("too high priority", pod_group(priority=1_000_000_001), GATES, "must be less than or equal to 1000000000", None),
    ("podgroup preemptionPolicy disabled - drop preemptionPolicy", pod_group(preemptionPolicy="Never"), GATES,
     None, pod_group()["spec"]),
    ("podgroup preemptionPolicy disabled - drop invalid preemptionPolicy", pod_group(preemptionPolicy="Invalid"),
     GATES, None, pod_group()["spec"]),
    ("podgroup preemptionPolicy enabled - preserve preemptionPolicy (Never)", pod_group(preemptionPolicy="Never"),
     PGPP, None, pod_group(preemptionPolicy="Never")["spec"]),
    ("podgroup preemptionPolicy enabled - preserve preemptionPolicy (PreemptLowerPriority)",
     pod_group(preemptionPolicy="PreemptLowerPriority"), PGPP, None,
     pod_group(preemptionPolicy="PreemptLowerPriority")["spec"]),
    ("podgroup preemptionPolicy enabled - invalid preemptionPolicy", pod_group(preemptionPolicy="Invalid"), PGPP,
     'supported values: "Never", "PreemptLowerPriority"', None),
]


@pytest.mark.parametrize(("obj", "features", "error", "spec"), [c[1:] for c in CREATE_CASES],
                         ids=[c[0] for c in CREATE_CASES])
def test_strategy_create(obj: dict[str, Any], features: FeatureGate, error: str | None,
                         spec: dict[str, Any] | None) -> None:
    out, errs = create(obj, features)
    if error is not None:
        assert len(errs) == 1, errs
        assert error in errs[0]
        return
    assert errs == []
    assert out["spec"] == spec


def test_strategy_create_drops_status() -> None:
    """"drop status on creation": status is not settable on create."""
    obj = pod_group()
    obj["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "False",
                                     "reason": "Unschedulable", "message": "m",
                                     "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    out, errs = create(obj)
    assert errs == [] and out["status"] == {}


def test_full_messages_as_the_real_api_server() -> None:
    """The 422 texts (checked against kube-apiserver v1.37.2)."""
    _, errs = create(pod_group(schedulingPolicy={"gang": {"minCount": 5}, "basic": {}}))
    assert errs == ['spec.schedulingPolicy: Invalid value: "{basic, gang}": '
                    "must specify exactly one of: `basic`, `gang`"]
    _, errs = create(pod_group(schedulingPolicy={"gang": {"minCount": 0}}))
    assert errs == ["spec.schedulingPolicy.gang.minCount: Required value"]
    _, errs = create(pod_group(workloadRef={"workloadName": "W/x", "templateName": "t" * 64}))
    assert errs[0].startswith('spec.workloadRef.workloadName: Invalid value: "W/x": a lowercase RFC 1123 subdomain')
    assert errs[1] == f'spec.workloadRef.templateName: Invalid value: "{"t" * 64}": must be no more than 63 bytes'
    rc = [{"name": "c", "resourceClaimName": "x"}, {"name": "c", "resourceClaimName": "y"}]
    _, errs = create(pod_group(resourceClaims=rc), GATES.with_overrides(DRAWorkloadResourceClaims=True))
    assert errs == ['spec.resourceClaims[1]: Duplicate value: {"name":"c","resourceClaimName":"y"}']
    obj = pod_group(parentCompositePodGroupName="p")
    del obj["spec"]["workloadRef"]
    _, errs = create(obj, TAS.with_overrides(CompositePodGroup=True))
    assert errs == ["spec.workloadRef: Required value: must be set when parentCompositePodGroupName is set"]


# ───────────────────────────── TestStrategyUpdate ─────────────────────────────


def update(old: dict[str, Any], new: dict[str, Any], features: FeatureGate = GATES) -> list[str]:
    o, n = copy.deepcopy(old), copy.deepcopy(new)
    podgroups.prepare_for_update(n, o, features)
    return [str(e) for e in podgroups.validate_update(n, o, features)]


UPDATE_CASES = [
    ("no changes", pod_group(), pod_group(), GATES, []),
    ("updating pod group workload ref not allowed", pod_group(),
     pod_group(workloadRef={"workloadName": "foo", "templateName": "baz"}), GATES, ["field is immutable"]),
    ("changing min count in gang scheduling is allowed", pod_group(),
     pod_group(schedulingPolicy={"gang": {"minCount": 4}}), GATES, []),
    ("changing scheduling policy not allowed", pod_group(), pod_group(schedulingPolicy={"basic": {}}), GATES,
     ["field is immutable", "field cannot be cleared once set"]),
    ("changing scheduling constraints not allowed", with_constraints("foo"), with_constraints(), TAS,
     ["field is immutable"]),
    ("changing topology key not allowed", with_constraints("foo"), with_constraints("foobar"), TAS,
     ["field is immutable"]),
    ("changing scheduling constraints not allowed with TAS disabled", with_constraints("foo"), with_constraints(),
     GATES, ["Forbidden"]),
    ("changing topology key not allowed with TAS disabled", with_constraints("foo"), with_constraints("foobar"),
     GATES, ["Forbidden"]),
    ("changing disruption mode not allowed", pod_group(), pod_group(disruptionMode={"all": {}}), GATES,
     ["field is immutable"]),
    ("changing priority class name not allowed", pod_group(), pod_group(priorityClassName="high-priority"), GATES,
     ["field is immutable"]),
    ("changing priority not allowed", pod_group(), pod_group(priority=2000), GATES, ["field is immutable"]),
    ("changing preemptionPolicy not allowed with podgroup preemptionPolicy disabled",
     pod_group(preemptionPolicy="Never"), pod_group(preemptionPolicy="PreemptLowerPriority"), GATES,
     ["Forbidden", "field is immutable"]),
    ("changing preemptionPolicy not allowed with podgroup preemptionPolicy enabled",
     pod_group(preemptionPolicy="Never"), pod_group(preemptionPolicy="PreemptLowerPriority"), PGPP,
     ["field is immutable"]),
]


@pytest.mark.parametrize(("old", "new", "features", "errors"), [c[1:] for c in UPDATE_CASES],
                         ids=[c[0] for c in UPDATE_CASES])
def test_strategy_update(old: dict[str, Any], new: dict[str, Any], features: FeatureGate,
                         errors: list[str]) -> None:
    errs = update(old, new, features)
    assert len(errs) == len(errors), errs
    for got, want in zip(errs, errors, strict=True):
        assert want in got


def test_update_messages_and_ratcheting() -> None:
    """Texts as kube-apiserver v1.37.2 answers; an invalid value left unchanged is not re-validated."""
    assert update(pod_group(), pod_group(schedulingPolicy={"basic": {}})) == [
        "spec.schedulingPolicy.basic: Invalid value: null: field is immutable",
        "spec.schedulingPolicy.gang: Invalid value: null: field cannot be cleared once set"]
    assert update(pod_group(schedulingPolicy={"basic": {}}), pod_group(schedulingPolicy={"gang": {"minCount": 1}})) \
        == ["spec.schedulingPolicy.basic: Invalid value: null: field is immutable",
            "spec.schedulingPolicy.gang: Invalid value: null: field cannot be set once created"]
    bad = pod_group(priority=2_000_000_000)  # stored before (a system class): not validated again
    assert update(bad, copy.deepcopy(bad)) == []


def test_status_update_keeps_spec_and_metadata() -> None:
    """TestStatusStrategyUpdate "valid status change" / "drop meta changes"."""
    old = pod_group()
    new = pod_group(schedulingPolicy={"gang": {"minCount": 2}})
    new["metadata"]["labels"] = {"a": "b"}
    new["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "False",
                                     "reason": "Unschedulable", "message": "Test status condition message",
                                     "lastTransitionTime": "2024-01-01T00:00:00Z"}]}
    podgroups.prepare_for_status_update(new, old, GATES)
    assert new["spec"] == old["spec"] and "labels" not in new["metadata"]
    assert podgroups.validate_status_update(new, old) == []


STATUS_CASES = [
    # TestValidatePodGroupStatusUpdate
    ("two conditions with the same type", [{"type": "A"}, {"type": "A"}],
     'status.conditions[1]: Duplicate value: "A"'),
    ("unrecognized condition status", [{"status": "Maybe"}],
     'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'),
    ("empty condition reason", [{"reason": ""}], "status.conditions[0].reason: Required value"),
    ("improper condition reason format", [{"reason": "a b"}],
     'status.conditions[0].reason: Invalid value: "a b": a condition reason must start with alphabetic character'),
    ("too long condition reason", [{"reason": "A" * 1025}],
     "status.conditions[0].reason: Too long: may not be more than 1024 bytes"),
    ("too long condition message", [{"message": "m" * 32769}],
     "status.conditions[0].message: Too long: may not be more than 32768 bytes"),
]


@pytest.mark.parametrize(("conds", "error"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES])
def test_validate_status_update(conds: list[dict[str, Any]], error: str) -> None:
    base = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": "",
            "lastTransitionTime": "2024-01-01T00:00:00Z"}
    new = pod_group()
    new["status"] = {"conditions": [{**base, **c} for c in conds]}
    errs = [str(e) for e in podgroups.validate_status_update(new, pod_group())]
    assert len(errs) == 1 and errs[0].startswith(error), errs


def test_validate_status_resource_claim_statuses() -> None:
    """"non-existent resource claim in status" / "ok resource claim status"."""
    new = pod_group(resourceClaims=[{"name": "c", "resourceClaimName": "x"}])
    new["status"] = {"resourceClaimStatuses": [{"name": "c", "resourceClaimName": "x"}]}
    assert podgroups.validate_status_update(new, new) == []
    new["status"] = {"resourceClaimStatuses": [{"name": "nope", "resourceClaimName": "x"}]}
    assert [str(e) for e in podgroups.validate_status_update(new, new)] == [
        'status.resourceClaimStatuses[0].name: Invalid value: "nope": must match the name of an entry in '
        "`spec.resourceClaims`"]


# ───────────────────────────── TestValidateWorkload ─────────────────────────────


def pgt(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"basic": {}}, **kw}


def workload(**spec: Any) -> dict[str, Any]:
    base = {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "j"},
            "podGroupTemplates": [pgt("a"), {"name": "b", "schedulingPolicy": {"gang": {"minCount": 2}}}]}
    base.update(spec)
    return {"apiVersion": podgroups.V1BETA1, "kind": "Workload",
            "metadata": {"name": "w", "namespace": "default"}, "spec": {k: v for k, v in base.items() if v is not None}}


def cpgt(name: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"basic": {}}, **kw}


WORKLOAD_CASES = [
    ("basic and gang policies", workload(), []),
    ("no controllerRef", workload(controllerRef=None), []),
    ("composite pod group template has no children",
     workload(podGroupTemplates=None, compositePodGroupTemplates=[cpgt("main")]),
     ['spec.compositePodGroupTemplates[0]: Invalid value: "main": must have at least one child PodGroupTemplate '
      "or CompositePodGroupTemplate"]),
    ("composite pod group template nested child has no children",
     workload(podGroupTemplates=None, compositePodGroupTemplates=[cpgt("main", compositePodGroupTemplates=[
         {"name": "sub", "schedulingPolicy": {"gang": {"minGroupCount": 1}}}])]),
     ['spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0]: Invalid value: "sub": must have at least '
      "one child PodGroupTemplate or CompositePodGroupTemplate"]),
    ("duplicate names deep in tree",
     workload(podGroupTemplates=None, compositePodGroupTemplates=[cpgt("main", compositePodGroupTemplates=[
         cpgt("main", podGroupTemplates=[pgt("leaf")])])]),
     ['spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].name: Duplicate value: "main"']),
    ("duplicate names in tree",
     workload(podGroupTemplates=None, compositePodGroupTemplates=[cpgt(
         "cpg1", compositePodGroupTemplates=[cpgt("cpg2", podGroupTemplates=[pgt("group1")])],
         podGroupTemplates=[pgt("group1")])]),
     ['spec.compositePodGroupTemplates[0].compositePodGroupTemplates[0].podGroupTemplates[0].name: '
      'Duplicate value: "group1"']),
    ("detected multiple priority configurations",
     workload(podGroupTemplates=[pgt("a", priorityClassName="x"), pgt("b", priorityClassName="y")]),
     ["spec: Invalid value: null: detected multiple priority configurations"]),
    ("neither list", workload(podGroupTemplates=[]),
     ['spec: Invalid value: "": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`']),
    ("too many templates", workload(podGroupTemplates=[pgt(f"t{i}") for i in range(9)]),
     ["spec.podGroupTemplates: Too many: 9: must have at most 8 items"]),
    ("duplicate template", workload(podGroupTemplates=[pgt("a"), pgt("a")]),
     ['spec.podGroupTemplates[1]: Duplicate value: {"name":"a","schedulingPolicy":{"basic":{}},'
      '"schedulingConstraints":null}']),
    ("controllerRef path segments", workload(controllerRef={"kind": "J/b", "name": "x/y"}),
     ["spec.controllerRef.kind: Invalid value: \"J/b\": may not contain '/'",
      "spec.controllerRef.name: Invalid value: \"x/y\": may not contain '/'"]),
]


@pytest.mark.parametrize(("obj", "errors"), [c[1:] for c in WORKLOAD_CASES], ids=[c[0] for c in WORKLOAD_CASES])
def test_validate_workload(obj: dict[str, Any], errors: list[str]) -> None:
    features = TAS.with_overrides(CompositePodGroup=True)
    out, errs = create(obj, features)
    assert errs == errors


def test_workload_exceeds_max_tree_height() -> None:
    deep = cpgt("cpg4", podGroupTemplates=[pgt("leaf")])
    for n in (3, 2, 1):
        deep = cpgt(f"cpg{n}", compositePodGroupTemplates=[deep])
    errs = podgroups.validate(workload(podGroupTemplates=None, compositePodGroupTemplates=[deep]))
    assert [(e.path, e.detail) for e in errs] == [("spec.compositePodGroupTemplates[0]",
                                                   "maximum template hierarchy depth is 4")]


def test_workload_update_templates_cannot_be_added_or_removed() -> None:
    old = workload()
    added = workload(podGroupTemplates=[*old["spec"]["podGroupTemplates"], pgt("c")])
    assert [str(e) for e in podgroups.validate_update(added, old)] == [
        "spec.podGroupTemplates[2]: Forbidden: item may not be added"]
    removed = workload(podGroupTemplates=old["spec"]["podGroupTemplates"][:1])
    assert [str(e) for e in podgroups.validate_update(removed, old)] == [
        "spec.podGroupTemplates: Forbidden: item may not be removed"]
    resized = copy.deepcopy(old)
    resized["spec"]["podGroupTemplates"][1]["schedulingPolicy"]["gang"]["minCount"] = 7
    assert podgroups.validate_update(resized, old) == []


def test_workload_templates_dropped_fields_without_gates() -> None:
    obj = workload(podGroupTemplates=[pgt("a", schedulingConstraints={"topology": [{"key": "rack"}]},
                                          preemptionPolicy="Never")])
    out, errs = create(obj, GATES)
    assert errs == [] and out["spec"]["podGroupTemplates"] == [pgt("a")]
    out, errs = create(obj, TAS.with_overrides(PodGroupPreemptionPolicy=True))
    assert out["spec"]["podGroupTemplates"][0]["preemptionPolicy"] == "Never"


# ───────────────────────────── defaults, admission, finalizer ─────────────────────────────


def test_defaults() -> None:
    """defaults_test.go TestSetDefaultPodGroup + the ``+default={"single": {}}`` of disruptionMode."""
    obj = pod_group()
    del obj["spec"]["disruptionMode"]
    podgroups.default_object(obj, GATES)
    assert obj["spec"]["disruptionMode"] == {"single": {}} and "preemptionPolicy" not in obj["spec"]
    podgroups.default_object(obj, PGPP)
    assert obj["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    never = pod_group(preemptionPolicy="Never")
    podgroups.default_object(never, PGPP)
    assert never["spec"]["preemptionPolicy"] == "Never"


def pc(name: str, value: int, policy: str | None = None, default: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": {"name": name}, "value": value, "globalDefault": default}
    if policy:
        out["preemptionPolicy"] = policy
    return out


def admit(obj: dict[str, Any], classes: list[dict[str, Any]], features: FeatureGate = GATES) -> dict[str, Any]:
    by_name = {c["metadata"]["name"]: c for c in classes}
    podgroups.admit_priority(obj, get_class=by_name.get, list_classes=lambda: classes, features=features)
    return obj["spec"]


def test_priority_admission() -> None:
    """admission_test.go (PodGroup): priority from the class, the global default, 0 without one;
    a conflicting explicit priority or preemptionPolicy is forbidden."""
    assert admit(pod_group(priorityClassName="high"), [pc("high", 1000)])["priority"] == 1000
    spec = admit(pod_group(), [pc("low", 5, default=True), pc("lower", 3, default=True)])
    assert (spec["priority"], spec["priorityClassName"]) == (3, "lower")
    assert admit(pod_group(), [])["priority"] == 0
    with pytest.raises(podgroups.PodGroupAdmissionError, match="no PriorityClass with name nope was found"):
        admit(pod_group(priorityClassName="nope"), [])
    with pytest.raises(podgroups.PodGroupAdmissionError, match=r"priority set in the pod group \(5\) must match the "
                       r"priority computed \(1000\) based on the priority class set in the spec"):
        admit(pod_group(priorityClassName="high", priority=5), [pc("high", 1000)])
    # PodGroupPreemptionPolicy: the class's policy; the decoder's default differs from a Never class
    spec = admit(pod_group(priorityClassName="never", preemptionPolicy="Never"), [pc("never", 1, "Never")], PGPP)
    assert spec["preemptionPolicy"] == "Never"
    defaulted = podgroups.default_object(pod_group(priorityClassName="never"), PGPP)
    with pytest.raises(podgroups.PodGroupAdmissionError, match=r"the string value of PreemptionPolicy "
                       r"\(PreemptLowerPriority\) must not be provided in pod group spec; priority admission "
                       r"controller computed Never from the given PriorityClass name"):
        admit(defaulted, [pc("never", 1, "Never")], PGPP)


def test_protection_finalizer() -> None:
    obj = pod_group()
    podgroups.add_protection_finalizer(obj, GATES)
    podgroups.add_protection_finalizer(obj, GATES)
    assert obj["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]
    off = pod_group()
    podgroups.add_protection_finalizer(off, FeatureGate())
    assert "finalizers" not in off["metadata"]
    # the PodGroupProtection controller: only once deleting and no active pod names it
    assert not podgroups.protection_finalizer_removable(obj, [])
    obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    member = {"metadata": {"namespace": "default"}, "spec": {"schedulingGroup": {"podGroupName": "foo"}},
              "status": {"phase": "Running"}}
    assert not podgroups.protection_finalizer_removable(obj, [member])
    member["status"]["phase"] = "Succeeded"
    assert podgroups.protection_finalizer_removable(obj, [member])


def test_served_api() -> None:
    assert podgroups.served_api("PodGroup", FeatureGate()) is None
    assert podgroups.served_api("PodGroup", GATES) == "scheduling.k8s.io/v1beta1"
    assert podgroups.served_api("CompositePodGroup", GATES) is None
    assert podgroups.served_api("CompositePodGroup", TAS.with_overrides(CompositePodGroup=True)) \
        == "scheduling.k8s.io/v1alpha3"
    assert invalid_message("PodGroup", "x", [], group="scheduling.k8s.io") \
        == 'PodGroup.scheduling.k8s.io "x" is invalid'


# ───────────────────────────── the scheduler's condition patch ─────────────────────────────

NOW = "2026-01-01T00:00:00Z"


def test_condition_patch() -> None:
    """updatePodGroupCondition + PatchPodGroupStatus: set, no True→False regression, diff only."""
    pg = pod_group()
    cond = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable", "message": "m"}
    assert podgroups.pod_group_condition_patch(pg, cond, NOW) == {"status": {
        "$setElementOrder/conditions": [{"type": "PodGroupInitiallyScheduled"}],
        "conditions": [{"type": "PodGroupInitiallyScheduled", "status": "False", "lastTransitionTime": NOW,
                        "reason": "Unschedulable", "message": "m"}]}}
    pg["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "False",
                                    "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "Unschedulable",
                                    "message": "m"}]}
    assert podgroups.pod_group_condition_patch(pg, cond, NOW) is None  # nothing changes
    ok = {"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "Scheduled", "message": ""}
    pg["metadata"]["generation"] = 2
    assert podgroups.pod_group_condition_patch(pg, ok, NOW) == {"status": {
        "$setElementOrder/conditions": [{"type": "PodGroupInitiallyScheduled"}],
        "conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True", "lastTransitionTime": NOW,
                        "reason": "Scheduled", "message": "", "observedGeneration": 2}]}}
    pg["status"]["conditions"][0].update(status="True", reason="Scheduled", message="")
    assert podgroups.pod_group_condition_patch(pg, cond, NOW) is None  # never back to False


# ───────────────────────────── the Job controller (WorkloadWithJob) ─────────────────────────────

WITH_JOB = GATES.with_overrides(WorkloadWithJob=True)


def test_names_as_upstream() -> None:
    """computeWorkloadName / computePodGroupName: values computed by the Go code (hash/fnv over
    spew's ``(types.UID)<uid>``, rand.SafeEncodeString)."""
    assert workload_name("x", "0b8d4e3a-1111-2222-3333-444455556666") == "x-696fd95dfd"
    assert pod_group_name("w1", "t1") == "w1-t1-76dd5fb946"
    long = workload_name("j" * 300, "u")
    assert len(long) == 253 and long.startswith("j" * 242 + "-")
    assert len(pod_group_name("w" * 200, "t" * 63)) == 253


def job(**spec: Any) -> dict[str, Any]:
    base = {"parallelism": 3, "completions": 3,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}
    base.update(spec)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "default",
                                                                   "uid": "0b8d4e3a-1111-2222-3333-444455556666"},
            "spec": base}


def test_job_scheduling_policy_defaults() -> None:
    """WorkloadItemForJob + defaultMinCountForJob: Basic by default, gang minCount max(1, parallelism)."""
    assert job_scheduling_policy(job()) == {"basic": {}}
    assert job_scheduling_policy(job(scheduling={"schedulingPolicy": {"gang": {}}})) == {"gang": {"minCount": 3}}
    assert job_scheduling_policy(job(parallelism=0, scheduling={"schedulingPolicy": {"gang": {}}})) \
        == {"gang": {"minCount": 1}}
    assert job_scheduling_policy(job(scheduling={"schedulingPolicy": {"gang": {"minCount": 2}}})) \
        == {"gang": {"minCount": 2}}


def test_job_creates_workload_pod_group_and_pods() -> None:
    j = job(scheduling={"schedulingPolicy": {"gang": {}}})
    res = Controllers([j], features=WITH_JOB).sync([], [])
    kinds = [o["kind"] for o, _ in res.created]
    assert kinds == ["Workload", "PodGroup", "Pod", "Pod", "Pod"]
    wl, pg = res.created[0][0], res.created[1][0]
    assert wl["metadata"]["name"] == "train-696fd95dfd"
    assert wl["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert wl["spec"] == {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
                          "podGroupTemplates": [{"name": "train-pgt-0", "schedulingPolicy": {"gang": {"minCount": 3}}}]}
    assert pg["metadata"]["name"] == pod_group_name("train-696fd95dfd", "train-pgt-0")
    assert [r["kind"] for r in pg["metadata"]["ownerReferences"]] == ["Job", "Workload"]
    assert "controller" not in pg["metadata"]["ownerReferences"][1]
    assert pg["spec"] == {"workloadRef": {"workloadName": "train-696fd95dfd", "templateName": "train-pgt-0"},
                          "schedulingPolicy": {"gang": {"minCount": 3}}}
    pod = res.created[2][0]
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": pg["metadata"]["name"]}
    assert [r["kind"] for r in pod["metadata"]["ownerReferences"]] == ["Job"]
    assert [(e[2], e[3]) for e in res.events] == [
        ("WorkloadCreated", "Created Workload train-696fd95dfd for Job train"),
        ("PodGroupCreated", f"Created PodGroup {pg['metadata']['name']} for Job train")]


def test_job_management_modes() -> None:
    """getManagementMode: gates off / template with its own schedulingGroup / a child Job without
    delegation → nothing; a started Job gets no new objects (isNewJob)."""
    for features in (GATES, FeatureGate()):
        assert [o["kind"] for o, _ in Controllers([job()], features=features).sync([], []).created] == ["Pod"] * 3
    own = job()
    own["spec"]["template"]["spec"]["schedulingGroup"] = {"podGroupName": "mine"}
    assert "Workload" not in [o["kind"] for o, _ in Controllers([own], features=WITH_JOB).sync([], []).created]
    child = job()
    child["metadata"]["ownerReferences"] = [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                             "name": "js", "uid": "u", "controller": True}]
    assert "PodGroup" not in [o["kind"] for o, _ in Controllers([child], features=WITH_JOB).sync([], []).created]
    started = job()
    started["status"] = {"startTime": "2024-01-01T00:00:00Z"}
    assert "Workload" not in [o["kind"] for o, _ in Controllers([started], features=WITH_JOB).sync([], []).created]


def test_job_reuses_objects_and_propagates_min_count() -> None:
    ctl = Controllers([job(scheduling={"schedulingPolicy": {"gang": {}}})], features=WITH_JOB)
    first = ctl.sync([], [])
    wl, pg = first.created[0][0], first.created[1][0]
    # the Job scaled up: parallelism 5 → the gang's minCount follows (syncGangMinCount)
    bigger = job(parallelism=5, completions=5, scheduling={"schedulingPolicy": {"gang": {}}})
    res = Controllers([bigger], features=WITH_JOB).sync([o for o, _ in first.created if o["kind"] == "Pod"], [],
                                                        scheduling=[wl, pg])
    assert "Workload" not in [o["kind"] for o, _ in res.created]
    updated = {o["kind"]: o for o, _ in res.updated}
    assert updated["Workload"]["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 5}}
    assert updated["PodGroup"]["spec"]["schedulingPolicy"] == {"gang": {"minCount": 5}}


def test_job_spec_scheduling_rules() -> None:
    """batch/v1 ``Job.spec.scheduling``: forbidden without WorkloadWithJob; on update no set/unset,
    the basic/gang variant fixed (validateJobSchedulingUpdate), minCount mutable — texts as the
    real kube-apiserver v1.37.2."""
    gang = job(scheduling={"schedulingPolicy": {"gang": {}}})
    assert [str(e) for e in podgroups.validate_job_scheduling(gang, None, GATES)] == ["spec.scheduling: Forbidden"]
    assert podgroups.validate_job_scheduling(gang, None, WITH_JOB) == []
    resized = job(scheduling={"schedulingPolicy": {"gang": {"minCount": 1}}})
    assert podgroups.validate_job_scheduling(resized, gang, WITH_JOB) == []
    basic = job(scheduling={"schedulingPolicy": {"basic": {}}})
    assert [str(e) for e in podgroups.validate_job_scheduling(basic, gang, WITH_JOB)] == [
        "spec.scheduling.schedulingPolicy: Invalid value: null: the basic/gang policy variant is immutable after "
        "creation; only schedulingPolicy.gang.minCount may be updated"]
    assert [str(e) for e in podgroups.validate_job_scheduling(job(), gang, WITH_JOB)] == [
        "spec.scheduling: Invalid value: null: field cannot be cleared once set"]
    assert podgroups.validate_job_scheduling(gang, gang, GATES) == []  # unchanged: not forbidden again
