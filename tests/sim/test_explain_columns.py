"""The report's fast paths against the plain ones (hypothesis): which nodes an explanation keeps,
read from a record's columns (``column_plan``), is what the dicts give (``dict_plan`` over the
plain ``filter_results`` mapping); and the compact explanation encoded straight from the
columns (``compact_explanation``) is, byte for byte, ``json.dumps`` of
``explain_record(...).to_compact_dict()`` on the plain record."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.framework.test_filter_results_lazy import cycles

from kubesched.framework.record import DecisionRecord, FilterResults, NodeScores, NodeTotals, filter_results
from kubesched.sim.explain import dict_plan, explain_record, record_digest
from kubesched.sim.explain_columns import Plan, column_plan
from kubesched.sim.explain_compact import compact_explanation

SCORE_PLUGINS = ["P", "Q", "R"]


def _as_tuple(p: Plan) -> tuple[Any, ...]:
    """A plan with its omitted reasons' order (dict equality ignores it; the page does not); a
    kept node's ``col`` is where the columns found it (the dicts do not tell)."""
    return ([(k.node, k.reasons, k.total, k.rank) for k in p.nodes], p.runner_up, p.margin, p.selected_ties,
            p.runner_up_ties, p.nodes_omitted,
            list(p.omitted_reasons.items()))


@st.composite
def records(draw: st.DrawFn) -> tuple[DecisionRecord, DecisionRecord, bool]:
    """``(record over the columns, the same record over plain dicts, whether the columns can
    answer)``: the scored nodes are some of the feasible ones (sometimes a rejected one, or one
    never evaluated, which the columns leave to the dicts), with tied totals; the selected node
    any of them, an unscored one, an unknown one or none."""
    table, chunks = draw(cycles())
    plain = filter_results(table, chunks)
    feasible = [n for n, e in plain.items() if all(v == "passed" for v in e.values())]
    others = [n for n in plain if n not in feasible] + ["elsewhere"]
    scored = draw(st.lists(st.sampled_from(feasible), unique=True)) if feasible else []
    odd = draw(st.booleans()) and draw(st.booleans())
    if odd:
        scored.insert(draw(st.integers(0, len(scored))), draw(st.sampled_from(others)))
    evaluated_twice = len(set(FilterResults(table, chunks).names())) != len(FilterResults(table, chunks).names())
    plugins = SCORE_PLUGINS[:draw(st.integers(1, 3))]
    raw = np.array([[draw(st.integers(0, 3)) for _ in scored] for _ in plugins], np.int64).reshape(len(plugins), -1)
    norm = raw * draw(st.sampled_from([1, 10]))
    weight = np.array([[draw(st.integers(0, 3))] for _ in plugins], np.int64).reshape(len(plugins), 1)
    fin = norm * weight
    total = fin.sum(axis=0) + (draw(st.integers(0, 1)) if draw(st.booleans()) else 0)  # extenders add to totals
    pool = [*scored, *feasible, *others[:2], "elsewhere", None, None]
    selected = draw(st.sampled_from(pool))
    result = "scheduled" if selected else draw(st.sampled_from(["unschedulable", "error"]))
    nominated = draw(st.sampled_from([None, "n"]))

    def record(flt: Any, columns: bool) -> DecisionRecord:
        if not scored:  # no scoring: build_record leaves the plain empty dicts
            r, z, f = {}, {}, {}
        elif columns:  # as build_record makes them: one array, totals with the table's rows
            index: list[dict[str, int] | None] = [None]
            stack = np.stack([raw, norm, fin]).copy()
            r, z, f = (NodeScores(scored, plugins, stack[i], index, stack) for i in range(3))
            rows = np.array([int(n[5:]) if n.startswith("node-") else 100 + j for j, n in enumerate(scored)],
                            np.int64)
            totals = NodeTotals(scored, total.copy(), rows, index)
        else:
            r, z, f = ({n: dict(zip(plugins, a[:, i].tolist())) for i, n in enumerate(scored)}
                       for a in (raw, norm, fin))
        if not (scored and columns):
            totals = dict(zip(scored, total.tolist()))
        return DecisionRecord(pod="ns/p", profile="default-scheduler", attempt=2, time=0.0, selected_node=selected,
                              result=result, message="" if selected else "0/3 nodes are available",
                              evaluated_nodes=len(plain), feasible_nodes=len(feasible), filter=flt,
                              score=r, normalized_score=z, final_score=f, total_score=totals,
                              pre_filter={"X": "y"} if not scored else {}, nominated_node=nominated)

    cols = record(FilterResults(table, chunks), True)
    dicts = record(plain, False)
    can = not evaluated_twice and all(n in feasible or n not in plain for n in scored)
    return cols, dicts, can


@settings(max_examples=400, deadline=None)
@given(records(), st.integers(0, 7))
def test_column_plan_is_the_dict_plan(recs: tuple[DecisionRecord, DecisionRecord, bool], max_nodes: int) -> None:
    cols, dicts, can = recs
    want = dict_plan(dicts, dict(dicts.total_score), max_nodes)
    got = column_plan(cols, dict(cols.total_score), max_nodes)
    assert (got is not None) == can
    if got is not None:
        assert _as_tuple(got) == _as_tuple(want)
        # the record's own NodeTotals: which nodes were scored told by the table's rows
        arrays = column_plan(cols, cols.total_score, max_nodes)
        assert arrays is not None and _as_tuple(arrays) == _as_tuple(want)
        assert [k.col for k in arrays.nodes] == [k.col for k in got.nodes]
        scored = list(cols.total_score)
        assert all(scored[k.col] == k.node if k.total is not None else k.col == -1 for k in got.nodes)
    assert _as_tuple(dict_plan(cols, dict(cols.total_score), max_nodes)) == _as_tuple(want)


@settings(max_examples=300, deadline=None)
@given(records(), st.integers(0, 7), st.sampled_from([None, 12]), st.sampled_from([{}, {"P": 5, "S": 1}]))
def test_compact_explanation_is_the_compact_dict_encoded(recs: tuple[DecisionRecord, DecisionRecord, bool],
                                                        max_nodes: int, total_nodes: int | None,
                                                        weights: dict[str, int]) -> None:
    cols, dicts, _ = recs
    for rec in (cols, dicts):
        want = explain_record(rec, total_nodes=total_nodes, weights=weights, max_nodes=max_nodes).to_compact_dict()
        got = compact_explanation(rec, max_nodes, total_nodes=total_nodes, weights=weights)
        assert got == json.dumps(want, separators=(",", ":"))
    # and the objects explain_record builds over the columns are the ones over the dicts (but for
    # the order of the weights read back: plugin order from the arrays, first-seen from the dicts)
    assert explain_record(cols, total_nodes=total_nodes, weights=weights, max_nodes=max_nodes).to_dict() == \
        explain_record(dicts, total_nodes=total_nodes, weights=weights, max_nodes=max_nodes).to_dict()


@settings(max_examples=300, deadline=None)
@given(records())
def test_digest_from_the_totals_array_is_the_dict_digest(recs: tuple[DecisionRecord, DecisionRecord, bool]) -> None:
    """``-o wide``'s figures (score, runner-up: the best other node, first of equals; with no
    selected node the second of the ranking) from the NodeTotals' array = from the dicts."""
    cols, dicts, _ = recs
    assert record_digest(cols) == record_digest(dicts)
