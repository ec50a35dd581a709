"""kubesched.framework.npfast: the direct C calls give what the public numpy wrappers give."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kubesched.framework.npfast import amax, count_nonzero, flatnonzero

_ARRAYS = st.one_of(hnp.arrays(np.int64, st.integers(0, 40), elements=st.integers(-5, 5)),
                    hnp.arrays(np.bool_, st.integers(0, 40)),
                    hnp.arrays(np.int16, st.integers(0, 40), elements=st.integers(-1, 3)))


@settings(max_examples=200, deadline=None)
@given(a=_ARRAYS)
def test_same_as_numpy(a) -> None:
    assert count_nonzero(a) == np.count_nonzero(a)
    got, want = flatnonzero(a), np.flatnonzero(a)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    if len(a):
        assert amax(a) == a.max() and type(amax(a)) is type(a.max())


def test_empty_max_raises() -> None:
    with pytest.raises(ValueError):
        amax(np.zeros(0, np.int64))
