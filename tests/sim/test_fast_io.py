"""The fast JSON read (orjson) and the orjson ``-o json`` writer give what the stdlib paths gave,
and hostile nesting is one error line, never a RecursionError."""

from __future__ import annotations

import io
import json
import math
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.cli.main import main
from kubesched.errors import ManifestError
from kubesched.sim import manifests
from kubesched.sim.manifests import encode_json, load_manifests, write_list
from kubesched.sim.simulate import simulate

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def _old_json(doc: object) -> str:
    """What ``write_list(..., "json", ...)`` wrote before orjson."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _write(objs: list, fmt: str = "json") -> str:
    buf = io.StringIO()
    write_list(objs, fmt, buf)  # type: ignore[arg-type]
    return buf.getvalue()


# --------------------------------------------------------------------------- output encoder

def test_quickstart_simulation_output_is_byte_identical_to_the_stdlib_encoder() -> None:
    res = simulate(load_manifests([str(QUICKSTART)]), seed=1, record=True)  # annotations: JSON in strings
    objs = res.output_objects()
    assert _write(objs) == _old_json({"apiVersion": "v1", "kind": "List", "items": objs})


def test_the_cli_writes_the_same_bytes_to_a_binary_stdout() -> None:
    r = CliRunner().invoke(main, ["simulate", "-f", str(QUICKSTART), "--seed", "1", "-o", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert r.stdout == _old_json(doc)
    assert sum(1 for o in doc["items"] if o["kind"] == "Pod" and o["spec"].get("nodeName")) > 100


_keys = st.text(max_size=8)
_scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=12)
            | st.floats(allow_nan=True, allow_infinity=True)
            | st.sampled_from([1e-05, 1e-07, 3e-5, 0.0001, 1e16, 1.5e300, 5e-324, -0.0, 0.5, 100.0]))
_json = st.recursive(_scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(_keys, kids, max_size=4),
                     max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(_keys, _json, max_size=5), max_size=4))
def test_any_json_value_is_written_as_the_stdlib_wrote_it(items: list) -> None:
    # small floats, NaN/Infinity, ints beyond 64 bits: orjson writes them otherwise (or not at
    # all), so the writer must notice and fall back
    assert _write(items) == _old_json({"apiVersion": "v1", "kind": "List", "items": items})
    assert encode_json(items).decode() == json.dumps(items, indent=2, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(_keys, _json, max_size=5), max_size=9))
def test_items_encoded_a_group_at_a_time_are_the_stdlib_text(items: list) -> None:
    # one orjson call per group of items: a group with any item orjson writes otherwise falls
    # back item by item; the others keep their group's text
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(manifests, "_JSON_ITEMS", 3)
        assert _write(items) == _old_json({"apiVersion": "v1", "kind": "List", "items": items})


def test_an_item_deep_enough_for_orjson_alone_but_not_in_a_group() -> None:
    deep: object = "x"
    for _ in range(253):  # orjson stops at 255 levels; the group's wrapper adds two
        deep = [deep]
    items = [{"a": 1}, {"d": deep}, {"b": [1.5, None]}]
    assert _write(items) == _old_json({"apiVersion": "v1", "kind": "List", "items": items})


def test_values_orjson_rejects_or_writes_otherwise() -> None:
    items = [{"a": 1e-05, "b": float("nan"), "c": 2**64, "d": None},
             {1: "int key", "s": "\u2028é\x00\x7f\ud800"}, {"inf": -math.inf}]
    assert _write(items) == _old_json({"apiVersion": "v1", "kind": "List", "items": items})


def test_empty_list_and_empty_objects() -> None:
    for items in ([], [{}], [{"a": [], "b": {}}]):
        assert _write(items) == _old_json({"apiVersion": "v1", "kind": "List", "items": items})


def test_output_is_written_in_batches_with_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifests, "_JSON_BATCH", 100)
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {"k": "v" * i}}
             for i in range(50)]
    assert _write(items) == _old_json({"apiVersion": "v1", "kind": "List", "items": items})


def _old_yaml(items: list) -> str:
    """What ``write_list(..., "yaml", ...)`` wrote before writing item by item."""
    import yaml

    return yaml.dump({"apiVersion": "v1", "kind": "List", "items": items}, Dumper=manifests._Dumper,
                     sort_keys=False, default_flow_style=False, allow_unicode=True)


def test_quickstart_yaml_item_by_item_is_the_whole_document_dump() -> None:
    res = simulate(load_manifests([str(QUICKSTART)]), seed=1, record=True)  # long annotations fold
    objs = res.output_objects()
    assert _write(objs, "yaml") == _old_yaml(objs)


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=120) | st.sampled_from(
    ["", "yes", "null", "~", "- a", "a: b", "#x", "0x1F", "1e3", "'q'", '"d"', "  lead", "trail ", "a\nb\n",
     "x " * 70, "é" * 50, "\t", "@x", "*x", "&x", "!x", "%x", "{a}", "[a]", ">", "|"])
_yaml_val = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | _text,
                         lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text, kids, max_size=3),
                         max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(_text, _yaml_val, max_size=4), max_size=3))
def test_any_yaml_value_is_written_as_the_whole_document_dump(items: list) -> None:
    assert _write(items, "yaml") == _old_yaml(items)


def test_yaml_written_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifests, "_JSON_BATCH", 100)
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {"k": "v" * i}}
             for i in range(50)]
    assert _write(items, "yaml") == _old_yaml(items)
    assert _write([], "yaml") == _old_yaml([])


# --------------------------------------------------------------------------- fast JSON read

def _slow(text: str, path: str = "f.json") -> list[tuple[str, dict, str, int]]:
    col = manifests._Collector()
    manifests._parse_json(text, path, col)
    return [(o.kind, o.data, o.source, o.index) for o in col.out]


def _fast(raw: bytes, path: str = "f.json") -> list[tuple[str, dict, str, int]] | None:
    col = manifests._Collector()
    if not manifests._read_json_fast(raw, path, col):
        return None
    return [(o.kind, o.data, o.source, o.index) for o in col.out]


_ITEMS = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "web"},
           "spec": {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80 + i}]}],
                    "volumes": [{"name": "v", "configMap": {"name": "cm", "items": [{"key": "a", "path": "b"}]}}]}}
          for i in range(3)] + [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]


@pytest.mark.parametrize("indent", [None, 1, 2, 4, "\t"])
@pytest.mark.parametrize("order", ["items-first", "items-last"])
def test_fast_read_gives_the_same_objects_and_lines(indent: int | str | None, order: str) -> None:
    doc = ({"apiVersion": "v1", "items": _ITEMS, "kind": "List", "metadata": {"resourceVersion": ""}}
           if order == "items-first" else
           {"apiVersion": "v1", "kind": "List", "metadata": {"items": [{"x": 1}]}, "items": _ITEMS})
    text = "\n\n" + json.dumps(doc, indent=indent) + "\n"
    fast = _fast(text.encode())
    if indent == "\t":
        assert fast is None  # not a layout the fast scan places: the exact scan is used
    else:
        assert fast == _slow(text)
    assert _sources_via_load_manifests(text) == [s for _, _, s, _ in _slow(text)]


_ITEM_VALUES = st.recursive(st.none() | st.integers() | st.text(max_size=5),
                            lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["spec", "status", "x", "items"]), _ITEM_VALUES, max_size=3),
                max_size=6),
       st.integers(min_value=1, max_value=4), st.sampled_from(["items-first", "items-last"]))
def test_fast_item_lines_are_the_exact_scans_for_any_items(extra: list, indent: int, order: str) -> None:
    """The one-pass item scan places every item on the line the stdlib path finds, whatever the
    items hold (nested objects and lists at deeper indentation, ``"items"`` keys inside items)."""
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, **e}
             for i, e in enumerate(extra)]
    doc = ({"apiVersion": "v1", "items": items, "kind": "List"} if order == "items-first" else
           {"apiVersion": "v1", "kind": "List", "metadata": {"items": [{"x": 1}]}, "items": items})
    text = "\n" + json.dumps(doc, indent=indent) + "\n"
    assert _fast(text.encode()) == _slow(text)


def _sources_via_load_manifests(text: str) -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "f.json"
        p.write_text(text)
        return [o.source.replace(str(p), "f.json") for o in load_manifests([str(p)])]


def test_fast_read_single_object_and_bom() -> None:
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}
    text = "\n" + json.dumps(obj, indent=2)
    assert _fast(("\ufeff" + text).encode()) == _slow(text)


_CM = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "v": '


@pytest.mark.parametrize("text", [_CM + "NaN}", _CM + str(2**71) + "}", _CM + "1e400}", _CM + '"\\ud800"}',
                                  '{"apiVersion": "v1",\n "kind": ', "", "[1, 2]", "[" * 2000 + "]" * 2000])
def test_what_the_fast_reader_cannot_read_goes_the_stdlib_way(tmp_path: Path, text: str) -> None:
    if text == _CM + str(2**71) + "}":
        fast = _fast(text.encode())  # read exactly, as the stdlib does (orjson would make it a float)
        assert fast is not None and fast == _slow(text) and type(fast[0][1]["v"]) is int
    p = tmp_path / "f.json"
    p.write_text(text)
    try:
        want: object = _slow(text, str(p))
    except ManifestError as e:
        want = str(e)
    try:
        got: object = [(o.kind, o.data, o.source, o.index) for o in load_manifests([str(p)])]
    except ManifestError as e:
        got = str(e)
    assert got == want


# --------------------------------------------------------------------------- hostile nesting

def _deep_configmap(depth: int) -> str:
    return ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep"}, "data": {"k": "v"}, "x": '
            + '{"a": ' * depth + '"leaf"' + "}" * depth + "}")


@pytest.mark.parametrize("fmt", ["json", "yaml", "table"])
def test_20000_deep_configmap_json_is_one_error_line(tmp_path: Path, fmt: str) -> None:
    p = tmp_path / "deep.json"
    p.write_text(_deep_configmap(20_000))
    r = CliRunner().invoke(main, ["simulate", "-f", str(p), "-o", fmt])
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0] == f"error: {p}:1: document is nested too deeply"
    assert not isinstance(r.exception, RecursionError)


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_deep_object_from_yaml_is_one_error_line_on_output(tmp_path: Path, fmt: str) -> None:
    # the YAML reader builds deep documents without recursion; writing them is where Python's
    # recursion limit is met
    p = tmp_path / "deep.yaml"
    p.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nx: " + "[" * 20_000 + "]" * 20_000 + "\n")
    r = CliRunner().invoke(main, ["simulate", "-f", str(p), "-o", fmt, "--validate=ignore"])
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    # PyYAML ≥ 6.0.4 refuses the depth while reading (its own limit); older ones read it and the
    # writer refuses it: either way one clear line, never a RecursionError
    written = f"error: ConfigMap default/deep is nested too deeply to write as {fmt.upper()} (20001 levels)\n"
    read = f"error: {p}:5: invalid YAML: exceeded maximum nesting depth (while increasing flow level)\n"
    assert r.stderr in (written, read)


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _float_differs_by_translate(data: bytes) -> bool:
    """The check as it was (a translated copy of the data searched for ``0e-0``)."""
    return b"0.0000" in data or (b"e-" in data and b"0e-0" in data.translate(_DIGITS_AS_ZERO))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"e", b"-", b".", b"0", b"1", b"7", b"9", b"a", b'"', b" ", b"e-", b"0.0000",
                                 b"1e-7", b"kube-proxy", b"\n"]), max_size=40).map(b"".join))
def test_the_float_scan_is_the_translate_scan(data: bytes) -> None:
    assert manifests._orjson_float_differs(data) == _float_differs_by_translate(data)


@pytest.mark.parametrize("x", [1e-05, 1e-07, 3e-5, 2.5e-300, 5e-324, 0.00001234])
def test_the_float_scan_finds_every_small_float_orjson_writes(x: float) -> None:
    import orjson

    assert manifests._orjson_float_differs(orjson.dumps({"kube-proxy": [x]}, option=orjson.OPT_INDENT_2))
