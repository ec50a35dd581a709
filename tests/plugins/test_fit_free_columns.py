"""NodeResourcesFit's Filter reads the table's maintained ``free = allocatable - requested`` columns
(``NodeTable.free``, transposed). On random node adds (one by one and in bulk), node updates and
removals, pod binds and unbinds, and RowEdit round trips: ``free`` equals ``(allocatable -
requested).T`` and the batch Filter equals upstream's per-node ``fits``/``Filter`` on every row."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.node_info import PodInfo
from kubesched.framework.node_table import NodeTable, RowEdit
from kubesched.framework.node_table_bulk import set_nodes
from kubesched.plugins.noderesources.fit import Fit, fits
from kubesched.testing.wrappers import MakeNode, MakePod

GPU = "example.com/gpu"
NODE_NAMES = [f"n{i}" for i in range(10)]  # more than the 8 first rows: the table grows

capacity_st = st.fixed_dictionaries(
    {"cpu": st.integers(0, 4000).map(lambda v: f"{v}m"), "memory": st.integers(0, 5000).map(str),
     "pods": st.integers(0, 5).map(str)},
    optional={"ephemeral-storage": st.integers(0, 500).map(str), GPU: st.integers(0, 4).map(str)})
request_st = st.fixed_dictionaries(
    {}, optional={"cpu": st.integers(0, 2000).map(lambda v: f"{v}m"), "memory": st.integers(0, 3000).map(str),
                  "ephemeral-storage": st.integers(0, 300).map(str), GPU: st.integers(0, 3).map(str),
                  "example.com/other": st.integers(0, 2).map(str)})
op_st = st.one_of(
    st.tuples(st.just("bind"), st.sampled_from(NODE_NAMES), request_st),
    st.tuples(st.just("unbind"), st.integers(0, 1000)),
    st.tuples(st.just("set_node"), st.sampled_from(NODE_NAMES), capacity_st),
    st.tuples(st.just("remove_node"), st.sampled_from(NODE_NAMES)),
    st.tuples(st.just("row_edit"), st.sampled_from(NODE_NAMES), request_st, st.booleans()),
)


def _node(name: str, cap: dict[str, str]):
    return MakeNode().name(name).capacity(**cap).obj()


def _pod(name: str, req: dict[str, str], node: str | None = None):
    mp = MakePod().name(name).uid(name).container(requests=req)
    if node:
        mp.node(node)
    return mp.obj()


def _check(table: NodeTable, incoming: list[dict[str, str]]) -> None:
    want = (table.allocatable - table.requested).T
    assert table.free.shape == want.shape
    assert (table.free == want).all()
    rows = table.order()
    if len(rows) == 0:
        return
    plugin = Fit(None)
    for req in incoming:
        pod = _pod("incoming", req)
        state = CycleState(PodInfo(pod))
        _, status = plugin.pre_filter(state, pod, table)
        assert status is None
        res = plugin.filter_nodes(state, pod, table, rows)
        for i, r in enumerate(rows):
            ni = table.node_info(int(r))
            ref = plugin.filter(state, pod, ni)
            got = None if res is None or res.failed[i] == 0 else res.status_for(int(res.failed[i]))
            assert got == ref
            assert (got is None) == (not fits(PodInfo(pod).requests, ni))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(capacity_st, max_size=10), st.booleans(),
       st.lists(op_st, max_size=25), st.lists(request_st, min_size=1, max_size=3))
def test_free_columns_and_filter_follow_every_change(initial, bulk, ops, incoming):
    table = NodeTable(capacity=8)
    nodes = [_node(NODE_NAMES[i], cap) for i, cap in enumerate(initial)]
    if bulk:
        set_nodes(table, nodes)
    else:
        for nd in nodes:
            table.set_node(nd)
    bound: list[tuple[PodInfo, str]] = []
    for k, op in enumerate(ops):
        kind = op[0]
        if kind == "bind" and op[1] in table.row_of:
            pi = PodInfo(_pod(f"p{k}", op[2], op[1]))
            table.add_pod(pi, table.row_of[op[1]])
            bound.append((pi, op[1]))
        elif kind == "unbind" and bound:
            pi, name = bound.pop(op[1] % len(bound))
            table.remove_pod(pi, table.row_of[name])
        elif kind == "set_node":
            table.set_node(_node(op[1], op[2]))
        elif kind == "remove_node" and op[1] in table.row_of:
            row = table.row_of[op[1]]
            for pi, _ in [b for b in bound if b[1] == op[1]]:
                table.remove_pod(pi, row)
            bound = [b for b in bound if b[1] != op[1]]
            table.remove_node(op[1])
        elif kind == "row_edit" and op[1] in table.row_of:
            row = table.row_of[op[1]]
            before = table.free[:, row].copy()
            with RowEdit(table, row) as edit:
                edit.add(PodInfo(_pod(f"x{k}", op[2], op[1])))
                mine = [b for b in bound if b[1] == op[1]]
                if op[3] and mine:
                    edit.remove(mine[0][0])
                _check(table, incoming[:1])
            assert (table.free[:, row][:len(before)] == before).all()
        _check(table, incoming[:1])
    _check(table, incoming)
    assert np.all(table.free[:, ~table.alive[:table.capacity]] == 0)
