"""kubesched.apiserver.admission: defaulting, Priority admission and validation as kube-apiserver."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.apiserver.admission import (
    SYSTEM_PRIORITY_CLASSES,
    AdmissionError,
    admit,
    pod_qos_class,
)


class Store:
    """A dict-backed stand-in for the box's storage lookups."""

    def __init__(self, *objs: tuple[str, dict[str, Any]]) -> None:
        self.objs = list(objs)

    def lookup(self, resource: str, namespace: str, name: str) -> dict[str, Any] | None:
        for r, o in self.objs:
            m = o["metadata"]
            if r == resource and m["name"] == name and m.get("namespace", "") == namespace:
                return o
        return None

    def list(self, resource: str) -> list[dict[str, Any]]:
        return [o for r, o in self.objs if r == resource]


def pc(name: str, value: int, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("priorityclasses", {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                                "value": value, **extra})


def pod(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    body["spec"].update(spec)
    return body


def run(resource: str, obj: dict[str, Any], store: Store | None = None, *, operation: str = "CREATE",
        old: dict[str, Any] | None = None) -> dict[str, Any]:
    s = store or Store()
    return admit(resource, obj, old, operation=operation, lookup=s.lookup, list_objects=s.list)


def test_pod_defaults_as_kubectl_shows_them() -> None:
    original = pod(containers=[{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}])
    before = copy.deepcopy(original)
    out = run("pods", original)
    assert original == before  # input untouched
    spec = out["spec"]
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["restartPolicy"] == "Always" and spec["dnsPolicy"] == "ClusterFirst"
    assert spec["terminationGracePeriodSeconds"] == 30 and spec["enableServiceLinks"] is True
    assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
    c = spec["containers"][0]
    assert c["imagePullPolicy"] == "Always"  # no tag means :latest
    assert c["terminationMessagePath"] == "/dev/termination-log" and c["terminationMessagePolicy"] == "File"
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert c["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}  # requests defaulted from limits
    assert out["status"] == {"phase": "Pending", "qosClass": "Guaranteed"}
    assert {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300} in spec["tolerations"]
    assert {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300} in spec["tolerations"]


def test_tagged_image_is_if_not_present_and_existing_toleration_kept() -> None:
    out = run("pods", pod(containers=[{"name": "c", "image": "registry:5000/nginx:1.27"}], tolerations=[{"operator": "Exists"}]))
    assert out["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert out["spec"]["tolerations"] == [{"operator": "Exists"}]  # tolerates everything already


def test_priority_class_resolved() -> None:
    store = Store(pc("high", 1000, preemptionPolicy="Never"))
    out = run("pods", pod(priorityClassName="high"), store)
    assert out["spec"]["priority"] == 1000 and out["spec"]["preemptionPolicy"] == "Never"


def test_builtin_system_priority_classes() -> None:
    out = run("pods", pod(priorityClassName="system-node-critical"))
    assert out["spec"]["priority"] == SYSTEM_PRIORITY_CLASSES["system-node-critical"]["value"] == 2000001000
    # a dumped pod already carries the computed priority: accepted
    out = run("pods", pod(priorityClassName="system-cluster-critical", priority=2000000000))
    assert out["spec"]["priority"] == 2000000000


def test_global_default_priority_class() -> None:
    store = Store(pc("low", 10), pc("default-a", 500, globalDefault=True), pc("default-b", 100, globalDefault=True))
    out = run("pods", pod(), store)
    # two defaults (a race upstream tolerates): the lowest value wins
    assert out["spec"]["priorityClassName"] == "default-b" and out["spec"]["priority"] == 100


def test_missing_priority_class_is_forbidden() -> None:
    with pytest.raises(AdmissionError) as info:
        run("pods", pod(priorityClassName="foo"))
    assert info.value.code == 403
    assert info.value.status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods "p" is forbidden: no PriorityClass with name foo was found',
        "reason": "Forbidden", "details": {"name": "p", "kind": "pods"}, "code": 403,
    }


def test_priority_without_class_set_by_client_is_forbidden() -> None:
    with pytest.raises(AdmissionError) as info:
        run("pods", pod(priority=1000))
    assert info.value.status["message"] == (
        'pods "p" is forbidden: the integer value of priority (1000) must not be provided in pod spec; '
        "priority admission controller computed 0 from the given PriorityClass name"
    )


def test_update_keeps_priority() -> None:
    old = run("pods", pod())
    new = copy.deepcopy(old)
    del new["spec"]["priority"]
    out = run("pods", new, operation="UPDATE", old=old)
    assert out["spec"]["priority"] == 0
    assert out["status"] == old["status"]


def test_second_global_default_is_forbidden() -> None:
    store = Store(pc("a", 1, globalDefault=True))
    _, body = pc("b", 2, globalDefault=True)
    with pytest.raises(AdmissionError) as info:
        run("priorityclasses", body, store)
    assert info.value.code == 403
    assert info.value.status["message"] == (
        'priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is already marked as default. Only one default can exist'
    )
    assert run("priorityclasses", pc("c", 3)[1], store)["preemptionPolicy"] == "PreemptLowerPriority"


def test_invalid_pod_is_422_with_causes() -> None:
    bad = pod(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "-1"}}}])
    with pytest.raises(AdmissionError) as info:
        run("pods", bad)
    st = info.value.status
    assert info.value.code == 422 and st["reason"] == "Invalid"
    assert st["message"] == 'Pod "p" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'
    assert st["details"] == {"name": "p", "kind": "Pod", "causes": [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "-1": must be greater than or equal to 0',
         "field": "spec.containers[0].resources.requests[cpu]"}]}


def test_undecodable_quantity_is_400() -> None:
    with pytest.raises(AdmissionError) as info:
        run("pods", pod(containers=[{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "12x"}}}]))
    assert info.value.code == 400
    assert info.value.status["message"] == (
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_node_allocatable_defaulted_from_capacity() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4", "pods": "110"}}}
    out = run("nodes", node)
    assert out["status"]["allocatable"] == {"cpu": "4", "pods": "110"}
    out = run("nodes/status", node, operation="UPDATE", old=node)
    assert out["status"]["allocatable"] == {"cpu": "4", "pods": "110"}
    node["status"]["allocatable"] = {"cpu": "3"}
    assert run("nodes", node)["status"]["allocatable"] == {"cpu": "3"}


def test_invalid_node_group_kind_and_deployment_group() -> None:
    with pytest.raises(AdmissionError) as info:
        run("nodes", {"kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "-2"}}})
    # allocatable is defaulted from capacity before validation, so both are reported (as upstream)
    assert info.value.status["message"] == (
        'Node "n1" is invalid: [status.capacity.cpu: Invalid value: "-2": must be greater than or equal to 0, '
        'status.allocatable.cpu: Invalid value: "-2": must be greater than or equal to 0]'
    )
    with pytest.raises(AdmissionError) as info:
        run("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "Web", "namespace": "default"}})
    assert info.value.status["message"].startswith('Deployment.apps "Web" is invalid: [metadata.name: Invalid value: "Web"')
    assert info.value.status["message"].endswith("spec.selector: Required value, spec.template.spec.containers: Required value]")
    assert info.value.status["details"]["group"] == "apps"


def test_delete_and_status_pass_through() -> None:
    p = pod(priorityClassName="missing")
    assert run("pods", p, operation="DELETE") == p
    assert run("pods/status", p, operation="UPDATE", old=p) == p


@pytest.mark.parametrize(
    ("containers", "qos"),
    [
        ([{"name": "a"}], "BestEffort"),
        ([{"name": "a", "resources": {"requests": {"cpu": "1"}}}], "Burstable"),
        ([{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}}], "Guaranteed"),
        ([{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}}}], "Burstable"),
        ([{"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}}},
          {"name": "b", "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}], "Burstable"),
        ([{"name": "a", "resources": {"requests": {"cpu": "0"}}}], "BestEffort"),
    ],
)
def test_qos_class(containers: list[dict[str, Any]], qos: str) -> None:
    assert pod_qos_class({"spec": {"containers": containers}}) == qos


def test_pod_update_may_change_only_some_spec_fields() -> None:
    old = run("pods", pod())
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:2"
    new["spec"]["tolerations"].append({"key": "k", "operator": "Exists"})
    new["metadata"]["labels"] = {"a": "b"}
    assert run("pods", new, operation="UPDATE", old=old)["spec"]["containers"][0]["image"] == "nginx:2"
    bad = copy.deepcopy(old)
    bad["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    bad["spec"]["nodeName"] = "n1"
    with pytest.raises(AdmissionError) as info:
        run("pods", bad, operation="UPDATE", old=old)
    msg = info.value.status["message"]
    assert msg.startswith('Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than '
                          "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                          "`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                          "(allow it to be set to 1 if it was previously negative)\n")
    assert '+ spec.containers[0].env: [{"name":"A","value":"1"}]' in msg and '+ spec.nodeName: "n1"' in msg
    # removing a default toleration is undone by DefaultTolerationSeconds (it runs on UPDATE too) ...
    readded = copy.deepcopy(old)
    readded["spec"]["tolerations"] = readded["spec"]["tolerations"][:1]
    assert run("pods", readded, operation="UPDATE", old=old)["spec"]["tolerations"] == old["spec"]["tolerations"]
    # ... removing any other toleration is refused
    with_user = run("pods", {**new, "spec": {**new["spec"], "containers": old["spec"]["containers"]}},
                    operation="UPDATE", old=old)
    removed = copy.deepcopy(with_user)
    removed["spec"]["tolerations"] = [t for t in removed["spec"]["tolerations"] if t.get("key") != "k"]
    with pytest.raises(AdmissionError) as info:
        run("pods", removed, operation="UPDATE", old=with_user)
    assert "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds" in info.value.status["message"]


def test_scheduling_gates_only_removed_and_gated_pod_may_gain_node_selector() -> None:
    old = run("pods", pod(schedulingGates=[{"name": "example.com/a"}, {"name": "example.com/b"}]))
    new = copy.deepcopy(old)
    new["spec"]["schedulingGates"] = [{"name": "example.com/b"}]
    new["spec"]["nodeSelector"] = {"zone": "a"}
    assert run("pods", new, operation="UPDATE", old=old)["spec"]["schedulingGates"] == [{"name": "example.com/b"}]
    added = copy.deepcopy(old)
    added["spec"]["schedulingGates"].append({"name": "example.com/c"})
    with pytest.raises(AdmissionError) as info:
        run("pods", added, operation="UPDATE", old=old)
    assert info.value.status["message"] == (
        'Pod "p" is invalid: spec.schedulingGates[2].name: Forbidden: only deletion is allowed, but found new scheduling gate \'example.com/c\''
    )


def test_wrong_types_are_400_and_nulls_dropped() -> None:
    with pytest.raises(AdmissionError) as info:
        run("pods", pod(containers=[{"name": "c", "image": "x", "ports": "80"}]))
    assert info.value.code == 400 and info.value.status["reason"] == "BadRequest"
    assert info.value.status["message"] == ('Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into '
                                            "Go struct field Container.spec.containers.ports of type []v1.ContainerPort")
    out = run("pods", pod(nodeSelector=None, affinity=None))
    assert "nodeSelector" not in out["spec"] and "affinity" not in out["spec"]
    with pytest.raises(AdmissionError) as info:
        run("deployments", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                            "spec": {"replicas": "3"}})
    assert info.value.status["message"] == ('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
                                            "string into Go struct field DeploymentSpec.spec.replicas of type int32")


def test_unknown_fields_are_dropped_as_decoding_does() -> None:
    out = run("pods", pod(containers=[{"name": "c", "image": "x", "imagee": "typo"}], foo=1))
    assert "imagee" not in out["spec"]["containers"][0] and "foo" not in out["spec"]


def test_workload_and_service_defaults() -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    out = run("deployments", dep)
    assert out["spec"]["replicas"] == 1 and out["spec"]["revisionHistoryLimit"] == 10
    assert out["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    tpl = out["spec"]["template"]["spec"]
    assert tpl["restartPolicy"] == "Always" and tpl["schedulerName"] == "default-scheduler"
    assert tpl["containers"][0]["imagePullPolicy"] == "Always" and "enableServiceLinks" not in tpl
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    with pytest.raises(AdmissionError) as info:  # the template's restartPolicy defaults to Always
        run("jobs", job)
    assert "spec.template.spec.restartPolicy: Required value" in info.value.status["message"]
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    out = run("jobs", job)
    assert (out["spec"]["completions"], out["spec"]["parallelism"], out["spec"]["backoffLimit"]) == (1, 1, 6)
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    out = run("services", svc)
    assert out["spec"]["type"] == "ClusterIP" and out["spec"]["sessionAffinity"] == "None"
    assert out["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
