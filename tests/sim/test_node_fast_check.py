"""A Node after others of its pool (the fast path: Python checks once per ``_node_key``, on the
fast path only the part of ``spec``/``status`` outside the key decode-checked) gets the verdict it
gets alone (the full check), whatever field of it differs from the pool and however."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.errors import ManifestError
from kubesched.sim.manifests import RawObject, load_manifests
from kubesched.sim.validate import validate_inputs

HOST = "kubernetes.io/hostname"


def _node(i: int) -> dict[str, Any]:
    name = f"n{i}.eu-west-1.compute.internal"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, "pool": "a"}, "uid": f"u{i}"},
            "spec": {"providerID": f"aws:///eu-west-1a/i-{i:08x}", "taints": [
                {"key": "k", "value": "v", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi"}, "allocatable": {"cpu": "4", "memory": "8Gi"},
                       "addresses": [{"type": "InternalIP", "address": f"10.0.0.{i}"}],
                       "nodeInfo": {"kubeletVersion": "v1.37.2"},
                       "images": [{"names": [f"img{i}:1"], "sizeBytes": 100 + i}]}}


_PATHS = [("metadata", "name"), ("metadata", "uid"), ("metadata", "resourceVersion"),
          ("metadata", "creationTimestamp"), ("metadata", "labels", HOST), ("metadata", "labels", "pool"),
          ("metadata", "annotations"), ("metadata", "zz"), ("spec", "providerID"), ("spec", "taints"),
          ("spec", "unschedulable"), ("spec", "podPreemptionPolicy"), ("spec", "zz"), ("status", "capacity", "cpu"),
          ("status", "allocatable"), ("status", "allocatable", "memory"), ("status", "addresses"),
          ("status", "images"), ("status", "nodeInfo"), ("status", "nodeInfo", "zz"), ("status", "declaredFeatures"),
          ("status", "zz"), ("status", "phase"), ("zz",), ("spec",), ("status",)]
_VALUES = st.sampled_from([7, 1.5, "x", "N_1", "-4", "1Gi", None, True, [], {}, {"zz": 1}, ["a"],
                           [{"names": ["i"], "sizeBytes": "big"}], [{"type": "InternalIP", "address": 7}]])


def _verdict(nodes: list[dict[str, Any]]) -> str | None:
    raws = [RawObject("Node", n["apiVersion"], copy.deepcopy(n), f"in.json:{i + 1}", i) for i, n in enumerate(nodes)]
    try:
        validate_inputs(raws)
    except ManifestError as e:
        return e.message
    return None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PATHS), _VALUES), max_size=3), st.integers(3, 40))
def test_a_pool_node_gets_the_verdict_it_gets_alone(changes: list, i: int) -> None:
    node = _node(i)
    for path, value in changes:
        at: Any = node
        for k in path[:-1]:
            if not isinstance(at.get(k), dict):
                at[k] = {}
            at = at[k]
        at[path[-1]] = copy.deepcopy(value)  # sampled_from gives one object: shared, {} could hold itself
    alone = _verdict([node])
    assert _verdict([_node(1), _node(2), node]) == alone
    assert _verdict([_node(1), node, _node(2)]) == alone  # the variant first of its key, then a pool node


def test_the_pool_of_a_file_takes_the_fast_path_and_the_odd_node_is_named(tmp_path: Any) -> None:
    odd = _node(9)
    odd["status"]["images"][0]["zz"] = 1
    f = tmp_path / "in.json"
    f.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [_node(i) for i in range(5)] + [odd]},
                            indent=2))
    try:
        validate_inputs(load_manifests([str(f)]))
    except ManifestError as e:
        assert 'unknown field "status.images[0].zz"' in e.message and str(e).count("in.json:") == 1
    else:
        raise AssertionError("the odd node passed")
