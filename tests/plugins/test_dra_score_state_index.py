"""``DRAScoreState``'s per-node slice index (the NodeResourcesFit / BalancedAllocation DRA score totals,
upstream ``calculateDRAResourceTotals``): counting over the node's own slices and the node-independent
ones gives what the plain scan of every ResourceSlice gives, for random slices published by node name,
for all nodes, by node selector and per device, random device attributes, allocations and class selectors."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.helper.extendedresources import DRAScoreState
from kubesched.testing.wrappers import MakeNode

DRIVER = "gpu.example.com"
NODES = ["n0", "n1", "n2"]
_sel = st.sampled_from([None, {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "zone", "operator": "In", "values": ["a"]}]}]}])


@st.composite
def _slice(draw: Any, i: int) -> dict[str, Any]:
    per_device = draw(st.booleans())
    devices = []
    for j in range(draw(st.integers(0, 4))):
        d: dict[str, Any] = {"name": f"d{j}", "attributes": {"model": {"string": draw(st.sampled_from(["a", "b"]))}}}
        if per_device:
            how = draw(st.sampled_from(["name", "all", "selector"]))
            if how == "name":
                d["nodeName"] = draw(st.sampled_from(NODES))
            elif how == "all":
                d["allNodes"] = True
            else:
                d["nodeSelector"] = draw(_sel) or {"nodeSelectorTerms": []}
        devices.append(d)
    spec: dict[str, Any] = {"driver": DRIVER, "pool": {"name": f"p{i}"}, "devices": devices}
    if per_device:
        spec["perDeviceNodeSelection"] = True
    else:
        how = draw(st.sampled_from(["name", "name", "all", "selector", "name+selector", "none"]))
        if how.startswith("name"):
            spec["nodeName"] = draw(st.sampled_from(NODES))
        if how == "all":
            spec["allNodes"] = True
        if "selector" in how:
            spec["nodeSelector"] = draw(_sel) or {"nodeSelectorTerms": []}
    return {"metadata": {"name": f"s{i}"}, "spec": spec}


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_indexed_totals_equal_the_plain_scan(data: Any) -> None:
    slices = [data.draw(_slice(i)) for i in range(data.draw(st.integers(0, 8)))]
    every = [(str(s["spec"]["driver"]), f"p{i}", d["name"]) for i, s in enumerate(slices)
             for d in s["spec"]["devices"]]
    allocated = set(data.draw(st.lists(st.sampled_from(every), unique=True))) if every else set()
    selector = data.draw(st.sampled_from([None, 'device.attributes["gpu.example.com"].model == "a"',
                                          'device.driver == "gpu.example.com"']))
    dc = {"metadata": {"name": "gpu"},
          "spec": {"selectors": [{"cel": {"expression": selector}}]} if selector else {}}
    state = DRAScoreState({"example.com/gpu": dc}, allocated, slices)
    plain = DRAScoreState({"example.com/gpu": dc}, allocated, slices)
    for name, zone in (("n0", "a"), ("n1", "b"), ("n2", "a"), ("other", "a")):
        node = MakeNode().name(name).label("zone", zone).obj()
        assert state.totals(node, "example.com/gpu") == plain._count(node, dc, slices)
