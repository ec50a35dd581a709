"""A gang sharing one ResourceClaim end to end in the simulator's store (GenericWorkload, with and
without DRAWorkloadResourceClaims): the members of one pod-group cycle share the allocation the
first member's Reserve made (upstream v1.37.2 dynamicresources.go pendingAllocations), so both
land with the one device; with the gate the claim is reserved for the PodGroup, without it for
each pod. Needs the engine's pod-group cycle (skipped without it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubesched.api import objects as o
from kubesched.features import FeatureGate
from kubesched.scheduler import Scheduler
from kubesched.sim.store import ClusterStore

DATA = Path(__file__).parent / "data" / "dra-gang" / "gang-claims.yaml"

pytest.importorskip("kubesched.scheduler.schedule_one_podgroup")


def _node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "uid": f"{name}-uid"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
                     "schedulingGroup": {"podGroupName": "trainer"},
                     "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}]},
            "status": {"phase": "Pending"}}


OBJECTS: list[tuple[str, dict[str, Any]]] = [
    ("DeviceClass", {"metadata": {"name": "gpu"},
                     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "d"'}}]}}),
    ("ResourceSlice", {"metadata": {"name": "s"}, "spec": {"driver": "d", "nodeName": "node-1",
                                                          "pool": {"name": "node-1", "resourceSliceCount": 1},
                                                          "devices": [{"name": "dev-0"}]}}),
    ("ResourceClaim", {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                       "metadata": {"name": "shared-gpu", "namespace": "default", "uid": "claim-uid"},
                       "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
                       "status": {}}),
    ("PodGroup", {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                  "metadata": {"name": "trainer", "namespace": "default", "uid": "pg-uid", "generation": 1},
                  "spec": {"schedulingPolicy": {"gang": {"minCount": 2}},
                           "resourceClaims": [{"name": "gpu", "resourceClaimName": "shared-gpu"}]}}),
]


def _run(gates: str) -> ClusterStore:
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, seed=1, features=FeatureGate.from_flags(feature_gates=gates))
    store.scheduler = sched
    for n in ("node-0", "node-1"):
        store.add("Node", o.decode(o.Node, _node(n)), _node(n))
    for kind, obj in OBJECTS:
        store.put_object(kind, obj)
    store.flush()
    for name in ("w-0", "w-1"):
        store.add("Pod", o.decode(o.Pod, _pod(name)), _pod(name))
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    return store


@pytest.mark.parametrize("gates,reserved", [
    ("GenericWorkload=true,DRAWorkloadResourceClaims=true",
     [{"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "trainer", "uid": "pg-uid"}]),
    ("GenericWorkload=true", [{"resource": "pods", "name": "w-0", "uid": "w-0-uid"},
                              {"resource": "pods", "name": "w-1", "uid": "w-1-uid"}]),
], ids=["workload-claims", "pods"])
def test_gang_shares_one_claim(gates, reserved):
    store = _run(gates)
    assert {store.pods[f"default/w-{i}"].spec.node_name for i in range(2)} == {"node-1"}
    claim = store.get("ResourceClaim", "default", "shared-gpu")
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "r", "driver": "d", "pool": "node-1", "device": "dev-0"}]
    assert sorted(claim["status"]["reservedFor"], key=lambda r: r["name"]) == reserved


def test_gang_that_cannot_fit_leaves_claim_unallocated():
    # 3 members need the one device's node, which fits 2 (cpu): all or nothing — none bound, the
    # shared allocation the cycle put in flight is gone again
    store = ClusterStore()
    sched = Scheduler(client=store, lister=store, seed=1, features=FeatureGate.from_flags(
        feature_gates="GenericWorkload=true,DRAWorkloadResourceClaims=true"))
    store.scheduler = sched
    for n in ("node-0", "node-1"):
        store.add("Node", o.decode(o.Node, _node(n)), _node(n))
    for kind, obj in OBJECTS:
        if kind == "PodGroup":
            obj = {**obj, "spec": {**obj["spec"], "schedulingPolicy": {"gang": {"minCount": 3}}}}
        store.put_object(kind, obj)
    store.flush()
    for name in ("w-0", "w-1", "w-2"):
        p = _pod(name)
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
        store.add("Pod", o.decode(o.Pod, p), p)
    sched.run_until_idle(after_each=store.flush)
    store.flush()
    assert all(not store.pods[f"default/w-{i}"].spec.node_name for i in range(3))
    claim = store.get("ResourceClaim", "default", "shared-gpu")
    assert "allocation" not in claim["status"]
    assert not sched.dra_manager.in_flight and not sched.dra_manager.in_use


@pytest.mark.parametrize("gates", ["GenericWorkload=true,DRAWorkloadResourceClaims=true", "GenericWorkload=true"],
                         ids=["workload-claims", "pods"])
def test_simulate_gang_with_pod_group_template_claim(gates):
    # simulate -f: the PodGroup's template claim is created by the resourceclaim controller and
    # shared by both members (one device, both bound, reserved for the PodGroup); without
    # DRAWorkloadResourceClaims each member gets its own claim and the gang of 2 cannot have the
    # one device twice: none bound
    from kubesched.sim.manifests import ManifestError, load_manifests
    from kubesched.sim.simulate import simulate

    fg = FeatureGate.from_flags(feature_gates=gates)
    try:
        result = simulate(load_manifests([str(DATA)]), features=fg)
    except ManifestError:
        pytest.skip("simulate does not load PodGroup manifests yet")
    if not result.store.objects.get("PodGroup"):
        pytest.skip("simulate does not load PodGroup manifests yet")
    outcome = {o.key: o.node for o in result.outcomes}
    claims = list(result.store.objects.get("ResourceClaim", {}).values())
    if "DRAWorkloadResourceClaims" in gates:
        assert outcome == {"default/w-0": "node-1", "default/w-1": "node-1"}
        (claim,) = claims
        assert claim["metadata"]["name"].startswith("trainer-gpu-")
        assert [r["resource"] for r in claim["status"]["reservedFor"]] == ["podgroups"]
        pg = result.store.objects["PodGroup"][("default", "trainer")]
        assert pg["status"]["resourceClaimStatuses"] == [
            {"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]
    else:
        assert not any(outcome.values())
        assert sorted(c["metadata"]["name"][:8] for c in claims) == ["w-0-gpu-", "w-1-gpu-"]

