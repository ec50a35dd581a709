"""DRADeviceCompatibilityGroups (α 1.37, off by default): devices drawing from one counter set
must share a compatibility group. Cases ported from v0.37.2 dynamic-resource-allocation
``structured/internal/allocatortesting/allocator_testing.go`` L1050-1320 (the ``compatibility-
groups-*`` cases with the feature on); the intersection rules from
``experimental/compatibility_groups.go``. Off, the field is dropped by the API strategy, so the
slices reaching the allocator never carry it."""

from __future__ import annotations

from typing import Any

import pytest
from test_dra_structured import CA, CS1, CS2, D1, D2, DA, N1, P1, alloc, claim, cls, counter_slice, local, req, result

from kubesched.plugins.dra_structured import Features, _GroupIntersection

CG = Features(partitionable_devices=True, compatibility_groups=True)
CGT = Features(partitionable_devices=True, compatibility_groups=True, device_taints=True)


def grouped(name: str, *uses: tuple[str, str, tuple[str, ...]], taint: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "consumesCounters": [
        {"counterSet": cs, "counters": {"capacity-0": {"value": v}}, **({"compatibilityGroups": list(g)} if g else {})}
        for cs, v, g in uses]}
    if taint:
        d["taints"] = [{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}]
    return d


def slices(*devices: dict[str, Any], sets: tuple[str, ...] = (CS1,)) -> list[dict[str, Any]]:
    from test_dra_structured import slice_
    s1 = slice_("slice-1", N1, P1, DA, *devices, count=2)
    return [s1, counter_slice("slice-2", N1, P1, DA, *[(cs, {"capacity-0": "4"}) for cs in sets], count=2)]


TWO = [claim("claim-0", req("req-0"), req("req-1"))]
ONE = [claim("claim-0", req("req-0"))]

CASES: dict[str, tuple[dict[str, Any], Any]] = {
    "compatibility-groups-compatible": (
        dict(claims=TWO, slices=slices(grouped(D1, (CS1, "2", ("mig",))), grouped(D2, (CS1, "2", ("mig",))))),
        [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D2))]),
    "compatibility-groups-incompatible": (
        dict(claims=TWO, slices=slices(grouped(D1, (CS1, "2", ("mig",))), grouped(D2, (CS1, "2", ("vgpu",))))),
        None),
    "compatibility-groups-taint-rollback": (
        dict(claims=ONE, features=CGT,
             slices=slices(grouped(D1, (CS1, "2", ("mig",)), taint=True), grouped(D2, (CS1, "2", ("vgpu",))))),
        [result(local(), ("req-0", DA, P1, D2))]),
    "compatibility-groups-incompatible-with-allocated-peer": (
        dict(claims=ONE, allocated=[(DA, P1, D1)],
             slices=slices(grouped(D1, (CS1, "1", ("mig",))), grouped(D2, (CS1, "1", ("vgpu",))))),
        None),
    "compatibility-groups-compatible-with-allocated-peer": (
        dict(claims=ONE, allocated=[(DA, P1, D1)],
             slices=slices(grouped(D1, (CS1, "1", ("mig",))), grouped(D2, (CS1, "1", ("mig",))))),
        [result(local(), ("req-0", DA, P1, D2))]),
    "compatibility-groups-multiple-counter-sets": (
        dict(claims=TWO, slices=slices(grouped(D1, (CS1, "2", ("mig",))), grouped(D2, (CS2, "2", ("vgpu",))),
                                       sets=(CS1, CS2))),
        [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D2))]),
    "compatibility-groups-multiple-counter-sets-spanning-device": (
        dict(claims=TWO, slices=slices(grouped(D1, (CS1, "1", ("mig",))),
                                       grouped(D2, (CS1, "1", ("vgpu",)), (CS2, "1", ("vgpu",))), sets=(CS1, CS2))),
        None),
    # without groups: devices without groups only join devices without groups
    "no-groups-join-no-groups": (
        dict(claims=TWO, slices=slices(grouped(D1, (CS1, "2", ())), grouped(D2, (CS1, "2", ())))),
        [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D2))]),
    "no-groups-do-not-join-groups": (
        dict(claims=TWO, slices=slices(grouped(D1, (CS1, "2", ())), grouped(D2, (CS1, "2", ("mig",))))),
        None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_allocator_compatibility_groups(name: str) -> None:
    kwargs, want = CASES[name]
    kwargs = {"classes": [cls(CA, DA)], "features": CG, **kwargs}
    assert alloc(**kwargs) == want


def test_gate_off_ignores_groups() -> None:
    kwargs, _ = CASES["compatibility-groups-incompatible"]
    got = alloc(classes=[cls(CA, DA)], features=Features(partitionable_devices=True), **kwargs)
    assert got == [result(local(), ("req-0", DA, P1, D1), ("req-1", DA, P1, D2))]


def test_intersection_rules() -> None:
    empty = _GroupIntersection()
    assert empty.admits(frozenset()) and empty.admits(frozenset({"a"}))
    a = empty.add(frozenset({"a", "b"}))
    assert a.admits(frozenset({"b", "c"})) and not a.admits(frozenset({"c"})) and not a.admits(frozenset())
    ab = a.add(frozenset({"b", "c"}))
    assert ab.groups == frozenset({"b"})
    none = empty.add(frozenset())
    assert none.admits(frozenset()) and not none.admits(frozenset({"a"}))
