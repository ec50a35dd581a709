"""DynamicResources: pods without claims, claim lookup errors, and the structured allocation
path (PreFilter → Filter → Reserve → PreBind, PostFilter deallocation), with the cases of
upstream ``dynamicresources_test.go`` that apply to structured parameters; the version-dependent
parts (Score since 1.35, the filter-timeout Error since 1.36, PostFilter texts of 1.37) at each
emulated version."""

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
from kubesched.framework.node_table import NodeInfo, NodeTable
from kubesched.plugins import dynamicresources as dra
from kubesched.testing.wrappers import MakeNode, MakePod, build_table

DRIVER = "some-driver"
CLASS = "my-resource-class"


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
    """Records the claim writes; stores them in the lister (like the API server + informer)."""

    def __init__(self, lister: Lister, fail: str | None = None) -> None:
        self.lister = lister
        self.writes: list[tuple[str, dict[str, Any]]] = []
        self.fail = fail

    async def update_resource_claim(self, claim):
        if self.fail == "update":
            raise RuntimeError("conflict")
        self.writes.append(("update", copy.deepcopy(claim)))
        self.lister.put("ResourceClaim", claim)
        return claim

    async def update_resource_claim_status(self, claim):
        if self.fail == "status":
            raise RuntimeError("conflict")
        self.writes.append(("status", copy.deepcopy(claim)))
        self.lister.put("ResourceClaim", claim)
        return claim


def device_class(name: str = CLASS, selectors: list[str] = (), config: list[dict] = ()) -> tuple[str, dict]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if config:
        spec["config"] = list(config)
    return "DeviceClass", {"metadata": {"name": name}, "spec": spec}


def device(name: str, **attrs: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name}
    a = {}
    for k, v in attrs.items():
        if k == "capacity":
            d["capacity"] = {n: {"value": q} for n, q in v.items()}
        elif isinstance(v, bool):
            a[k] = {"bool": v}
        elif isinstance(v, int):
            a[k] = {"int": v}
        elif isinstance(v, str) and v.startswith("v"):
            a[k] = {"version": v[1:]}
        else:
            a[k] = {"string": v}
    if a:
        d["attributes"] = a
    return d


def resource_slice(name: str, devices: list[dict], *, node: str | None = None, all_nodes: bool = False,
                   node_selector: dict | None = None, pool: str | None = None, generation: int = 1,
                   count: int = 1, driver: str = DRIVER, per_device: bool = False) -> tuple[str, dict]:
    spec: dict[str, Any] = {"driver": driver, "devices": devices,
                            "pool": {"name": pool or node or name, "generation": generation,
                                     "resourceSliceCount": count}}
    if node:
        spec["nodeName"] = node
    if all_nodes:
        spec["allNodes"] = True
    if node_selector:
        spec["nodeSelector"] = node_selector
    if per_device:
        spec["perDeviceNodeSelection"] = True
    return "ResourceSlice", {"metadata": {"name": name}, "spec": spec}


def request(name: str = "req-1", cls: str = CLASS, **exactly: Any) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, **exactly}}


def claim(name: str = "my-claim", requests: list[dict] | None = None, *, constraints: list[dict] = (),
          config: list[dict] = (), allocation: dict | None = None, reserved_for: list[dict] = (),
          owner_uid: str | None = None, uid: str | None = None) -> tuple[str, dict]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "my-pod", "uid": owner_uid,
                                    "controller": True}]
    devices: dict[str, Any] = {"requests": requests if requests is not None else [request()]}
    if constraints:
        devices["constraints"] = list(constraints)
    if config:
        devices["config"] = list(config)
    status: dict[str, Any] = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved_for:
        status["reservedFor"] = list(reserved_for)
    return "ResourceClaim", {"metadata": meta, "spec": {"devices": devices}, "status": status}


def pod_with(*names: str, template: str | None = None, generated: str | None = None, uid: str = "pod-uid"):
    m = MakePod().name("my-pod").uid(uid)
    rcs: list[dict[str, Any]] = [{"name": f"c{i}", "resourceClaimName": n} for i, n in enumerate(names)]
    if template is not None:
        rcs.append({"name": "tpl", "resourceClaimTemplateName": template})
    m.spec(resourceClaims=rcs)
    pod = m.raw()
    if generated is not None:
        pod["status"]["resourceClaimStatuses"] = [{"name": "tpl", "resourceClaimName": generated}]
    import msgspec

    from kubesched.api import objects as o
    return o.decode(o.Pod, msgspec.json.decode(msgspec.json.encode(pod)))


NODES = [MakeNode().name("worker").label("nodename", "worker").obj(),
         MakeNode().name("worker-2").label("nodename", "worker-2").obj()]


V134 = FeatureGate(emulated_version=(1, 34))
V135 = FeatureGate(emulated_version=(1, 35))
V136 = FeatureGate(emulated_version=(1, 36))
V137 = FeatureGate()


class Harness:
    def __init__(self, *objs: tuple[str, dict], nodes=NODES, fail: str | None = None,
                 features: FeatureGate = V137) -> None:
        self.lister = Lister(*objs)
        self.client = Client(self.lister, fail)
        self.table = build_table(list(nodes))
        self.pl = dra.new(None, Handle(nodes=self.table, lister=self.lister, client=self.client, features=features,
                                       clock=ManualClock(1_700_000_000.0)))

    def claim(self, name: str = "my-claim") -> dict:
        return self.lister.get("ResourceClaim", "default", name)

    def run(self, pod, state: CycleState | None = None):
        """PreFilter, then Filter on every node: (prefilter status, {node: status})."""
        state = state or CycleState()
        _, st = self.pl.pre_filter(state, pod, self.table)
        if st is not None:
            return state, st, {}
        out = {}
        for name, row in self.table.row_of.items():
            out[name] = self.pl.filter(state, pod, NodeInfo(self.table, row))
        return state, None, out

    def schedule(self, pod, node: str = "worker"):
        state, st, filt = self.run(pod)
        assert st is None and filt[node] is None, (st, filt)
        assert self.pl.reserve(state, pod, node) is None
        res = self.pl.pre_bind(state, pod, node)
        return state, asyncio.run(res) if res is not None and not isinstance(res, dra.Status) else res


def reasons(st):
    return (st.code, st.reasons) if st is not None else None


UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE

# ─────────────────────────── pods without claims / lookups ───────────────────────────


@pytest.mark.parametrize("fg,post", [(V134, ("no new claims to deallocate",)), (V136, ("no new claims to deallocate",)),
                                     (V137, ())], ids=["1.34", "1.36", "1.37"])
def test_pod_without_claims(fg, post):
    # 1.37: PostFilter's fast path for a pod without claims is Unschedulable without a message
    h = Harness(features=fg)
    pod = MakePod().obj()
    state = CycleState()
    assert h.pl.pre_enqueue(pod) is None
    res, st = h.pl.pre_filter(state, pod, NodeTable())
    assert res is None and st.code == Code.SKIP
    assert isinstance(state.read(dra.STATE_KEY), dra.StateData)  # written before skipping
    _, pst = h.pl.post_filter(state, pod, {})
    assert pst.code == Code.UNSCHEDULABLE and pst.reasons == post
    assert h.pl.reserve(state, pod, "n") is None and h.pl.pre_bind(state, pod, "n") is None
    h.pl.unreserve(state, pod, "n")


def test_post_filter_without_pre_filter_state():
    _, st = Harness().pl.post_filter(CycleState(), MakePod().obj(), {})
    assert st.code == Code.ERROR and st.reasons == ("not found",)


@pytest.mark.parametrize("kwargs,objs,msg", [
    ({"names": ("my-claim",)}, [], 'could not find ResourceClaim "default/my-claim"'),
    ({"template": "t"}, [], 'pod "default/my-pod": ResourceClaim not created yet'),
    ({"template": "t", "generated": "gen"}, [], 'could not find ResourceClaim "default/gen"'),
    ({"template": "t", "generated": "my-claim"}, [claim()],
     "ResourceClaim default/my-claim was not created for pod default/my-pod (pod is not owner)"),
], ids=["claim-missing", "template-not-created", "generated-claim-missing", "not-owner"])
def test_claim_lookup_errors(kwargs, objs, msg):
    h = Harness(*objs, features=V134)
    pod = pod_with(*kwargs.get("names", ()), template=kwargs.get("template"), generated=kwargs.get("generated"))
    st = h.pl.pre_enqueue(pod)
    assert st.code == UU and st.reasons == (msg,)
    state, st, _ = h.run(pod)
    assert st.code == UU and st.reasons == (msg,)
    assert h.pl.post_filter(state, pod, {})[1].reasons == ("no new claims to deallocate",)


def test_deleted_claim():
    _, c = claim("c")
    c["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    st = Harness(("ResourceClaim", c)).pl.pre_enqueue(pod_with("c"))
    assert st.reasons == ('resourceclaim "c" is being deleted',)


def test_generated_claim_owned_by_pod_is_used():
    h = Harness(device_class(), claim(owner_uid="pod-uid"), resource_slice("s", [device("d0")], node="worker"))
    pod = pod_with(template="t", generated="my-claim")
    assert h.pl.pre_enqueue(pod) is None
    _, st, filt = h.run(pod)
    assert st is None and filt["worker"] is None


def test_missing_device_class():
    h = Harness(claim(), resource_slice("s", [device("d0")], node="worker"))
    _, st, _ = h.run(pod_with("my-claim"))
    assert reasons(st) == (UU, (f"request req-1: device class {CLASS} does not exist",))


def test_missing_subrequest_device_class():
    req = {"name": "req-1", "firstAvailable": [{"name": "a", "deviceClassName": CLASS},
                                                {"name": "b", "deviceClassName": "nope"}]}
    h = Harness(device_class(), claim(requests=[req]))
    _, st, _ = h.run(pod_with("my-claim"))
    assert reasons(st) == (UU, ("request req-1/b: device class nope does not exist",))


# ─────────────────────────── structured allocation ───────────────────────────


def test_no_resources():
    h = Harness(device_class(), claim())
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None
    assert {n: reasons(s) for n, s in filt.items()} == {
        "worker": (UU, ("cannot allocate all claims",)), "worker-2": (UU, ("cannot allocate all claims",))}


@pytest.mark.parametrize("fg,stamp", [(V135, None), (V137, "2023-11-14T22:13:20Z")], ids=["1.35", "1.37"])
def test_allocate_reserve_prebind(fg, stamp):
    # 1.36+ (DRADeviceBindingConditions + DRAResourceClaimDeviceStatus): PreBind stamps the
    # allocation with the time of the write (v1.37.2 dynamicresources.go L1936-1947)
    h = Harness(device_class(selectors=[f'device.driver == "{DRIVER}"']), claim(),
                resource_slice("s", [device("instance-1")], node="worker"), features=fg)
    pod = pod_with("my-claim")
    state, st, filt = h.run(pod)
    assert st is None and filt["worker"] is None
    assert reasons(filt["worker-2"]) == (UU, ("cannot allocate all claims",))
    assert h.pl.reserve(state, pod, "worker") is None
    mgr = h.pl.manager
    assert (DRIVER, "worker", "instance-1") in mgr.in_use  # in flight: not given to another pod
    st = asyncio.run(h.pl.pre_bind(state, pod, "worker"))
    assert st is None
    kinds = [k for k, _ in h.client.writes]
    assert kinds == ["update", "status"]
    assert dra.FINALIZER in h.client.writes[0][1]["metadata"]["finalizers"]
    c = h.claim()
    want = {
        "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "instance-1"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
    if stamp:
        want["allocationTimestamp"] = stamp
    assert c["status"]["allocation"] == want
    assert c["status"]["reservedFor"] == [{"resource": "pods", "name": "my-pod", "uid": "pod-uid"}]
    assert not mgr.in_flight and (DRIVER, "worker", "instance-1") in mgr.in_use  # assumed after the write


def test_second_pod_does_not_get_in_flight_device():
    h = Harness(device_class(), claim("a"), claim("b"), resource_slice("s", [device("d0")], node="worker"))
    p1, p2 = pod_with("a", uid="p1"), pod_with("b", uid="p2")
    state, st, filt = h.run(p1)
    assert filt["worker"] is None and h.pl.reserve(state, p1, "worker") is None
    _, st, filt = h.run(p2)
    assert reasons(filt["worker"]) == (UU, ("cannot allocate all claims",))
    h.pl.unreserve(state, p1, "worker")  # gives it back
    _, st, filt = h.run(p2)
    assert filt["worker"] is None


def test_claim_in_flight_for_other_pod():
    h = Harness(device_class(), claim(), resource_slice("s", [device("d0")], node="worker"))
    p1 = pod_with("my-claim", uid="p1")
    state, _, _ = h.run(p1)
    h.pl.reserve(state, p1, "worker")
    _, st, _ = h.run(pod_with("my-claim", uid="p2"))
    assert reasons(st) == (UU, ("resource claim default/my-claim is in the process of being allocated",))


def test_prebind_failure_releases_in_flight_devices():
    h = Harness(device_class(), claim(), resource_slice("s", [device("d0")], node="worker"), fail="status")
    pod = pod_with("my-claim")
    state, st = h.schedule(pod)
    assert st.code == Code.ERROR
    assert st.reasons == ("add allocation and reservation to claim default/my-claim: conflict",)
    assert not h.pl.manager.in_flight and (DRIVER, "worker", "d0") not in h.pl.manager.in_use
    h.pl.unreserve(state, pod, "worker")
    _, st, filt = h.run(pod)
    assert filt["worker"] is None  # retried: the device is free again


def test_device_allocated_to_other_claim():
    alloc = {"devices": {"results": [{"request": "r", "driver": DRIVER, "pool": "worker", "device": "d0"}]}}
    h = Harness(device_class(), claim(), claim("other", allocation=alloc),
                resource_slice("s", [device("d0"), device("d1")], node="worker"))
    state, st, filt = h.run(pod_with("my-claim"))
    assert filt["worker"] is None
    assert state.read(dra.STATE_KEY).node_allocations["worker"].results()[0]["devices"]["results"][0]["device"] == "d1"


def test_allocated_claim_wrong_node_and_deallocation():
    alloc = {"devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "d0"}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
    h = Harness(device_class(), claim(allocation=alloc), nodes=[NODES[1]])
    pod = pod_with("my-claim")
    state, st, filt = h.run(pod)
    assert reasons(filt["worker-2"]) == (UU, ("resourceclaim not available on the node",))
    _, pst = h.pl.post_filter(state, pod, {})
    assert reasons(pst) == (Code.UNSCHEDULABLE, ("deallocation of ResourceClaim completed",))
    assert h.client.writes[-1][0] == "status" and "allocation" not in h.claim()["status"]


@pytest.mark.parametrize("fg,post", [(V134, ("still not schedulable",)), (V137, ())], ids=["1.34", "1.37"])
def test_allocated_claim_reserved_by_other_not_deallocated(fg, post):
    alloc = {"devices": {"results": []},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
    h = Harness(device_class(), claim(allocation=alloc, reserved_for=[{"resource": "pods", "name": "x", "uid": "x"}]),
                nodes=[NODES[1]], features=fg)
    pod = pod_with("my-claim")
    state, _, _ = h.run(pod)
    assert reasons(h.pl.post_filter(state, pod, {})[1]) == (Code.UNSCHEDULABLE, post)
    assert not h.client.writes


def test_claim_in_use():
    alloc = {"devices": {"results": []}}
    full = [{"resource": "pods", "name": f"p{i}", "uid": f"u{i}"} for i in range(dra.RESERVED_FOR_MAX_SIZE)]
    h = Harness(device_class(), claim(allocation=alloc, reserved_for=full))
    _, st, _ = h.run(pod_with("my-claim"))
    assert reasons(st) == (UU, ("resourceclaim in use",))


def test_allocated_and_reserved_claim_only_prebind_nothing():
    alloc = {"devices": {"results": []}}
    h = Harness(device_class(), claim(allocation=alloc, reserved_for=[{"resource": "pods", "name": "my-pod",
                                                                      "uid": "pod-uid"}]))
    state, st = h.schedule(pod_with("my-claim"))
    assert st is None and h.client.writes == []


def test_cel_runtime_error_is_an_error_status():
    h = Harness(device_class(selectors=[f'device.attributes["{DRIVER}"].missing == 1']), claim(),
                resource_slice("s", [device("d0")], node="worker"))
    _, _, filt = h.run(pod_with("my-claim"))
    assert filt["worker"].code == Code.ERROR
    assert filt["worker"].reasons == (
        f"class {CLASS}: selector #0 on device {DRIVER}/worker/d0: CEL runtime error: no such key: missing",)
    assert reasons(filt["worker-2"]) == (UU, ("cannot allocate all claims",))  # no device to evaluate there


def test_cel_compile_error():
    h = Harness(device_class(), claim(requests=[request(selectors=[{"cel": {"expression": "device.driver =="}}])]),
                resource_slice("s", [device("d0")], node="worker"))
    _, _, filt = h.run(pod_with("my-claim"))
    assert filt["worker"].code == Code.ERROR
    assert filt["worker"].reasons[0].startswith("claim default/my-claim: selector #0: CEL compile error:")


def test_events_and_hints():
    h = Harness(device_class(), claim(), resource_slice("s", [device("d0")], node="worker"))
    regs = {e.event.resource.value: e.event.action for e in h.pl.events_to_register()}
    # 1.37: the pod's own claims update is a TargetPod event; claims also on Delete
    assert set(regs) == {"Node", "ResourceClaim", "TargetPod", "DeviceClass", "ResourceSlice"}
    A = dra.ActionType
    assert regs["ResourceClaim"] == A.ADD | A.UPDATE | A.DELETE
    hint = next(e.hint for e in h.pl.events_to_register() if e.event.resource.value == "ResourceClaim")
    pod = pod_with("my-claim")
    _, c = claim()
    _, other = claim("other")
    assert hint(pod, None, c) == dra.QueueingHint.QUEUE
    assert hint(pod, None, other) == dra.QueueingHint.SKIP
    assert hint(pod, c, copy.deepcopy(c)) == dra.QueueingHint.SKIP
    allocated = copy.deepcopy(other)
    allocated["status"]["allocation"] = {"devices": {"results": []}}
    assert hint(pod, allocated, other) == dra.QueueingHint.QUEUE  # deallocated: devices freed
    assert hint(pod, other, None) == dra.QueueingHint.SKIP  # deleted without an allocation
    assert hint(pod, allocated, None) == dra.QueueingHint.QUEUE  # deleted while allocated
    target = next(e.hint for e in h.pl.events_to_register() if e.event.resource.value == "TargetPod")
    assert target(pod, pod, pod) == dra.QueueingHint.QUEUE  # its claim exists now
    assert target(pod, pod, pod_with("missing")) == dra.QueueingHint.SKIP


def test_events_at_134():
    from kubesched.features import FeatureGate

    h = Harness(device_class(), claim())
    h.pl.handle.features = FeatureGate(emulated_version=(1, 34))
    regs = {e.event.resource.value: e.event.action for e in h.pl.events_to_register()}
    assert set(regs) == {"Node", "ResourceClaim", "Pod", "DeviceClass", "ResourceSlice"}
    assert regs["ResourceClaim"] == dra.ActionType.ADD | dra.ActionType.UPDATE


@pytest.mark.parametrize("fg,delete", [(V136, False), (V137, True)], ids=["1.36", "1.37"])
def test_claim_delete_registered_since_137(fg, delete):
    # v1.37.2 EventsToRegister: ResourceClaim Add|Update|Delete; a deleted claim requeues only when
    # it still held an allocation (isSchedulableAfterClaimChange L396-418)
    h = Harness(device_class(), claim(), features=fg)
    ev = next(e for e in h.pl.events_to_register() if e.event.resource.value == "ResourceClaim")
    assert bool(ev.event.action & dra.ActionType.DELETE) is delete
    _, other = claim("other")
    allocated = copy.deepcopy(other)
    allocated["status"]["allocation"] = {"devices": {"results": []}}
    assert ev.hint(pod_with("my-claim"), other, None) == dra.QueueingHint.SKIP
    assert ev.hint(pod_with("my-claim"), allocated, None) == dra.QueueingHint.QUEUE


def test_manager_follows_informer_events():
    lister = Lister()
    mgr = dra.DRAManager(lister)
    mgr.live_events = True
    _, c = claim(allocation={"devices": {"results": [{"request": "r", "driver": "d", "pool": "p", "device": "x"}]}})
    mgr.on_event("ResourceClaim", None, c)
    assert ("d", "p", "x") in mgr.in_use
    mgr.on_event("ResourceClaim", c, None)
    assert ("d", "p", "x") not in mgr.in_use


def test_unknown_request_type():
    h = Harness(device_class(), claim(requests=[{"name": "req-1"}]))
    _, st, _ = h.run(pod_with("my-claim"))
    assert reasons(st) == (UU, ("resource claim default/my-claim, request req-1: unknown request type",))


@pytest.mark.parametrize("fg,want", [
    (V134, (UU, ("timed out trying to allocate devices",))),
    (V135, (UU, ("timed out trying to allocate devices",))),
    (V136, (Code.ERROR, ("node worker: timed out trying to allocate devices",))),
    (V137, (Code.ERROR, ("node worker: timed out trying to allocate devices",))),
], ids=["1.34", "1.35", "1.36", "1.37"])
def test_filter_timeout(fg, want):
    # two devices needed with one numa value, but every device has its own: an exhaustive search.
    # Since 1.36 a timeout is an Error naming the node (v1.37.2 dynamicresources.go L1066-1073)
    devices = [device(f"d{i}", numa=i) for i in range(300)]
    c = claim(requests=[request(count=2)], constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    h = Harness(device_class(), c, resource_slice("s", devices, node="worker"), features=fg)
    h.pl.filter_timeout_s = 1e-9
    _, _, filt = h.run(pod_with("my-claim"))
    assert reasons(filt["worker"]) == want
    h.pl.filter_timeout_s = 0.0  # no limit: the search ends and finds nothing
    _, _, filt = h.run(pod_with("my-claim"))
    assert reasons(filt["worker"]) == (UU, ("cannot allocate all claims",))


def test_filter_timeout_from_args():
    from kubesched.config.args import DynamicResourcesArgs

    pl = dra.new(DynamicResourcesArgs(filter_timeout="250ms"), Handle(nodes=NodeTable()))
    assert pl.filter_timeout_s == 0.25
    assert dra.new(DynamicResourcesArgs(filter_timeout="0s"), Handle(nodes=NodeTable())).filter_timeout_s == 0


@pytest.mark.parametrize("objs", [
    [device_class(), claim(), resource_slice("s", [device("d0")], node="worker")],
    [device_class(), claim()],
    [device_class(), claim(allocation={"devices": {"results": []}, "nodeSelector": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}})],
], ids=["one-node-fits", "no-devices", "allocated-elsewhere"])
def test_batch_filter_matches_per_node(objs):
    import numpy as np

    h = Harness(*objs)
    pod = pod_with("my-claim")
    state, st, per_node = h.run(pod)
    assert st is None
    rows = np.asarray(sorted(h.table.row_of.values()), np.int64)
    res = h.pl.filter_nodes(state, pod, h.table, rows)
    names = {r: n for n, r in h.table.row_of.items()}
    for i, row in enumerate(rows.tolist()):
        want = per_node[names[row]]
        if want is None:
            assert res is None or res.failed[i] == 0
        else:
            assert res.statuses[res.failed[i] - 1] == (want.reasons, want.code)


def test_batch_filter_error_raises():
    h = Harness(device_class(selectors=[f'device.attributes["{DRIVER}"].missing == 1']), claim(),
                resource_slice("s", [device("d0")], node="worker"))
    pod = pod_with("my-claim")
    state = CycleState()
    h.pl.pre_filter(state, pod, h.table)
    import numpy as np

    with pytest.raises(Exception, match="CEL runtime error: no such key: missing"):
        h.pl.filter_nodes(state, pod, h.table, np.asarray(sorted(h.table.row_of.values()), np.int64))


# ─────────────────────────── Score (since 1.35) ───────────────────────────


def sub(name: str, count: int = 1, cls: str = CLASS, selectors: list[str] = ()) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name, "deviceClassName": cls, "allocationMode": "ExactCount", "count": count}
    if selectors:
        s["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return s


def prioritized(name: str, *subs: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def subs(n: int) -> list[dict[str, Any]]:
    return [sub(f"subreq-{i}") for i in range(1, n + 1)]


def result(*requests: str) -> dict[str, Any]:
    return {"devices": {"results": [{"request": r} for r in requests]}}


ALLOCATED = claim("allocated", allocation=result("req-1"))[1]
PENDING2 = claim("pending2")[1]

# upstream Test_computesScore (v1.37.2 dynamicresources_test.go L5297-5564)
COMPUTE_SCORE_CASES = {
    "more-claims-than-allocations": (
        [claim("a", [prioritized("req-1", sub("subreq-1"))])[1],
         claim("b", [prioritized("req-2", sub("subreq-1"))])[1]],
        [], None),
    "mix-of-allocated-and-unallocated-claims": ([ALLOCATED, PENDING2], [result("req-1")], 0),
    "single-request-only-subrequest-allocated": (
        [claim("a", [prioritized("req-1", sub("subreq-1"))])[1]], [result("req-1/subreq-1")], 8),
    "single-request-last-subrequest-allocated": (
        [claim("a", [prioritized("req-1", *subs(8))])[1]], [result("req-1/subreq-8")], 1),
    "multiple-requests-with-middle-subrequests-allocated": (
        [claim("a", [prioritized("req-1", *subs(4)), prioritized("req-2", *subs(5))])[1]],
        [result("req-1/subreq-4", "req-2/subreq-5")], 9),
    "multiple-requests-with-top-subrequests-allocated": (
        [claim("a", [prioritized("req-1", *subs(8)), prioritized("req-2", sub("subreq-1"))])[1]],
        [result("req-1/subreq-8", "req-2/subreq-1")], 9),
    "multiple-claims-with-last-subrequests-allocated": (
        [claim("a", [prioritized("req-1", *subs(8))])[1], claim("b", [prioritized("req-2", *subs(8))])[1]],
        [result("req-1/subreq-8"), result("req-2/subreq-8")], 2),
    "multiple-claims-with-top-subrequests-allocated": (
        [claim("a", [prioritized("req-1", sub("subreq-1"))])[1],
         claim("b", [prioritized("req-2", sub("subreq-1"))])[1]],
        [result("req-1/subreq-1"), result("req-2/subreq-1")], 16),
}


@pytest.mark.parametrize("name", list(COMPUTE_SCORE_CASES))
def test_compute_score(name):
    claims, allocations, want = COMPUTE_SCORE_CASES[name]
    if want is None:
        with pytest.raises(ValueError, match="is smaller than number of claims needing allocation"):
            dra.compute_score(claims, allocations)
    else:
        assert dra.compute_score(claims, allocations) == want


def test_compute_score_v135_indexes_results_by_claim():
    # v1.35.4 computeScore (L861-889) takes the i-th result for the i-th claim: a pod with an
    # allocated claim next to one being allocated runs past the results
    with pytest.raises(ValueError, match="number of allocations 1 is smaller than number of claims$"):
        dra.compute_score([ALLOCATED, PENDING2], [result("req-1")], by_claim_index=True)
    two = [claim("a", [prioritized("req-1", sub("subreq-1"))])[1], claim("b", [prioritized("req-2", *subs(2))])[1]]
    assert dra.compute_score(two, [result("req-1/subreq-1"), result("req-2/subreq-2")], by_claim_index=True) == 15


# upstream TestNormalizeScore (L5566-): DefaultNormalizeScore(100, false)
@pytest.mark.parametrize("scores,want", [
    ([], []), ([42], [100]), ([8, 8], [100, 100]), ([2**31 - 1, 2**31 - 1], [100, 100]),
    ([2**31 - 1, 0], [100, 0]), ([99, 98, 97], [100, 98, 97]),
    ([2**31 - 1, 2**31 - 2, 1, 0], [100, 99, 0, 0]),
], ids=["empty", "single-score", "all-same", "all-same-very-large", "max-and-min-values", "mid-value",
        "large-spread-lost-precision"])
def test_normalize_score(scores, want):
    import numpy as np

    pl = Harness().pl
    arr = np.asarray(scores, np.int64)
    assert pl.normalize_score(CycleState(), MakePod().obj(), arr) is None
    assert arr.tolist() == want


NODES3 = NODES + [MakeNode().name("worker-3").label("nodename", "worker-3").obj()]


def scored(h: Harness, pod) -> tuple[dict[str, Any], dict[str, int], dict[str, int]]:
    """PreFilter, Filter, Score on the nodes that pass, NormalizeScore: (filter, raw, normalized)."""
    import numpy as np

    state, st, filt = h.run(pod)
    assert st is None
    ok = [n for n, s in filt.items() if s is None]
    raw = {n: h.pl.score(state, pod, NodeInfo(h.table, h.table.row_of[n])) for n in ok}
    assert all(s is None for _, s in raw.values())
    rows = np.asarray([h.table.row_of[n] for n in ok], np.int64)
    batch = h.pl.score_nodes(state, pod, h.table, rows)
    assert batch.tolist() == [raw[n][0] for n in ok]
    norm = batch.copy()
    h.pl.normalize_score(state, pod, norm)
    return ({n: reasons(s) for n, s in filt.items() if s is not None}, {n: v for n, (v, _) in raw.items()},
            dict(zip(ok, norm.tolist(), strict=True)))


def test_score_single_claim_prioritized_list():
    # upstream "single-claim-prioritized-list-scoring": the first subrequest needs a device attribute
    # only the first node's device has
    c = claim(requests=[prioritized("req-1", sub("subreq-1", selectors=[f'device.attributes["{DRIVER}"].healthy']),
                                    sub("subreq-2"))])
    h = Harness(device_class(), c, resource_slice("s1", [device("instance-1", healthy=True)], node="worker"),
                resource_slice("s2", [device("instance-1", healthy=False)], node="worker-2"))
    _, raw, norm = scored(h, pod_with("my-claim"))
    assert raw == {"worker": 8, "worker-2": 7}
    assert norm == {"worker": 100, "worker-2": 87}


def test_score_multiple_claims_prioritized_list():
    # upstream "multiple-claims-prioritized-list-scoring"
    c1 = claim("c1", [prioritized("req-1", sub("subreq-1"))])
    c2 = claim("c2", [prioritized("req-1", sub("subreq-1", 4), sub("subreq-2", 3), sub("subreq-3", 2),
                                  sub("subreq-4", 1))])
    h = Harness(device_class(), c1, c2,
                resource_slice("s1", [device(f"instance-{i}") for i in range(1, 5)], node="worker"),
                resource_slice("s2", [device(f"instance-{i}") for i in range(1, 3)], node="worker-2"),
                resource_slice("s3", [device("instance-1")], node="worker-3"), nodes=NODES3)
    filt, raw, norm = scored(h, pod_with("c1", "c2"))
    assert filt == {"worker-3": (UU, ("cannot allocate all claims",))}
    assert raw == {"worker": 15, "worker-2": 13}
    assert norm == {"worker": 100, "worker-2": 86}


def test_score_multiple_requests_prioritized_list():
    # upstream "multiple-requests-prioritized-list-scoring"
    c = claim(requests=[prioritized("req-1", sub("subreq-1", 2), sub("subreq-2", 1)),
                        prioritized("req-2", sub("subreq-1", 2), sub("subreq-2", 1))])
    h = Harness(device_class(), c,
                resource_slice("s1", [device(f"instance-{i}") for i in range(1, 5)], node="worker"),
                resource_slice("s2", [device(f"instance-{i}") for i in range(1, 4)], node="worker-2"),
                resource_slice("s3", [device(f"instance-{i}") for i in range(1, 3)], node="worker-3"), nodes=NODES3)
    _, raw, norm = scored(h, pod_with("my-claim"))
    assert raw == {"worker": 16, "worker-2": 15, "worker-3": 14}
    assert norm == {"worker": 100, "worker-2": 93, "worker-3": 87}


def test_score_allocated_claim_counts_since_136():
    # 1.36+: an allocated claim is scored from its status.allocation next to the new allocation;
    # 1.35 indexes the results by claim and fails (Error status)
    shared = claim("shared", [prioritized("req-1", sub("subreq-1"), sub("subreq-2"))],
                   allocation=result("req-1/subreq-2"))
    new_claim = claim("new", [prioritized("req-1", sub("subreq-1"))])
    objs = (device_class(), shared, new_claim, resource_slice("s1", [device("d0")], node="worker"))
    pod = pod_with("shared", "new")
    h = Harness(*objs, nodes=[NODES[0]])
    _, raw, _ = scored(h, pod)
    assert raw == {"worker": 7 + 8}
    h = Harness(*objs, nodes=[NODES[0]], features=V135)
    state, st, filt = h.run(pod)
    assert st is None and filt["worker"] is None
    score, sst = h.pl.score(state, pod, NodeInfo(h.table, h.table.row_of["worker"]))
    assert reasons(sst) == (Code.ERROR, ("number of allocations 1 is smaller than number of claims",))


def test_score_needs_prioritized_list_since_136():
    c = claim(requests=[prioritized("req-1", sub("subreq-1"))])
    objs = (device_class(), c, resource_slice("s1", [device("d0")], node="worker"))
    h = Harness(*objs, nodes=[NODES[0]])
    h.pl.features = dra.Features(prioritized_list=False)
    state = CycleState()
    state.write(dra.STATE_KEY, dra.StateData([c[1]]))
    assert h.pl.score(state, pod_with("my-claim"), NodeInfo(h.table, 0)) == (0, None)


def test_score_extension_point_per_version():
    # DynamicResources is a Score plugin since 1.35 (default weight 2), not in 1.34
    from kubesched.framework.interface import implements
    from kubesched.framework.runtime import _POINTS
    from kubesched.scheduler.scheduler import Scheduler

    assert not implements(Harness(features=V134).pl, _POINTS["score"])
    assert implements(Harness(features=V135).pl, _POINTS["score"])
    for fg, want in ((V134, None), (V135, 2), (V137, 2)):
        fw = next(iter(Scheduler(features=fg).profiles.values()))
        assert fw.score_weights.get("DynamicResources") == want


# ─────────────────────────── device taints ───────────────────────────

NO_SCHEDULE = {"key": "example.com/broken", "value": "yes", "effect": "NoSchedule"}


@pytest.mark.parametrize("fg,allocated", [(V134, True), (V135, True), (V136, False), (V137, False)],
                         ids=["1.34", "1.35", "1.36", "1.37"])
def test_tainted_device_needs_toleration(fg, allocated):
    # DRADeviceTaints: off α 1.34-1.35, on β 1.36, GA 1.37
    d = device("d0")
    d["taints"] = [NO_SCHEDULE]
    h = Harness(device_class(), claim(), resource_slice("s", [d], node="worker"), nodes=[NODES[0]], features=fg)
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None
    assert reasons(filt["worker"]) == (None if allocated else (UU, ("cannot allocate all claims",)))
    tol = {"key": "example.com/broken", "operator": "Exists"}
    h = Harness(device_class(), claim(requests=[request(tolerations=[tol])]), resource_slice("s", [d], node="worker"),
                nodes=[NODES[0]], features=fg)
    state, _, filt = h.run(pod_with("my-claim"))
    assert filt["worker"] is None
    assert h.pl.reserve(state, pod_with("my-claim"), "worker") is None
    (alloc,) = [c for c in h.pl._manager().in_flight.values()]
    assert alloc["status"]["allocation"]["devices"]["results"][0]["tolerations"] == [tol]


@pytest.mark.parametrize("fg,allocated", [(V134, True), (V136, True), (V137, False)], ids=["1.34", "1.36", "1.37"])
def test_device_taint_rule(fg, allocated):
    # DRADeviceTaintRules: off β 1.36, GA 1.37 (the scheduler's slices are patched by the rules)
    rule = ("DeviceTaintRule", {"metadata": {"name": "broken"}, "spec": {
        "deviceSelector": {"driver": DRIVER, "pool": "worker", "device": "d0"},
        "taint": {"key": "example.com/broken", "effect": "NoExecute"}}})
    h = Harness(device_class(), claim(), resource_slice("s", [device("d0")], node="worker"), rule,
                nodes=[NODES[0]], features=fg)
    _, st, filt = h.run(pod_with("my-claim"))
    assert st is None
    assert reasons(filt["worker"]) == (None if allocated else (UU, ("cannot allocate all claims",)))


@pytest.mark.parametrize("fg,want", [(V135, None), (V136, "d1"), (V137, "d1")], ids=["1.35", "1.36", "1.37"])
def test_shared_counters(fg, want):
    # DRAPartitionableDevices (off α 1.35, on β 1.36+): d0 would exceed the counter set once
    # d-other (allocated) is counted, d1 fits; without the gate neither consuming device is picked
    def consuming(name: str, mem: str) -> dict:
        return {"name": name, "consumesCounters": [{"counterSet": "gpu", "counters": {"memory": {"value": mem}}}]}

    counters = ("ResourceSlice", {"metadata": {"name": "counters"}, "spec": {
        "driver": DRIVER, "nodeName": "worker", "pool": {"name": "worker", "generation": 1, "resourceSliceCount": 2},
        "sharedCounters": [{"name": "gpu", "counters": {"memory": {"value": "8Gi"}}}]}})
    _, devices = resource_slice("devices", [consuming("d-other", "4Gi"), consuming("d0", "6Gi"),
                                            consuming("d1", "4Gi")], node="worker", count=2)
    other = claim("other", allocation={"devices": {"results": [
        {"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "d-other"}]}}, reserved_for=[
        {"resource": "pods", "name": "x", "uid": "x"}])
    h = Harness(device_class(), claim(), other, ("ResourceSlice", devices), counters, nodes=[NODES[0]], features=fg)
    state, st, filt = h.run(pod_with("my-claim"))
    assert st is None
    if want is None:
        assert reasons(filt["worker"]) == (UU, ("cannot allocate all claims",))
        return
    assert filt["worker"] is None
    assert h.pl.reserve(state, pod_with("my-claim"), "worker") is None
    (c,) = h.pl._manager().in_flight.values()
    assert [r["device"] for r in c["status"]["allocation"]["devices"]["results"]] == [want]


@pytest.mark.parametrize("fg,shared", [(V135, False), (V137, True)], ids=["1.35", "1.37"])
def test_consumable_capacity_shares_across_pods(fg, shared):
    # DRAConsumableCapacity (off α 1.35, on β 1.36+): an allowMultipleAllocations device is shared by
    # capacity: the first pod's share (in flight, then allocated) leaves 2Gi for the next
    dev = {"name": "d0", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "4Gi"}}}
    reqs = [request(capacity={"requests": {"memory": "2Gi"}})]
    h = Harness(device_class(), claim("c1", reqs), claim("c2", reqs), claim("c3", reqs),
                resource_slice("s", [dev], node="worker"), nodes=[NODES[0]], features=fg)
    p1, p2, p3 = (pod_with(n, uid=f"uid-{n}") for n in ("c1", "c2", "c3"))
    state, st, filt = h.run(p1)
    assert filt["worker"] is None
    assert h.pl.reserve(state, p1, "worker") is None  # in flight
    state2, _, filt = h.run(p2)
    if not shared:
        assert reasons(filt["worker"]) == (UU, ("cannot allocate all claims",))
        return
    assert filt["worker"] is None
    asyncio.run(h.pl.pre_bind(state, p1, "worker"))  # allocated and assumed
    assert h.pl.reserve(state2, p2, "worker") is None
    result = h.claim("c1")["status"]["allocation"]["devices"]["results"][0]
    assert result["consumedCapacity"] == {"memory": "2Gi"} and result["shareID"]
    _, _, filt = h.run(p3)
    assert reasons(filt["worker"]) == (UU, ("cannot allocate all claims",))


# ─────────────────────────── binding conditions (1.36+) ───────────────────────────


def _bc_harness(fg=V137):
    d = device("d0")
    d["bindingConditions"] = ["Ready"]
    d["bindingFailureConditions"] = ["Failed"]
    return Harness(device_class(), claim(), resource_slice("s", [d], node="worker"), nodes=[NODES[0]], features=fg)


def _drive_prebind(h, pod, steps):
    """Run PreBind as the simulator's trampoline would: ``steps`` is a list of callables run
    while PreBind waits (each followed by 5 s of the clock); returns (status, seconds waited)."""
    state, st, filt = h.run(pod)
    assert st is None and filt["worker"] is None
    assert h.pl.reserve(state, pod, "worker") is None
    coro = h.pl.pre_bind(state, pod, "worker")
    clock = h.pl.handle.clock
    start = clock.now()
    try:
        coro.send(None)
        for step in steps:
            step()
            clock.advance(5)
            coro.send(None)
        while True:
            clock.advance(5)
            coro.send(None)
    except StopIteration as e:
        return e.value, clock.now() - start


def _set_condition(h, type_, status="True", reason="", message=""):
    c = copy.deepcopy(h.pl.manager.get_claim("default", "my-claim"))
    c["metadata"]["resourceVersion"] = str(int(c["metadata"].get("resourceVersion") or 0) + 1)
    r = c["status"]["allocation"]["devices"]["results"][0]
    c["status"]["devices"] = [{"driver": r["driver"], "pool": r["pool"], "device": r["device"], "conditions": [
        {"type": type_, "status": status, "reason": reason, "message": message}]}]
    h.lister.put("ResourceClaim", c)
    h.pl.manager.on_event("ResourceClaim", None, c)


def test_prebind_waits_for_binding_conditions():
    h = _bc_harness()
    st, waited = _drive_prebind(h, pod_with("my-claim"), [lambda: None, lambda: _set_condition(h, "Ready")])
    assert st is None and waited == 10
    results = h.claim()["status"]["allocation"]["devices"]["results"]
    assert results[0]["bindingConditions"] == ["Ready"] and results[0]["bindingFailureConditions"] == ["Failed"]


def test_prebind_binding_failure_condition():
    h = _bc_harness()
    st, _ = _drive_prebind(h, pod_with("my-claim"), [lambda: _set_condition(h, "Failed", reason="Broken",
                                                                            message="no link")])
    assert reasons(st) == (Code.ERROR, ('device binding failed: claim=my-claim, reason=Broken, message="no link"',))


def test_prebind_binding_timeout_then_filter_and_postfilter_deallocate():
    h = _bc_harness()
    st, waited = _drive_prebind(h, pod_with("my-claim"), [])
    assert reasons(st) == (Code.ERROR, ("device binding timeout: context deadline exceeded",)) and waited == 600
    # next attempt: the allocation is older than bindingTimeout, so the claim is unavailable
    h.pl.handle.clock.advance(1)
    pod = pod_with("my-claim")
    state, st, filt = h.run(pod)
    assert st is None and reasons(filt["worker"]) == (UU, ("resourceclaim not available on the node",))
    assert reasons(h.pl.post_filter(state, pod, {})[1]) == (Code.UNSCHEDULABLE,
                                                            ("deallocation of ResourceClaim completed",))


def test_binding_conditions_devices_not_picked_before_136():
    h = _bc_harness(V135)
    _, st, filt = h.run(pod_with("my-claim"))
    assert reasons(filt["worker"]) == (UU, ("cannot allocate all claims",))
