"""``best_first``: the explanation's ranking of the scored nodes (the ``m`` greatest totals, best
first, record order among equals) is the stable sort's first ``m`` places, whatever the ties —
short arrays (sorted) and long ones (the partition), few distinct values (ties across the cut)
and many (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.record import same_rows
from kubesched.sim.explain_columns import best_first


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 400), st.integers(1, 1000), st.integers(-3, 450), st.integers(0, 2**32 - 1))
def test_best_first_is_the_stable_sort(n: int, spread: int, m: int, seed: int) -> None:
    values = np.random.default_rng(seed).integers(0, spread, n).astype(np.int64)
    want = np.argsort(-values, kind="stable")[:max(m, 0)]
    assert best_first(values, m).tolist() == want.tolist()


def test_best_first_with_every_value_equal_and_one_better() -> None:
    values = np.full(1000, 7, np.int64)
    values[640] = 9
    assert best_first(values, 11).tolist() == [640, *range(10)]


@given(st.lists(st.integers(0, 5), max_size=8), st.lists(st.integers(0, 5), max_size=8))
def test_same_rows_is_array_equal(a: list[int], b: list[int]) -> None:
    x, y = np.array(a, np.int64), np.array(b, np.int64)
    assert same_rows(x, y) == np.array_equal(x, y)
