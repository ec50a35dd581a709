"""``simulate`` with extended resources backed by DRA (DRAExtendedResource, on from 1.36): a pod
requesting ``example.com/gpu: 1`` on nodes with none of it allocatable is bound where a
ResourceSlice offers a device of the DeviceClass whose ``extendedResourceName`` is
``example.com/gpu``; the scheduler writes the claim (allocated, reserved for the pod) and the pod's
``status.extendedResourceClaimStatus``. Before 1.36 the gate is off and NodeResourcesFit rejects."""

from __future__ import annotations

from kubesched.features import FeatureGate
from kubesched.sim.manifests import parse_manifest_text
from kubesched.sim.resourceclaims import release_pod_claims
from kubesched.sim.simulate import simulate

CLUSTER = """
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
metadata: {name: gpu.example.com}
spec:
  extendedResourceName: example.com/gpu
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpus}
spec:
  driver: gpu.example.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
"""


def pod(name: str) -> str:
    return f"""---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, uid: uid-{name}}}
spec:
  containers:
  - name: main
    resources: {{requests: {{cpu: 100m, example.com/gpu: "1"}}, limits: {{example.com/gpu: "1"}}}}
"""


def _claims(result):
    return [o for o in result.output_objects() if o.get("kind") == "ResourceClaim"]


def test_pod_bound_through_dra_and_claim_written():
    result = simulate(parse_manifest_text(CLUSTER + pod("p1")), features=FeatureGate())
    assert {o.key: o.node for o in result.outcomes} == {"default/p1": "n2"}
    (claim,) = _claims(result)
    meta = claim["metadata"]
    assert meta["name"].startswith("p1-extended-resources-") and len(meta["name"]) == len("p1-extended-resources-") + 5
    assert meta["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "p1", "uid": "uid-p1",
                                        "controller": True}]
    assert "resource.kubernetes.io/delete-protection" in meta["finalizers"]
    assert claim["spec"]["devices"]["requests"] == [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1}}]
    alloc = claim["status"]["allocation"]
    assert [(r["request"], r["driver"], r["pool"]) for r in alloc["devices"]["results"]] == [
        ("container-0-request-1", "gpu.example.com", "n2")]
    assert alloc["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["n2"]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "p1", "uid": "uid-p1"}]
    want = {"requestMappings": [{"containerName": "main", "resourceName": "example.com/gpu",
                                 "requestName": "container-0-request-1"}],
            "resourceClaimName": meta["name"]}
    assert result.store.pods["default/p1"].status.extended_resource_claim_status == want
    assert result.store.raw[("Pod", "default", "p1")]["status"]["extendedResourceClaimStatus"] == want


def test_devices_are_not_given_twice_and_the_third_pod_waits():
    result = simulate(parse_manifest_text(CLUSTER + pod("p1") + pod("p2") + pod("p3")), features=FeatureGate())
    placed = {o.key: o.node for o in result.outcomes}
    assert placed == {"default/p1": "n2", "default/p2": "n2", "default/p3": None}
    msg = {o.key: o.message for o in result.outcomes}["default/p3"]
    assert msg.startswith("0/2 nodes are available: 2 cannot allocate all claims.")
    devices = sorted(c["status"]["allocation"]["devices"]["results"][0]["device"] for c in _claims(result))
    assert devices == ["gpu-0", "gpu-1"]


def test_deleting_the_pod_releases_its_extended_resource_claim():
    result = simulate(parse_manifest_text(CLUSTER + pod("p1")), features=FeatureGate())
    store = result.store
    release_pod_claims(store, store.pods["default/p1"])
    assert store.list("ResourceClaim") == []


def test_gate_off_before_1_36():
    for version in ((1, 34), (1, 35)):
        result = simulate(parse_manifest_text(CLUSTER + pod("p1")), features=FeatureGate(emulated_version=version))
        (o,) = result.outcomes
        assert o.node is None and o.message.startswith("0/2 nodes are available: 2 Insufficient example.com/gpu.")
        assert _claims(result) == []


def test_1_36_binds_too():
    result = simulate(parse_manifest_text(CLUSTER + pod("p1")), features=FeatureGate(emulated_version=(1, 36)))
    assert {o.key: o.node for o in result.outcomes} == {"default/p1": "n2"}
    assert len(_claims(result)) == 1
