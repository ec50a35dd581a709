"""Issue 17 in the box (``--simulate-kubelets``, its controllers), over real HTTP.

- the PV controller's retroactive ``assignDefaultStorageClass`` (pv_controller.go:968): a claim
  created before any default StorageClass gets it once one exists; a new PV naming no claim is
  ``Available`` (``syncVolume``).
"""

from __future__ import annotations

from apiserver_helpers import Client
from apiserver_helpers import until as _until

from kubesched.apiserver.launcher import ServerHandle

PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"


def test_claim_created_before_the_default_class_gets_it(ksrv: ServerHandle) -> None:
    c = Client.of(ksrv)
    c.create(PVCS, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "early"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert "storageClassName" not in c.get(f"{PVCS}/early")["spec"]
    c.create("/apis/storage.k8s.io/v1/storageclasses", {
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"})
    _until(lambda: c.get(f"{PVCS}/early")["spec"].get("storageClassName") == "standard", "default class assigned")
    c.create("/api/v1/persistentvolumes", {
        "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
        "spec": {"storageClassName": "standard", "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/x"}}})
    _until(lambda: (c.get("/api/v1/persistentvolumes/pv1").get("status") or {}).get("phase") == "Available",
           "PV Available")


def test_every_namespace_gets_a_default_service_account(ksrv: ServerHandle) -> None:
    """serviceaccounts_controller.go: a ``default`` ServiceAccount per active namespace, recreated
    when deleted."""
    c = Client.of(ksrv)
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}})
    for ns in ("default", "kube-system", "team-a"):
        _until(lambda ns=ns: c.req("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0] == 200,
               f"default ServiceAccount in {ns}")
    code, _ = c.req("DELETE", "/api/v1/namespaces/team-a/serviceaccounts/default")
    assert code == 200
    _until(lambda: c.req("GET", "/api/v1/namespaces/team-a/serviceaccounts/default")[0] == 200, "recreated")
