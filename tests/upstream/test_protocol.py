"""API-server protocol facts the scheduler and kubectl rely on, recorded from the real
kube-apiserver v1.34 (``make upstream``) so that kubesched's own server can be held to them.

Every test is parametrised over ``server`` (see conftest.py). Upstream sources the facts come
from: ``pkg/registry/core/pod/storage/storage.go`` (BindingREST),
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/{create,watch,get}.go``,
``staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go`` (too old resource version),
``pkg/printers/internalversion/printers.go`` (pod Table columns),
``staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go`` (Status bodies).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubesched.testing.upstream import unique_name as unique

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def _pod(name: str, ns: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}], **spec},
    }


def _create_pod(server: Any, ns: str, name: str | None = None, **spec: Any) -> dict[str, Any]:
    status, _, body = server.request("POST", f"/api/v1/namespaces/{ns}/pods", _pod(name or unique("p"), ns, **spec))
    assert status == 201, body
    return dict(body)


def _binding(pod: dict[str, Any], node: str, **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": pod["metadata"]["name"], "namespace": pod["metadata"]["namespace"], **meta},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }


def _bind(server: Any, pod: dict[str, Any], node: str, **meta: Any) -> tuple[int, Any]:
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    status, _, body = server.request("POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding", _binding(pod, node, **meta))
    return status, body


# --------------------------------------------------------------------------- binding


def test_binding_answers_201_with_a_success_status_and_sets_node_and_condition(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    status, body = _bind(server, pod, "node-a", uid=pod["metadata"]["uid"])
    assert status == 201
    # a Status, not the Binding: clients that decode a Binding here fail after a good bind
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    status, _, got = server.request("GET", f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}")
    assert status == 200
    assert got["spec"]["nodeName"] == "node-a"
    cond = {c["type"]: c for c in got["status"].get("conditions", [])}
    assert cond["PodScheduled"]["status"] == "True"
    assert int(got["metadata"]["resourceVersion"]) > int(pod["metadata"]["resourceVersion"])


def test_binding_does_not_check_that_the_node_exists(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    status, _ = _bind(server, pod, unique("no-such-node"))
    assert status == 201


def test_binding_an_assigned_pod_is_409_already_assigned(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    assert _bind(server, pod, "node-a")[0] == 201
    status, body = _bind(server, pod, "node-b")
    assert status == 409
    assert body["kind"] == "Status" and body["status"] == "Failure"
    assert body["reason"] == "Conflict"
    assert body["code"] == 409
    assert body["details"] == {"name": name, "kind": "pods/binding"}
    assert body["message"] == f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned to node "node-a"'


def test_binding_a_pod_being_deleted_is_409(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    # a finalizer keeps the pod after DELETE, with deletionTimestamp set
    status, _, _ = server.request(
        "PATCH", f"/api/v1/namespaces/{ns}/pods/{name}", {"metadata": {"finalizers": ["example.com/hold"]}},
        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200
    status, _, deleted = server.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}")
    assert status == 200 and deleted["metadata"]["deletionTimestamp"]
    status, body = _bind(server, pod, "node-a")
    assert status == 409
    assert body["message"] == f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is being deleted, cannot be assigned to a host'
    # release the finalizer so the pod goes away
    server.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}", {"metadata": {"finalizers": None}},
                   headers={"Content-Type": "application/merge-patch+json"})


def test_binding_a_gated_pod_is_409(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns, schedulingGates=[{"name": "example.com/gate"}])
    name = pod["metadata"]["name"]
    status, body = _bind(server, pod, "node-a")
    assert status == 409
    assert body["message"] == f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} has non-empty .spec.schedulingGates'


def test_binding_with_a_stale_uid_is_409_precondition(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    status, body = _bind(server, pod, "node-a", uid="00000000-0000-0000-0000-000000000000")
    assert status == 409
    assert body["reason"] == "Conflict"
    assert body["details"]["kind"] == "pods"
    # the storage error is passed through verbatim (etcd key, RV 0, then the precondition)
    assert body["message"] == (
        f'Operation cannot be fulfilled on pods "{name}": StorageError: invalid object, Code: 4, '
        f"Key: /registry/pods/{ns}/{name}, ResourceVersion: 0, AdditionalErrorMsg: "
        f"Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000, "
        f"UID in object meta: {pod['metadata']['uid']}"
    )


def test_binding_a_missing_pod_is_404(server: Any, ns: str) -> None:
    status, body = _bind(server, {"metadata": {"name": "gone", "namespace": ns}}, "node-a")
    assert status == 404
    assert body["reason"] == "NotFound"
    assert body["message"] == 'pods "gone" not found'
    assert body["details"] == {"name": "gone", "kind": "pods"}


def test_binding_name_must_match_the_url(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    b = _binding(pod, "node-a")
    b["metadata"]["name"] = "other"
    status, _, body = server.request("POST", f"/api/v1/namespaces/{ns}/pods/{pod['metadata']['name']}/binding", b)
    assert status == 400
    assert body["reason"] == "BadRequest"
    assert body["message"] == "name in URL does not match name in Binding object"


# --------------------------------------------------------------------------- writes


def test_update_with_a_stale_resource_version_is_409_modified(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    fresh = dict(pod, metadata=dict(pod["metadata"], labels={"a": "1"}))
    status, _, _ = server.request("PUT", f"/api/v1/namespaces/{ns}/pods/{name}", fresh)
    assert status == 200
    stale = dict(pod, metadata=dict(pod["metadata"], labels={"a": "2"}))
    status, _, body = server.request("PUT", f"/api/v1/namespaces/{ns}/pods/{name}", stale)
    assert status == 409
    assert body["reason"] == "Conflict"
    assert body["message"] == f'Operation cannot be fulfilled on pods "{name}": the object has been modified; please apply your changes to the latest version and try again'


def test_status_strategic_merge_patch_merges_conditions_by_type(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    patch = {"status": {
        "$setElementOrder/conditions": [{"type": "PodScheduled"}],
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                        "message": "0/1 nodes are available: 1 Insufficient cpu."}],
    }}
    status, _, got = server.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status", patch,
                                    headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert status == 200, got
    (cond,) = got["status"]["conditions"]
    assert cond["reason"] == "Unschedulable" and cond["status"] == "False"
    # the server does not default the times: the scheduler sends lastTransitionTime itself
    # (podutil.UpdatePodCondition); unset times come back as explicit nulls
    assert cond["lastTransitionTime"] is None and cond["lastProbeTime"] is None
    # a nominatedNodeName patch keeps the condition
    status, _, got = server.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status",
                                    {"status": {"nominatedNodeName": "node-a"}},
                                    headers={"Content-Type": "application/strategic-merge-patch+json"})
    assert status == 200
    assert got["status"]["nominatedNodeName"] == "node-a"
    assert [c["type"] for c in got["status"]["conditions"]] == ["PodScheduled"]


def test_deleting_an_unassigned_pod_is_immediate(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    status, _, body = server.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}")
    assert status == 200
    assert body["kind"] == "Pod" and body["metadata"]["name"] == name
    assert server.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")[0] == 404


def test_deleting_an_assigned_pod_only_marks_it_terminating(server: Any, ns: str) -> None:
    # without a kubelet to confirm, a bound pod (e.g. a preemption victim) stays, Terminating,
    # with the default 30 s grace period, until someone deletes it with gracePeriodSeconds=0
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    assert _bind(server, pod, "node-a")[0] == 201
    status, _, body = server.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}")
    assert status == 200
    assert body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["deletionGracePeriodSeconds"] == 30
    status, _, got = server.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
    assert status == 200 and got["metadata"]["deletionTimestamp"]
    status, _, _ = server.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}",
                                  {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0})
    assert status == 200
    assert server.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")[0] == 404


def test_generate_name_appends_five_characters(server: Any, ns: str) -> None:
    body = _pod("ignored", ns)
    del body["metadata"]["name"]
    body["metadata"]["generateName"] = "web-"
    status, _, got = server.request("POST", f"/api/v1/namespaces/{ns}/pods", body)
    assert status == 201
    assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", got["metadata"]["name"])
    assert got["metadata"]["generateName"] == "web-"


def test_create_in_a_missing_namespace_is_404(server: Any) -> None:
    ns = unique("missing")
    status, _, body = server.request("POST", f"/api/v1/namespaces/{ns}/pods", _pod("p", ns))
    assert status == 404
    assert body["reason"] == "NotFound"
    assert body["message"] == f'namespaces "{ns}" not found'
    assert body["details"] == {"name": ns, "kind": "namespaces"}


# --------------------------------------------------------------------------- reads and watches


def test_list_from_a_future_resource_version_is_504_too_large(server: Any, ns: str) -> None:
    status, _, lst = server.request("GET", f"/api/v1/namespaces/{ns}/pods")
    future = int(lst["metadata"]["resourceVersion"]) + 1_000_000
    status, _, body = server.request("GET", f"/api/v1/namespaces/{ns}/pods?resourceVersion={future}&resourceVersionMatch=NotOlderThan")
    # the watch cache first waits (3 s) for the version to show up, then gives up
    assert status == 504
    assert body["reason"] == "Timeout"
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    # "current" is the watch cache's version when it gave up: the list's, or later if the
    # server wrote meanwhile (its own leases, service/IP repair loops, other tests' clean-up)
    prefix = f"Timeout: Too large resource version: {future}, current: "
    assert body["message"].startswith(prefix), body["message"]
    current = int(body["message"].removeprefix(prefix))
    assert int(lst["metadata"]["resourceVersion"]) <= current < future


def test_watch_streams_one_json_event_per_line(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    status, headers, events = server.watch(
        f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion=0&timeoutSeconds=1", timeout=5)
    assert status == 200
    assert headers["Content-Type"] == "application/json"
    assert headers["Transfer-Encoding"] == "chunked"
    # RV "0": a synthetic ADDED for what exists, then the stream ends at timeoutSeconds
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", pod["metadata"]["name"])]
    assert events[0]["object"]["kind"] == "Pod" and events[0]["object"]["apiVersion"] == "v1"


def test_watch_from_a_resource_version_only_sends_later_changes(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    rv = pod["metadata"]["resourceVersion"]
    assert _bind(server, pod, "node-a")[0] == 201
    status, _, events = server.watch(
        f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={rv}&timeoutSeconds=1", timeout=5)
    assert status == 200
    assert [(e["type"], e["object"]["spec"].get("nodeName")) for e in events] == [("MODIFIED", "node-a")]


def test_watch_with_a_field_selector_turns_a_transition_into_deleted(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    rv = pod["metadata"]["resourceVersion"]
    assert _bind(server, pod, "node-a")[0] == 201
    status, _, events = server.watch(
        f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={rv}&timeoutSeconds=1"
        "&fieldSelector=spec.nodeName%3D", timeout=5)
    assert status == 200
    # the pod stopped matching "unassigned": a DELETED carrying its last matching state
    assert [(e["type"], e["object"]["spec"].get("nodeName")) for e in events] == [("DELETED", None)]


def test_watch_and_exact_list_from_a_compacted_resource_version_are_410_expired(server: Any, ns: str) -> None:
    old = _create_pod(server, ns)
    rv = int(old["metadata"]["resourceVersion"])
    for _ in range(3):
        _create_pod(server, ns)
    server.compact()
    status, _, events = server.watch(
        f"/api/v1/namespaces/{ns}/pods?watch=1&resourceVersion={rv}&timeoutSeconds=5", timeout=10)
    # HTTP 200, then one ERROR event whose object is a 410 Expired Status, then the end
    assert status == 200
    assert [e["type"] for e in events] == ["ERROR"], events
    st = events[0]["object"]
    assert (st["kind"], st["apiVersion"], st["status"], st["code"], st["reason"]) == (
        "Status", "v1", "Failure", 410, "Expired")
    # "too old resource version: <asked> (<oldest the cache can serve from>)"
    m = re.fullmatch(r"too old resource version: (\d+) \((\d+)\)", st["message"])
    assert m and int(m[1]) == rv and int(m[2]) > rv, st["message"]

    status, _, body = server.request(
        "GET", f"/api/v1/namespaces/{ns}/pods?resourceVersion={rv}&resourceVersionMatch=Exact")
    assert status == 410
    assert (body["reason"], body["code"]) == ("Expired", 410)
    # served by etcd here (no cache snapshot that old), hence another wording: clients must
    # key on reason/code, never on the message
    assert body["message"] == "The resourceVersion for the provided list is too old."

    # a list at "any" version and a watch from a fresh list still work
    status, _, lst = server.request("GET", f"/api/v1/namespaces/{ns}/pods?resourceVersion=0")
    assert status == 200 and len(lst["items"]) == 4


def test_pod_table_columns_as_kubectl_get_o_wide_receives(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    status, _, table = server.request("GET", f"/api/v1/namespaces/{ns}/pods?limit=500",
                                            headers={"Accept": TABLE_ACCEPT})
    assert status == 200
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    cols = [(c["name"], c["type"], c.get("priority", 0)) for c in table["columnDefinitions"]]
    assert cols == [
        ("Name", "string", 0), ("Ready", "string", 0), ("Status", "string", 0),
        ("Restarts", "string", 0), ("Age", "string", 0), ("IP", "string", 1),
        ("Node", "string", 1), ("Nominated Node", "string", 1), ("Readiness Gates", "string", 1),
    ]
    (row,) = table["rows"]
    assert row["cells"][:3] == [pod["metadata"]["name"], "0/1", "Pending"]
    assert row["cells"][5:] == ["<none>", "<none>", "<none>", "<none>"]
    # the row carries partial object metadata unless includeObject=Object is asked for
    assert row["object"]["kind"] == "PartialObjectMetadata"


@pytest.mark.usefixtures("need_kubectl")
def test_kubectl_get_pods_wide_prints_node_and_nominated_node(server: Any, ns: str) -> None:
    pod = _create_pod(server, ns)
    name = pod["metadata"]["name"]
    assert _bind(server, pod, "node-a")[0] == 201
    out = server.kubectl("get", "pods", "-n", ns, "-o", "wide").stdout.splitlines()
    assert out[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                              "NOMINATED", "NODE", "READINESS", "GATES"]
    cells = out[1].split()
    assert cells[0] == name and cells[6] == "node-a"
