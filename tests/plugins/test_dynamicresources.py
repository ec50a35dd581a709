"""DynamicResources (v1.34): pods without claims, claim lookup errors, and the structured
allocation path (PreFilter → Filter → Reserve → PreBind, PostFilter deallocation), with the
cases of upstream ``dynamicresources_test.go`` that apply to structured parameters."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Handle
from kubesched.framework.interface import Code
from kubesched.framework.node_info import NodeInfo
from kubesched.framework.node_table import NodeTable
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


class Harness:
    def __init__(self, *objs: tuple[str, dict], nodes=NODES, fail: str | None = None) -> None:
        self.lister = Lister(*objs)
        self.client = Client(self.lister, fail)
        self.table = build_table(list(nodes))
        self.pl = dra.new(None, Handle(nodes=self.table, lister=self.lister, client=self.client))

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


def test_pod_without_claims():
    h = Harness()
    pod = MakePod().obj()
    state = CycleState()
    assert h.pl.pre_enqueue(pod) is None
    res, st = h.pl.pre_filter(state, pod, NodeTable())
    assert res is None and st.code == Code.SKIP
    assert isinstance(state.read(dra.STATE_KEY), dra.StateData)  # written before skipping
    _, pst = h.pl.post_filter(state, pod, {})
    assert pst.code == Code.UNSCHEDULABLE and pst.reasons == ("no new claims to deallocate",)
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
    h = Harness(*objs)
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


def test_allocate_reserve_prebind():
    h = Harness(device_class(selectors=[f'device.driver == "{DRIVER}"']), claim(),
                resource_slice("s", [device("instance-1")], node="worker"))
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
    assert c["status"]["allocation"] == {
        "devices": {"results": [{"request": "req-1", "driver": DRIVER, "pool": "worker", "device": "instance-1"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
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


def test_allocated_claim_reserved_by_other_not_deallocated():
    alloc = {"devices": {"results": []},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["worker"]}]}]}}
    h = Harness(device_class(), claim(allocation=alloc, reserved_for=[{"resource": "pods", "name": "x", "uid": "x"}]),
                nodes=[NODES[1]])
    pod = pod_with("my-claim")
    state, _, _ = h.run(pod)
    assert reasons(h.pl.post_filter(state, pod, {})[1]) == (Code.UNSCHEDULABLE, ("still not schedulable",))
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


def test_filter_timeout():
    # two devices needed with one numa value, but every device has its own: an exhaustive search
    devices = [device(f"d{i}", numa=i) for i in range(300)]
    c = claim(requests=[request(count=2)], constraints=[{"matchAttribute": f"{DRIVER}/numa"}])
    h = Harness(device_class(), c, resource_slice("s", devices, node="worker"))
    h.pl.filter_timeout_s = 1e-9
    _, _, filt = h.run(pod_with("my-claim"))
    assert reasons(filt["worker"]) == (UU, ("timed out trying to allocate devices",))
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
