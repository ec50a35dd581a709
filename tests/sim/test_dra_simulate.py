"""``simulate`` on a small DRA cluster (examples/dra): the resourceclaim controller creates claims
from templates, the allocator places pods on the nodes that have the devices, claims come back
allocated and reserved, and no device is given twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.features import FeatureGate
from kubesched.sim.manifests import load_manifests, parse_manifest_text
from kubesched.sim.resourceclaims import claim_name_prefix, release_pod_claims
from kubesched.sim.simulate import simulate

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "dra")


def _claims(result):
    return [o for o in result.output_objects() if o.get("kind") == "ResourceClaim"]


@pytest.mark.parametrize("version, web", [
    ((1, 34), "cpu-node"),
    # 1.36's BalancedAllocation formula ties gpu-node-2 and cpu-node (472) for web; since 1.35 the tie
    # goes to the first node of the heap order of the feasible list (sorted_nodes.go)
    ((1, 37), "gpu-node-2"),
])
def test_example_cluster(version, web):
    result = simulate(load_manifests([EXAMPLE]), features=FeatureGate(emulated_version=version))
    placed = {o.key: o.node for o in result.outcomes}
    assert placed == {"default/pair": "gpu-node-1", "default/train": None, "default/infer-0": "gpu-node-2",
                      "default/infer-1": "gpu-node-2", "default/fpga-job": None, "default/web": web}
    msgs = {o.key: o.message for o in result.outcomes}
    assert msgs["default/train"].startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    assert msgs["default/fpga-job"].startswith(
        "0/3 nodes are available: request fpga: device class fpga.example.com does not exist.")
    claims = _claims(result)
    assert len(claims) == 5  # one generated claim per pod with a template
    used: list[tuple[str, str, str]] = []
    for c in claims:
        owner = c["metadata"]["ownerReferences"][0]["name"]
        assert c["metadata"]["name"].startswith(f"{owner}-")
        alloc = (c.get("status") or {}).get("allocation")
        if placed[f"default/{owner}"] is None:
            assert alloc is None and not c["status"].get("reservedFor")
            continue
        node = placed[f"default/{owner}"]
        assert alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [node]
        assert c["status"]["reservedFor"] == [{"resource": "pods", "name": owner,
                                               "uid": c["metadata"]["ownerReferences"][0]["uid"]}]
        assert "resource.kubernetes.io/delete-protection" in c["metadata"]["finalizers"]
        used += [(r["driver"], r["pool"], r["device"]) for r in alloc["devices"]["results"]]
        if owner.startswith("infer"):
            assert {r["request"] for r in alloc["devices"]["results"]} == {"gpu/new-driver"}
    assert len(used) == len(set(used)) == 4


def test_pods_reference_generated_claims_in_status():
    result = simulate(load_manifests([EXAMPLE]))
    pod = result.store.pods["default/pair"]
    (st,) = pod.status.resource_claim_statuses
    assert st.name == "gpus" and st.resource_claim_name.startswith("pair-gpus-")
    raw = result.store.raw[("Pod", "default", "pair")]
    assert raw["status"]["resourceClaimStatuses"] == [{"name": "gpus", "resourceClaimName": st.resource_claim_name}]


def test_shared_claim_and_release():
    text = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: c}
spec: {selectors: [{cel: {expression: 'device.driver == "d"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, nodeName: n2, pool: {name: n2, resourceSliceCount: 1}, devices: [{name: dev}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, uid: ua}
spec:
  containers: [{name: c, image: i}]
  resourceClaims: [{name: x, resourceClaimName: shared}]
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default, uid: ub}
spec:
  containers: [{name: c, image: i}]
  resourceClaims: [{name: x, resourceClaimName: shared}]
"""
    result = simulate(parse_manifest_text(text))
    assert {o.key: o.node for o in result.outcomes} == {"default/a": "n2", "default/b": "n2"}
    (claim,) = _claims(result)
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["a", "b"]
    assert len(claim["status"]["allocation"]["devices"]["results"]) == 1
    store = result.store
    release_pod_claims(store, store.pods["default/a"])
    assert [r["name"] for r in store.get("ResourceClaim", "default", "shared")["status"]["reservedFor"]] == ["b"]
    release_pod_claims(store, store.pods["default/b"])
    c = store.get("ResourceClaim", "default", "shared")
    assert "allocation" not in c["status"] and "reservedFor" not in c["status"]  # deallocated
    store.flush()
    assert (("d", "n2", "dev") not in result.scheduler.dra_manager.in_use)


def test_claim_name_prefix_truncation():
    assert claim_name_prefix("pod", "claim") == "pod-claim-"
    long = claim_name_prefix("p" * 60, "c" * 20)
    assert len(long) <= 57 and long.startswith("p") and "-c" in long


def test_preempted_pod_releases_its_claim():
    """A running victim (its claim holds device ``dev``) is preempted for CPU: the claim drops it
    from reservedFor and is deallocated (resourceclaim controller), so ``dev`` is free again and
    the preemptor's claim gets it (first fit). (As v1.34, preemption does not free devices to make
    room: the preemptor fits device-wise thanks to ``spare``.)"""
    text = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", memory: 8Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: c}
spec: {selectors: [{cel: {expression: 'device.driver == "d"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, nodeName: n1, pool: {name: n1, resourceSliceCount: 1}, devices: [{name: dev}, {name: spare}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: default}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}
status:
  allocation: {devices: {results: [{request: r, driver: d, pool: n1, device: dev}]}}
  reservedFor: [{resource: pods, name: low, uid: u-low}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: default}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: default, uid: u-low}
spec:
  nodeName: n1
  containers: [{name: c, image: i, resources: {requests: {cpu: 800m}}}]
  resourceClaims: [{name: x, resourceClaimName: held}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: high, namespace: default, uid: u-high}
spec:
  priorityClassName: high
  containers: [{name: c, image: i, resources: {requests: {cpu: 800m}}}]
  resourceClaims: [{name: x, resourceClaimTemplateName: t}]
"""
    result = simulate(parse_manifest_text(text))
    assert {o.key: o.node for o in result.outcomes} == {"default/high": "n1"}
    assert "default/low" not in result.store.pods
    claims = {c["metadata"]["name"]: c for c in _claims(result)}
    held = claims.pop("held")
    assert "allocation" not in held["status"] and "reservedFor" not in held["status"]
    (mine,) = claims.values()
    assert mine["status"]["allocation"]["devices"]["results"][0]["device"] == "dev"
    assert [r["name"] for r in mine["status"]["reservedFor"]] == ["high"]


def test_waiting_pod_woken_when_device_freed():
    text = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: c}
spec: {selectors: [{cel: {expression: 'device.driver == "d"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d, nodeName: n1, pool: {name: n1, resourceSliceCount: 1}, devices: [{name: dev}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t, namespace: default}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c}}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: default, uid: ua, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  containers: [{name: c, image: i}]
  resourceClaims: [{name: x, resourceClaimTemplateName: t}]
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: default, uid: ub, creationTimestamp: "2024-01-01T00:00:01Z"}
spec:
  containers: [{name: c, image: i}]
  resourceClaims: [{name: x, resourceClaimTemplateName: t}]
"""
    result = simulate(parse_manifest_text(text))
    assert {o.key: o.node for o in result.outcomes} == {"default/a": "n1", "default/b": None}
    store, sched = result.store, result.scheduler
    assert "default/b" in sched.queue.unschedulable  # waiting for a cluster event
    pod = store.remove_pod("default/a")
    release_pod_claims(store, pod)  # the claim is deallocated (an update), then deleted
    store.flush()
    sched.run_until_idle(after_each=store.flush)
    assert store.pods["default/b"].spec.node_name == "n1"
