"""DynamicResources' batch Filter (``filter_nodes``: the first-fit look-ups of all rows in one loop,
``Allocator.first_fit_rows``, and the extended-resource nodes grouped by their variant's allocator)
against the plain per-node ``filter`` (upstream's Filter, v1.37.2 dynamicresources.go, called per
node): the same status on every node, the same allocation kept for Reserve, the same node variant
of the extended-resource claim, for any nodes, slices, devices in use and pods (extended resources
a DeviceClass maps, from the node's allocatable or through DRA, with or without a claim of their own).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.plugins.test_dra_extended_resources import CLASS, DRIVER, GPU, GPU2, Harness, device_class

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_table import NodeInfo
from kubesched.testing.wrappers import MakeNode, MakePod

node_st = st.fixed_dictionaries({
    "gpu": st.sampled_from([None, "0", "1", "2"]),  # the node's allocatable example.com/gpu
    "gpu2": st.sampled_from([None, "0", "1"]),
    "devices": st.integers(0, 3),  # its ResourceSlice's devices (0: no slice)
    "in_use": st.integers(0, 3),  # how many of them a claim already holds
})
pod_st = st.fixed_dictionaries({
    "containers": st.lists(st.fixed_dictionaries({"gpu": st.integers(0, 2), "gpu2": st.integers(0, 1)}),
                           min_size=1, max_size=2),
    "claim": st.booleans(),  # a claim of its own (one device of the class)
})


def objects(nodes: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    objs = [device_class(), device_class(CLASS + "2", GPU2)]
    for i, n in enumerate(nodes):
        if n["devices"]:
            objs.append(("ResourceSlice", {"metadata": {"name": f"n{i}-slice"}, "spec": {
                "driver": DRIVER, "nodeName": f"n{i}", "pool": {"name": f"n{i}", "generation": 1,
                                                                 "resourceSliceCount": 1},
                "devices": [{"name": f"d{j}"} for j in range(n["devices"])]}}))
            held = min(n["in_use"], n["devices"])
            if held:
                objs.append(("ResourceClaim", {
                    "metadata": {"name": f"held-{i}", "namespace": "default", "uid": f"held-{i}"},
                    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": CLASS,
                                                                                "count": held}}]}},
                    "status": {"allocation": {"devices": {"results": [
                        {"request": "r", "driver": DRIVER, "pool": f"n{i}", "device": f"d{j}"}
                        for j in range(held)]}}}}))
    objs.append(("ResourceClaim", {"metadata": {"name": "own", "namespace": "default", "uid": "own"},
                                   "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                                       "deviceClassName": CLASS, "count": 1}}]}}}))
    return objs


def make_node(i: int, n: dict[str, Any]) -> Any:
    caps = {k: v for k, v in ((GPU, n["gpu"]), (GPU2, n["gpu2"])) if v is not None}
    return MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110", **caps).obj()


def make_pod(p: dict[str, Any], k: int) -> Any:
    m = MakePod().name(f"p{k}").uid(f"p{k}-uid")
    for c in p["containers"]:
        m.container(requests={n: str(q) for n, q in ((GPU, c["gpu"]), (GPU2, c["gpu2"])) if q})
    if p["claim"]:
        m.spec(resourceClaims=[{"name": "own", "resourceClaimName": "own"}])
    return m.obj()


@settings(max_examples=120, deadline=None)
@given(st.lists(node_st, min_size=1, max_size=6), st.lists(pod_st, min_size=1, max_size=3), st.randoms())
def test_filter_nodes_matches_per_node_filter(nodes, pods, rnd):
    h = Harness(*objects(nodes), nodes=[make_node(i, n) for i, n in enumerate(nodes)])
    table = h.table
    for k, p in enumerate(pods):
        pod = make_pod(p, k)
        for _attempt in range(2):  # the second one finds the first one's first fits kept
            plain, batch = CycleState(), CycleState()
            _, st1 = h.pl.pre_filter(plain, pod, table)
            _, st2 = h.pl.pre_filter(batch, pod, table)
            assert (st1 is None) == (st2 is None)
            if st1 is not None:
                assert st1.code == st2.code and st1.reasons == st2.reasons
                break
            rows = list(table.row_of.values())
            rnd.shuffle(rows)
            want = [h.pl.filter(plain, pod, NodeInfo(table, r)) for r in rows]
            res = h.pl.filter_nodes(batch, pod, table, np.asarray(rows, np.int64))
            got = [None if res is None or not res.failed[i] else res.status_for(int(res.failed[i]))
                   for i in range(len(rows))]
            assert [(s.code, tuple(s.reasons)) if s is not None else None for s in want] == \
                   [(s.code, tuple(s.reasons)) if s is not None else None for s in got]
            sp, sb = h.pl._state(plain), h.pl._state(batch)
            assert sorted(sp.node_allocations) == sorted(sb.node_allocations)
            for name, run in sp.node_allocations.items():
                assert run.results() == sb.node_allocations[name].results(), name
                assert run.request_names() == sb.node_allocations[name].request_names()
            assert {n: (e[0].get("spec"), e[1]) for n, e in sp.node_ext.items()} == \
                   {n: (e[0].get("spec"), e[1]) for n, e in sb.node_ext.items()}
