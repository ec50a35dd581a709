"""Upstream's API schemas of one Kubernetes release (v1.34 … v1.37), loaded lazily from the
``kubernetes-validate`` package, and the checks a Kubernetes API server's decoder makes with them
(unknown fields, wrong JSON types).

Every function takes ``version=(major, minor)``: the release whose API the caller emulates
(``FeatureGate.emulated_version``; None = :data:`DEFAULT_VERSION`, 1.37). A v1.37 dump's
``spec.schedulingGroup`` or ``status.declaredFeatures`` is a known field at 1.37 and an unknown one
at 1.34, as for the real API server of each release (:func:`schema_version` maps a version to the
package's directory; each version's data is parsed once and cached for the process).

``kubernetes-validate`` ships the OpenAPI definitions of every built-in kind converted to JSON
Schema (draft 2020-12): ``kubernetes-json-schema/v1.37.0-local/_definitions.json`` holds
``{"$defs": {<definition name>: <schema>}}`` with ``$ref: "#/$defs/<name>"`` references and
upstream's OpenAPI extensions kept verbatim (``x-kubernetes-patch-merge-key``,
``x-kubernetes-patch-strategy``, ``x-kubernetes-group-version-kind``, ``x-kubernetes-list-type``,
...). Nullable types are spelled ``"type": ["string", "null"]``.

The file is 1.5 MB (v1.34) to 1.9 MB (v1.37); it is located through the import system (never a hard-coded path): the
package's spec (``importlib.util.find_spec``, which does not run ``kubernetes_validate``'s own
code and its ~80 ms of imports) and, failing that, :mod:`importlib.resources`. It is parsed
once on first use and cached for the life of the process.

Public API::

    definitions(version=None) -> dict[str, dict]   # definition name -> schema (do not mutate)
    definition_for_gvk(group, version, kind, *, api=None) -> str | None
    known_kind(api_version, kind, version=None) -> bool   # "v1"/"apps/v1" + kind exist upstream
    resolve(schema, version=None) -> dict | None   # follow a "$ref" (one level; refs do not chain)
    gvks(version=None) -> dict[tuple[str, str, str], str]   # (group, version, kind) -> definition name
    unknown_field_paths(gvk, obj, version=None) / unknown_fields(...)   # strict decoding's unknown fields
    prune_unknown_fields(gvk, obj, version=None) -> list[str]   # drop them, as non-strict decoding does
    duplicate_fields(body) -> list[str]            # strict decoding's "duplicate field" paths
    decode_error(gvk, obj, version=None) -> str | None   # the decoder's first type error

Pure functions over plain dicts, shared by the box (``kubesched.apiserver``) and the simulator's
input checks.

Upstream source of the data: ``api/openapi-spec/v3`` of kubernetes/kubernetes v1.34 … v1.37.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec
import orjson

__all__ = [
    "DEFAULT_VERSION",
    "SCHEMA_VERSION",
    "SUPPORTED_VERSIONS",
    "decode_error",
    "definition_for_gvk",
    "definitions",
    "duplicate_fields",
    "gvks",
    "known_kind",
    "prune_unknown_fields",
    "ref_name",
    "resolve",
    "schema_version",
    "unknown_field_paths",
    "unknown_fields",
]

Version = tuple[int, int]

#: The API releases served (``--emulated-version`` 1.34 … 1.37) and the default (kubesched's
#: binary version, ``kubesched.features.BINARY_VERSION``).
SUPPORTED_VERSIONS: tuple[Version, ...] = ((1, 34), (1, 35), (1, 36), (1, 37))
DEFAULT_VERSION: Version = (1, 37)
_REF_PREFIX = "#/$defs/"


def schema_version(version: Version | None = None) -> str:
    """The directory of ``kubernetes-validate``'s schemas for an API release:
    ``(1, 37)`` → ``"v1.37.0-local"``. Raises ValueError outside :data:`SUPPORTED_VERSIONS`."""
    v = DEFAULT_VERSION if version is None else (int(version[0]), int(version[1]))
    if v not in SUPPORTED_VERSIONS:
        raise ValueError(f"no API schemas for version {v[0]}.{v[1]} (have 1.34 … 1.37)")
    return f"v{v[0]}.{v[1]}.0-local"


#: The directory read for the default version (kept for callers that print it).
SCHEMA_VERSION = schema_version()


def _definitions_bytes(directory: str) -> bytes:
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            path = Path(location) / "kubernetes-json-schema" / directory / "_definitions.json"
            if path.is_file():
                return path.read_bytes()
    root = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema" / directory
    return (root / "_definitions.json").read_bytes()


def _v(version: Version | None) -> Version:
    return DEFAULT_VERSION if version is None else (int(version[0]), int(version[1]))


@lru_cache(maxsize=len(SUPPORTED_VERSIONS))
def _definitions(version: Version) -> dict[str, dict[str, Any]]:
    data = msgspec.json.decode(_definitions_bytes(schema_version(version)))
    defs: dict[str, dict[str, Any]] = data["$defs"]
    return defs


def definitions(version: Version | None = None) -> dict[str, dict[str, Any]]:
    """All definitions of the API release ``version`` by name (``io.k8s.api.core.v1.Pod`` ...).
    Cached; never mutate."""
    return _definitions(_v(version))


def gvks(version: Version | None = None) -> dict[tuple[str, str, str], str]:
    """``(group, version, kind)`` → definition name, from ``x-kubernetes-group-version-kind``
    (see :func:`_gvks`)."""
    return _gvks(_v(version))


@lru_cache(maxsize=len(SUPPORTED_VERSIONS))
def _gvks(version: Version) -> dict[tuple[str, str, str], str]:
    """``(group, version, kind)`` → definition name, from ``x-kubernetes-group-version-kind``.

    Several definitions list the same GVK only for meta types (``DeleteOptions``,
    ``WatchEvent``); a definition whose name ends with ``.<version>.<kind>`` wins, so
    ``("", "v1", "Pod")`` maps to ``io.k8s.api.core.v1.Pod``.
    """
    out: dict[tuple[str, str, str], str] = {}
    for name, schema in _definitions(version).items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            if key not in out or name.endswith(f".{key[1]}.{key[2]}"):
                out[key] = name
    return out


def definition_for_gvk(group: str, version: str, kind: str, *, api: Version | None = None) -> str | None:
    """The definition name of a kind, or None when upstream's release ``api`` (default 1.37) has
    no such kind (``version`` is the kind's API version, ``v1``/``v1beta1``)."""
    return gvks(api).get((group, version, kind))


def known_kind(api_version: str, kind: str, version: Version | None = None) -> bool:
    """Whether ``apiVersion``/``kind`` (``"v1"``, ``"apps/v1"``) name a built-in kind of the API
    release ``version`` (what kubectl's ``no matches for kind "Pood" in version "v1"`` is about)."""
    group, _, gv = api_version.rpartition("/")
    return definition_for_gvk(group, gv, kind, api=version) is not None


def ref_name(schema: dict[str, Any]) -> str | None:
    """The definition a ``{"$ref": "#/$defs/X"}`` schema points to, else None."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        return ref[len(_REF_PREFIX) :]
    return None


def resolve(schema: dict[str, Any] | None, version: Version | None = None) -> dict[str, Any] | None:
    """Follow a ``$ref`` (also one wrapped in ``allOf: [ {$ref} ]``) into the definitions of the
    API release ``version``; other schemas pass through."""
    if schema is None:
        return None
    all_of = schema.get("allOf")
    if all_of and isinstance(all_of, list):
        schema = all_of[0]
    name = ref_name(schema)
    if name is not None:
        return definitions(version).get(name)
    return schema


# ---- unknown fields (strict decoding) -------------------------------------------------------------


def unknown_field_paths(gvk: tuple[str, str, str], obj: Any, version: Version | None = None) -> list[str]:
    """Paths (``spec.foo``, ``spec.containers[0].imagee``) of the fields of ``obj`` that the
    kind ``gvk`` = ``(group, version, kind)`` does not define in the API release ``version``, in
    document order. An unknown kind yields ``[]`` (nothing to check against)."""
    v = _v(version)
    name = definition_for_gvk(*gvk, api=v)
    if name is None or not isinstance(obj, dict):
        return []
    out: list[str] = []
    _walk_node(_root_node(name, v), obj, "", out)
    return out


def unknown_fields(gvk: tuple[str, str, str], obj: Any, version: Version | None = None) -> list[str]:
    """The strict decoder's messages for ``obj``: ``unknown field "spec.foo"`` per field."""
    return [f'unknown field "{p}"' for p in unknown_field_paths(gvk, obj, version)]


class _Node:
    """A schema node compiled for the walk: ``props`` (field → node), ``extra`` (the
    ``additionalProperties`` node), ``free`` (any key allowed), ``items`` (list element node)."""

    __slots__ = ("extra", "free", "items", "props")

    def __init__(self) -> None:
        self.props: dict[str, _Node | None] | None = None
        self.extra: _Node | None = None
        self.free = False
        self.items: _Node | None = None


_COMPILED: dict[int, _Node | None] = {}


def _compile(schema: dict[str, Any] | None, version: Version) -> _Node | None:
    """Compile (once per schema object; each version's definitions are distinct objects, cached
    for the process) into a node, or None for leaves that accept anything (scalars, free-form
    objects)."""
    schema = resolve(schema, version)
    if schema is None:
        return None
    key = id(schema)
    if key in _COMPILED:
        return _COMPILED[key]
    node = _Node()
    _COMPILED[key] = node  # before recursing: definitions are recursive (JSONSchemaProps)
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        node.free = True
        return node
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    items = schema.get("items")
    if isinstance(props, dict):
        node.props = {k: _compile(v, version) for k, v in props.items()}
        if isinstance(extra, dict):
            node.extra = _compile(extra, version)
            node.free = node.extra is None
        elif extra is True:
            node.free = True
    elif isinstance(extra, dict):
        node.extra = _compile(extra, version)
        node.free = node.extra is None
    else:
        node.free = True
    if isinstance(items, dict):
        node.items = _compile(items, version)
    if node.props is None and node.extra is None and node.items is None:
        _COMPILED[key] = None  # a leaf: nothing below it to check
        return None
    return node


# ---- clean ``spec`` subtrees (pods of one template share theirs) ---------------------------------

#: (schema node or Go type id, enclosing struct, the subtree's exact JSON) of ``spec`` subtrees found
#: without unknown fields / decoding errors; a subtree is looked up by its bytes only, so equal
#: JSON gets the equal answer (the walks read nothing but the subtree and the schema)
_CLEAN: set[tuple[int, str, bytes]] = set()
_CLEAN_MAX = 1024
#: larger subtrees are walked every time (the set stays under ~16 MiB)
_CLEAN_MAX_BYTES = 16 << 10


def _clean_key(schema_id: int, struct: str, value: dict[str, Any]) -> tuple[int, str, bytes] | None:
    try:
        raw = orjson.dumps(value)
    except TypeError:  # YAML-decoded keys that are not strings, dates, …
        return None
    return (schema_id, struct, raw) if len(raw) <= _CLEAN_MAX_BYTES else None


def _remember_clean(key: tuple[int, str, bytes]) -> None:
    if len(_CLEAN) >= _CLEAN_MAX:
        _CLEAN.clear()
    _CLEAN.add(key)


@lru_cache(maxsize=4096)
def _root_node(name: str, version: Version) -> _Node | None:
    """The compiled node of the definition ``name`` (a kind's root)."""
    return _compile(_definitions(version)[name], version)


def _walk_node(node: _Node | None, value: Any, path: str, out: list[str], prune: bool = False) -> None:
    if node is None:
        return
    if path == "spec" and value.__class__ is dict:  # a top-level spec: once per distinct spec
        key = _clean_key(id(node), "", value)
        if key is not None and key in _CLEAN:
            return
        n = len(out)
        _walk_body(node, value, path, out, prune)
        if key is not None and len(out) == n:
            _remember_clean(key)
        return
    _walk_body(node, value, path, out, prune)


def _walk_body(node: _Node, value: Any, path: str, out: list[str], prune: bool) -> None:
    if isinstance(value, dict):
        props = node.props
        if props is not None:
            drop = []
            for key, sub in value.items():
                if key in props:
                    child = props[key]
                    if child is not None:
                        _walk_node(child, sub, f"{path}.{key}" if path else key, out, prune)
                elif node.extra is not None:
                    _walk_node(node.extra, sub, f"{path}.{key}" if path else key, out, prune)
                elif not node.free:
                    out.append(f"{path}.{key}" if path else key)
                    drop.append(key)
            if prune:
                for key in drop:
                    del value[key]
        elif node.extra is not None:
            for key, sub in value.items():
                _walk_node(node.extra, sub, f"{path}.{key}" if path else key, out, prune)
    elif isinstance(value, list) and node.items is not None:
        for i, sub in enumerate(value):
            _walk_node(node.items, sub, f"{path}[{i}]", out, prune)


def prune_unknown_fields(gvk: tuple[str, str, str], obj: Any, version: Version | None = None) -> list[str]:
    """Remove (in place) the fields :func:`unknown_field_paths` reports — what decoding into the
    Go types and encoding back does to them when the request did not ask for strict validation —
    and return their paths."""
    v = _v(version)
    name = definition_for_gvk(*gvk, api=v)
    if name is None or not isinstance(obj, dict):
        return []
    out: list[str] = []
    _walk_node(_root_node(name, v), obj, "", out, prune=True)
    return out


# ---- type errors (what decoding into the Go types rejects) ---------------------------------------

_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_TIME = ("io.k8s.apimachinery.pkg.apis.meta.v1.Time", "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime")
_FREE = ("io.k8s.apimachinery.pkg.runtime.RawExtension", "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
         "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON")


class _T:
    """A field's Go type for decoding: ``kind`` in struct/array/map/string/bool/int/float/
    quantity/any, the Go type name, and the parts needed to walk into it."""

    __slots__ = ("elem", "go", "kind", "props", "struct")

    def __init__(self, kind: str, go: str) -> None:
        self.kind = kind
        self.go = go
        self.props: dict[str, _T] = {}
        self.struct = ""
        self.elem: _T | None = None


_TYPES: dict[tuple[Version, str], _T] = {}


def _def_go_name(name: str) -> str:
    parts = name.split(".")
    return f"{parts[-2]}.{parts[-1]}"


def _type_of(schema: dict[str, Any], version: Version) -> _T:
    ref = ref_name(schema)
    if ref is None and isinstance(schema.get("allOf"), list) and schema["allOf"]:
        ref = ref_name(schema["allOf"][0])
    if ref is not None:
        return _type_of_def(ref, version)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    fmt = schema.get("format")
    if t == "array":
        items = schema.get("items")
        elem = _type_of(items, version) if isinstance(items, dict) else _T("any", "interface {}")
        node = _T("array", "[]" + elem.go)
        node.elem = elem
        return node
    if t == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            elem = _type_of(extra, version)
            go = "v1.ResourceList" if elem.kind == "quantity" else f"map[string]{elem.go}"
            node = _T("map", go)
            node.elem = elem
            return node
        return _T("any", "map[string]interface {}")
    if t == "string":
        return _T("any" if fmt == "byte" else "string", "[]uint8" if fmt == "byte" else "string")
    if t == "boolean":
        return _T("bool", "bool")
    if t == "integer":
        return _T("int", fmt if fmt in ("int32", "int64") else "int")
    if t == "number":
        return _T("float", "float64")
    return _T("any", "interface {}")


def _type_of_def(name: str, version: Version) -> _T:
    key = (version, name)
    if key in _TYPES:
        return _TYPES[key]
    if name == _QUANTITY:
        node = _T("quantity", "resource.Quantity")
    elif name in _FREE or name == _INT_OR_STRING or name in _TIME:
        node = _T("any", _def_go_name(name))
    else:
        schema = _definitions(version).get(name) or {}
        props = schema.get("properties")
        if not isinstance(props, dict):
            node = _T("any", _def_go_name(name))
        else:
            node = _T("struct", _def_go_name(name))
            node.struct = name.split(".")[-1]
            _TYPES[key] = node  # before recursing: definitions are recursive
            node.props = {k: _type_of(v, version) for k, v in props.items() if isinstance(v, dict)}
            return node
    _TYPES[key] = node
    return node


_INT32_LIMIT = 1 << 31
_INT64_LIMIT = 1 << 63


def _go_number(v: float | int) -> str:
    """A JSON number as Go's encoding/json prints a float64 (``1e+30``), or the integer's digits."""
    if isinstance(v, int):
        return str(v)
    return repr(v) if abs(v) >= 1e21 else str(int(v))


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def _mismatch(value: str, t: _T, struct: str, path: str) -> str:
    where = f"Go struct field {struct}.{path}" if struct else "Go value"
    return f"json: cannot unmarshal {value} into {where} of type {t.go}"


def _check(t: _T, v: Any, struct: str, path: str) -> str | None:
    """The first decoding error of ``v`` as Go type ``t`` (``struct``/``path``: the enclosing
    Go struct and the JSON field path encoding/json names in its error)."""
    if v is None or t.kind == "any":
        return None
    kind = t.kind
    if path == "spec" and kind == "struct" and v.__class__ is dict:  # a top-level spec: once per distinct spec
        key = _clean_key(id(t), struct, v)
        if key is not None and key in _CLEAN:
            return None
        err = _check_struct(t, v, path)
        if err is None and key is not None:
            _remember_clean(key)
        return err
    if kind == "quantity":
        if isinstance(v, (bool, dict, list)):
            return "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        from kubesched.api.validation import quantity_parse_error

        return quantity_parse_error(v)
    if kind == "struct":
        if not isinstance(v, dict):
            return _mismatch(_json_kind(v), t, struct, path)
        return _check_struct(t, v, path)
    if kind == "array":
        if not isinstance(v, list):
            return _mismatch(_json_kind(v), t, struct, path)
        assert t.elem is not None
        elem = t.elem
        if elem.kind == "string" and all(item.__class__ is str or item is None for item in v):
            return None
        for item in v:
            err = _check(elem, item, struct, path)
            if err:
                return err
        return None
    if kind == "map":
        if not isinstance(v, dict):
            return _mismatch(_json_kind(v), t, struct, path)
        assert t.elem is not None
        if t.elem.kind == "string" and all(item.__class__ is str or item is None for item in v.values()):
            return None
        for item in v.values():
            err = _check(t.elem, item, struct, path)
            if err:
                return err
        return None
    if kind == "string":
        ok = isinstance(v, str)
    elif kind == "bool":
        ok = isinstance(v, bool)
    elif kind == "int":
        if isinstance(v, float) and not isinstance(v, bool) and not v.is_integer():
            return _mismatch(f"number {v!r}", t, struct, path)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        if ok:
            # encoding/json: a number outside the Go type's range does not decode (strconv.ParseInt
            # ErrRange): 1e30 or 2^63 for an int64 (terminationGracePeriodSeconds), 2^31 for an int32
            limit = _INT32_LIMIT if t.go == "int32" else _INT64_LIMIT
            if not -limit <= v < limit:
                return _mismatch(f"number {_go_number(v)}", t, struct, path)
    else:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    if ok:
        return None
    return _mismatch(_json_kind(v), t, struct, path)


def _check_struct(t: _T, v: dict[str, Any], path: str) -> str | None:
    """:func:`_check` of an object ``v`` as the Go struct ``t``: its fields in document order."""
    for key, sub in v.items():
        ft = t.props.get(key)
        if ft is None or sub is None:
            continue
        fk = ft.kind
        if fk == "any" or (fk == "string" and sub.__class__ is str) or (fk == "bool" and sub.__class__ is bool) \
                or (fk == "int" and sub.__class__ is int and -_INT32_LIMIT <= sub < _INT32_LIMIT):
            continue
        err = _check(ft, sub, t.struct, f"{path}.{key}" if path else key)
        if err:
            return err
    return None


def decode_error(gvk: tuple[str, str, str], obj: Any, version: Version | None = None) -> str | None:
    """The first error decoding ``obj`` into the kind's Go type raises, as kube-apiserver's
    decoder (``sigs.k8s.io/json``, encoding/json messages) reports it — ``json: cannot unmarshal
    string into Go struct field PodSpec.spec.containers of type []v1.Container``, or a
    quantity's parse error — else None. ``null`` is accepted anywhere (it decodes to the zero
    value). The API server answers 400 with :func:`decode_error_message`-style text
    ``<Kind> in version "<v>" cannot be handled as a <Kind>: <error>``. ``version``: the API
    release (default 1.37)."""
    v = _v(version)
    name = definition_for_gvk(*gvk, api=v)
    if name is None:
        return None
    return _check(_type_of_def(name, v), obj, "", "")


# ---- duplicate fields (strict decoding) -----------------------------------------------------------


class _Pairs(list[tuple[str, Any]]):
    """An object's (key, value) pairs in document order, duplicates kept."""


def _dup_walk(value: Any, path: str, out: list[str]) -> None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, sub in value:
            child = f"{path}.{key}" if path else key
            if key in seen:
                out.append(child)
            seen.add(key)
            _dup_walk(sub, child, out)
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _dup_walk(sub, f"{path}[{i}]", out)


def duplicate_fields(body: bytes | str) -> list[str]:
    """Paths of keys repeated within one JSON object of ``body`` (document order), which strict
    decoding reports as ``duplicate field "spec.replicas"``. The body must be JSON (kubectl
    sends YAML manifests converted to JSON, duplicates kept); a body that does not parse gives
    ``[]`` (decoding reports that). Parses with the stdlib (key order and repeats are kept),
    so call it only when strict or warn field validation is asked for."""
    import json

    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        tree = json.loads(text, object_pairs_hook=_Pairs)
    except ValueError:
        return []
    out: list[str] = []
    _dup_walk(tree, "", out)
    return out
