"""DynamicResources with DRAExtendedResource: extended resources a DeviceClass maps are allocated
through the special ``<extended-resources>`` claim. Cases ported from upstream v1.37.2
``dynamicresources_test.go`` (the ``extended-resource-*`` rows of TestPlugin) and
``extendeddynamicresources_test.go`` (Test_createRequestsAndMappings_requests / _mappings)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kubesched.features import FeatureGate
from kubesched.framework.clock import ManualClock
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_table import NodeInfo
from kubesched.plugins import dynamicresources as dra
from kubesched.plugins.dra_extended import SPECIAL_CLAIM_NAME, create_requests_and_mappings
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

DRIVER = "some-driver"
CLASS = "my-resource-class"
GPU, GPU2 = "example.com/gpu", "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS}"
UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
ANN = "resource.kubernetes.io/extended-resource-claim"


class Lister:
    def __init__(self, *objs: tuple[str, dict[str, Any]]) -> None:
        self.objs: dict[tuple[str, str, str], dict[str, Any]] = {}
        for k, o in objs:
            self.put(k, o)

    def put(self, kind: str, o: dict[str, Any]) -> None:
        self.objs[(kind, o["metadata"].get("namespace", "") or "", o["metadata"]["name"])] = o

    def get(self, kind, namespace, name):
        return self.objs.get((kind, namespace or "", name))

    def list(self, kind, namespace=None):
        return [o for (k, ns, _), o in self.objs.items() if k == kind and (namespace is None or ns == namespace)]


class Client:
    """The API server + informer: claim writes land in the lister; the pod status patch is recorded."""

    def __init__(self, lister: Lister, fail: str | None = None) -> None:
        self.lister = lister
        self.fail = fail
        self.created: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.pod_status: list[tuple[str, dict[str, Any]]] = []

    async def update_resource_claim(self, claim):
        self.lister.put("ResourceClaim", claim)
        return claim

    async def update_resource_claim_status(self, claim):
        self.lister.put("ResourceClaim", claim)
        return claim

    async def create_resource_claim(self, claim):
        if self.fail == "create":
            raise RuntimeError("claim creation errors")
        c = copy.deepcopy(claim)
        c["metadata"]["name"] = c["metadata"]["generateName"] + str(len(self.created))
        c["metadata"]["uid"] = f"uid-{c['metadata']['name']}"
        self.created.append(c)
        self.lister.put("ResourceClaim", c)
        return c

    async def delete_resource_claim(self, claim):
        self.deleted.append(claim["metadata"]["name"])
        self.lister.objs.pop(("ResourceClaim", claim["metadata"].get("namespace") or "", claim["metadata"]["name"]),
                             None)

    async def update_pod_extended_resource_claim_status(self, pod, status):
        if self.fail == "patch":
            raise RuntimeError("patch error")
        self.pod_status.append((pod.metadata.name, copy.deepcopy(status)))


def device_class(name: str = CLASS, ext: str | None = GPU) -> tuple[str, dict]:
    return "DeviceClass", {"metadata": {"name": name}, "spec": {"extendedResourceName": ext} if ext else {}}


def node_slice(node: str = "worker", n: int = 1) -> tuple[str, dict]:
    return "ResourceSlice", {"metadata": {"name": f"{node}-slice"}, "spec": {
        "driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": f"instance-{i + 1}"} for i in range(n)]}}


def pod_req(**reqs: str):
    m = MakePod().name("my-pod").uid("pod-uid")
    m.container(requests=dict(reqs))
    return m.obj()


def worker(extended: str | None = None):
    m = MakeNode().name("worker").label("kubernetes.io/hostname", "worker")
    if extended is not None:
        m.capacity(cpu="4", memory="8Gi", pods="110", **{GPU: extended})
    return m.obj()


class Harness:
    def __init__(self, *objs: tuple[str, dict], nodes=None, fail: str | None = None,
                 features: FeatureGate | None = None) -> None:
        self.lister = Lister(*objs)
        self.client = Client(self.lister, fail)
        self.table = build_table(list(nodes or [worker()]))
        self.pl = dra.new(None, Handle(nodes=self.table, lister=self.lister, client=self.client,
                                       features=features or FeatureGate(), clock=ManualClock(1_700_000_000.0)))

    def run(self, pod):
        state = CycleState()
        _, st = self.pl.pre_filter(state, pod, self.table)
        if st is not None:
            return state, st, {}
        return state, None, {name: self.pl.filter(state, pod, NodeInfo(self.table, row))
                             for name, row in self.table.row_of.items()}

    def claims(self):
        return self.lister.list("ResourceClaim")


def in_flight_claim(h: Harness) -> dict[str, Any]:
    (c,) = h.pl.manager.in_flight.values()
    return c


def test_extended_resource_name_with_node_resource():
    """extended-resource-name-with-node-resource: the node's allocatable covers it — nothing to do."""
    h = Harness(device_class(), node_slice(), nodes=[worker("1")])
    pod = pod_req(**{GPU: "1"})
    state, st, filt = h.run(pod)
    assert st is None and filt == {"worker": None}
    assert h.pl.reserve(state, pod, "worker") is None
    assert asyncio.run(h.pl.pre_bind(state, pod, "worker")) is None
    assert h.client.created == [] and h.claims() == []


@pytest.mark.parametrize("node", [worker(), worker("0")], ids=["no-allocatable", "zero-allocatable"])
def test_extended_resource_name_with_resources(node):
    """extended-resource-name-with-resources / -with-zero-allocatable: Reserve puts the node's claim
    in flight, PreBind creates it, allocates + reserves it, and patches the pod's status."""
    h = Harness(device_class(), node_slice(), nodes=[node])
    pod = pod_req(**{GPU: "1"})
    state, st, filt = h.run(pod)
    assert st is None and filt == {"worker": None}
    assert h.pl.reserve(state, pod, "worker") is None
    c = in_flight_claim(h)
    assert c["metadata"]["name"] == SPECIAL_CLAIM_NAME
    assert c["metadata"]["generateName"] == "my-pod-extended-resources-"
    assert c["metadata"]["annotations"] == {ANN: "true"}
    assert c["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod",
                                                 "uid": "pod-uid", "controller": True}]
    assert c["spec"]["devices"]["requests"] == [{"name": "container-0-request-0", "exactly": {
        "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}}]
    assert [r["device"] for r in c["status"]["allocation"]["devices"]["results"]] == ["instance-1"]
    assert asyncio.run(h.pl.pre_bind(state, pod, "worker")) is None
    (created,) = h.claims()
    assert created["metadata"]["name"] == "my-pod-extended-resources-0"
    assert created["status"]["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": "pod-uid"}]
    assert created["status"]["allocation"]["devices"]["results"][0]["request"] == "container-0-request-0"
    assert dra.FINALIZER in created["metadata"]["finalizers"]
    assert "allocationTimestamp" in created["status"]["allocation"]
    assert h.client.pod_status == [("my-pod", {
        "requestMappings": [{"containerName": "c0", "resourceName": GPU, "requestName": "container-0-request-0"}],
        "resourceClaimName": "my-pod-extended-resources-0"})]
    assert h.pl.manager.in_flight == {}


def test_extended_resource_one_device_plugin_one_dra():
    """extended-resource-one-device-plugin-one-dra: gpu from the node's allocatable, gpu2 through DRA."""
    h = Harness(device_class(), device_class(CLASS + "2", GPU2), node_slice(), nodes=[worker("1")])
    pod = pod_req(**{GPU: "1", GPU2: "1"})
    state, st, filt = h.run(pod)
    assert st is None and filt == {"worker": None}
    assert h.pl.reserve(state, pod, "worker") is None
    assert in_flight_claim(h)["spec"]["devices"]["requests"] == [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": CLASS + "2", "allocationMode": "ExactCount", "count": 1}}]
    assert asyncio.run(h.pl.pre_bind(state, pod, "worker")) is None
    assert h.client.pod_status[0][1]["requestMappings"] == [
        {"containerName": "c0", "resourceName": GPU2, "requestName": "container-0-request-1"}]


def test_non_dra_extended_resource_name_is_skipped():
    """non-DRA-extended-resource-name-with-zero-allocatable: no class maps it → PreFilter Skip."""
    h = Harness(device_class(ext=None), node_slice(), nodes=[worker("0")])
    _, st, _ = h.run(pod_req(**{GPU: "1"}))
    assert st is not None and st.code == Code.SKIP


def test_extended_resource_name_no_resource():
    """extended-resource-name-no-resource: no devices → cannot allocate all claims, PostFilter without text."""
    h = Harness(device_class())
    pod = pod_req(**{GPU: "1"})
    state, st, filt = h.run(pod)
    assert st is None and (filt["worker"].code, filt["worker"].reasons) == (UU, ("cannot allocate all claims",))
    _, post = h.pl.post_filter(state, pod, {})
    assert (post.code, post.reasons) == (Code.UNSCHEDULABLE, ())
    assert h.client.created == []


def test_implicit_extended_resource_name_two_containers():
    """implicit-extended-resource-name(-two-containers)-with-resources: the implicit name and the
    explicit one both map to the class; one request per container and resource."""
    h = Harness(device_class(), node_slice(n=6))
    m = MakePod().name("my-pod").uid("pod-uid")
    m.container(requests={IMPLICIT: "1", GPU: "2"})
    m.container(requests={IMPLICIT: "1", GPU: "2"})
    pod = m.obj()
    state, st, filt = h.run(pod)
    assert st is None and filt == {"worker": None}
    assert h.pl.reserve(state, pod, "worker") is None
    reqs = in_flight_claim(h)["spec"]["devices"]["requests"]
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-0-request-0", 1), ("container-0-request-1", 2), ("container-1-request-0", 1),
        ("container-1-request-1", 2)]
    assert asyncio.run(h.pl.pre_bind(state, pod, "worker")) is None
    (created,) = h.claims()
    assert len(created["status"]["allocation"]["devices"]["results"]) == 6


def test_pod_with_unmapped_extended_resource_missing_on_node_cannot_fit():
    """filterExtendedResources: a request neither in the node's allocatable nor mapped → cannot fit resource."""
    h = Harness(device_class(), node_slice())
    _, st, filt = h.run(pod_req(**{GPU: "1", "example.com/other": "1"}))
    assert st is None and (filt["worker"].code, filt["worker"].reasons) == (UU, ("cannot fit resource",))


def test_existing_claim_is_deleted_by_postfilter():
    """extended-resource-name-with-resources-has-claim: a claim a prior cycle wrote → Filter
    rejects, PostFilter deletes it."""
    written = {"metadata": {"name": "my-pod-extended-resources-0", "namespace": "default",
                            "generateName": "my-pod-extended-resources-", "annotations": {ANN: "true"},
                            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod",
                                                 "uid": "pod-uid", "controller": True}]},
               "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
                   "deviceClassName": CLASS, "allocationMode": "ExactCount", "count": 1}}]}},
               "status": {}}
    h = Harness(device_class(), node_slice(), ("ResourceClaim", written))
    pod = pod_req(**{GPU: "1"})
    state, st, filt = h.run(pod)
    assert st is None
    assert (filt["worker"].code, filt["worker"].reasons) == (UU, ("cannot schedule extended resource claim",))
    _, post = h.pl.post_filter(state, pod, {})
    assert (post.code, post.reasons) == (Code.UNSCHEDULABLE, ("deletion of ResourceClaim completed",))
    assert h.client.deleted == ["my-pod-extended-resources-0"] and h.claims() == []


def test_claim_creation_failure_and_unreserve():
    """extended-resource-name-claim-creation-failure: PreBind fails with the API error, Unreserve
    drops the in-flight allocation."""
    h = Harness(device_class(), node_slice(), fail="create")
    pod = pod_req(**{GPU: "1"})
    state, _, _ = h.run(pod)
    assert h.pl.reserve(state, pod, "worker") is None
    st = asyncio.run(h.pl.pre_bind(state, pod, "worker"))
    assert st.code == Code.ERROR and "claim creation errors" in st.message()
    h.pl.unreserve(state, pod, "worker")
    assert h.pl.manager.in_flight == {} and h.claims() == []


def test_bind_failure_unreserve_deletes_the_written_claim():
    """extended-resource-name-bind-failure / -fail-patch: once written, Unreserve deletes the claim."""
    h = Harness(device_class(), node_slice(), fail="patch")
    pod = pod_req(**{GPU: "1"})
    state, _, _ = h.run(pod)
    assert h.pl.reserve(state, pod, "worker") is None
    st = asyncio.run(h.pl.pre_bind(state, pod, "worker"))
    assert st.code == Code.ERROR and "patch error" in st.message()
    h.pl.unreserve(state, pod, "worker")
    assert h.client.deleted == ["my-pod-extended-resources-0"] and h.claims() == []


def test_skip_bind_unreserve_keeps_nothing():
    """extended-resource-name-skip-bind: Unreserve before PreBind only drops the in-flight claim."""
    h = Harness(device_class(), node_slice())
    pod = pod_req(**{GPU: "1"})
    state, _, _ = h.run(pod)
    assert h.pl.reserve(state, pod, "worker") is None
    h.pl.unreserve(state, pod, "worker")
    assert h.pl.manager.in_flight == {} and h.client.deleted == [] and h.claims() == []


@pytest.mark.parametrize("version", [(1, 34), (1, 35)])
def test_gate_off_before_1_36(version):
    h = Harness(device_class(), node_slice(), features=FeatureGate(emulated_version=version))
    _, st, _ = h.run(pod_req(**{GPU: "1"}))
    assert st is not None and st.code == Code.SKIP


def test_in_flight_devices_are_not_given_twice():
    """Reserve marks the extended claim's devices in use for the next pod (one device, two pods)."""
    h = Harness(device_class(), node_slice())
    p1 = pod_req(**{GPU: "1"})
    state, _, _ = h.run(p1)
    assert h.pl.reserve(state, p1, "worker") is None
    p2 = MakePod().name("other").uid("other-uid").container(requests={GPU: "1"}).obj()
    _, st, filt = h.run(p2)
    assert st is None and filt["worker"].reasons == ("cannot allocate all claims",)


# ── extendeddynamicresources_test.go: Test_createRequestsAndMappings_* ──


def _classes(*names: str) -> dict[str, dict[str, Any]]:
    return {n: {"metadata": {"name": "class-" + n.split("/")[-1]}} for n in names}


def _pod(init=(), containers=()):
    m = MakePod().name("p")
    for name, req, sidecar in init:
        m.container(name=name, requests=req, init=True, restart_policy="Always" if sidecar else None)
    for name, req in containers:
        m.container(name=name, requests=req)
    return m.obj()


def test_requests_regular_containers():
    pod = _pod(containers=[("c0", {"a.com/x": "2", "cpu": "1"}), ("c1", {"a.com/x": "1"})])
    reqs, maps = create_requests_and_mappings(pod, {"a.com/x": 3}, _classes("a.com/x"))
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [("container-0-request-0", 2),
                                                                   ("container-1-request-0", 1)]
    assert maps == [{"containerName": "c0", "resourceName": "a.com/x", "requestName": "container-0-request-0"},
                    {"containerName": "c1", "resourceName": "a.com/x", "requestName": "container-1-request-0"}]


def test_requests_init_container_reuses_later_long_lived_requests():
    """A short-lived init container reuses the requests of the long-lived containers after it and
    asks only for the remainder; several short-lived ones share the largest request."""
    pod = _pod(init=[("i0", {"a.com/x": "3"}, False), ("i1", {"a.com/x": "1"}, False), ("s", {"a.com/x": "1"}, True)],
               containers=[("c", {"a.com/x": "1"})])
    reqs, maps = create_requests_and_mappings(pod, {"a.com/x": 3}, _classes("a.com/x"))
    # long-lived: sidecar s (index 2) and c (index 3) own one device each; i0 needs 3 → reuses both + 1 more;
    # i1 needs 1 → satisfied by s's request
    assert [(r["name"], r["exactly"]["count"]) for r in reqs] == [
        ("container-0-request-0", 1), ("container-2-request-0", 1), ("container-3-request-0", 1)]
    assert {(m["containerName"], m["requestName"]) for m in maps} == {
        ("s", "container-2-request-0"), ("c", "container-3-request-0"),
        ("i0", "container-2-request-0"), ("i0", "container-3-request-0"), ("i0", "container-0-request-0"),
        ("i1", "container-2-request-0")}


def test_requests_unmapped_resource_and_fractions_are_skipped():
    pod = _pod(containers=[("c", {"a.com/x": "1", "b.com/y": "1"})])
    reqs, maps = create_requests_and_mappings(pod, {"a.com/x": 1, "b.com/y": 1}, _classes("a.com/x"))
    assert [r["name"] for r in reqs] == ["container-0-request-0"] and len(maps) == 1


def test_user_claim_with_extended_resource_from_the_device_plugin_fails_prebind_as_upstream():
    """v1.37.2 code path (no upstream test row): with a user claim, filterExtendedResources still
    returns a node claim — without requests — when the node's allocatable covers the extended
    resource; it is allocated (nothing) with the user claim, PreBind writes it and then fails on
    the empty request mappings (patchPodExtendedResourceClaimStatus, L555-557)."""
    user = ("ResourceClaim", {"metadata": {"name": "my-claim", "namespace": "default", "uid": "uid-c"},
                              "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": CLASS}}]}},
                              "status": {}})
    h = Harness(device_class(), node_slice(n=2), user, nodes=[worker("1")])
    m = MakePod().name("my-pod").uid("pod-uid").container(requests={GPU: "1"})
    m.spec(resourceClaims=[{"name": "c0", "resourceClaimName": "my-claim"}])
    pod = m.obj()
    state, st, filt = h.run(pod)
    assert st is None and filt == {"worker": None}
    assert h.pl.reserve(state, pod, "worker") is None
    st = asyncio.run(h.pl.pre_bind(state, pod, "worker"))
    assert st.code == Code.ERROR and st.message() == (
        "nil or empty request mappings, no update of pod default/my-pod ExtendedResourceClaimStatus")
    h.pl.unreserve(state, pod, "worker")
    assert h.client.deleted == ["my-pod-extended-resources-0"]
