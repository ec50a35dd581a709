"""Issue 17's API-server facts checked against the real kube-apiserver v1.37.2 (``make upstream``;
skipped when not built) — what kubesched's validation, admission and the box must match.

- names per kind (``pkg/apis/rbac/validation/validation.go:33`` path-segment names,
  ``pkg/apis/apps/validation/validation.go:52`` StatefulSet DNS labels): the same verdict and the
  same 422 message as :mod:`kubesched.api.validation`.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.validation import invalid_message, validate_object
from kubesched.testing.upstream import unique_name as unique

_TEMPLATE = {"metadata": {"labels": {"a": "b"}},
             "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}

#: (kind, group, collection path with {ns}, name, extra fields)
_NAME_CASES = [
    ("ClusterRole", "rbac.authorization.k8s.io", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
     "kubesched:kube-scheduler-{u}", {}),
    ("ClusterRole", "rbac.authorization.k8s.io", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
     "system:aggregated-metrics-reader-{u}", {}),
    ("ClusterRole", "rbac.authorization.k8s.io", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
     "Bad%Name{u}", {}),
    ("Role", "rbac.authorization.k8s.io", "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
     "ns:Reader_{u}", {}),
    ("StatefulSet", "apps", "/apis/apps/v1/namespaces/{ns}/statefulsets", "web.v1-{u}",
     {"spec": {"selector": {"matchLabels": {"a": "b"}}, "serviceName": "web", "template": _TEMPLATE}}),
    ("Deployment", "apps", "/apis/apps/v1/namespaces/{ns}/deployments", "web.v1-{u}",
     {"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": _TEMPLATE}}),
    ("ConfigMap", "", "/api/v1/namespaces/{ns}/configmaps", "a:b-{u}", {}),
    ("Namespace", "", "/api/v1/namespaces", "team.{u}", {}),
    ("Namespace", "", "/api/v1/namespaces", "Team-{u}", {}),
]


@pytest.mark.parametrize("kind,group,collection,name,extra", _NAME_CASES, ids=[c[3] for c in _NAME_CASES])
def test_names_per_kind_as_kube_apiserver(upstream_server: Any, kind: str, group: str, collection: str,
                                          name: str, extra: dict[str, Any]) -> None:
    ns = "default"
    name = name.format(u=unique("n").lower())
    meta: dict[str, Any] = {"name": name}
    if "{ns}" in collection:
        meta["namespace"] = ns
    obj = {"apiVersion": f"{group}/v1" if group else "v1", "kind": kind, "metadata": meta, **extra}
    status, _, body = upstream_server.request("POST", collection.format(ns=ns), obj)
    errs = validate_object(obj, namespaced="{ns}" in collection)
    if not errs:
        assert status == 201, body
    else:
        assert status == 422, body
        assert body["message"] == invalid_message(kind, name, errs, group=group)


# ---- admission the box must do as kube-apiserver (both servers) ------------------------------------


def _sc_body(name: str, default: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta,
            "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}


def _pvc_body(name: str, ns: str, cls: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": ns},
            "spec": spec}


def test_default_storage_class_admission(server: Any, ns: str) -> None:
    """DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault/admission.go:86):
    a claim created without a class gets the newest default class; an explicit "" stays."""
    # the servers are shared by the session: this test's default class is the newest one
    for name, default in ((unique("sc-plain"), False), (unique("sc-default"), True)):
        status, _, body = server.request("POST", "/apis/storage.k8s.io/v1/storageclasses", _sc_body(name, default))
        assert status == 201, body
    status, _, got = server.request("POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims", _pvc_body("c1", ns))
    assert status == 201, got
    assert got["spec"]["storageClassName"] == name
    status, _, got = server.request("POST", f"/api/v1/namespaces/{ns}/persistentvolumeclaims",
                                    _pvc_body("c2", ns, ""))
    assert status == 201, got
    assert got["spec"]["storageClassName"] == ""
    status, _, _ = server.request("DELETE", f"/apis/storage.k8s.io/v1/storageclasses/{name}")
    assert status == 200


def test_gated_pod_gets_scheduling_gated_condition_on_create(server: Any, ns: str) -> None:
    """pkg/registry/core/pod/strategy.go:953 applySchedulingGatedCondition."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated", "namespace": ns},
           "spec": {"schedulingGates": [{"name": "example.com/wait"}],
                    "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
           "status": {"conditions": [{"type": "PodScheduled", "status": "True"}]}}
    status, _, got = server.request("POST", f"/api/v1/namespaces/{ns}/pods", pod)
    assert status == 201, got
    (cond,) = got["status"]["conditions"]
    assert {k: v for k, v in cond.items() if k != "lastTransitionTime"} == {
        "type": "PodScheduled", "status": "False", "lastProbeTime": None, "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates"}
    assert cond["lastTransitionTime"]
    pod["metadata"]["name"] = "free"
    del pod["spec"]["schedulingGates"]
    status, _, got = server.request("POST", f"/api/v1/namespaces/{ns}/pods", pod)
    assert status == 201, got
    assert "conditions" not in got["status"]
