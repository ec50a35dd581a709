"""distinctAttribute constraints (DRAConsumableCapacity, β on since 1.36) and list-typed device
attributes (DRAListTypeAttributes, α 1.37): cases of upstream's shared allocator table
(``dynamic-resource-allocation@v0.37.2/structured/internal/allocatortesting/allocator_testing.go``
``*distinct*`` and ``list-attributes-*`` / ``numanode-*``) and list values in CEL
(``cel/compile.go`` ``getAttributeValue``)."""

from __future__ import annotations

from typing import Any

import pytest
from test_dra_structured import CA, D1, D2, D3, DA, N1, P1, alloc, claim, cls, dev, local, req, result, slice_

from kubesched.features import FeatureGate
from kubesched.plugins import dynamicresources as dra
from kubesched.plugins.dra_cel import compile_selector, device_context
from kubesched.plugins.dra_structured import AllocatorError, Features
from kubesched.testing.wrappers import MakeNode

D4 = "device-4"
S = f"{DA}/stringAttribute"
NUMA = "resource.kubernetes.io/numaNode"

LIST = Features(list_type_attributes=True)
DISTINCT = Features(consumable_capacity=True)
BOTH = Features(consumable_capacity=True, list_type_attributes=True)


def strs(*values: str) -> dict[str, Any]:
    return {"stringAttribute": {"strings": list(values)}}


def one(v: str) -> dict[str, Any]:
    return {"stringAttribute": {"string": v}}


def run(features: Features, constraint: dict, count: int, *devices: dict, requests: list | None = None):
    c = claim("claim-0", *(requests or [req("req-0", count=count)]), constraints=[constraint])
    return alloc([c], [cls(CA, DA)], [slice_("s1", N1, P1, DA, *devices)], features=features)


def picked(*names: str, request: str = "req-0") -> list[dict[str, Any]]:
    return [result(local(), *((request, DA, P1, n) for n in names))]


# ─────────────────────────── distinctAttribute ───────────────────────────

@pytest.mark.parametrize("features,devices,count,want", [
    (DISTINCT, [one("value1"), one("value2"), one("value1")], 3, None),
    (DISTINCT, [one("value1"), one("value2"), one("value3")], 3, [D1, D2, D3]),
    (DISTINCT, [one("value1"), one("value1"), one("value2")], 2, [D1, D3]),
    (DISTINCT, [{}], 1, None),
    (BOTH, [one("value1"), one("value2")], 2, [D1, D2]),
    (BOTH, [one("value1"), one("value1")], 2, None),
    (BOTH, [strs("a", "b"), strs("b", "c"), strs("c", "d")], 2, [D1, D3]),
], ids=["single-request-count-3-not-distinct", "single-request-count-3-all-distinct", "skips-duplicate",
        "attribute-not-set", "list-attributes-scalar-all-distinct", "list-attributes-scalar-not-distinct",
        "list-attributes-pairwise-disjoint"])
def test_distinct_attribute(features, devices, count, want):
    names = [D1, D2, D3, D4]
    devs = [dev(names[i], attrs=a or None) for i, a in enumerate(devices)]
    got = run(features, {"distinctAttribute": S}, count, *devs)
    assert got == (picked(*want) if want else None)


def test_distinct_two_requests_share_constraint():
    # distinct-constraint-two-requests-with-count-not-distinct
    devs = [dev(D1, attrs=one("value1")), dev(D2, attrs=one("value2")), dev(D3, attrs=one("value1"))]
    got = run(DISTINCT, {"distinctAttribute": S, "requests": ["req-0", "req-1"]}, 0, *devs,
              requests=[req("req-0", count=2), req("req-1", count=1)])
    assert got is None


def test_distinct_attribute_needs_consumable_capacity():
    # the stable allocator (DRAConsumableCapacity off) knows no distinctAttribute
    with pytest.raises(AllocatorError, match=r"constraint #0: empty constraint \(unsupported constraint type\?\)"):
        run(Features(), {"distinctAttribute": S}, 1, dev(D1, attrs=one("value1")))


# ─────────────────────────── matchAttribute over lists ───────────────────────────

@pytest.mark.parametrize("features,devices,count,want", [
    (LIST, [one("value1"), one("value1")], 2, [D1, D2]),
    (LIST, [strs("value1", "value2", "value3"), strs("value2", "value3", "value4")], 2, [D1, D2]),
    (LIST, [strs("value1", "value2"), strs("value2", "value3"), strs("value3", "value1")], 3, None),
    (LIST, [strs("value1", "value2"), strs("value1"), strs("value2"), strs("value2")], 3, [D1, D3, D4]),
    (LIST, [one("value2"), strs("value1", "value2")], 2, [D1, D2]),
    (LIST, [one("value3"), strs("value1", "value2")], 2, None),
    (Features(), [strs("value1", "value2", "value3"), strs("value2", "value3", "value4")], 2, None),
], ids=["scalar-string-values", "list-of-string-values-with-common-elements",
        "list-of-string-values-with-partially-common-elements", "backtrack-needs-intersection-restore",
        "mixed-scalar-and-list-with-common-elements", "mixed-scalar-and-list-without-common-elements",
        "list-attributes-disabled-match-constraint-with-lists"])
def test_match_attribute_lists(features, devices, count, want):
    names = [D1, D2, D3, D4]
    devs = [dev(names[i], attrs=a) for i, a in enumerate(devices)]
    got = run(features, {"matchAttribute": S}, count, *devs)
    assert got == (picked(*want) if want else None)


@pytest.mark.parametrize("second,want", [([4, 5, 6, 7], [D1, D2]), ([0, 1], None)],
                         ids=["numanode-matchattribute-overlapping-lists-are-co-placed",
                              "numanode-matchattribute-disjoint-lists-are-not-allocated"])
def test_numa_node_lists(second, want):
    devs = [dev(D1, attrs={NUMA: {"ints": [4] if want else [7]}}), dev(D2, attrs={NUMA: {"ints": second}})]
    got = run(LIST, {"matchAttribute": NUMA}, 2, *devs)
    assert got == (picked(*want) if want else None)


def test_list_values_in_cel():
    ctx = device_context(DA, {"name": D1, "attributes": {"numa": {"ints": [0, 1]}, "names": {"strings": ["a"]}}})
    assert compile_selector(f'1 in device.attributes["{DA}"].numa').matches(ctx)
    assert not compile_selector(f'"b" in device.attributes["{DA}"].names').matches(ctx)


def test_plugin_reads_gate():
    from kubesched.framework.handle import Handle
    from kubesched.testing.wrappers import build_table

    table = build_table([MakeNode().name(N1).obj()])
    on = dra.new(None, Handle(nodes=table, features=FeatureGate.from_flags(feature_gates="DRAListTypeAttributes=true")))
    off = dra.new(None, Handle(nodes=table, features=FeatureGate()))
    assert on.features.list_type_attributes and not off.features.list_type_attributes


# ─────────────────────────── derivedAttributes (DRADerivedAttributes) ───────────────────────────

DERIVED = Features(derived_attributes=True)
DB, CB, P2 = "driver-b", "class-b", "pool-2"


def derived_req(name: str, c: str, expression: str, attr: str = "derived/sharedNumaNode", count: int = 1):
    r = req(name, c, count=count)
    r["exactly"]["derivedAttributes"] = [{"name": attr, "expression": expression}]
    return r


def test_derived_attributes_match_across_drivers():
    # derived-attributes: two drivers name their NUMA attribute differently
    c = claim("claim-0", derived_req("req-0", CA, f'device.attributes["{DA}"]["numa"]'),
              derived_req("req-1", CB, f'device.attributes["{DB}"]["numaNode"]'),
              constraints=[{"requests": ["req-0", "req-1"], "matchAttribute": "derived/sharedNumaNode"}])
    slices = [slice_("s1", N1, P1, DA, dev(D2, attrs={"numa": {"string": "numa-0"}}),
                     dev(D1, attrs={"numa": {"string": "numa-1"}})),
              slice_("s2", N1, P2, DB, dev(D3, attrs={"numaNode": {"string": "numa-1"}}),
                     dev(D4, attrs={"numaNode": {"string": "numa-2"}}))]
    got = alloc([c], [cls(CA, DA), cls(CB, DB)], slices, features=DERIVED)
    assert got == [result(local(), ("req-0", DA, P1, D1), ("req-1", DB, P2, D3))]


def test_derived_attribute_overrides_device_attribute():
    # derived-attributes-override
    drv = "dra.example.com"
    c = claim("claim-0", derived_req("req-0", CA, '"value-2"', attr=f"{drv}/myAttr"), req("req-1", CA),
              constraints=[{"requests": ["req-0", "req-1"], "matchAttribute": f"{drv}/myAttr"}])
    slices = [slice_("s1", N1, P1, drv, dev(D1, attrs={"myAttr": {"string": "value-1"}}),
                     dev(D2, attrs={"myAttr": {"string": "value-2"}}))]
    got = alloc([c], [cls(CA, drv)], slices, features=DERIVED)
    assert got == [result(local(), ("req-0", drv, P1, D1), ("req-1", drv, P1, D2))]


def test_derived_attribute_cel_missing_attribute_is_an_error():
    c = claim("claim-0", derived_req("req-0", CA, f'device.attributes["{DA}"]["missingAttr"]', attr="derived/missing"),
              constraints=[{"requests": ["req-0"], "matchAttribute": "derived/missing"}])
    with pytest.raises(AllocatorError, match="evaluate derived attribute derived/missing on device "
                                             f"{DA}/{P1}/{D1} failed: no such key: missingAttr"):
        alloc([c], [cls(CA, DA)], [slice_("s1", N1, P1, DA, dev(D1, attrs={"existingAttr": {"string": "yes"}}))],
              features=DERIVED)


def test_derived_attribute_type_mismatch_not_allocated():
    c = claim("claim-0", derived_req("req-0", CA, f'device.attributes["{DA}"]["static"]', attr="derived/myAttr",
                                     count=2),
              constraints=[{"requests": ["req-0"], "matchAttribute": "derived/myAttr"}])
    slices = [slice_("s1", N1, P1, DA, dev(D1, attrs={"static": {"string": "value"}}),
                     dev(D2, attrs={"static": {"int": 1}}))]
    assert alloc([c], [cls(CA, DA)], slices, features=DERIVED) is None


def test_derived_attributes_ignored_without_gate():
    # without the gate the request's derivedAttributes play no part (the device attribute is used)
    c = claim("claim-0", derived_req("req-0", CA, '"x"', attr=S, count=2),
              constraints=[{"matchAttribute": S}])
    slices = [slice_("s1", N1, P1, DA, dev(D1, attrs=one("a")), dev(D2, attrs=one("b")))]
    assert alloc([c], [cls(CA, DA)], slices, features=Features()) is None
    assert alloc([c], [cls(CA, DA)], slices, features=DERIVED) == picked(D1, D2)


# ─────────────────────────── DRAFractionalCapacityRange ───────────────────────────
# experimental/consumable_capacity_test.go testUseMilli, testViolatesPolicy, testCalculateConsumedCapacity

TOO_BIG = "9224372036854776E3"
FRAC_RANGE = {"min": "200m", "max": "1", "step": "100m"}


@pytest.mark.parametrize("rng,fractional,want", [
    (FRAC_RANGE, False, False),
    (FRAC_RANGE, True, True),
    ({"min": "1", "max": "3", "step": "1"}, True, True),
    ({"min": TOO_BIG, "step": "1"}, True, False),
    ({"min": "1", "step": "0"}, True, False),
    ({"min": "1", "step": "1u"}, True, False),
], ids=["fractional disabled", "all fractional, fits in milli", "all integer, fits in milli",
        "min overflows milli, falls back to integer", "step too small", "step sub-milli"])
def test_use_milli(rng, fractional, want):
    from kubesched.plugins.dra_structured import _use_milli

    assert _use_milli(rng, fractional) is want


@pytest.mark.parametrize("requested,policy,want", [
    ("300m", {"default": "200m", "validRange": FRAC_RANGE}, False),
    ("250m", {"default": "200m", "validRange": FRAC_RANGE}, True),
    (TOO_BIG, {"default": "1", "validRange": {"min": "1", "step": "1"}}, True),
], ids=["fractional step aligned", "fractional step not aligned", "requested value overflows milli representation"])
def test_violates_policy_fractional(requested, policy, want):
    from kubesched.api.quantity import nano_value
    from kubesched.plugins.dra_structured import _violates_policy

    assert _violates_policy(nano_value(requested), policy, True) is want


@pytest.mark.parametrize("requested,want", [("250m", "300m"), ("400m", "400m"), ("150m", "200m"), ("1", "1")],
                         ids=["fractional step round up (0.25 to 0.3)", "fractional step already aligned",
                              "below min", "whole"])
def test_consumed_capacity_fractional(requested, want):
    from kubesched.api.quantity import nano_value
    from kubesched.plugins.dra_structured import consumed_capacity

    cap = {"value": "1", "requestPolicy": {"default": "200m", "validRange": FRAC_RANGE}}
    assert consumed_capacity(requested, cap, True) == (nano_value(want), want)


def test_consumed_capacity_fractional_not_representable():
    from kubesched.plugins.dra_structured import consumed_capacity

    cap = {"value": TOO_BIG, "requestPolicy": {"default": "1", "validRange": {"min": "100m", "step": "100m"}}}
    with pytest.raises(ValueError, match="is not a representable milli value"):
        consumed_capacity(TOO_BIG, cap, True)
    cap = {"value": "9223372036854775807m", "requestPolicy": {"default": "100m",
                                                             "validRange": {"min": "100m", "step": "100m"}}}
    with pytest.raises(ValueError, match="passes the milli-value range"):
        consumed_capacity("9223372036854775806m", cap, True)


def test_fractional_range_in_allocation():
    # a shared device with a 0.2..1 range in 0.1 steps: two requests of 0.25 take 0.3 each (fractional
    # on); off, the integer path rounds each to a whole unit and the second no longer fits
    device = dev(D1, {"bw": "1"})
    device["allowMultipleAllocations"] = True
    device["capacity"]["bw"]["requestPolicy"] = {"default": "200m", "validRange": FRAC_RANGE}
    c = claim("claim-0", req("req-0", capacity={"requests": {"bw": "250m"}}),
              req("req-1", capacity={"requests": {"bw": "250m"}}))
    on = alloc([c], [cls(CA, DA)], [slice_("s1", N1, P1, DA, device)],
               features=Features(consumable_capacity=True, fractional_capacity_range=True))
    assert [r["consumedCapacity"] for r in on[0]["devices"]["results"]] == [{"bw": "300m"}, {"bw": "300m"}]
    off = alloc([c], [cls(CA, DA)], [slice_("s1", N1, P1, DA, device)], features=Features(consumable_capacity=True))
    assert off is None
