"""``device.driver == "<literal>"`` selectors are decided by comparing strings
(:meth:`CompiledSelector.matches_driver`); the result must be CEL's on the device's context
(v0.37.2 ``dynamic-resource-allocation/cel/compile.go``: ``device.driver`` is the slice's driver)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.dra_cel import CompiledSelector, device_context

name = st.text(st.sampled_from("abc.-_/9"), max_size=8)
space = st.sampled_from(["", " ", "  ", "\n"])


@settings(max_examples=200, deadline=None)
@given(name, name, space, space, space, space, st.booleans())
def test_driver_literal_fast_path_is_cel(driver, literal, s1, s2, s3, s4, attrs):
    expr = f'{s1}device.driver{s2}=={s3}"{literal}"{s4}'
    sel = CompiledSelector(expr)
    device = {"name": "d", "attributes": {"model": {"string": "x"}}} if attrs else {"name": "d"}
    want = sel.matches(device_context(driver, device))
    assert sel.matches_driver(driver) is want is (driver == literal)


def test_other_forms_take_cel():
    for expr in ['device.driver != "a"', 'device.driver == "a" || true', '"a" == device.driver',
                 'device.driver == "a\\"b"', 'device.attributes["a"].model == "x"', 'device.driver == "a']:
        assert CompiledSelector(expr).matches_driver("a") is None, expr
