"""NodeTable's incremental columns equal a recomputation from its pods, whatever the history."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NO_PODS_PRIORITY, NodeTable, RowEdit
from kubesched.testing.wrappers import MakeNode, MakePod

POD = st.fixed_dictionaries({
    "cpu": st.sampled_from(["0", "10m", "250m", "1"]),
    "mem": st.sampled_from(["0", "64Mi", "1Gi"]),
    "gpu": st.sampled_from([None, "1", "2"]),
    "prio": st.integers(-5, 5),
    "port": st.sampled_from([None, 80, 443]),
})


def _pod(i: int, spec: dict) -> PodInfo:
    b = MakePod().name(f"p{i}").priority(spec["prio"])
    req = {"cpu": spec["cpu"], "memory": spec["mem"]}
    if spec["gpu"]:
        req["nvidia.com/gpu"] = spec["gpu"]
    b.container(requests=req, ports=[{"containerPort": spec["port"], "hostPort": spec["port"]}] if spec["port"] else None)
    return PodInfo(b.obj())


def _check(t: NodeTable) -> None:
    for row in t.order().tolist():
        pods = t.pods[row]
        want = np.zeros(len(t.resource_names), np.int64)
        for p in pods:
            for k, v in p.requests.items():
                if k != "pods":
                    want[t.resource_index[k]] += v
        want[t.PODS] = len(pods)
        assert t.requested[row].tolist() == want.tolist()
        assert t.non_zero_requested[row].tolist() == [sum(p.non_zero_cpu for p in pods),
                                                      sum(p.non_zero_memory for p in pods)]
        assert t.min_pod_priority[row] == min((p.priority for p in pods), default=NO_PODS_PRIORITY)
        ports = {(proto, port) for p in pods for _, proto, port in p.ports}
        assert set((t.used_ports[row] or {})) == ports


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "remove", "edit"]), st.integers(0, 3), POD), max_size=40))
def test_incremental_columns_match_recomputation(ops) -> None:  # noqa: ANN001
    t = NodeTable(capacity=2)  # forces growth
    for i in range(4):
        t.set_node(MakeNode().name(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").obj())
    placed: dict[str, tuple[PodInfo, int]] = {}
    for i, (op, node, spec) in enumerate(ops):
        row = t.row_of[f"n{node}"]
        if op == "add" or not placed:
            pi = _pod(i, spec)
            t.add_pod(pi, row)
            placed[pi.key] = (pi, row)
        elif op == "remove":
            key = sorted(placed)[i % len(placed)]
            pi, r = placed.pop(key)
            t.remove_pod(pi, r)
        else:  # a temporary edit is undone exactly
            before = (t.requested[row].copy(), list(t.pods[row]), t.min_pod_priority[row], t.generation[row])
            with RowEdit(t, row) as edit:
                for p in list(t.pods[row])[:2]:
                    edit.remove(p)
                edit.add(_pod(1000 + i, spec))
            after = (t.requested[row], t.pods[row], t.min_pod_priority[row], t.generation[row])
            n = len(before[0])  # the edit may have added a resource column (0 once restored)
            assert before[0].tolist() == after[0][:n].tolist() and not after[0][n:].any()
            assert before[1] == after[1]
            assert before[2] == after[2] and before[3] == after[3]
        _check(t)
