"""VolumeBinding live, over real HTTP against the box with its storage controllers
(``kubesched.apiserver.controllers.VolumeController``): a WaitForFirstConsumer claim is matched
to an available PV on the node (PreBind PUTs the PV's claimRef, the PV controller binds), a
claim of a provisioning class gets ``volume.kubernetes.io/selected-node`` and a provisioned PV,
and a generic ephemeral volume gets its ``<pod>-<volume>`` claim — every pod ends bound, every
claim ``Bound`` (upstream ``BindPodVolumes`` / ``checkBindings``)."""

from __future__ import annotations

from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj
from test_run_faults import make_runner, start, stop

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient, load_config

pytestmark = pytest.mark.asyncio

HOST_AFFINITY = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}


def sc(name: str, provisioner: str) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": "WaitForFirstConsumer"}


def pvc(name: str, cls: str, size: str = "1Gi") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": cls, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": size}}}}


def with_volume(pod: dict[str, Any], vol: dict[str, Any]) -> dict[str, Any]:
    pod["spec"]["volumes"] = [vol]
    return pod


async def test_wait_for_first_consumer_static_provisioned_and_ephemeral(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data", simulate_kubelets=True) as box:
        api = APIClient(load_config(kc, qps=-1))
        try:
            await api.create("/api/v1/nodes", node_obj("n1"))
            await api.create("/api/v1/nodes", node_obj("n2"))
            await api.create("/apis/storage.k8s.io/v1/storageclasses", sc("local", "kubernetes.io/no-provisioner"))
            await api.create("/apis/storage.k8s.io/v1/storageclasses", sc("fast", "ebs.csi.aws.com"))
            # a local PV on n1 only (the smallest that fits wins over a bigger one)
            for name, size in (("pv-big", "10Gi"), ("pv-small", "2Gi")):
                await api.create("/api/v1/persistentvolumes", {
                    "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                    "spec": {"storageClassName": "local", "capacity": {"storage": size},
                             "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt"},
                             "nodeAffinity": HOST_AFFINITY}})
            await api.create("/api/v1/namespaces/default/persistentvolumeclaims", pvc("static", "local"))
            await api.create("/api/v1/namespaces/default/persistentvolumeclaims", pvc("dyn", "fast"))
            runner = make_runner(kc)
            task = await start(runner)
            try:
                await api.create("/api/v1/namespaces/default/pods", with_volume(
                    pod_obj("db"), {"name": "d", "persistentVolumeClaim": {"claimName": "static"}}))
                await api.create("/api/v1/namespaces/default/pods", with_volume(
                    pod_obj("app"), {"name": "d", "persistentVolumeClaim": {"claimName": "dyn"}}))
                await api.create("/api/v1/namespaces/default/pods", with_volume(pod_obj("scratch"), {
                    "name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {
                        "storageClassName": "fast", "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}}}}}))

                async def all_bound() -> bool:
                    pods = (await api.list("/api/v1/namespaces/default/pods"))["items"]
                    return len(pods) == 3 and all(p["spec"].get("nodeName") for p in pods)

                await eventually(all_bound, timeout=30, what="pods with volumes bound")
                pods = {p["metadata"]["name"]: p for p in (await api.list("/api/v1/namespaces/default/pods"))["items"]}
                assert pods["db"]["spec"]["nodeName"] == "n1"  # the only node with a matching PV
                claims = {c["metadata"]["name"]: c for c in
                          (await api.list("/api/v1/namespaces/default/persistentvolumeclaims"))["items"]}
                assert set(claims) == {"static", "dyn", "scratch-tmp"}
                for c in claims.values():
                    assert c["status"]["phase"] == "Bound"
                    assert c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
                assert claims["static"]["spec"]["volumeName"] == "pv-small"
                assert claims["dyn"]["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == \
                    pods["app"]["spec"]["nodeName"]
                owner = claims["scratch-tmp"]["metadata"]["ownerReferences"][0]
                assert owner["kind"] == "Pod" and owner["uid"] == pods["scratch"]["metadata"]["uid"]
                pvs = {p["metadata"]["name"]: p for p in (await api.list("/api/v1/persistentvolumes"))["items"]}
                assert pvs["pv-small"]["spec"]["claimRef"]["name"] == "static"
                assert pvs["pv-small"]["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
                assert "claimRef" not in pvs["pv-big"]["spec"]
                provisioned = pvs[claims["dyn"]["spec"]["volumeName"]]
                assert provisioned["spec"]["claimRef"]["name"] == "dyn"
                assert runner.scheduler.cache.assumed_count() == 0
            finally:
                await stop(runner, task)
        finally:
            await api.close()
            assert box is not None


async def test_prebind_write_failure_retries_without_losing_or_doubling(tmp_path) -> None:
    """The box fails every PV update (409): PreBind errors, the assumed binding is reverted and the
    pod goes back to the queue; once the fault is lifted the pod binds and exactly one PV is
    bound to the claim."""
    from kubesched.apiserver.faults import Faults, WriteFault

    faults = Faults()
    faults.write_faults = [WriteFault("persistentvolumes", fraction=1.0, code=409, verbs=("update",))]
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data", simulate_kubelets=True, faults=faults) as box:
        api = APIClient(load_config(kc, qps=-1))
        try:
            await api.create("/api/v1/nodes", node_obj("n1"))
            await api.create("/apis/storage.k8s.io/v1/storageclasses", sc("local", "kubernetes.io/no-provisioner"))
            for name in ("pv-a", "pv-b"):
                await api.create("/api/v1/persistentvolumes", {
                    "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
                    "spec": {"storageClassName": "local", "capacity": {"storage": "1Gi"},
                             "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt"},
                             "nodeAffinity": HOST_AFFINITY}})
            await api.create("/api/v1/namespaces/default/persistentvolumeclaims", pvc("data", "local"))

            async def pvs_available() -> bool:
                items = (await api.list("/api/v1/persistentvolumes"))["items"]
                return all((p.get("status") or {}).get("phase") == "Available" for p in items)

            await eventually(pvs_available, timeout=10, what="PVs Available")
            runner = make_runner(kc)
            task = await start(runner)
            try:
                await api.create("/api/v1/namespaces/default/pods", with_volume(
                    pod_obj("db"), {"name": "d", "persistentVolumeClaim": {"claimName": "data"}}))
                await eventually(lambda: faults.injected >= 2, timeout=30, what="PreBind retried under the fault")
                pod = await api.get("/api/v1/namespaces/default/pods/db")
                assert not pod["spec"].get("nodeName")
                faults.write_faults = []

                async def bound() -> bool:
                    p = await api.get("/api/v1/namespaces/default/pods/db")
                    c = await api.get("/api/v1/namespaces/default/persistentvolumeclaims/data")
                    return bool(p["spec"].get("nodeName")) and (c.get("status") or {}).get("phase") == "Bound"

                await eventually(bound, timeout=30, what="pod and claim bound after the fault")
                pvs = (await api.list("/api/v1/persistentvolumes"))["items"]
                claimed = [p["metadata"]["name"] for p in pvs if (p["spec"].get("claimRef") or {}).get("name")]
                assert len(claimed) == 1
                claim = await api.get("/api/v1/namespaces/default/persistentvolumeclaims/data")
                assert claim["spec"]["volumeName"] == claimed[0]
                assert runner.scheduler.cache.assumed_count() == 0
            finally:
                await stop(runner, task)
        finally:
            await api.close()
            assert box is not None
