"""``same_rows``: the record's row-array comparison is ``np.array_equal`` (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kubesched.framework.record import same_rows


@given(st.lists(st.integers(0, 5), max_size=8), st.lists(st.integers(0, 5), max_size=8))
def test_same_rows_is_array_equal(a: list[int], b: list[int]) -> None:
    x, y = np.array(a, np.int64), np.array(b, np.int64)
    assert same_rows(x, y) == np.array_equal(x, y)
