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
    assert info.value.status["message"].startswith('Deployment.apps "Web" is invalid: metadata.name: Invalid value: "Web"')
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
