"""A record keeps its nodes' rows and the node table's names as they were (``names_snapshot``):
adding, removing or replacing nodes later must not change the names an earlier record reads,
and a later record reads the new names."""

from __future__ import annotations

import numpy as np

from kubesched.framework.diagnosis import FilterChunk
from kubesched.framework.node_table import NodeTable
from kubesched.framework.record import NodeColumns, NodeTotals, build_record, names_snapshot
from kubesched.sim.explain import record_digest
from kubesched.sim.explain_columns import column_plan
from kubesched.testing.wrappers import MakeNode


class _Scores:
    def __init__(self, rows: list[int], totals: list[int]) -> None:
        self.rows = np.array(rows, np.int64)
        self.plugins = ["P"]
        self.raw = [np.array(totals, np.int64)]
        self.normalized = [np.array(totals, np.int64)]
        self.weighted = [np.array(totals, np.int64)]
        self.total = np.array(totals, np.int64)


def _record(table: NodeTable, names: list[str], totals: list[int], selected: str):
    rows = [table.row_of[n] for n in names]
    chunk = FilterChunk(np.array(rows, np.int64), np.full(len(rows), -1, np.int16), np.zeros(len(rows), np.int64),
                        ["F"], [None])
    return build_record(pod="ns/p", profile="default-scheduler", attempt=1, time=0.0, table=table, chunks=[chunk],
                        scores=_Scores(rows, totals), selected=selected, result="scheduled")


def test_names_outlive_node_changes() -> None:
    table = NodeTable()
    for n in ("a", "b", "c"):
        table.set_node(MakeNode().name(n).obj())
    first = _record(table, ["a", "b", "c"], [3, 9, 5], "b")
    snap = names_snapshot(table)
    assert names_snapshot(table) is snap  # shared while no node comes or goes
    table.set_node(MakeNode().name("a").label("x", "y").obj())  # replaced: same name, same snapshot
    assert names_snapshot(table) is snap
    table.remove_node("b")
    table.set_node(MakeNode().name("d").obj())  # takes b's row
    assert names_snapshot(table) is not snap
    second = _record(table, ["a", "d", "c"], [3, 9, 5], "d")
    assert list(first.total_score) == ["a", "b", "c"] and dict(first.filter).keys() == {"a", "b", "c"}
    assert list(second.total_score) == ["a", "d", "c"] and list(second.filter) == ["a", "d", "c"]
    assert record_digest(first)["runner_up"] == "c" and record_digest(second)["runner_up"] == "c"
    for rec, sel in ((first, "b"), (second, "d")):
        plan = column_plan(rec, rec.total_score, 2)
        assert plan is not None and [k.node for k in plan.nodes] == [sel, "c"]
        assert isinstance(rec.total_score, NodeTotals) and rec.total_score.find(sel) == 1


def test_columns_of_names_read_as_the_list() -> None:
    cols = NodeColumns.of_names(["x", "y", "z"])
    assert cols.names_at([2, 0]) == ["z", "x"] and cols.find("y") == 1 and cols.find("w") == -1 and len(cols) == 3
