"""The box's resourceclaim controller and PodGroups (DRAWorkloadResourceClaims, GenericWorkload),
driven directly on an in-memory store: the PodGroup's template claims (owned by it, in its
``status.resourceClaimStatuses``), members naming the shared claim, members waiting for a missing
PodGroup, and a deleted PodGroup's reservations — after upstream v1.37.2
``pkg/controller/resourceclaim/controller.go`` (``syncPodGroup``, ``handleClaim``, ``syncPod``'s
``getPodGroup``, ``syncClaim``)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from kubesched.apiserver.controllers import CLAIM_TEMPLATES, CLAIMS, POD_GROUPS, ResourceClaimController
from kubesched.apiserver.storage import Store
from kubesched.features import FeatureGate

ON = FeatureGate.from_flags(feature_gates="GenericWorkload=true,DRAWorkloadResourceClaims=true")
WORKLOAD_ONLY = FeatureGate.from_flags(feature_gates="GenericWorkload=true")
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}}}
GROUP = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
         "metadata": {"name": "pg", "namespace": "default", "uid": "pg-uid"},
         "spec": {"schedulingPolicy": {"basic": {}},
                  "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "gpu"}]}}


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
            "spec": {"containers": [{"name": "c", "image": "i"}], "schedulingGroup": {"podGroupName": "pg"},
                     "resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "gpu"}]}}


def controller(features: FeatureGate) -> tuple[ResourceClaimController, Store]:
    store = Store(None, fsync=False)
    ctl = ResourceClaimController(SimpleNamespace(store=store, features=features))  # type: ignore[arg-type]
    store.create(CLAIM_TEMPLATES, "default", "gpu", TEMPLATE)
    return ctl, store


def drain(ctl: ResourceClaimController) -> None:
    while not ctl._queue.empty():
        what, obj = ctl._queue.get_nowait()
        {"sync": ctl._sync, "gone": ctl._release, "group": ctl._sync_group, "group-gone": ctl._release_group}[what](obj)


def test_group_claim_then_members_share_it():
    ctl, store = controller(ON)
    store.create("pods", "default", "p1", pod("p1"))
    ctl._sync(pod("p1"))  # the PodGroup is not there yet: nothing is created
    assert store.list(CLAIMS, "default") == []
    store.create(POD_GROUPS, "default", "pg", GROUP)
    ctl._sync_group(GROUP)
    drain(ctl)  # the member is requeued once the group's claim exists
    (claim,) = [e.obj() for e in store.list(CLAIMS, "default")]
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    assert claim["metadata"]["name"].startswith("pg-shared-")
    group = store.get(POD_GROUPS, "default", "pg").obj()
    assert group["status"]["resourceClaimStatuses"] == [{"name": "shared",
                                                         "resourceClaimName": claim["metadata"]["name"]}]
    p1 = store.get("pods", "default", "p1").obj()
    assert p1["status"]["resourceClaimStatuses"] == [{"name": "shared", "resourceClaimName": claim["metadata"]["name"]}]


def test_gate_off_members_get_their_own_claims():
    ctl, store = controller(WORKLOAD_ONLY)
    store.create(POD_GROUPS, "default", "pg", GROUP)
    store.create("pods", "default", "p1", pod("p1"))
    ctl._sync_group(GROUP)
    drain(ctl)
    (claim,) = [e.obj() for e in store.list(CLAIMS, "default")]
    assert claim["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    assert claim["metadata"]["name"].startswith("p1-shared-")


def test_deleted_group_releases_its_claims():
    ctl, store = controller(ON)
    store.create(POD_GROUPS, "default", "pg", GROUP)
    ctl._sync_group(GROUP)
    (e,) = store.list(CLAIMS, "default")
    claim = e.obj()
    claim["status"] = {"allocation": {"devices": {"results": []}},
                       "reservedFor": [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "pg",
                                        "uid": "pg-uid"}]}
    store.update(CLAIMS, "default", claim["metadata"]["name"], claim)
    ctl._release(pod("p1"))  # a member going away leaves the group's claim alone
    assert store.get(CLAIMS, "default", claim["metadata"]["name"]).obj()["status"]["reservedFor"]
    ctl._release_group(GROUP)
    assert store.list(CLAIMS, "default") == []


def test_controller_starts_with_group_watch():
    async def run() -> None:
        ctl, store = controller(ON)
        spawned: list[Any] = []
        ctl.server.spawn = lambda coro: spawned.append(coro)  # type: ignore[attr-defined]
        await ctl.start()
        for c in spawned:
            c.close()

    asyncio.run(run())


def test_box_over_http(tmp_path):
    # the whole box (GenericWorkload + DRAWorkloadResourceClaims): the PodGroup's template claim is
    # created, recorded in its status, and a member created before the PodGroup names it once it is
    import time

    from apiserver_helpers import Client

    from kubesched.apiserver.launcher import run_server

    with run_server(tmp_path / "kc", simulate_kubelets=True, features=ON) as srv:
        c = Client.of(srv)
        pgs = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"
        if c.req("GET", pgs)[0] == 404:
            import pytest

            pytest.skip("the box does not serve PodGroups yet")
        c.create("/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates", TEMPLATE)
        c.create("/api/v1/namespaces/default/pods", pod("p1"))
        time.sleep(0.3)
        assert c.get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims")["items"] == []  # waits
        c.create(pgs, {k: v for k, v in GROUP.items() if k != "metadata"} | {
            "metadata": {"name": "pg", "namespace": "default"}})
        deadline = time.monotonic() + 10
        while True:
            p1 = c.get("/api/v1/namespaces/default/pods/p1")
            if (p1.get("status") or {}).get("resourceClaimStatuses"):
                break
            assert time.monotonic() < deadline, "member never named the PodGroup's claim"
            time.sleep(0.05)
        (claim,) = c.get("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims")["items"]
        group = c.get(f"{pgs}/pg")
        assert claim["metadata"]["ownerReferences"][0]["uid"] == group["metadata"]["uid"]
        assert group["status"]["resourceClaimStatuses"] == [{"name": "shared",
                                                             "resourceClaimName": claim["metadata"]["name"]}]
        assert p1["status"]["resourceClaimStatuses"] == [{"name": "shared",
                                                          "resourceClaimName": claim["metadata"]["name"]}]
