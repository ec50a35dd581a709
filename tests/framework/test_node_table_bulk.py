"""``node_table_bulk.set_nodes`` (the bulk fill of an initial LIST) leaves the table exactly as
``set_node`` called once per node in order does — rows, free list, every column, label and image
indexes, zone order, generation, change counter — whatever the table held before (replaced and
removed nodes, names repeated within a batch), declared-feature lists included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.errors import QuantityError
from kubesched.framework.node_table import NodeTable
from kubesched.framework.node_table_bulk import set_nodes
from kubesched.testing.wrappers import MakeNode

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
IMAGES = ["nginx", "nginx:1.27", "docker.io/library/redis:7", "registry:5000/app", "repo/app@sha256:abc"]

NODE = st.fixed_dictionaries({
    "name": st.sampled_from([f"n{i}" for i in range(7)]),
    "zone": st.sampled_from([None, "a", "b", "c"]),
    "region": st.sampled_from([None, "r1", "r2"]),
    "labels": st.dictionaries(st.sampled_from(["app", "tier", "gpu", "pool"]), st.sampled_from(["x", "y", "z"]),
                              max_size=3),
    "cpu": st.sampled_from(["1", "2", "500m", "4"]),
    "mem": st.sampled_from(["1Gi", "2Gi", "1500Mi"]),
    "ext": st.sampled_from([None, ("example.com/gpu", "1"), ("example.com/gpu", "2"), ("example.com/fpga", "1")]),
    "taints": st.lists(st.sampled_from([("dedicated", "gpu", "NoSchedule"), ("spot", "", "PreferNoSchedule"),
                                        ("x", "1", "NoExecute")]), max_size=2, unique=True),
    "unschedulable": st.booleans(),
    "images": st.lists(st.tuples(st.lists(st.sampled_from(IMAGES), min_size=1, max_size=2, unique=True),
                                 st.integers(0, 10**9)), max_size=3),
    "declared": st.lists(st.sampled_from(["FeatureA", "FeatureB", "FeatureC"]), max_size=3, unique=True).map(sorted),
})
OPS = st.lists(st.one_of(st.tuples(st.just("batch"), st.lists(NODE, max_size=12)),
                         st.tuples(st.just("remove"), st.sampled_from([f"n{i}" for i in range(7)]))),
               min_size=1, max_size=6)


def _node(spec: dict[str, Any]) -> Any:
    b = MakeNode().name(spec["name"]).labels(spec["labels"])
    if spec["zone"]:
        b.label(ZONE, spec["zone"])
    if spec["region"]:
        b.label(REGION, spec["region"])
    q = {"cpu": spec["cpu"], "memory": spec["mem"], "pods": "110"}
    if spec["ext"]:
        q[spec["ext"][0]] = spec["ext"][1]
    b._status["capacity"].update(q)
    b._status["allocatable"].update(q)
    for key, value, effect in spec["taints"]:
        b.taint(key, value, effect)
    if spec["unschedulable"]:
        b.unschedulable()
    for names, size in spec["images"]:
        b.image(size, *names)
    if spec["declared"]:
        b.declared_features(spec["declared"])
    return b.obj()


def _state(t: NodeTable) -> dict[str, Any]:
    """Everything a table holds (numpy columns as lists; dicts compared by content)."""
    arrays = {a: getattr(t, a).tolist() for a in ("allocatable", "requested", "non_zero_requested", "taint_set",
                                                   "declared_feature_set",
                                                   "unschedulable", "generation", "alive", "min_pod_priority")}
    return {
        **arrays,
        "labels": {k: v.tolist() for k, v in t.labels.items()},
        "label_keys": list(t.labels),
        "label_values": t.label_values, "label_ids": t._label_ids,
        "taint_sets": t.taint_sets, "taint_set_ids": t._taint_set_ids,
        "declared_feature_sets": t.declared_feature_sets,
        "declared_feature_set_ids": t._declared_feature_set_ids,
        "nodes": t.nodes, "names": t.names, "row_of": t.row_of, "free": t._free,
        "images": t.images, "image_nodes": t.image_nodes,
        "zones": t._zones, "zone_rows": t._zone_rows, "row_zone": t._row_zone, "order": t.order().tolist(),
        "resource_names": t.resource_names, "resource_index": t.resource_index,
        "gen": t._gen, "mutations": t.mutations, "capacity": t.capacity,
    }


class _Log:
    """A listener keeping the net node changes it is told of: row → (node now, old node)."""

    def __init__(self) -> None:
        self.set: dict[int, Any] = {}

    def on_node_set(self, table: NodeTable, row: int, old: Any) -> None:
        self.set.setdefault(row, old)

    def on_node_removed(self, table: NodeTable, row: int, old: Any) -> None:
        self.set.pop(row, None)

    def on_pod_added(self, *a: Any) -> None: ...

    def on_pod_removed(self, *a: Any) -> None: ...


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_bulk_fill_equals_one_by_one(ops: list[tuple[str, Any]]) -> None:
    one, bulk = NodeTable(capacity=4), NodeTable(capacity=4)
    for op, arg in ops:
        if op == "remove":
            if arg in one.row_of:
                one.remove_node(arg)
                bulk.remove_node(arg)
            continue
        nodes = [_node(s) for s in arg]
        before = {r: bulk.nodes[r] for r in bulk.row_of.values()}
        log = _Log()
        bulk.add_listener(log)
        want_rows = [one.set_node(n) for n in nodes]
        assert set_nodes(bulk, nodes) == want_rows
        bulk._listeners.remove(log)
        assert _state(bulk) == _state(one)
        # listeners: once per row of the batch, with the node the row held before it
        assert log.set == {r: before.get(r) for r in dict.fromkeys(want_rows)}


def test_bad_quantity_sets_the_nodes_before_it() -> None:
    good = [MakeNode().name(f"g{i}").capacity(cpu="1", memory="1Gi").obj() for i in range(3)]
    bad = MakeNode().name("bad").capacity(cpu="1", memory="1Gi").obj()
    bad.status.allocatable["memory"] = "12x"  # type: ignore[index]
    one, bulk = NodeTable(), NodeTable()
    for n in good[:2]:
        one.set_node(n)
    with pytest.raises(QuantityError):
        one.set_node(bad)
    with pytest.raises(QuantityError):
        set_nodes(bulk, [*good[:2], bad, good[2]])
    assert _state(bulk) == _state(one)
    assert sorted(bulk.row_of) == ["g0", "g1"]


def test_set_nodes_grows_as_one_by_one() -> None:
    nodes = [MakeNode().name(f"n{i}").label(ZONE, "abc"[i % 3]).capacity(cpu="1").image(5, "img").obj()
             for i in range(300)]
    one, bulk = NodeTable(capacity=8), NodeTable(capacity=8)
    for n in nodes[:5]:
        one.set_node(n)
        bulk.set_node(n)
    one.remove_node("n2")
    bulk.remove_node("n2")
    for n in nodes[5:]:
        one.set_node(n)
    set_nodes(bulk, nodes[5:])
    assert _state(bulk) == _state(one)
    assert np.array_equal(bulk.order(), one.order())
