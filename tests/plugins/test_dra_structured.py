"""The structured allocator, ported from upstream's shared allocator table
(``structured/internal/allocatortesting/allocator_testing.go``, the cases the v1.34 stable
allocator runs with default features) plus the CEL selector forms."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.plugins.dra_cel import CELError, compile_selector, device_context, semver_key
from kubesched.plugins.dra_structured import (
    Allocator,
    AllocatorError,
    Features,
    apply_device_taint_rules,
    tolerates_taint,
)
from kubesched.testing.wrappers import MakeNode

DA, DB = "driver-a", "driver-b"
CA, CB = "class-a", "class-b"
N1, N2 = "node-1", "node-2"
P1, P2 = "pool-1", "pool-2"
D0, D1, D2, D3 = "device-0", "device-1", "device-2", "device-3"


def node(name: str = N1, region: str = "region-1"):
    return MakeNode().name(name).label("region", region).obj()


def cls(name: str, driver: str, config: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
    if config:
        spec["config"] = [{"opaque": {"driver": driver, "parameters": {"attr": config}}}]
    return {"metadata": {"name": name}, "spec": spec}


def dev(name: str, capacity: dict[str, str] | None = None, attrs: dict[str, dict] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name}
    if capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    if attrs:
        d["attributes"] = attrs
    return d


def slice_(name: str, where: Any, pool: str, driver: str, *devices: dict, generation: int = 1,
           count: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": driver, "pool": {"name": pool, "generation": generation,
                                                       "resourceSliceCount": count},
                            "devices": list(devices) or [dev(D1)]}
    if where is True:
        spec["allNodes"] = True
    elif isinstance(where, dict):
        spec["nodeSelector"] = where
    else:
        spec["nodeName"] = where
    return {"metadata": {"name": name}, "spec": spec}


def req(name: str, c: str = CA, count: int | None = 1, mode: str | None = None, selectors=(), **kw) -> dict:
    ex: dict[str, Any] = {"deviceClassName": c}
    if count is not None:
        ex["count"] = count
    if mode:
        ex["allocationMode"] = mode
    if selectors:
        ex["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    ex.update(kw)
    return {"name": name, "exactly": ex}


def claim(name: str, *requests: dict, constraints=(), config=()) -> dict[str, Any]:
    devs: dict[str, Any] = {"requests": list(requests)}
    if constraints:
        devs["constraints"] = list(constraints)
    if config:
        devs["config"] = list(config)
    return {"metadata": {"name": name}, "spec": {"devices": devs}}


def local(n: str = N1) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}]}


def result(ns: dict | None, *results: tuple, config: list | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"devices": {"results": [
        {"request": r, "driver": d, "pool": p, "device": dv, **({"adminAccess": True} if len(t) > 4 else {})}
        for t in results for (r, d, p, dv) in [t[:4]]]}}
    if config:
        out["devices"]["config"] = config
    if ns is not None:
        out["nodeSelector"] = ns
    return out


REGION1 = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": ["region-1"]}]}]}


def alloc(claims, classes, slices, n=None, allocated=(), features=None):
    by_name = {c["metadata"]["name"]: c for c in classes}
    return Allocator(list(claims), set(allocated), by_name.get, list(slices), features).allocate(n or node())


def attrs(**kw: Any) -> dict[str, dict]:
    out = {}
    for k, v in kw.items():
        if isinstance(v, bool):
            out[k] = {"bool": v}
        elif isinstance(v, int):
            out[k] = {"int": v}
        elif k == "driverVersion":
            out[k] = {"version": v}
        else:
            out[k] = {"string": v}
    return out


CAP1 = f'device.capacity["{DA}"].memory.compareTo(quantity("1Gi")) >= 0'
CAP2 = f'device.capacity["{DA}"].memory.compareTo(quantity("2Gi")) >= 0'

CASES: dict[str, tuple[dict, Any]] = {
    "simple": (dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
                    slices=[slice_("s1", N1, P1, DA)]),
               [result(local(), ("req-0", DA, P1, D1))]),
    "other-node": (dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
                        slices=[slice_("s1", N1, P1, DB), slice_("s2", N2, P2, DA)], n=node(N2, "region-2")),
                   [result(local(N2), ("req-0", DA, P2, D1))]),
    "small-and-large": (dict(claims=[claim("claim-0", req("req-0", selectors=[CAP1]), req("req-1", selectors=[CAP2]))],
                             classes=[cls(CA, DA)],
                             slices=[slice_("s1", N1, P1, DA, dev(D1, {"memory": "1Gi"}), dev(D2, {"memory": "2Gi"}))]),
                        [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D2))]),
    "small-and-large-backtrack-requests": (
        dict(claims=[claim("claim-0", req("req-0", selectors=[CAP1]), req("req-1", selectors=[CAP2]))],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D2, {"memory": "2Gi"}), dev(D1, {"memory": "1Gi"}))]),
        [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D2))]),
    "small-and-large-backtrack-claims": (
        dict(claims=[claim("claim-0", req("req-0", selectors=[CAP1])),
                     claim("claim-1", req("req-1", selectors=[CAP2]))],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D2, {"memory": "2Gi"}), dev(D1, {"memory": "1Gi"}))]),
        [result(local(), ("req-0", DA, P1, D1)), result(local(), ("req-1", DA, P1, D2))]),
    "devices-split-across-different-slices": (
        dict(claims=[claim("claim-0", req("req-0", count=2))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA), slice_("s2", N1, P2, DA)]),
        [result(local(), ("req-0", DA, P1, D1), ("req-0", DA, P2, D1))]),
    "obsolete-slice": (dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
                            slices=[slice_("s1", N1, P1, DA, dev(D1), count=2),
                                    slice_("s1", N1, P1, DA, dev(D2), count=2, generation=2)]),
                       None),  # newer generation incomplete: nothing usable
    "duplicate-slice": (dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
                             slices=[slice_("s1", N1, P1, DA, count=2), slice_("s1-2", N1, P1, DA, count=2)]),
                        "invalid resource pools were encountered"),
    "no-slices": (dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)], slices=[]), None),
    "not-enough-suitable-devices": (dict(claims=[claim("claim-0", req("req-0")), claim("claim-0", req("req-1"))],
                                         classes=[cls(CA, DA)], slices=[slice_("s1", N1, P1, DA)]), None),
    "no-classes": (dict(claims=[claim("claim-0", req("req-0"))], classes=[], slices=[slice_("s1", N1, P1, DA)]),
                   "could not retrieve device class class-a"),
    "empty-class": (dict(claims=[claim("claim-0", req("req-0", c=""))], classes=[cls(CA, DA)],
                         slices=[slice_("s1", N1, P1, DA)]),
                    "claim claim-0, request req-0: missing device class name (unsupported request type?)"),
    "all-devices-single": (dict(claims=[claim("claim-0", req("req-0", count=None, mode="All"))], classes=[cls(CA, DA)],
                                slices=[slice_("s1", N1, P1, DA)]),
                           [result(local(), ("req-0", DA, P1, D1))]),
    "all-devices-many": (dict(claims=[claim("claim-0", req("req-0", count=None, mode="All"))], classes=[cls(CA, DA)],
                              slices=[slice_("s1", N1, P1, DA), slice_("s1", N1, P2, DA)]),
                         [result(local(), ("req-0", DA, P1, D1), ("req-0", DA, P2, D1))]),
    "all-devices-of-the-incomplete-pool": (
        dict(claims=[claim("claim-0", req("req-0", mode="All"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, count=2)]),
        "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 is currently "
        "being updated"),
    "all-devices-plus-another": (
        dict(claims=[claim("claim-0", req("req-0", count=None, mode="All")), claim("claim-1", req("req-0", c=CB))],
             classes=[cls(CA, DA), cls(CB, DB)], slices=[slice_("s1", N1, P1, DA), slice_("s1", N1, P1, DB)]),
        [result(local(), ("req-0", DA, P1, D1)), result(local(), ("req-0", DB, P1, D1))]),
    "all-devices-with-one-allocated": (
        dict(claims=[claim("claim-0", req("req-0", count=None, mode="All"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D1), dev(D2))], allocated=[(DA, P1, D1)]),
        None),
    "network-attached-device": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)], slices=[slice_("s1", REGION1, P1, DA)]),
        [result(REGION1, ("req-0", DA, P1, D1))]),
    "unsuccessful-allocation-network-attached-device": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)], slices=[slice_("s1", REGION1, P1, DA)],
             n=node(N2, "region-2")),
        None),
    "all-nodes": (dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
                       slices=[slice_("s1", True, P1, DA)]),
                  [result(None, ("req-0", DA, P1, D1))]),
    "local-and-network-attached-devices": (
        dict(claims=[claim("claim-0", req("req-0", count=2))], classes=[cls(CA, DA)],
             slices=[slice_("s1", REGION1, P1, DA), slice_("s1", N1, P2, DA)]),
        [result(local(), ("req-0", DA, P1, D1), ("req-0", DA, P2, D1))]),
    "already-allocated-devices": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)], slices=[slice_("s1", N1, P1, DA)],
             allocated=[(DA, P1, D1), (DA, P1, D2)]),
        None),
    "admin-access-disabled": (
        dict(claims=[claim("claim-0", req("req-0", adminAccess=True))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA)], features=Features(admin_access=False)),
        "claim claim-0, request req-0: admin access is requested, but the feature is disabled"),
    "admin-access-enabled": (
        dict(claims=[claim("claim-0", req("req-0", adminAccess=True))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA)], allocated=[(DA, P1, D1), (DA, P1, D2)]),
        [result(local(), ("req-0", DA, P1, D1, True))]),
    "with-constraint": (
        dict(claims=[claim("claim-0", req("req-0"), req("req-1"), constraints=[
            {"matchAttribute": f"{DA}/numa"}, {"matchAttribute": f"{DA}/driverVersion"},
            {"matchAttribute": f"{DA}/stringAttribute"}, {"matchAttribute": f"{DA}/boolAttribute"}])],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA,
                            dev(D1, attrs=attrs(driverVersion="1.0.0", numa=1, stringAttribute="v",
                                                boolAttribute=True)),
                            dev(D2, attrs=attrs(driverVersion="1.0.0", numa=1, stringAttribute="v",
                                                boolAttribute=True)))]),
        [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D2))]),
    "with-constraint-non-existent-attribute": (
        dict(claims=[claim("claim-0", req("req-0"), constraints=[{"matchAttribute": f"{DA}/NonExistentAttribute"}])],
             classes=[cls(CA, DA)], slices=[slice_("s1", N1, P1, DA)]),
        None),
    "with-constraint-not-matching-int-attribute": (
        dict(claims=[claim("claim-0", req("req-0", count=2), constraints=[{"matchAttribute": f"{DA}/numa"}])],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D1, attrs=attrs(numa=1)), dev(D2, attrs=attrs(numa=2)))]),
        None),
    "with-constraint-not-matching-int-attribute-all-devices": (
        dict(claims=[claim("claim-0", req("req-0", count=0, mode="All"),
                           constraints=[{"matchAttribute": f"{DA}/numa"}])],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D1, attrs=attrs(numa=1)), dev(D2, attrs=attrs(numa=2)))]),
        "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a claim constraint would "
        "not be satisfied"),
    "with-constraint-not-matching-version-attribute": (
        dict(claims=[claim("claim-0", req("req-0", count=2), constraints=[{"matchAttribute": f"{DA}/driverVersion"}])],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D1, attrs=attrs(driverVersion="1.0.0")),
                            dev(D2, attrs=attrs(driverVersion="2.0.0")))]),
        None),
    "with-constraint-for-request-retry": (
        dict(claims=[claim("claim-0", req("req-0"), req("req-1"), constraints=[
            {"requests": ["req-0"], "matchAttribute": f"{DA}/driverVersion"},
            {"matchAttribute": f"{DA}/stringAttribute"}])],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D1, attrs=attrs(driverVersion="1.0.0", stringAttribute="a")),
                            dev(D2, attrs=attrs(driverVersion="2.0.0", stringAttribute="b")),
                            dev(D3, attrs=attrs(driverVersion="3.0.0", stringAttribute="b")))]),
        [result(local(), ("req-0", DA, P1, D2), ("req-1", DA, P1, D3))]),
    "with-class-device-config": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA, config="classAttribute")],
             slices=[slice_("s1", N1, P1, DA)]),
        [result(local(), ("req-0", DA, P1, D1), config=[
            {"source": "FromClass", "opaque": {"driver": DA, "parameters": {"attr": "classAttribute"}}}])]),
    "with-class-device-config-with-multiple-request-and-configs": (
        dict(claims=[claim("claim-0", req("req-0"), req("req-1"), req("req-2", c=CB))],
             classes=[cls(CA, DA, config="A"), cls(CB, DB, config="B")],
             slices=[slice_("s1", N1, P1, DA, dev(D0), dev(D1)), slice_("s2", N1, P1, DB)]),
        [result(local(), ("req-0", DA, P1, D0), ("req-1", DA, P1, D1), ("req-2", DB, P1, D1), config=[
            {"source": "FromClass", "requests": ["req-0", "req-1"],
             "opaque": {"driver": DA, "parameters": {"attr": "A"}}},
            {"source": "FromClass", "requests": ["req-2"], "opaque": {"driver": DB, "parameters": {"attr": "B"}}}])]),
    "claim-with-device-config": (
        dict(claims=[claim("claim-0", req("req-0"), config=[
            {"requests": ["req-0"], "opaque": {"driver": DA, "parameters": {"attr": "x"}}}])],
             classes=[cls(CA, DA)], slices=[slice_("s1", N1, P1, DA)]),
        [result(local(), ("req-0", DA, P1, D1), config=[
            {"source": "FromClaim", "opaque": {"driver": DA, "parameters": {"attr": "x"}}}])]),
    "unknown-selector": (
        dict(claims=[claim("claim-0", req("req-0", selectors=[""]))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA)]),
        "CEL expression empty (unsupported selector type?)"),
    "unknown-allocation-mode": (
        dict(claims=[claim("claim-0", req("req-0", mode="future-mode"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA)]),
        "unsupported count mode future-mode"),
    "unknown-constraint": (
        dict(claims=[claim("claim-0", req("req-0"), constraints=[{}])], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA)]),
        "empty constraint (unsupported constraint type?)"),
    "too-many-devices": (
        dict(claims=[claim("claim-0", req("req-0", count=33))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA)]),
        "claim claim-0: number of requested devices 33 exceeds the claim limit of 32"),
    "prioritized-list-first-unavailable": (
        dict(claims=[claim("claim-0", {"name": "req-0", "firstAvailable": [
            {"name": "sub-0", "deviceClassName": CB, "count": 1},
            {"name": "sub-1", "deviceClassName": CA, "count": 1}]})],
             classes=[cls(CA, DA), cls(CB, DB)], slices=[slice_("s1", N1, P1, DA)]),
        [result(local(), ("req-0/sub-1", DA, P1, D1))]),
    "prioritized-list-disabled": (
        dict(claims=[claim("claim-0", {"name": "req-0", "firstAvailable": [
            {"name": "sub-0", "deviceClassName": CA, "count": 1}]})],
             classes=[cls(CA, DA)], slices=[slice_("s1", N1, P1, DA)], features=Features(prioritized_list=False)),
        "claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is disabled"),
    "prioritized-list-constraint-on-subrequest": (
        dict(claims=[claim("claim-0", {"name": "req-0", "firstAvailable": [
            {"name": "sub-0", "deviceClassName": CA, "count": 2},
            {"name": "sub-1", "deviceClassName": CA, "count": 1}]},
            constraints=[{"requests": ["req-0/sub-0"], "matchAttribute": f"{DA}/numa"}])],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D1, attrs=attrs(numa=1)), dev(D2, attrs=attrs(numa=2)))]),
        [result(local(), ("req-0/sub-1", DA, P1, D1))]),
    "per-device-node-selection-ignored-without-feature": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[{"metadata": {"name": "s"}, "spec": {
                 "driver": DA, "pool": {"name": P1, "generation": 1, "resourceSliceCount": 1},
                 "perDeviceNodeSelection": True, "devices": [{"name": D1, "nodeName": N1}]}}]),
        None),
    "per-device-node-selection": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[{"metadata": {"name": "s"}, "spec": {
                 "driver": DA, "pool": {"name": P1, "generation": 1, "resourceSliceCount": 1},
                 "perDeviceNodeSelection": True,
                 "devices": [{"name": D1, "nodeName": N2}, {"name": D2, "allNodes": True}]}}],
             features=Features(partitionable_devices=True)),
        [result(None, ("req-0", DA, P1, D2))]),
    "binding-conditions-not-selectable": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, {"name": D1, "bindingConditions": ["ready"]})]),
        None),
    "invalid-CEL-runtime": (
        dict(claims=[claim("claim-0", req("req-0", selectors=[f'device.attributes["{DA}"].missing']))],
             classes=[cls(CA, DA)], slices=[slice_("s1", N1, P1, DA)]),
        "claim claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error: no such key: missing"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_allocator(name):
    kwargs, want = CASES[name]
    if isinstance(want, str):
        with pytest.raises(AllocatorError) as e:
            alloc(**kwargs)
        assert want in e.value.message
    else:
        assert alloc(**kwargs) == want


def test_allocator_reused_across_nodes():
    a = Allocator([claim("c", req("r"))], set(), {CA: cls(CA, DA)}.get,
                  [slice_("s1", N1, P1, DA), slice_("s2", N2, P2, DA)])
    assert a.allocate(node(N1)) == [result(local(N1), ("r", DA, P1, D1))]
    assert a.allocate(node(N2)) == [result(local(N2), ("r", DA, P2, D1))]


# ─────────────────────────── CEL ───────────────────────────

DEVICE = {"name": "d", "attributes": {"model": {"string": "A100"}, "cores": {"int": 8}, "vip": {"bool": False},
                                      "driverVersion": {"version": "1.2.3"}, "other.example.com/x": {"int": 1}},
          "capacity": {"memory": {"value": "80Gi"}, "other.example.com/slots": {"value": "4"}}}


@pytest.mark.parametrize("expr,want", [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].model == "A100"', True),
    ('device.attributes["gpu.example.com"].cores > 4', True),
    ('device.attributes["gpu.example.com"].vip', False),
    ('device.attributes["other.example.com"].x == 1', True),
    ('"model" in device.attributes["gpu.example.com"]', True),
    ('has(device.attributes["gpu.example.com"].nope)', False),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0', True),
    ('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))', False),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("81Gi"))', True),
    ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
    ('device.capacity["other.example.com"].slots.asInteger() == 4', True),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.3-rc.1"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("1.10.0")) < 0', True),
    ('device.attributes["gpu.example.com"].driverVersion.major() == 1', True),
])
def test_cel_selector_forms(expr, want):
    assert compile_selector(expr).matches(device_context("gpu.example.com", DEVICE)) is want


def test_cel_errors():
    ctx = device_context("gpu.example.com", DEVICE)
    with pytest.raises(CELError) as e:
        compile_selector('device.attributes["gpu.example.com"].missing == 1').matches(ctx)
    assert not e.value.compile and e.value.message == "no such key: missing"
    with pytest.raises(CELError) as e:
        compile_selector("device.driver ==").matches(ctx)
    assert e.value.compile
    with pytest.raises(CELError) as e:
        compile_selector('device.attributes["gpu.example.com"].cores').matches(ctx)
    assert "must evaluate to bool" in e.value.message


def test_semver_precedence():
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
               "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"]
    assert sorted(ordered, key=semver_key) == ordered
    with pytest.raises(ValueError):
        semver_key("01.0.0")


# ─────────────────────────── device taints (DRADeviceTaints) ───────────────────────────
# upstream allocator_testing.go L1013-1046 (taints, tolerations) and the "tainted-*" cases L4742-4964

TAINT_NONE = {"key": "taint-key", "value": "taint-value", "effect": "None"}
TAINT_NO_SCHEDULE = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
TAINT_NO_EXECUTE = {"key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TOL_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOL_NO_EXECUTE = {"operator": "Equal", "key": "taint-key", "value": "taint-value-2", "effect": "NoExecute"}
TAINTS = Features(device_taints=True)


def tainted(name: str, *taints: dict) -> dict[str, Any]:
    return {"name": name, "taints": list(taints)}


def with_tolerations(res: dict[str, Any], *tols: dict) -> dict[str, Any]:
    for r in res["devices"]["results"]:
        r["tolerations"] = list(tols)
    return res


def prio(name: str, *subs: dict) -> dict[str, Any]:
    return {"name": name, "firstAvailable": list(subs)}


def subreq(name: str, c: str, count: int = 1, *tols: dict) -> dict[str, Any]:
    s: dict[str, Any] = {"name": name, "deviceClassName": c, "allocationMode": "ExactCount", "count": count}
    if tols:
        s["tolerations"] = list(tols)
    return s


TAINT_CASES: dict[str, tuple[dict, Any]] = {
    "tainted-two-devices": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE), tainted(D2, TAINT_NO_EXECUTE))],
             features=TAINTS), None),
    "tainted-one-device-two-taints": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE))],
             features=TAINTS), None),
    "tainted-two-devices-tolerated": (
        dict(claims=[claim("claim-0", req("req-0", tolerations=[TOL_NO_EXECUTE]))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE), tainted(D2, TAINT_NO_EXECUTE))],
             features=TAINTS),
        [with_tolerations(result(local(), ("req-0", DA, P1, D2)), TOL_NO_EXECUTE)]),
    "tainted-two-devices-prioritized-list-tolerated": (
        dict(claims=[claim("claim-0", prio("req-0", subreq("subreq-0", CA),
                                           subreq("subreq-1", CA, 1, TOL_NO_EXECUTE)))],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE), tainted(D2, TAINT_NO_EXECUTE))],
             features=TAINTS),
        [with_tolerations(result(local(), ("req-0/subreq-1", DA, P1, D2)), TOL_NO_EXECUTE)]),
    "tainted-no-effect": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NONE))], features=TAINTS),
        [result(local(), ("req-0", DA, P1, D1))]),
    "tainted-one-device-two-taints-both-tolerated": (
        dict(claims=[claim("claim-0", req("req-0", tolerations=[TOL_NO_SCHEDULE, TOL_NO_EXECUTE]))],
             classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE))], features=TAINTS),
        [with_tolerations(result(local(), ("req-0", DA, P1, D1)), TOL_NO_SCHEDULE, TOL_NO_EXECUTE)]),
    "tainted-disabled": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE))]),
        [result(local(), ("req-0", DA, P1, D1))]),
    "tainted-prioritized-list": (
        dict(claims=[claim("claim-0", prio("req-0", subreq("subreq-0", CB), subreq("subreq-1", CA)))],
             classes=[cls(CA, DA), cls(CB, DB)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE))], features=TAINTS), None),
    "tainted-prioritized-list-disabled": (
        dict(claims=[claim("claim-0", prio("req-0", subreq("subreq-0", CB), subreq("subreq-1", CA)))],
             classes=[cls(CA, DA), cls(CB, DB)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE))]),
        [result(local(), ("req-0/subreq-1", DA, P1, D1))]),
    "tainted-admin-access": (
        dict(claims=[claim("claim-0", req("req-0", adminAccess=True))], classes=[cls(CA, DA)],
             allocated=[(DA, P1, D1), (DA, P1, D2)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE))], features=TAINTS), None),
    "tainted-admin-access-disabled": (
        dict(claims=[claim("claim-0", req("req-0", adminAccess=True))], classes=[cls(CA, DA)],
             allocated=[(DA, P1, D1), (DA, P1, D2)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE))]),
        [result(local(), ("req-0", DA, P1, D1, True))]),
    "tainted-all-devices-single": (
        dict(claims=[claim("claim-0", req("req-0", count=None, mode="All"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE))], features=TAINTS), None),
    "tainted-all-devices-single-disabled": (
        dict(claims=[claim("claim-0", req("req-0", count=None, mode="All"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, tainted(D1, TAINT_NO_SCHEDULE))]),
        [result(local(), ("req-0", DA, P1, D1))]),
}


@pytest.mark.parametrize("name", list(TAINT_CASES))
def test_allocator_device_taints(name):
    kwargs, want = TAINT_CASES[name]
    assert alloc(**kwargs) == want


@pytest.mark.parametrize("tol,taint,want", [
    ({"operator": "Exists"}, TAINT_NO_SCHEDULE, True),
    ({"operator": "Exists", "effect": "NoExecute"}, TAINT_NO_SCHEDULE, False),
    ({"key": "taint-key", "value": "taint-value"}, TAINT_NO_SCHEDULE, True),  # empty operator = Equal
    ({"key": "taint-key", "operator": "Equal", "value": "other"}, TAINT_NO_SCHEDULE, False),
    ({"key": "other", "operator": "Exists"}, TAINT_NO_SCHEDULE, False),
    ({"key": "taint-key", "operator": "Gt", "value": "1"}, TAINT_NO_SCHEDULE, False),
])
def test_tolerates_taint(tol, taint, want):
    # upstream resourceclaim.ToleratesTaint (devicetoleration.go L35-56)
    assert tolerates_taint(tol, taint) is want


def test_device_taint_rules_patch_slices():
    # upstream tracker applyPatches (tracker.go L574-617): selector fields narrow, no selector = nothing
    s1 = slice_("s1", N1, P1, DA, dev(D1), dev(D2))
    s2 = slice_("s2", N2, P2, DB, dev(D1))
    rule = {"metadata": {"name": "r"}, "spec": {"deviceSelector": {"driver": DA, "device": D2},
                                                "taint": TAINT_NO_SCHEDULE}}
    everything = {"metadata": {"name": "all"}, "spec": {"deviceSelector": {}, "taint": TAINT_NO_EXECUTE}}
    nothing = {"metadata": {"name": "none"}, "spec": {"taint": TAINT_NO_EXECUTE}}
    out = apply_device_taint_rules([s1, s2], [rule, nothing])
    assert out[1] is s2 and "taints" not in s1["spec"]["devices"][1]  # inputs untouched
    assert [d.get("taints") for d in out[0]["spec"]["devices"]] == [None, [TAINT_NO_SCHEDULE]]
    out = apply_device_taint_rules([s1, s2], [rule, everything])
    assert [d.get("taints") for d in out[0]["spec"]["devices"]] == [[TAINT_NO_EXECUTE],
                                                                   [TAINT_NO_SCHEDULE, TAINT_NO_EXECUTE]]
    assert out[1]["spec"]["devices"][0]["taints"] == [TAINT_NO_EXECUTE]
    # the allocator then skips the tainted devices
    assert alloc([claim("c", req("r"))], [cls(CA, DA)], apply_device_taint_rules([s1], [rule]),
                 features=TAINTS) == [result(local(), ("r", DA, P1, D1))]


# ─────────────────────────── shared counters (DRAPartitionableDevices) ───────────────────────────
# upstream allocator_testing.go "partitionable-devices-*" cases (v0.37.2), without consumable capacity

PART = Features(partitionable_devices=True)
CS1, CS2 = "counter-set-1", "counter-set-2"


def consuming(name: str, *uses: tuple[str, dict[str, str]], from_counters: bool = False) -> dict[str, Any]:
    """A device consuming counters; ``from_counters``: its capacity mirrors the counters (upstream)."""
    d: dict[str, Any] = {"name": name, "consumesCounters": [
        {"counterSet": cs, "counters": {k: {"value": v} for k, v in counters.items()}} for cs, counters in uses]}
    if from_counters:
        d["capacity"] = {k: {"value": v} for _, counters in uses for k, v in counters.items()}
    return d


def counter_slice(name: str, where: Any, pool: str, driver: str, *sets: tuple[str, dict[str, str]],
                  count: int = 1) -> dict[str, Any]:
    s = slice_(name, where, pool, driver, count=count)
    del s["spec"]["devices"]
    s["spec"]["sharedCounters"] = [{"name": n, "counters": {k: {"value": v} for k, v in c.items()}}
                                   for n, c in sets]
    return s


def dslice(name: str, where: Any, pool: str, *devices: dict, count: int = 1) -> dict[str, Any]:
    return slice_(name, where, pool, DA, *devices, count=count)


INVALID = "invalid resource pools were encountered"
MEM_CAP = [f'device.capacity["{DA}"].memory.compareTo(quantity("6Gi")) >= 0',
           f'device.capacity["{DA}"].memory.compareTo(quantity("2Gi")) >= 0']

PART_CASES: dict[str, tuple[dict, Any]] = {
    "partitionable-devices-single-device": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS1, {"memory": "4Gi"})), count=2),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {"memory": "8Gi"}), count=2)], features=PART),
        [result(local(), ("req-0", DA, P1, D1))]),
    "partitionable-devices-multiple-devices": (
        dict(claims=[claim("claim-0", req("req-0"), req("req-1"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS1, {"memory": "4Gi"}), from_counters=True),
                            consuming(D2, (CS1, {"memory": "6Gi"}), from_counters=True),
                            consuming(D3, (CS1, {"memory": "4Gi"}), from_counters=True), count=2),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {"memory": "8Gi"}), count=2)], features=PART),
        [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D3))]),
    "partitionable-devices-multiple-counters": (
        dict(claims=[claim("claim-0", req("req-0"), req("req-1"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1,
                            consuming(D1, (CS1, {"memory": "4Gi", "cpus": "6"}), (CS2, {"cpus": "4", "memory": "2Gi"})),
                            consuming(D2, (CS1, {"memory": "6Gi", "cpus": "4"}), (CS2, {"cpus": "6", "memory": "6Gi"})),
                            consuming(D3, (CS1, {"memory": "4Gi", "cpus": "4"}), (CS2, {"cpus": "4", "memory": "4Gi"})),
                            count=2),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {"cpus": "8", "memory": "18Gi"}),
                                   (CS2, {"cpus": "12", "memory": "18Gi"}), count=2)], features=PART),
        [result(local(), ("req-0", DA, P1, D2), ("req-1", DA, P1, D3))]),
    "partitionable-devices-no-capacity-available": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)], allocated=[(DA, P1, D2)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS1, {"memory": "4Gi"})),
                            consuming(D2, (CS1, {"memory": "16Gi"}))),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {"memory": "18Gi"}))], features=PART),
        None),
    "partitionable-devices-disabled-device-consumes-counters": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS1, {"memory": "4Gi"}))),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {"memory": "18Gi"}))]),
        None),
    "partitionable-devices-disabled-other-device-do-not-consume-counters": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS1, {"memory": "4Gi"})), dev(D2), count=2),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {"memory": "18Gi"}), count=2)]),
        [result(local(), ("req-0", DA, P1, D2))]),
    "partitionable-devices-same-counter-set-name-in-different-resource-slices": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, dev(D1), count=4),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {}), count=4),
                     dslice("slice-3", N1, P1, dev(D2), count=4),
                     counter_slice("slice-4", N1, P1, DA, (CS1, {}), count=4)], features=PART),
        INVALID),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-set": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS2, {})), count=2),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {}), count=2)], features=PART),
        INVALID),
    "partitionable-devices-device-counter-consumption-references-unknown-counter-in-counter-set": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS1, {"memory": "8Gi"})), count=2),
                     counter_slice("slice-2", N1, P1, DA, (CS1, {"other-memory": "8Gi"}), count=2)], features=PART),
        INVALID),
    "partitionable-devices-device-counter-consumption-references-counter-set-in-other-pool": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[dslice("slice-1", N1, P1, consuming(D1, (CS1, {"memory": "8Gi"}))),
                     counter_slice("slice-2", N1, P2, DA, (CS1, {"memory": "8Gi"}))], features=PART),
        INVALID),
    "partitionable-devices-devices-on-different-nodes-consume-same-counter-set": (
        dict(claims=[claim("claim-0", {"name": "req-0", "firstAvailable": [
            {"name": "subReq-0", "deviceClassName": CA, "count": 1, "selectors": [{"cel": {"expression": MEM_CAP[0]}}]},
            {"name": "subReq-1", "deviceClassName": CA, "count": 1,
             "selectors": [{"cel": {"expression": MEM_CAP[1]}}]}]})],
             classes=[cls(CA, DA)], allocated=[(DA, P1, D3)],
             slices=[counter_slice("slice-1", N1, P1, DA, (CS1, {"memory": "8Gi"}), count=3),
                     dslice("slice-2", N1, P1, consuming(D1, (CS1, {"memory": "6Gi"}), from_counters=True),
                            consuming(D2, (CS1, {"memory": "2Gi"}), from_counters=True), count=3),
                     dslice("slice-3", N2, P1, consuming(D3, (CS1, {"memory": "6Gi"})), count=3)], features=PART),
        [result(local(), ("req-0/subReq-1", DA, P1, D2))]),
    "partitionable-devices-devices-consume-counter-set-in-different-nodes": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)], allocated=[(DA, P1, D1)],
             n=node(N2),
             slices=[counter_slice("slice-1", N1, P1, DA, (CS1, {"memory": "8Gi"}), count=3),
                     dslice("slice-2", N1, P1, consuming(D1, (CS1, {"memory": "6Gi"}), from_counters=True), count=3),
                     dslice("slice-3", N2, P1, consuming(D2, (CS1, {"memory": "6Gi"}), from_counters=True),
                            consuming(D3, (CS1, {"memory": "2Gi"}), from_counters=True), count=3)], features=PART),
        [result(local(N2), ("req-0", DA, P1, D3))]),
    "partitionable-devices-validation-error-on-non-targeting-slice": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[counter_slice("slice-1", N1, P1, DA, (CS1, {"memory": "8Gi"}), count=3),
                     dslice("slice-2", N1, P1, consuming(D1, (CS1, {"memory": "6Gi"}), from_counters=True), count=3),
                     dslice("slice-3", N2, P1, consuming(D3, (CS2, {"memory": "6Gi"})), count=3)], features=PART),
        INVALID),
}


@pytest.mark.parametrize("name", list(PART_CASES))
def test_allocator_partitionable_devices(name):
    kwargs, want = PART_CASES[name]
    if isinstance(want, str):
        with pytest.raises(AllocatorError) as e:
            alloc(**kwargs)
        assert want in e.value.message
    else:
        assert alloc(**kwargs) == want


# ─────────────────────────── consumable capacity (DRAConsumableCapacity) ───────────────────────────
# upstream incubating consumable_capacity_test.go (v0.37.2): testCalculateConsumedCapacity and
# testViolateCapacityRequestPolicy, the integer-path cases (DRAFractionalCapacityRange is off)

MAX = "9223372036854775807"


def policy(default=None, lo=None, hi=None, step=None, values=None) -> dict[str, Any]:
    p: dict[str, Any] = {}
    if default is not None:
        p["default"] = default
    if lo is not None or hi is not None or step is not None:
        p["validRange"] = {k: v for k, v in (("min", lo), ("max", hi), ("step", step)) if v is not None}
    if values is not None:
        p["validValues"] = values
    return p


@pytest.mark.parametrize("requested,value,pol,want", [
    (None, "1", {}, "1"),
    ("18446744073709551619", "18446744073709551619", policy("0", "0", step="3"), ValueError),
    (MAX, "9223372036854775808", policy("0", "0", step="2"), ValueError),
    ("9223372036854775806", MAX, policy("1", "1", step="2"), MAX),
    (None, "2", policy("1", "1"), "1"),
    (None, "2", policy("1", values=["1"]), "1"),
    ("2", "2", policy("1", "1"), "2"),
    ("1", "2", policy("1", "2"), "2"),
    ("2", "3", policy("1", "1", step="2"), "3"),
    ("2", "2", policy("1", "1", step="1"), "2"),
    ("2", "3", policy("1", values=["1", "2", "3"]), "2"),
    ("2", "3", policy("1", values=["1", "3"]), "3"),
    ("3", "3", policy("1", values=["1", "2"]), "3"),
], ids=["empty", "request-above-maxint64-is-rejected", "rounded-value-above-maxint64-is-rejected",
        "max-safe-boundary-rounds-to-maxint64", "min in range", "default in set", "more than min in range",
        "less than min in range", "with step (round up)", "with step (no remaining)", "valid value in set",
        "set (round up)", "larger than set"])
def test_consumed_capacity(requested, value, pol, want):
    from kubesched.api.quantity import nano_value
    from kubesched.plugins.dra_structured import consumed_capacity

    cap = {"value": value, "requestPolicy": pol}
    if want is ValueError:
        with pytest.raises(ValueError, match="cannot be represented"):
            consumed_capacity(requested, cap)
    else:
        assert consumed_capacity(requested, cap)[0] == nano_value(want)


@pytest.mark.parametrize("requested,pol,want", [
    ("1", None, False),
    ("1", policy("1", "1", "2"), False),
    ("2", policy("1", "1", "1"), True),
    ("1", policy("1", values=["1"]), False),
    ("2", policy("1", values=["1"]), True),
], ids=["no constraint", "less than maximum", "more than maximum", "in set", "not in set"])
def test_violates_policy(requested, pol, want):
    from kubesched.api.quantity import nano_value
    from kubesched.plugins.dra_structured import _violates_policy

    assert _violates_policy(nano_value(requested), pol) is want


def test_format_int_quantity():
    # Quantity.CanonicalizeBytes: BinarySI strictly between -1024 and 1024 prints as DecimalSI
    from kubesched.plugins.dra_structured import format_int_quantity

    assert [format_int_quantity(n, "BinarySI") for n in (0, 1000, 1024, 1536, 3 * 2**30)] == \
        ["0", "1k", "1Ki", "1536", "3Gi"]
    assert [format_int_quantity(n, "DecimalSI") for n in (0, 1500, 2000, 3 * 10**9)] == ["0", "1500", "2k", "3G"]


CC = Features(consumable_capacity=True)


def shared_dev(name: str, **caps: dict) -> dict[str, Any]:
    return {"name": name, "allowMultipleAllocations": True, "capacity": caps}


def strip_share_ids(results):
    for r in results or ():
        for x in r["devices"]["results"]:
            assert len(x.pop("shareID")) == 36
    return results


def test_allocator_shares_device_by_capacity():
    # two claims share one allowMultipleAllocations device while its capacity lasts; the share's
    # consumed capacity is the request rounded up by the policy (min 1Gi, step 1Gi)
    mem = {"value": "4Gi", "requestPolicy": policy("1Gi", "1Gi", step="1Gi")}
    c0 = claim("claim-0", req("req-0", capacity={"requests": {"memory": "1500Mi"}}))
    c1 = claim("claim-1", req("req-0", capacity={"requests": {"memory": "2Gi"}}))
    s = [slice_("s1", N1, P1, DA, shared_dev(D1, memory=mem))]
    got = strip_share_ids(alloc([c0, c1], [cls(CA, DA)], s, features=CC))
    want = [result(local(), ("req-0", DA, P1, D1)), result(local(), ("req-0", DA, P1, D1))]
    want[0]["devices"]["results"][0]["consumedCapacity"] = {"memory": "2Gi"}
    want[1]["devices"]["results"][0]["consumedCapacity"] = {"memory": "2Gi"}
    assert got == want
    # a third 1Gi share does not fit once 3Gi are held by allocated shares
    a = Allocator([claim("claim-2", req("req-0", capacity={"requests": {"memory": "2Gi"}}))], set(),
                  {CA: cls(CA, DA)}.get, s, CC, shared={(DA, P1, D1): {"memory": 3 * 2**30 * 10**9}})
    assert a.allocate(node()) is None
    # without the feature the device is dedicated: one claim only
    assert alloc([c0, c1], [cls(CA, DA)], s) is None


def test_allocator_capacity_request_on_dedicated_device():
    # with the feature, a request's capacity must exist on the device and fit its value
    cap = {"memory": {"value": "1Gi"}}
    s = [slice_("s1", N1, P1, DA, {"name": D1, "capacity": cap},
                {"name": D2, "capacity": {"memory": {"value": "4Gi"}}})]
    c = claim("claim-0", req("req-0", capacity={"requests": {"memory": "2Gi"}}))
    assert alloc([c], [cls(CA, DA)], s, features=CC) == [result(local(), ("req-0", DA, P1, D2))]
    c = claim("claim-0", req("req-0", capacity={"requests": {"gpus": "1"}}))
    assert alloc([c], [cls(CA, DA)], s, features=CC) is None


# ─────────────────────────── binding conditions (DeviceBindingAndStatus) ───────────────────────────
# upstream allocator_testing.go L5355-5456 (v0.37.2)

BC = Features(device_binding_conditions=True)


def bc_dev(name: str, conds: list[str], fails: list[str]) -> dict[str, Any]:
    return {"name": name, "bindingConditions": conds, "bindingFailureConditions": fails}


def bc_result(request: str, device: str, conds: list[str], fails: list[str]) -> dict[str, Any]:
    return {"request": request, "driver": DA, "pool": P1, "device": device, "bindingConditions": conds,
            "bindingFailureConditions": fails}


BC_CASES: dict[str, tuple[dict, Any]] = {
    "device-binding-conditions": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, bc_dev(D1, ["IsPrepare"], ["BindingFailed"]))], features=BC),
        [{"devices": {"results": [bc_result("req-0", D1, ["IsPrepare"], ["BindingFailed"])]},
          "nodeSelector": local()}]),
    "binding-conditions-multiple-devices": (
        dict(claims=[claim("claim-0", req("req-0", count=2), req("req-1"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, bc_dev(D1, ["IsPrepare"], ["BindingFailed"]),
                            bc_dev(D2, ["IsPrepare2"], ["BindingFailed2"]),
                            bc_dev(D3, ["IsPrepare3"], ["BindingFailed3"]))], features=BC),
        [{"devices": {"results": [bc_result("req-0", D1, ["IsPrepare"], ["BindingFailed"]),
                                  bc_result("req-0", D2, ["IsPrepare2"], ["BindingFailed2"]),
                                  bc_result("req-1", D3, ["IsPrepare3"], ["BindingFailed3"])]},
          "nodeSelector": local()}]),
    "binding-conditions-with-and-without": (
        dict(claims=[claim("claim-0", req("req-0"), req("req-1"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, dev(D1), bc_dev(D2, ["IsPrepare"], ["BindingFailed"]))], features=BC),
        [{"devices": {"results": [{"request": "req-0", "driver": DA, "pool": P1, "device": D1},
                                  bc_result("req-1", D2, ["IsPrepare"], ["BindingFailed"])]},
          "nodeSelector": local()}]),
    "binding-conditions-without-feature-gate": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", N1, P1, DA, bc_dev(D1, ["IsPrepare"], ["BindingFailed"]))]),
        None),
    "node-restriction": (
        dict(claims=[claim("claim-0", req("req-0"))], classes=[cls(CA, DA)],
             slices=[slice_("s1", {"nodeSelectorTerms": [{"matchExpressions": [
                 {"key": "region", "operator": "In", "values": ["region-1"]}]}]}, P1, DA,
                 {"name": D1, "bindsToNode": True})], features=BC),
        [result(local(), ("req-0", DA, P1, D1))]),
}


@pytest.mark.parametrize("name", list(BC_CASES))
def test_allocator_binding_conditions(name):
    kwargs, want = BC_CASES[name]
    assert alloc(**kwargs) == want


def test_pools_with_binding_conditions_come_last():
    # GatherPools (incubating): a pool whose devices have binding conditions is tried after the others
    slices = [slice_("s1", N1, "pool-a", DA, bc_dev(D1, ["Ready"], [])), slice_("s2", N1, "pool-b", DA, dev(D1))]
    assert alloc([claim("c", req("r"))], [cls(CA, DA)], slices, features=BC) == [
        result(local(), ("r", DA, "pool-b", D1))]
