"""NodeToStatus: the vectorised selection agrees with per-node lookups (upstream NodesForStatusCode)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.diagnosis import Diagnosis, FilterChunk, NodeToStatus, PluginReasons
from kubesched.framework.interface import Code, Status

TABLES = [PluginReasons(("a", "b"), (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)),
          PluginReasons(("c",), (Code.UNSCHEDULABLE,)),
          PluginReasons(statuses=[(("d",), Code.UNSCHEDULABLE_AND_UNRESOLVABLE), (("e", "f"), Code.UNSCHEDULABLE),
                                  (("g",), Code.UNSCHEDULABLE_AND_UNRESOLVABLE)])]


@settings(max_examples=100, deadline=None)
@given(st.integers(8, 30).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=n, max_size=n),
    st.lists(st.integers(1, 3), min_size=n, max_size=n),
    st.integers(0, n),
    st.sampled_from([None, Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE]),
    st.booleans())))
def test_rows_with_code_matches_get(args) -> None:  # noqa: ANN001
    n, fail, bits, evaluated, absent, override = args
    names = [f"n{i}" for i in range(n)]
    rows = np.arange(evaluated, dtype=np.int64)
    fp = np.asarray(fail[:evaluated], np.int16)
    fb = np.asarray([b if f in (0, 2) else 1 for f, b in zip(fail, bits)][:evaluated], np.int64)
    chunk = FilterChunk(rows, fp, fb, ["P0", "P1", "P2"], list(TABLES))
    if override and evaluated:
        sub = FilterChunk(rows[:1], np.asarray([1], np.int16), np.asarray([1], np.int64), ["P0", "P1", "P2"],
                          list(TABLES))
        chunk.override(0, sub)
    d = Diagnosis(chunks=[chunk], absent_status=Status.of(absent, "x") if absent is not None else None)
    m = NodeToStatus(d, names)
    order = np.arange(n, dtype=np.int64)[::-1].copy()
    for code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.SUCCESS):
        want = [r for r in order.tolist() if (m.get(names[r]).code if names[r] in m.explicit() or r >= evaluated
                                               else Code.SUCCESS) == code]
        assert m.rows_with_code(order, code).tolist() == want
