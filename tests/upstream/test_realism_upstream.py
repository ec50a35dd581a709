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


# ---- kubectl get columns (pkg/printers/internalversion/printers.go): the box's Tables as kube-apiserver's

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def _printer_objects(name: str) -> list[tuple[str, dict[str, Any]]]:
    tpl = {"metadata": {"labels": {"app": name}},
           "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}], "restartPolicy": "Never"}}
    always = {**tpl, "spec": {**tpl["spec"], "restartPolicy": "Always", "nodeSelector": {"disk": "ssd"}}}
    return [
        ("/apis/apps/v1/namespaces/{ns}/statefulsets", {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": 2, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": always}}),
        ("/apis/apps/v1/namespaces/{ns}/daemonsets", {
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": always}}),
        ("/apis/batch/v1/namespaces/{ns}/jobs", {
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"completions": 3, "parallelism": 2, "suspend": True, "template": tpl}}),
        ("/apis/batch/v1/namespaces/{ns}/cronjobs", {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": tpl}}}}),
        ("/api/v1/namespaces/{ns}/persistentvolumeclaims", {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "storageClassName": "fast",
                     "resources": {"requests": {"storage": "1Gi"}}}}),
        ("/api/v1/persistentvolumes", {
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                     "hostPath": {"path": "/x"}, "persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"namespace": "other", "name": "data"}}}),
        ("/apis/storage.k8s.io/v1/storageclasses", {
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "example.com/disk", "allowVolumeExpansion": True}),
    ]


def _table(srv: Any, path: str, name: str) -> dict[str, Any]:
    status, _, body = srv.request("GET", f"{path}/{name}", headers={"Accept": TABLE_ACCEPT})
    assert status == 200, body
    return dict(body)


def test_get_columns_as_kube_apiserver(upstream_server: Any, box_api_server: Any) -> None:
    name = unique("tbl").lower()
    tables = {}
    for srv in (upstream_server, box_api_server):
        ns = unique("t").lower()
        status, _, body = srv.request("POST", "/api/v1/namespaces",
                                      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        assert status == 201, body
        for collection, obj in _printer_objects(name):
            path = collection.format(ns=ns)
            status, _, body = srv.request("POST", path, obj)
            assert status == 201, (srv.name, body)
            tables[(srv.name, obj["kind"])] = (_table(srv, path, name), body["metadata"]["uid"])

    def cells(server: str, kind: str) -> list[list[Any]]:
        table, uid = tables[(server, kind)]
        skip = {i for i, c in enumerate(table["columnDefinitions"]) if c["name"] in ("Age", "Duration")}
        return [[c.replace(uid, "<uid>") if isinstance(c, str) else c for i, c in enumerate(r["cells"])
                 if i not in skip] for r in table["rows"]]

    for _, obj in _printer_objects(name):
        kind = obj["kind"]
        want, got = tables[("kube-apiserver", kind)][0], tables[("kubesched-apiserver", kind)][0]
        assert got["columnDefinitions"] == want["columnDefinitions"], kind
        assert cells("kubesched-apiserver", kind) == cells("kube-apiserver", kind), kind


def test_service_gets_cluster_ip_and_node_ports(server: Any, ns: str) -> None:
    """pkg/registry/core/service/storage/alloc.go: ClusterIP (from --service-cluster-ip-range),
    clusterIPs, ipFamilies, ipFamilyPolicy; node ports for NodePort; headless keeps None."""
    import ipaddress

    def create(name: str, **spec: Any) -> dict[str, Any]:
        body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": ns},
                "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}
        status, _, got = server.request("POST", f"/api/v1/namespaces/{ns}/services", body)
        assert status == 201, got
        return dict(got["spec"])

    a, b = create("a"), create("b")
    for spec in (a, b):
        assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.0.0.0/16")
        assert spec["clusterIPs"] == [spec["clusterIP"]]
        assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert a["clusterIP"] != b["clusterIP"]
    headless = create("h", clusterIP="None")
    assert (headless["clusterIP"], headless["clusterIPs"]) == ("None", ["None"])
    np = create("np", type="NodePort")
    assert 30000 <= np["ports"][0]["nodePort"] <= 32767
    ext = create("ext", type="ExternalName", externalName="example.com", selector=None)
    assert "clusterIP" not in ext and "ipFamilies" not in ext
