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


def test_driver_literal_selectors_do_not_import_cel():
    """Allocating with DeviceClasses that only name their driver compiles nothing: the ``cel``
    package (its CLI's imports, ~0.7 s of CPU) is not imported; another selector imports it."""
    import subprocess
    import sys

    code = """
import sys
from kubesched.plugins.dra_structured import Allocator
from kubesched.testing.wrappers import MakeNode
cls = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": 'device.driver == "d.example.com"'}}]}}
sl = {"metadata": {"name": "s"}, "spec": {"driver": "d.example.com", "nodeName": "n", "allNodes": False,
      "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "x"}]}}
claim = {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": {"requests": [
    {"name": "r", "exactly": {"deviceClassName": "gpu", "count": 1}}]}}}
got = Allocator([claim], set(), {"gpu": cls}.get, [sl]).allocate(MakeNode().name("n").obj())
assert got[0]["devices"]["results"][0]["device"] == "x", got
print("cel" in sys.modules)
cls["spec"]["selectors"][0]["cel"]["expression"] = 'device.driver == "d.example.com" && true'
Allocator([claim], set(), {"gpu": cls}.get, [sl]).allocate(MakeNode().name("n").obj())
print("cel" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]
