"""Server-side apply (``kubectl apply --server-side``), the same sequence of applies against the
real kube-apiserver and the box (``server`` fixture, see conftest.py): create when absent,
managedFields per field manager, conflicts (409 with upstream's message naming the managers and
fields), shared ownership, ``force=true``, an Update manager taking fields over, removal of fields
a manager stops applying, custom resources. Upstream: sigs.k8s.io/structured-merge-diff v6
(``merge/update.go``), k8s.io/apimachinery@v0.37.2 ``pkg/util/managedfields/internal``
(``conflict.go``, ``skipnonapplied.go``, ``stripmeta.go``), ``handlers/patch.go`` (applyPatcher).

Run with ``KUBESCHED_UPSTREAM_DIR=/work/main/.cache/upstream/v1.37.2`` (or after ``make
upstream``) to hold the box to the real server; the box alone runs always.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from kubesched.testing.upstream import unique_name as unique

APPLY = {"Content-Type": "application/apply-patch+yaml"}


def _deployment(name: str, replicas: int = 2, image: str = "nginx:1", labels: dict[str, str] | None = None,
                ) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": labels if labels is not None else {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": image,
                                                       "ports": [{"containerPort": 80}]}]}}},
    }


def _apply(server: Any, path: str, obj: Any, manager: str | None, force: bool = False) -> tuple[int, Any]:
    q = [f"fieldManager={manager}"] if manager else []
    if force:
        q.append("force=true")
    status, _, body = server.request("PATCH", path + ("?" + "&".join(q) if q else ""), json.dumps(obj).encode(),
                                     headers=APPLY)
    return status, body


def _managers(obj: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(manager, operation, fieldsV1) of each entry, sorted (time and order aside)."""
    return sorted((e["manager"], e["operation"], e.get("fieldsV1")) for e in obj["metadata"]["managedFields"])


def _no_time(msg: str) -> str:
    return re.sub(r" at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", " at <t>", msg)


CONTAINERS = {"k:{\"name\":\"c\"}": {".": {}, "f:image": {}, "f:name": {},
                                     "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":
                                                 {".": {}, "f:containerPort": {}}}}}


def _fields(labels: bool = True, replicas: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {"f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                                                            "f:spec": {"f:containers": CONTAINERS}}}
    if replicas:
        spec["f:replicas"] = {}
    out: dict[str, Any] = {"f:spec": dict(sorted(spec.items()))}
    if labels:
        out = {"f:metadata": {"f:labels": {"f:app": {}}}, **out}
    return out


def test_apply_creates_then_conflicts_force_and_update_managers(server: Any, ns: str) -> None:
    name = unique("web")
    path = f"/apis/apps/v1/namespaces/{ns}/deployments/{name}"
    # fieldManager is required
    status, body = _apply(server, path, _deployment(name), None)
    assert status == 422
    assert body["message"] == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required ' \
                              'for apply patch'
    # absent: created (201), alice owns what she applied
    status, body = _apply(server, path, _deployment(name), "alice")
    assert status == 201, body
    assert _managers(body) == [("alice", "Apply", _fields())]
    # bob applies the same values: shared ownership, no conflict
    status, body = _apply(server, path, _deployment(name), "bob")
    assert status == 200, body
    assert _managers(body) == [("alice", "Apply", _fields()), ("bob", "Apply", _fields())]
    # bob changes replicas: a conflict with alice
    status, body = _apply(server, path, _deployment(name, replicas=3), "bob")
    assert status == 409, body
    assert body["reason"] == "Conflict"
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas'
    assert body["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                          "field": ".spec.replicas"}]
    # forced: bob takes .spec.replicas from alice (and only that)
    status, body = _apply(server, path, _deployment(name, replicas=3), "bob", force=True)
    assert status == 200, body
    assert body["spec"]["replicas"] == 3
    assert _managers(body) == [("alice", "Apply", _fields(replicas=False)), ("bob", "Apply", _fields())]
    # an Update (merge patch) takes replicas over without conflict
    status, _, body = server.request("PATCH", path + "?fieldManager=kubectl-edit", {"spec": {"replicas": 5}},
                                     headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, body
    assert ("kubectl-edit", "Update", {"f:spec": {"f:replicas": {}}}) in _managers(body)
    status, body = _apply(server, path, _deployment(name, replicas=3), "bob")
    assert status == 409
    assert _no_time(body["message"]) == ('Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: '
                                         '.spec.replicas')
    # two conflicting managers: listed by manager
    status, body = _apply(server, path, _deployment(name, replicas=4, image="nginx:2"), "carol")
    assert status == 409
    assert _no_time(body["message"]) == (
        'Apply failed with 3 conflicts: conflicts with "alice":\n'
        '- .spec.template.spec.containers[name="c"].image\n'
        'conflicts with "bob":\n'
        '- .spec.template.spec.containers[name="c"].image\n'
        'conflicts with "kubectl-edit" using apps/v1:\n'
        '- .spec.replicas')


def test_apply_removes_fields_a_manager_stops_applying(server: Any, ns: str) -> None:
    name = unique("web")
    path = f"/apis/apps/v1/namespaces/{ns}/deployments/{name}"
    labels = {"app": name, "tier": "front"}
    status, body = _apply(server, path, _deployment(name, labels=labels), "alice")
    assert status == 201, body
    status, body = _apply(server, path, _deployment(name, labels={"app": name}), "alice")
    assert status == 200, body
    assert body["metadata"]["labels"] == {"app": name}  # only alice owned tier: removed
    status, body = _apply(server, path, _deployment(name, labels=labels), "bob")
    status, body = _apply(server, path, _deployment(name, labels=labels), "alice")
    status, body = _apply(server, path, _deployment(name, labels={"app": name}), "alice")
    assert status == 200, body
    assert body["metadata"]["labels"] == labels  # bob still owns tier: kept


def test_first_apply_to_a_created_object_conflicts_with_its_creator(server: Any, ns: str) -> None:
    name = unique("cm")
    status, _, body = server.request("POST", f"/api/v1/namespaces/{ns}/configmaps?fieldManager=kubectl-create",
                                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                      "data": {"a": "1"}})
    assert status == 201, body
    path = f"/api/v1/namespaces/{ns}/configmaps/{name}"
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "2", "b": "3"}}
    status, body = _apply(server, path, cm, "alice")
    assert status == 409, body
    assert body["details"]["causes"][0]["field"] == ".data.a"
    status, body = _apply(server, path, cm, "alice", force=True)
    assert status == 200, body
    assert body["data"] == {"a": "2", "b": "3"}
    assert ("alice", "Apply", {"f:data": {"f:a": {}, "f:b": {}}}) in _managers(body)


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "ssawidgets.ssa.example.com"},
    "spec": {"group": "ssa.example.com", "scope": "Namespaced",
             "names": {"plural": "ssawidgets", "kind": "SSAWidget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "size": {"type": "integer"},
                     "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                     "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                               "items": {"type": "object", "required": ["name"], "properties": {
                                   "name": {"type": "string"}, "port": {"type": "integer"}}}},
                 }}}}}}]},
}


def test_apply_custom_resources(server: Any, ns: str) -> None:
    status, _, body = server.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                     f"{CRD['metadata']['name']}")
    if status == 404:
        status, body = _apply(server, f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                              f"{CRD['metadata']['name']}", CRD, "setup")
        assert status == 201, body
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if server.request("GET", "/apis/ssa.example.com/v1")[0] == 200:
            break
        time.sleep(0.2)
    name = unique("w")
    path = f"/apis/ssa.example.com/v1/namespaces/{ns}/ssawidgets/{name}"
    w = {"apiVersion": "ssa.example.com/v1", "kind": "SSAWidget", "metadata": {"name": name},
         "spec": {"size": 1, "tags": ["a"], "ports": [{"name": "http", "port": 80}]}}
    status, body = _apply(server, path, w, "alice")
    assert status == 201, body
    assert _managers(body) == [("alice", "Apply", {"f:spec": {
        "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}},
        "f:size": {}, "f:tags": {"v:\"a\"": {}}}})]
    w2 = {**w, "spec": {"tags": ["b"], "ports": [{"name": "https", "port": 443}]}}
    status, body = _apply(server, path, w2, "bob")
    assert status == 200, body
    assert body["spec"] == {"size": 1, "tags": ["a", "b"], "ports": [{"name": "http", "port": 80},
                                                                     {"name": "https", "port": 443}]}
    status, body = _apply(server, path, {**w, "spec": {"size": 2}}, "bob")
    assert status == 409
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.size'


def test_kubectl_apply_server_side_conflicts_force_and_scale(server: Any, ns: str, need_kubectl: None) -> None:
    """``kubectl apply --server-side`` / ``--force-conflicts`` and ``kubectl scale`` (an Update on
    the scale subresource), as a user runs them."""
    name = unique("web")

    def manifest(replicas: int) -> str:
        return json.dumps({**_deployment(name, replicas=replicas), "metadata": {"name": name, "namespace": ns}})

    out = server.kubectl("apply", "--server-side", "-f", "-", input=manifest(2))
    assert out.stdout.strip() == f"deployment.apps/{name} serverside-applied"
    p = server.kubectl("apply", "--server-side", "--field-manager=other", "-f", "-", input=manifest(3), check=False)
    assert p.returncode != 0
    assert p.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas')
    server.kubectl("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-",
                   input=manifest(3))
    server.kubectl("scale", "-n", ns, f"deploy/{name}", "--replicas=4")
    p = server.kubectl("apply", "--server-side", "-f", "-", input=manifest(2), check=False)
    assert p.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl" with subresource '
                               '"scale" using apps/v1: .spec.replicas'), p.stderr
    status, _, got = server.request("GET", f"/apis/apps/v1/namespaces/{ns}/deployments/{name}")
    assert got["spec"]["replicas"] == 4
    assert sorted((e["manager"], e["operation"], e.get("subresource", "")) for e in got["metadata"]["managedFields"]) \
        == [("kubectl", "Apply", ""), ("kubectl", "Update", "scale"), ("other", "Apply", "")]
