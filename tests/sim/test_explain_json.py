"""``compact_json`` (orjson where it writes what the stdlib writes) is, byte for byte,
``json.dumps(value, separators=(",", ":"))`` — for any text (non-ASCII, control characters,
DEL, backslashes), ints of any size, floats of any magnitude, NaN and infinities (hypothesis)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.sim.explain_compact import compact_json

_floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([1e-05, 1e-7, 0.0001, 1e16, 1e22, -0.0, 123456789.123, 2.5e-300]))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(-2**70, 2**70), _floats,
                     st.text(), st.text(alphabet=st.characters(max_codepoint=0x80)))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)), max_leaves=25)


@settings(max_examples=600, deadline=None)
@given(_values)
def test_compact_json_is_the_stdlib_text(value: object) -> None:
    assert compact_json(value) == json.dumps(value, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text()),
                    lambda inner: st.one_of(st.lists(inner, max_size=5),
                                            st.dictionaries(st.text(max_size=8), inner, max_size=5)),
                    max_leaves=25))
def test_without_floats_the_float_checks_can_be_skipped(value: object) -> None:
    assert compact_json(value, no_floats=True) == json.dumps(value, separators=(",", ":"))


def test_what_json_cannot_encode_is_the_stdlib_error() -> None:
    with pytest.raises(TypeError):
        compact_json({"x": object()})
    assert compact_json({1: math.inf}) == json.dumps({1: math.inf}, separators=(",", ":"))
