"""crd_cel's rule walk without a server: oldSelf correlation through ``x-kubernetes-list-type:
map`` lists (validation.go ``validateArray`` with ``makeMapList``), ratcheting of unchanged
values, runtime errors as ``<error> evaluating rule: <rule>`` and formats (strfmt)."""

from __future__ import annotations

from kubesched.apiserver.crd_cel import cel_errors, format_errors

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "x-kubernetes-validations": [
                  {"rule": "self.port == oldSelf.port", "message": "port is immutable"},
                  {"rule": "self.port > 0"}],
                  "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
    "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self < 1.0"}]},
    "lookup": {"type": "object", "additionalProperties": {"type": "string"},
               "x-kubernetes-validations": [{"rule": "self.needed == 'x'"}]},
}}}}


def _obj(**spec: object) -> dict[str, object]:
    return {"apiVersion": "e.io/v1", "kind": "K", "metadata": {"name": "a"}, "spec": spec}


def test_old_self_follows_map_list_keys_not_indexes() -> None:
    old = _obj(ports=[{"name": "a", "port": 1}, {"name": "b", "port": 2}])
    new = _obj(ports=[{"name": "b", "port": 2}, {"name": "a", "port": 3}, {"name": "c", "port": 4}])
    assert [str(e) for e in cel_errors(SCHEMA, new, old)] == ["spec.ports[1]: Invalid value: port is immutable"]
    # no old value (create): the transition rule is skipped
    assert cel_errors(SCHEMA, new, None) == []


def test_ratcheting_numbers_as_doubles_and_runtime_errors() -> None:
    bad = _obj(ports=[{"name": "a", "port": 0}], ratio=2)
    assert sorted(str(e) for e in cel_errors(SCHEMA, bad, None)) == [
        "spec.ports[0]: Invalid value: failed rule: self.port > 0",
        "spec.ratio: Invalid value: 2: failed rule: self < 1.0"]
    # unchanged since the old object: errors ratcheted away (a warning upstream)
    assert cel_errors(SCHEMA, bad, bad) == []
    errs = cel_errors(SCHEMA, _obj(lookup={"other": "y"}), None)
    assert [str(e) for e in errs] == ['spec.lookup: Invalid value: "object": no such key: needed evaluating rule: '
                                      "self.needed == 'x'"]


def test_formats() -> None:
    s = {"type": "object", "properties": {k: {"type": "string", "format": f} for k, f in (
        ("a", "date-time"), ("b", "date"), ("c", "cidr"), ("d", "k8s-short-name"), ("e", "byte"), ("f", "x-custom"))}}
    ok = {"a": "2024-01-02T03:04:05Z", "b": "2024-02-29", "c": "10.0.0.0/8", "d": "web-1", "e": "aGk=", "f": "?"}
    assert format_errors(ok, s) == []
    bad = {"a": "yesterday", "b": "2023-02-29", "c": "10.0.0.0", "d": "Web", "e": "!!", "f": "?"}
    assert [e.path for e in format_errors(bad, s)] == ["a", "b", "c", "d", "e"]  # unknown formats are stripped
    assert str(format_errors({"a": "x"}, s)[0]) == 'a: Invalid value: "x": a in body must be of type date-time: "x"'
