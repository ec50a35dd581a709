"""``NodeScores``: a record's node → plugin → score mapping read straight from the cycle's array
is the same mapping as the dicts it replaces, whichever way it is read (hypothesis)."""

from __future__ import annotations

import copy
import json
import pickle
from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.record import DecisionRecord, NodeScores


@st.composite
def arrays(draw: st.DrawFn) -> tuple[list[str], list[str], np.ndarray]:
    n = draw(st.integers(0, 12))
    k = draw(st.integers(1, 5))
    names = [f"node-{i}" for i in draw(st.permutations(range(n)))]
    plugins = [f"P{j}" for j in range(k)]
    arr = np.array(draw(st.lists(st.lists(st.integers(-10**9, 10**9), min_size=n, max_size=n),
                                 min_size=k, max_size=k)), dtype=np.int64).reshape(k, n)
    return names, plugins, arr


def reference(names: list[str], plugins: list[str], arr: np.ndarray) -> dict[str, dict[str, int]]:
    return {n: {p: int(arr[j, i]) for j, p in enumerate(plugins)} for i, n in enumerate(names)}


@settings(max_examples=150, deadline=None)
@given(arrays(), st.data())
def test_every_way_of_reading_agrees_with_the_plain_dict(a: tuple, data: st.DataObject) -> None:
    names, plugins, arr = a
    want = reference(names, plugins, arr)
    ns = NodeScores(names, plugins, arr)
    probe = data.draw(st.sampled_from([*names, "absent"]))
    # lookups first: answered from the array, nothing built
    assert len(ns) == len(want) and bool(ns) == bool(want)
    assert (probe in ns) == (probe in want)
    assert ns.get(probe) == want.get(probe) and ns.get(probe, {}) == want.get(probe, {})
    if probe in want:
        assert ns[probe] == want[probe]
    else:
        with pytest.raises(KeyError):
            ns[probe]
    assert list(ns.iter_rows()) == list(want.items())
    assert ns.plugins == plugins
    # then everything else
    assert dict(ns) == want and list(ns) == list(want) and list(ns.items()) == list(want.items())
    assert ns == want and want == ns
    assert json.loads(json.dumps(dict(ns))) == want
    assert copy.deepcopy(ns) == want and type(copy.deepcopy(ns)) is dict
    assert pickle.loads(pickle.dumps(ns)) == want
    # after materializing, lookups read the dicts
    assert ns.get(probe) == want.get(probe) and (probe in ns) == (probe in want)


def test_record_to_dict_is_plain_json() -> None:
    arr = np.array([[1, 2], [3, 4]], dtype=np.int64)
    rec = DecisionRecord(pod="ns/p", profile="default-scheduler", attempt=1, time=0.0,
                         score=NodeScores(["a", "b"], ["P", "Q"], arr))
    d = rec.to_dict()
    assert type(d["score"]) is dict and json.loads(json.dumps(d))["score"] == {"a": {"P": 1, "Q": 3},
                                                                              "b": {"P": 2, "Q": 4}}
    assert asdict(rec)["score"] == d["score"]


def test_the_array_is_the_records_own() -> None:
    """Records outlive the cycle: a later change to the cycle's buffers must not show through."""
    from kubesched.framework.record import score_results3

    class _Table:
        names = ["a", "b"]

    class _Scores:
        rows = np.array([0, 1])
        plugins = ["P"]
        raw = [np.array([5, 6])]
        normalized = [np.array([50, 60])]
        weighted = [np.array([100, 120])]

    sc = _Scores()
    raw, norm, fin = score_results3(_Table(), sc)  # type: ignore[arg-type]
    sc.raw[0][:] = 0
    sc.weighted[0][:] = 0
    assert raw == {"a": {"P": 5}, "b": {"P": 6}} and fin["b"] == {"P": 120}


@settings(max_examples=100, deadline=None)
@given(arrays(), st.lists(st.integers(1, 10), min_size=5, max_size=5))
def test_weights_read_back_as_the_per_node_loop_does(a: tuple, ws: list[int]) -> None:
    names, plugins, arr = a
    norm = np.clip(np.abs(arr) % 101 - 30, 0, 100)  # 0..100 with plenty of zeros
    final = norm * np.array(ws[: len(plugins)], dtype=np.int64)[:, None]
    want: dict[str, int] = {}
    nd, fd = reference(names, plugins, norm), reference(names, plugins, final)
    for node, per in nd.items():  # the plain reading: first node where the plugin's score is not 0
        for p, z in per.items():
            if z and p not in want:
                want[p] = fd[node][p] // z
    got = NodeScores(names, plugins, norm).weights(NodeScores(names, plugins, final))
    assert list(got.items()) == [(p, want[p]) for p in plugins if p in want]  # plugin order: the page keeps it
    # any weighted array (an extender's entry is not normalized × weight): still read at the first node
    other = np.abs(arr) % 1000
    od = reference(names, plugins, other)
    want2 = {p: od[node][p] // z for p in plugins for node, per in nd.items() if (z := per[p])
             and all(not nd[m][p] for m in names[:names.index(node)])}
    got2 = NodeScores(names, plugins, norm).weights(NodeScores(names, plugins, other))
    assert list(got2.items()) == [(p, want2[p]) for p in plugins if p in want2]
