"""``FilterResults``: a record's node → plugin → "passed" | [reasons] mapping read from the
cycle's Filter chunks is the same mapping as the dicts ``filter_results`` builds, whichever way it
is read, and the report's explanation built from its columns is the one built from those dicts
(hypothesis)."""

from __future__ import annotations

import copy
import json
import pickle
from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.diagnosis import FilterChunk, PluginReasons
from kubesched.framework.interface import Code
from kubesched.framework.record import DecisionRecord, FilterResults, NodeScores, filter_results
from kubesched.sim.explain import explain_record

PLUGINS = ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodeResourcesFit"]
REASONS = ["r0", "r1", "r2", ""]  # "" stands for a rejection without a reason → ("rejected",)


class _Table:
    def __init__(self, n: int) -> None:
        self.names = [f"node-{i}" for i in range(n)]


@st.composite
def chunk(draw: st.DrawFn, rows: list[int], nested: bool = True) -> FilterChunk:
    k = len(PLUGINS)
    skipped = frozenset(draw(st.sets(st.integers(0, k - 1), max_size=2)))
    ran = [pi for pi in range(k) if pi not in skipped]
    fail = [draw(st.sampled_from([-1, *ran])) if ran else -1 for _ in rows]
    tables: list[PluginReasons | None] = [None] * k
    keys = [0] * len(rows)
    for pi in set(fail) - {-1}:
        if draw(st.booleans()):  # bit-set form
            tables[pi] = PluginReasons([r or "x" for r in REASONS[:3]], [Code.UNSCHEDULABLE] * 3)
            for i, f in enumerate(fail):
                if f == pi:
                    keys[i] = draw(st.integers(1, 7))
        else:  # interned statuses, one of them without reasons
            entries = [(("r0",), Code.UNSCHEDULABLE), ((), Code.UNSCHEDULABLE_AND_UNRESOLVABLE),
                       (("r1", "r2"), Code.UNSCHEDULABLE)]
            tables[pi] = PluginReasons(statuses=entries)
            for i, f in enumerate(fail):
                if f == pi:
                    keys[i] = draw(st.integers(1, len(entries)))
    c = FilterChunk(np.array(rows, np.int64), np.array(fail, np.int16), np.array(keys, np.int64),
                    PLUGINS, tables, skipped)
    if nested and rows:
        for i in draw(st.sets(st.integers(0, len(rows) - 1), max_size=2)):
            c.override(i, draw(chunk([rows[i]], nested=False)))
    return c


@st.composite
def cycles(draw: st.DrawFn) -> tuple[_Table, list[FilterChunk]]:
    n = draw(st.integers(0, 14))
    order = draw(st.permutations(range(n)))
    cuts = sorted(draw(st.sets(st.integers(0, n), max_size=3)))
    chunks, start = [], 0
    for c in [*cuts, n]:
        chunks.append(draw(chunk(list(order[start:c]))))
        start = c
    return _Table(n), chunks


@settings(max_examples=200, deadline=None)
@given(cycles(), st.data())
def test_every_way_of_reading_agrees_with_the_plain_dict(cyc: tuple, data: st.DataObject) -> None:
    table, chunks = cyc
    want = filter_results(table, chunks)  # type: ignore[arg-type]
    fr = FilterResults(table, chunks)  # type: ignore[arg-type]
    probe = data.draw(st.sampled_from([*want, "absent"]))
    assert len(fr) == len(want) and bool(fr) == bool(want)
    assert (probe in fr) == (probe in want)
    assert fr.get(probe) == want.get(probe)
    if probe in want:
        assert fr[probe] == want[probe]
    else:
        with pytest.raises(KeyError):
            fr[probe]
    assert fr.names() == list(want)
    # the columns the report reads: the last item of each entry and how many passed
    cols = fr.rejections()
    assert cols is not None
    assert cols[0] == list(want)
    for ((plugin, reasons), passed), entry in zip(cols[1], want.values(), strict=True):
        assert passed == sum(1 for v in entry.values() if v == "passed")
        last = next(reversed(entry), None)
        if last is None or entry[last] == "passed":
            assert (plugin, reasons) == ("", "")
        else:
            assert (plugin, reasons) == (last, tuple(entry[last] or ("rejected",)))
    # then everything else
    assert dict(fr) == want and list(fr) == list(want) and list(fr.items()) == list(want.items())
    assert fr == want and want == fr
    assert json.loads(json.dumps(dict(fr))) == want
    assert copy.deepcopy(fr) == want and type(copy.deepcopy(fr)) is dict
    assert pickle.loads(pickle.dumps(fr)) == want


def test_the_records_copy_outlives_the_cycles_buffers() -> None:
    table = _Table(3)
    c = FilterChunk(np.array([2, 0, 1]), np.array([-1, 0, -1], np.int16), np.array([0, 1, 0]), PLUGINS[:1],
                    [PluginReasons(["bad"], [Code.UNSCHEDULABLE])])
    fr = FilterResults(table, [c])  # type: ignore[arg-type]
    c.rows[:] = 0
    c.fail_plugin[:] = -1
    table.names[2] = "renamed"
    assert dict(fr) == {"node-2": {"NodeUnschedulable": "passed"}, "node-0": {"NodeUnschedulable": ["bad"]},
                        "node-1": {"NodeUnschedulable": "passed"}}


def test_record_to_dict_is_plain_json() -> None:
    table = _Table(2)
    c = FilterChunk(np.array([0, 1]), np.array([-1, 0], np.int16), np.array([0, 1]), PLUGINS[:1],
                    [PluginReasons(["bad"], [Code.UNSCHEDULABLE])])
    rec = DecisionRecord(pod="ns/p", profile="default-scheduler", attempt=1, time=0.0,
                         filter=FilterResults(table, [c]))  # type: ignore[arg-type]
    d = rec.to_dict()
    assert type(d["filter"]) is dict and json.loads(json.dumps(d))["filter"] == {
        "node-0": {"NodeUnschedulable": "passed"}, "node-1": {"NodeUnschedulable": ["bad"]}}
    assert asdict(rec)["filter"] == d["filter"]


@settings(max_examples=150, deadline=None)
@given(cycles(), st.data())
def test_explanation_from_the_columns_is_the_one_from_the_dicts(cyc: tuple, data: st.DataObject) -> None:
    """The report's capped explanation (near misses first, the rest counted by reason) is the same
    whether the record holds the lazy mapping or the plain dicts."""
    table, chunks = cyc
    plain = filter_results(table, chunks)  # type: ignore[arg-type]
    feasible = [n for n, e in plain.items() if all(v == "passed" for v in e.values())]
    scored = data.draw(st.lists(st.sampled_from(feasible), unique=True)) if feasible else []
    arr = np.array([[data.draw(st.integers(0, 3)) for _ in scored]], np.int64).reshape(1, len(scored))
    selected = scored[0] if scored and data.draw(st.booleans()) else None
    max_nodes = data.draw(st.integers(0, 6))

    def record(flt: object) -> DecisionRecord:
        scores = NodeScores(scored, ["P"], arr)
        return DecisionRecord(pod="ns/p", profile="default-scheduler", attempt=1, time=0.0,
                              selected_node=selected, evaluated_nodes=len(plain), feasible_nodes=len(feasible),
                              filter=flt, score=scores, normalized_score=scores, final_score=scores,  # type: ignore[arg-type]
                              total_score=dict(zip(scored, arr[0].tolist())))

    want = explain_record(record(plain), max_nodes=max_nodes)
    got = explain_record(record(FilterResults(table, chunks)), max_nodes=max_nodes)  # type: ignore[arg-type]
    assert got == want


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from([f"n{i}" for i in range(12)]), st.integers(0, 4)), st.data())
def test_ranking_is_best_first_selected_first_among_equals(totals: dict[str, int], data: st.DataObject) -> None:
    """The report's ranking: total descending, the selected node first among equal totals, the
    others in record order (the sort key the report always used)."""
    from kubesched.sim.explain import _ranked

    sel = data.draw(st.sampled_from([*totals, None, "absent"]))
    rec = DecisionRecord(pod="ns/p", profile="default-scheduler", attempt=1, time=0.0, selected_node=sel)
    assert _ranked(rec, totals) == sorted(totals, key=lambda n: (-totals[n], n != sel))
