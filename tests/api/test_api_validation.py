"""kubesched.api.validation: what the API server rejects, with its exact messages.

Messages are upstream's (k8s.io/apimachinery util/validation + field errors,
pkg/apis/core/validation): each case states the full 422 message kube-apiserver v1.34 gives.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.validation import (
    FieldError,
    PriorityAdmissionError,
    aggregate,
    canonical_quantity,
    invalid_message,
    quantity_decode_errors,
    resolve_pod_priority,
    status_causes,
    validate_object,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
QNAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def pod(**spec_changes: Any) -> dict[str, Any]:
    p: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}]},
    }
    p["spec"].update(spec_changes)
    return p


def container(**changes: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "image": "nginx"}
    c.update(changes)
    return c


def node(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": {}, "status": status}


def _with_meta(obj: dict[str, Any], **meta: Any) -> dict[str, Any]:
    o = copy.deepcopy(obj)
    o["metadata"].update(meta)
    return o


def message(obj: dict[str, Any]) -> str:
    errs = validate_object(obj)
    kind = obj["kind"]
    group = {"PriorityClass": "scheduling.k8s.io"}.get(kind, "")
    return invalid_message(kind, obj["metadata"].get("name", ""), errs, group=group)


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("negative cpu request", pod(containers=[container(resources={"requests": {"cpu": "-1"}})]),
     'Pod "x" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    ("negative memory limit shown canonical", pod(containers=[container(resources={"limits": {"memory": "-1.5Gi"}})]),
     'Pod "x" is invalid: spec.containers[0].resources.limits[memory]: Invalid value: "-1536Mi": must be greater than or equal to 0'),
    ("request above limit", pod(containers=[container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1500m"}})]),
     'Pod "x" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1500m'),
    ("non-standard resource name", pod(containers=[container(resources={"requests": {"gpu": "1"}})]),
     'Pod "x" is invalid: spec.containers[0].resources.requests[gpu]: Invalid value: "gpu": must be a standard resource for containers'),
    ("fractional extended resource", pod(containers=[container(resources={"requests": {"example.com/gpu": "500m"}, "limits": {"example.com/gpu": "500m"}})]),
     ('Pod "x" is invalid: [spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": must be an integer, '
     'spec.containers[0].resources.requests[example.com/gpu]: Invalid value: "500m": must be an integer]')),
    ("extended resource request without limit", pod(containers=[container(resources={"requests": {"example.com/gpu": "1"}})]),
     'Pod "x" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources'),
    ("bad pod name", _with_meta(pod(), name="My_Pod"),
     f'Pod "My_Pod" is invalid: metadata.name: Invalid value: "My_Pod": {SUBDOMAIN_MSG}'),
    ("invalid label value", _with_meta(pod(), labels={"app": "bad value!"}),
     f'Pod "x" is invalid: metadata.labels: Invalid value: "bad value!": {LABEL_VALUE_MSG}'),
    ("non-standard unqualified finalizer", _with_meta(pod(), finalizers=["cleanup"]),
     'Pod "x" is invalid: metadata.finalizers: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified'),
    ("image with trailing space", pod(containers=[container(image="nginx ")]),
     'Pod "x" is invalid: spec.containers[0].image: Invalid value: "nginx ": must not have leading or trailing whitespace'),
    ("negative pod-level request", pod(resources={"requests": {"cpu": "-1"}}),
     'Pod "x" is invalid: spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    ("pod-level request above limit", pod(resources={"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}),
     'Pod "x" is invalid: spec.resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi'),
    ("invalid label key", _with_meta(pod(), labels={"bad key": "v"}),
     f'Pod "x" is invalid: metadata.labels: Invalid value: "bad key": {QNAME_MSG}'),
    ("label value too long", _with_meta(pod(), labels={"a": "v" * 64}),
     f'Pod "x" is invalid: metadata.labels: Invalid value: "{"v" * 64}": must be no more than 63 characters'),
    ("namespace not a DNS label", _with_meta(pod(), namespace="Prod"),
     f'Pod "x" is invalid: metadata.namespace: Invalid value: "Prod": {LABEL_MSG}'),
    ("annotations too large", _with_meta(pod(), annotations={"a": "x" * (256 * 1024)}),
     'Pod "x" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes'),
    ("no containers", pod(containers=[]),
     'Pod "x" is invalid: spec.containers: Required value'),
    ("container without image", pod(containers=[{"name": "c"}]),
     'Pod "x" is invalid: spec.containers[0].image: Required value'),
    ("container name not a DNS label", pod(containers=[container(name="Web_1")]),
     f'Pod "x" is invalid: spec.containers[0].name: Invalid value: "Web_1": {LABEL_MSG}'),
    ("duplicate container names", pod(containers=[container(), container()]),
     'Pod "x" is invalid: spec.containers[1].name: Duplicate value: "c"'),
    ("host port out of range", pod(containers=[container(ports=[{"containerPort": 80, "hostPort": 70000, "protocol": "TCP"}])]),
     'Pod "x" is invalid: spec.containers[0].ports[0].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive'),
    ("host port conflict", pod(containers=[container(ports=[{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]),
                                           container(name="d", ports=[{"containerPort": 81, "hostPort": 8080, "protocol": "TCP"}])]),
     'Pod "x" is invalid: spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"'),
    ("In with no values", pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]}}}),
     ("Pod \"x\" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'")),
    ("Gt with two values", pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["1", "2"]}]}]}}}),
     ("Pod \"x\" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
     ".matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'")),
    ("unknown node selector operator", pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Within", "values": ["a"]}]}]}}}),
     ('Pod "x" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]'
     '.matchExpressions[0].operator: Invalid value: "Within": not a valid selector operator')),
    ("empty node selector terms", pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}),
     ('Pod "x" is invalid: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: '
     "Required value: must have at least one node selector term")),
    ("preferred node affinity weight 0", pod(affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]}}),
     ('Pod "x" is invalid: spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: '
     "Invalid value: 0: must be in the range 1-100")),
    ("pod anti-affinity weight 101", pod(affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 101, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}}}]}}),
     ('Pod "x" is invalid: spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: '
     "Invalid value: 101: must be in the range 1-100")),
    ("affinity term without topologyKey", pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}}]}}),
     ('Pod "x" is invalid: [spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: '
     "Required value: can not be empty, "
     'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": '
     "name part must be non-empty, "
     'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: "": '
     f"{QNAME_MSG}]")),
    ("label selector Exists with values", pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["a"]}]}}]}}),
     ('Pod "x" is invalid: spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector'
     ".matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")),
    ("unknown toleration effect", pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoScheduleX"}]),
     ('Pod "x" is invalid: spec.tolerations[0].effect: Unsupported value: "NoScheduleX": supported values: '
     '"NoSchedule", "PreferNoSchedule", "NoExecute"')),
    ("toleration Exists with a value", pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
     "Pod \"x\" is invalid: spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'"),
    ("toleration without key must be Exists", pod(tolerations=[{"operator": "Equal", "value": "v"}]),
     ('Pod "x" is invalid: spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is '
     'empty, which means "match all values and all keys"')),
    ("unknown toleration operator", pod(tolerations=[{"key": "k", "operator": "Like"}]),
     'Pod "x" is invalid: spec.tolerations[0].operator: Unsupported value: "Like": supported values: "Equal", "Exists"'),
    ("tolerationSeconds needs NoExecute", pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
     ("Pod \"x\" is invalid: spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
     "`tolerationSeconds` is set")),
    ("maxSkew 0", pod(topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": "web"}}}]),
     'Pod "x" is invalid: spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero'),
    ("unknown whenUnsatisfiable", pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Never"}]),
     ('Pod "x" is invalid: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Never": '
     'supported values: "DoNotSchedule", "ScheduleAnyway"')),
    ("minDomains with ScheduleAnyway", pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone",
                                                                       "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}]),
     ('Pod "x" is invalid: spec.topologySpreadConstraints[0].minDomains: Invalid value: 2: can only use minDomains if '
     "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway")),
    ("minDomains 0", pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 0}]),
     'Pod "x" is invalid: spec.topologySpreadConstraints[0].minDomains: Invalid value: 0: must be greater than zero'),
    ("duplicate spread constraint", pod(topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]),
     ('Pod "x" is invalid: spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: '
     '"{zone, DoNotSchedule}"')),
    ("spread constraint without topologyKey", pod(topologySpreadConstraints=[{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]),
     'Pod "x" is invalid: spec.topologySpreadConstraints[0].topologyKey: Required value: can not be empty'),
    ("bad priorityClassName", pod(priorityClassName="High_Priority"),
     f'Pod "x" is invalid: spec.priorityClassName: Invalid value: "High_Priority": {SUBDOMAIN_MSG}'),
    ("bad nodeSelector value", pod(nodeSelector={"disk": "s s d"}),
     f'Pod "x" is invalid: spec.nodeSelector: Invalid value: "s s d": {LABEL_VALUE_MSG}'),
    ("bad restartPolicy", pod(restartPolicy="Sometimes"),
     'Pod "x" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'),
    ("duplicate scheduling gate", pod(schedulingGates=[{"name": "example.com/gate"}, {"name": "example.com/gate"}]),
     'Pod "x" is invalid: spec.schedulingGates[1]: Duplicate value: "example.com/gate"'),
    ("negative node allocatable", node(capacity={"cpu": "4"}, allocatable={"cpu": "-2"}),
     'Node "n1" is invalid: status.allocatable.cpu: Invalid value: "-2": must be greater than or equal to 0'),
    ("negative node capacity memory", node(capacity={"memory": "-1Gi"}),
     'Node "n1" is invalid: status.capacity.memory: Invalid value: "-1Gi": must be greater than or equal to 0'),
    ("fractional pods capacity", node(capacity={"pods": "1500m"}),
     'Node "n1" is invalid: status.capacity.pods: Invalid value: "1500m": must be an integer'),
    ("taint without effect", {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [{"key": "k", "value": "v"}]}},
     'Node "n1" is invalid: metadata.taints[0].effect: Required value'),
    ("taint with unknown effect", {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [{"key": "k", "effect": "NoRun"}]}},
     ('Node "n1" is invalid: metadata.taints[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", '
     '"PreferNoSchedule", "NoExecute"')),
    ("duplicate taint", {"kind": "Node", "metadata": {"name": "n1"}, "spec": {"taints": [
        {"key": "k", "value": "a", "effect": "NoSchedule"}, {"key": "k", "value": "b", "effect": "NoSchedule"}]}},
     ('Node "n1" is invalid: metadata.taints[1]: Duplicate value: {"key":"k","value":"b","effect":"NoSchedule"}: '
     "taints must be unique by key and effect pair")),
    ("namespace name not a DNS label", {"kind": "Namespace", "metadata": {"name": "team.a"}},
     'Namespace "team.a" is invalid: metadata.name: Invalid value: "team.a": must not contain dots'),
    ("namespace name not a DNS label nor subdomain", {"kind": "Namespace", "metadata": {"name": "Team"}},
     f'Namespace "Team" is invalid: metadata.name: Invalid value: "Team": {LABEL_MSG}'),
    ("service name not a DNS-1035 label", {"kind": "Service", "metadata": {"name": "1web", "namespace": "default"},
                                           "spec": {"ports": [{"port": 80}]}},
     f'Service "1web" is invalid: metadata.name: Invalid value: "1web": {DNS1035_MSG}'),
    ("service without ports", {"kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": {"selector": {"app": "web"}}},
     'Service "web" is invalid: spec.ports: Required value'),
    ("service port out of range and unnamed second port", {"kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                                                           "spec": {"ports": [{"name": "a", "port": 80}, {"port": 0}]}},
     ('Service "web" is invalid: [spec.ports[1].name: Required value, '
     'spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive]')),
    ("service selector label value", {"kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                                      "spec": {"ports": [{"port": 80}], "selector": {"app": "a b"}}},
     f'Service "web" is invalid: spec.selector: Invalid value: "a b": {LABEL_VALUE_MSG}'),
    ("node with a namespace", {"kind": "Node", "metadata": {"name": "n1", "namespace": "default"}},
     'Node "n1" is invalid: metadata.namespace: Forbidden: not allowed on this type'),
    ("pod without namespace", {"kind": "Pod", "metadata": {"name": "x"}, "spec": {"containers": [container()]}},
     'Pod "x" is invalid: metadata.namespace: Required value'),
    ("user priority class too high", {"kind": "PriorityClass", "metadata": {"name": "huge"}, "value": 2_000_000_000},
     ('PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum allowed value of a user defined '
     "priority is 1000000000")),
    ("reserved system- prefix", {"kind": "PriorityClass", "metadata": {"name": "system-mine"}, "value": 10},
     ("PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: priority class names with "
     "'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class")),
]


def deployment(**spec: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                                  "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container()]}}}}
    d["spec"].update(spec)
    return d


WORKLOAD_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("negative replicas", deployment(replicas=-1),
     'Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'),
    ("selector does not match template", deployment(selector={"matchLabels": {"app": "api"}}),
     ('Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: {"app":"web"}: '
     "`selector` does not match template `labels`")),
    ("template container with negative request",
     deployment(template={"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [container(resources={"requests": {"memory": "-1Gi"}})]}}),
     ('Deployment.apps "web" is invalid: spec.template.spec.containers[0].resources.requests[memory]: '
     'Invalid value: "-1Gi": must be greater than or equal to 0')),
    ("deployment template restartPolicy", deployment(template={"metadata": {"labels": {"app": "web"}},
                                                               "spec": {"restartPolicy": "Never", "containers": [container()]}}),
     'Deployment.apps "web" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'),
    ("job with restartPolicy Always", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
                                       "spec": {"template": {"spec": {"restartPolicy": "Always", "containers": [container()]}}}},
     'Job.batch "j" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'),
]


def pdb(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}}


WORKLOAD_CASES += [
    ("pdb with both bounds", pdb(minAvailable=1, maxUnavailable=1),
     ('PodDisruptionBudget.policy "b" is invalid: spec: Invalid value: {"minAvailable":1,"selector":{"matchLabels":'
     '{"app":"web"}},"maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set')),
    ("pdb percent above 100", pdb(maxUnavailable="150%"),
     'PodDisruptionBudget.policy "b" is invalid: spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%'),
    ("pdb negative minAvailable", pdb(minAvailable=-1),
     'PodDisruptionBudget.policy "b" is invalid: spec.minAvailable: Invalid value: -1: must be greater than or equal to 0'),
]


def test_priority_admission_rules_for_the_simulator() -> None:
    classes = {"high": {"metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"}}
    get = classes.get
    assert resolve_pod_priority({"priorityClassName": "high"}, get, []) == ("high", 1000, "Never")
    assert resolve_pod_priority({"priorityClassName": "system-node-critical", "priority": 2000001000}, get, []) == (
        "system-node-critical", 2000001000, "PreemptLowerPriority")
    assert resolve_pod_priority({}, get, []) == ("", 0, "PreemptLowerPriority")
    default = {"metadata": {"name": "d"}, "value": 7, "globalDefault": True}
    assert resolve_pod_priority({}, get, [classes["high"], default]) == ("d", 7, None)
    with pytest.raises(PriorityAdmissionError, match="^no PriorityClass with name nope was found$"):
        resolve_pod_priority({"priorityClassName": "nope"}, get, [])
    with pytest.raises(PriorityAdmissionError) as info:
        resolve_pod_priority({"priority": 100}, get, [])
    assert str(info.value) == ("the integer value of priority (100) must not be provided in pod spec; "
                               "priority admission controller computed 0 from the given PriorityClass name")
    with pytest.raises(PriorityAdmissionError, match="PreemptionPolicy"):
        resolve_pod_priority({"priorityClassName": "high", "preemptionPolicy": "PreemptLowerPriority"}, get, [])


@pytest.mark.parametrize(("desc", "obj", "expected"), WORKLOAD_CASES, ids=[c[0] for c in WORKLOAD_CASES])
def test_workload_templates(desc: str, obj: dict[str, Any], expected: str) -> None:
    group = obj["apiVersion"].split("/")[0]
    assert invalid_message(obj["kind"], obj["metadata"]["name"], validate_object(obj), group=group) == expected


def test_valid_workloads() -> None:
    assert validate_object(deployment()) == []
    rs = deployment(selector={"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]})
    rs["kind"] = "ReplicaSet"
    assert validate_object(rs) == []


@pytest.mark.parametrize(("desc", "obj", "expected"), CASES, ids=[c[0] for c in CASES])
def test_invalid_objects_have_upstream_messages(desc: str, obj: dict[str, Any], expected: str) -> None:
    assert message(obj) == expected


def test_enough_invalid_cases() -> None:
    assert len(CASES) >= 25


VALID = [
    pod(),
    pod(containers=[container(resources={"requests": {"cpu": "1", "memory": "1Gi", "example.com/gpu": "2"},
                                         "limits": {"cpu": "2", "memory": "1Gi", "example.com/gpu": "2"}})]),
    pod(tolerations=[{"operator": "Exists"}, {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 10}]),
    pod(affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["2"]}],
         "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}),
    pod(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2,
                                    "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"]}]),
    node(capacity={"cpu": "4", "memory": "8Gi", "pods": "110"}, allocatable={"cpu": "3800m", "memory": "7Gi", "pods": "110"}),
    {"kind": "Node", "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
     "spec": {"taints": [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]}},
    {"kind": "PriorityClass", "metadata": {"name": "system-node-critical"}, "value": 2_000_001_000},
    {"kind": "ConfigMap", "metadata": {"name": "cfg.v1", "namespace": "default"}, "data": {"a": "b"}},
    {"kind": "Service", "metadata": {"name": "web", "namespace": "default"},
     "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "https", "port": 443, "targetPort": 8443}]}},
    {"kind": "Service", "metadata": {"name": "headless", "namespace": "default"}, "spec": {"clusterIP": "None"}},
]


@pytest.mark.parametrize("obj", VALID)
def test_valid_objects_pass(obj: dict[str, Any]) -> None:
    assert validate_object(obj) == []


def test_error_rendering_and_causes() -> None:
    errs = [FieldError("spec.a", "FieldValueRequired", "", ""), FieldError("spec.b", "FieldValueInvalid", 3, "must be even")]
    assert [str(e) for e in errs] == ["spec.a: Required value", "spec.b: Invalid value: 3: must be even"]
    assert aggregate(errs + errs) == "[spec.a: Required value, spec.b: Invalid value: 3: must be even]"
    assert aggregate(errs[:1] * 3) == "spec.a: Required value"
    assert status_causes(errs) == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.a"},
        {"reason": "FieldValueInvalid", "message": "Invalid value: 3: must be even", "field": "spec.b"},
    ]
    assert invalid_message("Deployment", "d", [], group="apps") == 'Deployment.apps "d" is invalid'


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("0.5", "500m"), ("1.5Gi", "1536Mi"), ("1000", "1k"), ("-100m", "-100m"), ("1e3", "1e3"), ("2048", "2048"),
     ("1024Ki", "1Mi"), ("100Mi", "100Mi"), ("0.1", "100m"), ("0", "0"), ("512", "512"), ("1Ki", "1Ki"), ("0.5Gi", "512Mi")],
)
def test_canonical_quantity(text: str, canonical: str) -> None:
    assert canonical_quantity(text) == canonical


def test_undecodable_quantities_are_found() -> None:
    errs = quantity_decode_errors(pod(containers=[container(resources={"requests": {"cpu": "12x"}})]))
    assert [e.path for e in errs] == ["spec.containers[0].resources.requests[cpu]"]
    assert errs[0].detail == "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    assert quantity_decode_errors(node(capacity={"cpu": "lots"}))[0].path == "status.capacity.cpu"
    assert quantity_decode_errors(pod()) == []


def test_validation_never_raises_on_garbage() -> None:
    garbage: list[Any] = [{}, {"kind": "Pod"}, {"kind": "Pod", "metadata": None, "spec": {"containers": "x"}},
                          {"kind": "Node", "status": {"capacity": ["x"]}}, {"kind": "Pod", "spec": {"tolerations": [None, 3]}}]
    for g in garbage:
        assert isinstance(validate_object(g), list)


def test_rbac_names_are_path_segments() -> None:
    """ValidateRBACName (pkg/apis/rbac/validation/validation.go:33): ``content.IsPathSegmentName``,
    so the bootstrap names with ':' (system:kube-scheduler) are valid and only '.', '..', '/' and
    '%' are refused (apimachinery content/path.go)."""
    from kubesched.api.validation import validate_object

    def errs(kind: str, name: str) -> list[str]:
        meta: dict[str, Any] = {"name": name}
        if kind in ("Role", "RoleBinding"):
            meta["namespace"] = "kube-system"
        obj: dict[str, Any] = {"kind": kind, "metadata": meta}
        if kind.endswith("Binding"):  # its roleRef is required (ValidateRoleBindingSpec)
            obj["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}
        return [f"{e.path}: {e.detail}" for e in validate_object(obj)]

    for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        assert errs(kind, "system:kube-scheduler") == []
        assert errs(kind, "Upper_Case:ok") == []
        assert errs(kind, "..") == ["metadata.name: may not be '..'"]
        assert errs(kind, "a/b%c") == ["metadata.name: may not contain '/'", "metadata.name: may not contain '%'"]
    assert errs("ConfigMap", "a:b")  # other kinds keep their DNS subdomain names
