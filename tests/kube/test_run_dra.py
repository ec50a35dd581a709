"""DRA live, over real HTTP against the box: ``kubesched run`` allocates ResourceClaims
(``resource.k8s.io/v1``) — status.allocation + reservedFor through the API, the delete-protection
finalizer — for a pod with a claim and for a pod whose claim the box's resourceclaim controller
generates from a template; a failed claim status write is retried without giving a device twice."""

from __future__ import annotations

from typing import Any

import pytest
from livehelpers import eventually, node_obj, pod_obj
from test_run_faults import make_runner, start, stop

from kubesched.apiserver.launcher import start_server
from kubesched.kube.client import APIClient, load_config

pytestmark = pytest.mark.asyncio

RES = "/apis/resource.k8s.io/v1"
DRIVER = "gpu.example.com"


async def _setup(api: APIClient, devices: int = 1) -> None:
    await api.create("/api/v1/nodes", node_obj("cpu-node"))
    await api.create("/api/v1/nodes", node_obj("gpu-node"))
    await api.create(f"{RES}/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    await api.create(f"{RES}/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpu-node-slice"},
        "spec": {"driver": DRIVER, "nodeName": "gpu-node",
                 "pool": {"name": "gpu-node", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"gpu-{i}", "attributes": {"model": {"string": "A100"}}}
                             for i in range(devices)]}})


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def _claim_pod(name: str, claim: str | None = None, template: str | None = None) -> dict[str, Any]:
    p = pod_obj(name)
    entry: dict[str, Any] = {"name": "gpu"}
    if claim:
        entry["resourceClaimName"] = claim
    else:
        entry["resourceClaimTemplateName"] = template
    p["spec"]["resourceClaims"] = [entry]
    return p


async def _node_of(api: APIClient, name: str) -> str | None:
    return (await api.get(f"/api/v1/namespaces/default/pods/{name}"))["spec"].get("nodeName")


async def test_claim_allocated_live(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data") as box:
        assert box is not None
        api = APIClient(load_config(kc, qps=-1))
        await _setup(api)
        await api.create(f"{RES}/namespaces/default/resourceclaims", _claim("gpu-claim"))
        await api.create(f"{RES}/namespaces/default/resourceclaims", _claim("other-claim"))
        runner = make_runner(kc)
        task = await start(runner)
        try:
            await api.create("/api/v1/namespaces/default/pods", _claim_pod("trainer", claim="gpu-claim"))

            async def bound() -> bool:
                return await _node_of(api, "trainer") == "gpu-node"

            await eventually(bound, timeout=30, what="trainer bound to gpu-node")
            pod = await api.get("/api/v1/namespaces/default/pods/trainer")
            claim = await api.get(f"{RES}/namespaces/default/resourceclaims/gpu-claim")
            assert claim["status"]["allocation"]["devices"]["results"] == [
                {"request": "gpu", "driver": DRIVER, "pool": "gpu-node", "device": "gpu-0"}]
            assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0][
                "values"] == ["gpu-node"]
            assert claim["status"]["reservedFor"] == [
                {"resource": "pods", "name": "trainer", "uid": pod["metadata"]["uid"]}]
            assert "resource.kubernetes.io/delete-protection" in claim["metadata"]["finalizers"]

            # the only device is taken: a second pod with its own claim waits
            await api.create("/api/v1/namespaces/default/pods", _claim_pod("second", claim="other-claim"))

            async def rejected() -> bool:
                p = await api.get("/api/v1/namespaces/default/pods/second")
                conds = (p.get("status") or {}).get("conditions") or []
                return any(c["type"] == "PodScheduled" and c["status"] == "False" for c in conds)

            await eventually(rejected, timeout=30, what="second pod unschedulable")
            p = await api.get("/api/v1/namespaces/default/pods/second")
            msg = next(c["message"] for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
            assert msg.startswith("0/2 nodes are available: 2 cannot allocate all claims."), msg
            other = await api.get(f"{RES}/namespaces/default/resourceclaims/other-claim")
            assert not (other.get("status") or {}).get("allocation")
        finally:
            await stop(runner, task)


async def test_claim_from_template_and_failed_status_write(tmp_path) -> None:
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data", simulate_kubelets=True) as box:
        api = APIClient(load_config(kc, qps=-1))
        await _setup(api, devices=2)
        await api.create(f"{RES}/namespaces/default/resourceclaimtemplates", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}})
        runner = make_runner(kc)
        task = await start(runner)
        try:
            # the first claim status write fails: PreBind fails, Unreserve, the pod is retried
            box.faults.fail_writes("resourceclaims", subresource="status", fraction=1.0, code=500, verbs=("update",))
            await api.create("/api/v1/namespaces/default/pods", _claim_pod("a", template="one-gpu"))
            await eventually(lambda: box.faults.injected >= 1, timeout=30, what="status write failed once")
            box.faults.clear()
            await api.create("/api/v1/namespaces/default/pods", _claim_pod("b", template="one-gpu"))

            async def both_bound() -> bool:
                return await _node_of(api, "a") == "gpu-node" and await _node_of(api, "b") == "gpu-node"

            await eventually(both_bound, timeout=30, what="both pods bound")
            claims = (await api.list(f"{RES}/namespaces/default/resourceclaims"))["items"]
            assert sorted(c["metadata"]["ownerReferences"][0]["name"] for c in claims) == ["a", "b"]
            devices = [r["device"] for c in claims for r in c["status"]["allocation"]["devices"]["results"]]
            assert sorted(devices) == ["gpu-0", "gpu-1"]  # nothing given twice
            for c in claims:
                assert c["metadata"]["name"].startswith(c["metadata"]["ownerReferences"][0]["name"] + "-gpu-")
                assert [r["name"] for r in c["status"]["reservedFor"]] == [c["metadata"]["ownerReferences"][0]["name"]]
            pod = await api.get("/api/v1/namespaces/default/pods/a")
            assert pod["status"]["resourceClaimStatuses"][0]["name"] == "gpu"
        finally:
            await stop(runner, task)


async def test_post_filter_deallocates_live(tmp_path) -> None:
    """A claim allocated for a node that is gone: every node rejects the pod, PostFilter clears
    the allocation through the API, the claim's update requeues the pod, which then gets the
    device on gpu-node."""
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data"):
        api = APIClient(load_config(kc, qps=-1))
        await _setup(api)
        claim = await api.create(f"{RES}/namespaces/default/resourceclaims", _claim("stale"))
        claim["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": "gone-node", "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["gone-node"]}]}]}}}
        await api.replace(f"{RES}/namespaces/default/resourceclaims/stale/status", claim)
        runner = make_runner(kc)
        task = await start(runner)
        try:
            await api.create("/api/v1/namespaces/default/pods", _claim_pod("p", claim="stale"))

            async def bound() -> bool:
                return await _node_of(api, "p") == "gpu-node"

            await eventually(bound, timeout=30, what="pod bound after deallocation")
            c = await api.get(f"{RES}/namespaces/default/resourceclaims/stale")
            assert c["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0][
                "values"] == ["gpu-node"]
            assert [r["name"] for r in c["status"]["reservedFor"]] == ["p"]
        finally:
            await stop(runner, task)


async def test_extended_resource_backed_by_dra_live(tmp_path) -> None:
    """DRAExtendedResource (1.37 default): a pod requesting ``example.com/gpu: 1`` — no node has it
    allocatable, the DeviceClass maps it — is bound to the node with the device; the scheduler POSTs
    the claim (generateName ``<pod>-extended-resources-``), allocates and reserves it, and patches
    the pod's ``status.extendedResourceClaimStatus`` (request index 1: cpu < example.com/gpu < memory)."""
    kc = str(tmp_path / "kc")
    async with start_server(kc, data_dir=tmp_path / "data") as box:
        assert box is not None
        api = APIClient(load_config(kc, qps=-1))
        await _setup(api)
        cls = await api.get(f"{RES}/deviceclasses/gpu")
        cls["spec"]["extendedResourceName"] = "example.com/gpu"
        await api.replace(f"{RES}/deviceclasses/gpu", cls)
        runner = make_runner(kc)
        task = await start(runner)
        try:
            p = pod_obj("ext")
            p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
            p["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
            await api.create("/api/v1/namespaces/default/pods", p)

            async def bound() -> bool:
                return await _node_of(api, "ext") == "gpu-node"

            await eventually(bound, timeout=30, what="ext bound to gpu-node")
            pod = await api.get("/api/v1/namespaces/default/pods/ext")
            st = pod["status"]["extendedResourceClaimStatus"]
            assert st["requestMappings"] == [{"containerName": "c", "resourceName": "example.com/gpu",
                                              "requestName": "container-0-request-1"}]
            claim = await api.get(f"{RES}/namespaces/default/resourceclaims/{st['resourceClaimName']}")
            assert claim["metadata"]["name"].startswith("ext-extended-resources-")
            assert claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"] == "true"
            assert claim["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
            assert claim["status"]["allocation"]["devices"]["results"] == [
                {"request": "container-0-request-1", "driver": DRIVER, "pool": "gpu-node", "device": "gpu-0"}]
            uid = pod["metadata"]["uid"]
            assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "ext", "uid": uid}]
        finally:
            await stop(runner, task)
