"""Reading Kubernetes manifests (YAML or JSON) as raw documents, with their location.

This module knows nothing about what a Pod or a Node *means*: it turns files into
:class:`RawObject` values — ``kind``, ``apiVersion``, the whole parsed object as a
``dict``, and where it came from (``"path:line"``) — so that every later error
(a bad quantity, a dangling node name, a duplicate) can point at the file and line
the user has to fix.

Rules, in the order they are applied:

* Each path is a file or a directory. A directory is walked recursively in sorted
  order; only files ending in ``.yaml``, ``.yml`` or ``.json`` are read, and files or
  directories whose name starts with ``.`` are ignored. A directory holding no such
  file is an error (a mistyped directory would otherwise silently load nothing).
  A file named explicitly is read whatever its extension (YAML, or JSON when it ends
  in ``.json``). ``-`` reads standard input. The same file reached twice (e.g. a
  directory and a file inside it) is read once.
* YAML files may hold several documents separated by ``---``; empty documents (or
  documents holding only comments) are skipped. Timestamps are kept as strings, as
  the Kubernetes API does, and a mapping with the same key twice is an error (as in
  ``kubectl``), instead of PyYAML's silent "last one wins".
* A JSON file holds one object (possibly a List).
* ``kind: List`` and typed lists (``PodList``, ``NodeList``, …: a kind ending in
  ``List`` with an ``items`` array) are expanded into their items, recursively. Items
  of a typed list that omit ``kind``/``apiVersion`` (as API list responses do) inherit
  them from the list (``PodList`` → ``Pod``). Each item's source is the item's own line.
* Every object must be a mapping with a non-empty string ``kind``, ``apiVersion`` and
  ``metadata.name`` (``generateName`` is not supported).
* Namespaced kinds without ``metadata.namespace`` (or with an empty one) get
  ``"default"`` written into ``data["metadata"]["namespace"]``, as ``kubectl apply``
  would do for the default context. Kinds listed in :data:`CLUSTER_SCOPED_KINDS` are
  left untouched; every other kind (including unknown custom resources) is treated as
  namespaced.

Errors are raised as :class:`~kubesched.errors.ManifestError` whose ``path`` is
``file:line``: exactly one readable line, never a traceback.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import msgspec
import orjson
import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from kubesched.api.yamllimits import EXCESSIVE_ALIASING, excessive_aliasing
from kubesched.errors import ManifestError

__all__ = [
    "CLUSTER_SCOPED_KINDS",
    "MANIFEST_EXTENSIONS",
    "RawObject",
    "check_duplicates",
    "is_namespaced",
    "dump_yaml_all",
    "load_manifests",
    "locate",
    "encode_json",
    "parse_manifest_text",
    "write_list",
]

#: File extensions read when walking a directory.
MANIFEST_EXTENSIONS: tuple[str, ...] = (".yaml", ".yml", ".json")

#: Built-in kinds that are not namespaced (``kubectl api-resources --namespaced=false``).
CLUSTER_SCOPED_KINDS: frozenset[str] = frozenset({
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterTrustBundle",
    "ComponentStatus",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "DeviceClass",
    "DeviceTaintRule",
    "FlowSchema",
    "IngressClass",
    "IPAddress",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "ResourceSlice",
    "RuntimeClass",
    "SelfSubjectAccessReview",
    "SelfSubjectReview",
    "SelfSubjectRulesReview",
    "ServiceCIDR",
    "StorageClass",
    "StorageVersion",
    "StorageVersionMigration",
    "SubjectAccessReview",
    "TokenReview",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
    "VolumeAttributesClass",
})


def is_namespaced(kind: str) -> bool:
    """Whether objects of ``kind`` live in a namespace (unknown kinds: yes)."""
    return kind not in CLUSTER_SCOPED_KINDS


@dataclass(frozen=True, slots=True, eq=False)
class RawObject:
    """One Kubernetes object as parsed, with its location.

    ``data`` is the whole object (a plain ``dict``); ``source`` is ``"path:line"`` of the
    object's first line; ``index`` is its position in the overall input order.
    """

    kind: str
    api_version: str
    data: dict
    source: str
    index: int
    file: str = ""
    """The file (``<stdin>`` for standard input) and where in it: the document's index among
    the file's non-empty documents and the item indices through nested Lists — what
    :func:`locate` needs to find a field's line on demand."""
    doc: int = -1
    items: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return self.data["metadata"]["name"]

    @property
    def namespace(self) -> str | None:
        """The namespace, or ``None`` for cluster-scoped kinds."""
        return self.data["metadata"].get("namespace") if is_namespaced(self.kind) else None

    @property
    def key(self) -> tuple[str, str | None, str]:
        """``(kind, namespace, name)``: what must be unique across the input."""
        return (self.kind, self.namespace, self.name)

    def describe(self) -> str:
        """``Pod web/frontend-x`` or ``Node node-1``."""
        ns = self.namespace
        return f"{self.kind} {ns}/{self.name}" if ns is not None else f"{self.kind} {self.name}"


# --------------------------------------------------------------------------- YAML loader

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(_BaseLoader):
    """Safe loader that keeps timestamps as strings and rejects duplicate keys."""

    def construct_mapping(self, node: Node, deep: bool = False) -> dict:
        if isinstance(node, MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, ScalarNode) and key_node.tag != _MERGE_TAG:
                    k = (key_node.tag, key_node.value)
                    if k in seen:
                        raise ConstructorError(
                            "while constructing a mapping", node.start_mark,
                            f"duplicate key {key_node.value!r}", key_node.start_mark)
                    seen.add(k)
        out = super().construct_mapping(node, deep=deep)
        if any(k.__class__ is not str for k in out):
            out = {go_yaml_key(k): v for k, v in out.items()}
        return out


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP_TAG]
    for ch, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
}

# ---- plain scalars as kubectl reads them ------------------------------------------------------------
# kubectl decodes YAML with sigs.k8s.io/yaml, i.e. its fork of go-yaml v2 (sigs.k8s.io/yaml@v1.4.0
# goyaml.v2/resolve.go:87 ``resolve``), not PyYAML's YAML 1.1 resolver. The differences that
# matter for manifests: a bare ``=`` is the string "=" (PyYAML: the ``!!value`` tag, which no
# safe constructor handles), ``y``/``Y``/``n``/``N`` are booleans, ``0o17`` and ``1_000`` are
# ints, ``1e3`` is a float, and sexagesimal ``1:20`` is a string. ``0644`` is octal (420) in
# both. Timestamps stay strings (see above).

_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
#: resolve.go:37 ``resolveMapList``: the scalars looked up by their exact text.
_GO_MAP: dict[str, tuple[str, Any]] = {
    **{s: (_BOOL_TAG, True) for s in ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")},
    **{s: (_BOOL_TAG, False) for s in ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")},
    **{s: ("tag:yaml.org,2002:null", None) for s in ("", "~", "null", "Null", "NULL")},
    **{s: (_FLOAT_TAG, math.nan) for s in (".nan", ".NaN", ".NAN")},
    **{s: (_FLOAT_TAG, math.inf) for s in (".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF")},
    **{s: (_FLOAT_TAG, -math.inf) for s in ("-.inf", "-.Inf", "-.INF")},
}
#: ``strconv.ParseInt(plain, 0, 64)``'s syntax (underscores already removed).
_GO_INT = re.compile(r"[-+]?(?:0[bB][01]+|0[oO][0-7]+|0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)\Z")
#: resolve.go:85 ``yamlStyleFloat``.
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_GO_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?\Z")


def _go_int(plain: str) -> int | None:
    """``ParseInt(plain, 0, 64)``, else ``ParseUint(plain, 0, 64)``; None when neither parses."""
    if not _GO_INT.match(plain):
        return None
    sign = -1 if plain[0] == "-" else 1
    digits = plain.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0" and digits[1].isdigit():
        v = sign * int(digits, 8)
    else:
        v = sign * int(digits, 0)
    if -(1 << 63) <= v < (1 << 64) and not (v < 0 and plain[0] != "-"):
        return v
    return None


def go_yaml_scalar(text: str) -> tuple[str, Any]:
    """The tag and value go-yaml v2 gives a plain (unquoted, untagged) scalar (resolve.go:87)."""
    hit = _GO_MAP.get(text)
    if hit is not None:
        return hit
    first = text[:1]
    if first == ".":
        if _GO_DOT_FLOAT.match(text):
            return _FLOAT_TAG, float(text)
    elif first and (first.isdigit() and first.isascii() or first in "+-"):
        plain = text.replace("_", "")
        if plain:
            v = _go_int(plain)
            if v is not None:
                return _INT_TAG, v
            if _GO_FLOAT.match(plain):
                return _FLOAT_TAG, float(plain)
    return _STR_TAG, text


def _resolve_go(self: Any, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
    if kind is ScalarNode and implicit[0] and value != "<<":
        return go_yaml_scalar(value)[0]
    return _BaseLoader.resolve(self, kind, value, implicit)


def go_yaml_key(k: Any) -> Any:
    """A mapping key as sigs.k8s.io/yaml turns it into a JSON key (yaml.go:213
    convertToJSONableObject): booleans ``"true"``/``"false"``, integers in decimal, floats as
    ``FormatFloat(f, 'g', -1, 32)`` (``.inf``, ``-.inf``, ``.nan``); strings as they are. Others
    (null, lists: unsupported upstream) are returned unchanged for the caller to report."""
    if k.__class__ is str:
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, int):
        return str(k)
    if isinstance(k, float):
        if math.isnan(k):
            return ".nan"
        if math.isinf(k):
            return ".inf" if k > 0 else "-.inf"
        import numpy as np

        sci = np.format_float_scientific(np.float32(k), unique=True, trim="-")
        mant, _, exp_text = sci.partition("e")
        exp = int(exp_text)
        if exp < -4 or exp >= 6:  # strconv 'g' with the shortest digits: %e outside [-4, 6)
            return f"{mant}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
        return str(np.format_float_positional(np.float32(k), unique=True, trim="-"))
    return k


def _go_json_type(v: Any) -> str:
    """encoding/json's name for the JSON type of ``v`` in an UnmarshalTypeError."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, dict):
        return "object"
    return "array" if isinstance(v, list) else "string"


def _construct_go(loader: Any, node: ScalarNode) -> Any:
    tag, value = go_yaml_scalar(loader.construct_scalar(node))
    if tag == _INT_TAG and node.tag == _FLOAT_TAG:
        return float(value)  # resolve.go:97: an int is accepted as a !!float
    if tag != node.tag:
        raise ConstructorError(None, None, f"cannot decode {tag.rsplit(':', 1)[-1]} `{node.value}` as a "
                               f"{node.tag.rsplit(':', 1)[-1]}", node.start_mark)
    return value


_Loader.resolve = _resolve_go
for _tag in (_INT_TAG, _FLOAT_TAG, _BOOL_TAG):
    _Loader.add_constructor(_tag, _construct_go)

class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Safe dumper that never writes anchors/aliases, even for shared sub-objects, and quotes every
    string kubectl's go-yaml v2 would read as something else (``y``/``n``/``Y``/``N`` as booleans,
    as sigs.k8s.io/yaml's marshaller quotes them), so the output reads back as written."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        tag: str = super().resolve(kind, value, implicit)
        if kind is ScalarNode and implicit[0] and tag == _STR_TAG and isinstance(value, str):
            go_tag = go_yaml_scalar(value)[0]
            if go_tag != _STR_TAG:
                return go_tag  # not the node's tag: the emitter quotes the string
        return tag


# --------------------------------------------------------------------------- loading

class _Collector:
    """Turns parsed documents into RawObjects, numbering them in input order."""

    def __init__(self, configs: list[RawObject] | None = None) -> None:
        self.out: list[RawObject] = []
        self.configs = configs

    def add(self, data: Any, path: str, line: int, node: Node | None,
            item_lines: dict[int, list[int]] | None = None, doc: int = -1,
            items_at: tuple[int, ...] = ()) -> None:
        """Validate one document (expanding Lists) and append its objects.

        ``node`` (full YAML path) or ``item_lines`` (fast YAML path and JSON: ``id(items
        list)`` → line of each item) locate the items of Lists.
        """
        where = f"{path}:{line}"
        if not isinstance(data, dict):
            raise ManifestError(
                f"expected a Kubernetes object (a mapping), got {_type_name(data)}", where)
        kind = data.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ManifestError("object has no kind", where)
        api_version = data.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise ManifestError(f"{kind} object has no apiVersion", where)

        items = data.get("items")
        if kind == "List" or (kind.endswith("List") and "items" in data):
            if items is None:
                return
            if not isinstance(items, list):
                raise ManifestError(f"{kind}.items must be a list, got {_type_name(items)}", where)
            known = item_lines.get(id(items)) if item_lines else None
            lines = known if known is not None and len(known) == len(items) \
                else _item_lines(node, len(items), line)
            nodes = _item_nodes(node, len(items))
            item_kind = kind[:-4] if kind != "List" else None
            for i, item in enumerate(items):
                if item_kind is not None and isinstance(item, dict):
                    item.setdefault("kind", item_kind)
                    item.setdefault("apiVersion", api_version)
                self.add(item, path, lines[i], nodes[i] if nodes else None, item_lines, doc, (*items_at, i))
            return

        if kind == SCHEDULER_CONFIG_KIND and self.configs is not None:
            self.configs.append(RawObject(kind, api_version, data, where, len(self.configs)))
            return
        meta = data.get("metadata")
        if meta is None:
            raise ManifestError(f"{kind} object has no metadata.name", where)
        if not isinstance(meta, dict):
            raise ManifestError(f"{kind} metadata must be a mapping, got {_type_name(meta)}", where)
        name = meta.get("name")
        if name is not None and not isinstance(name, str):
            # kubectl: a plain y/n/yes/no/true/... name is a YAML boolean (see go_yaml_scalar)
            raise ManifestError(f"json: cannot unmarshal {_go_json_type(name)} into Go struct field "
                                "ObjectMeta.metadata.name of type string", where)
        if not isinstance(name, str) or not name:
            extra = " (generateName is not supported)" if meta.get("generateName") else ""
            raise ManifestError(f"{kind} object has no metadata.name{extra}", where)
        if is_namespaced(kind):
            ns = meta.get("namespace")
            if ns is None or ns == "":
                meta["namespace"] = "default"
            elif not isinstance(ns, str):
                raise ManifestError(
                    f"{kind} {name}: metadata.namespace must be a string, got {_type_name(ns)}", where)
        self.out.append(RawObject(kind, api_version, data, where, len(self.out), path, doc, items_at))


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def _mapping_value_node(node: Node | None, key: str) -> Node | None:
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == key:
                return v
    return None


def _item_nodes(node: Node | None, n: int) -> list[Node] | None:
    seq = _mapping_value_node(node, "items")
    if isinstance(seq, SequenceNode) and len(seq.value) == n:
        return list(seq.value)
    return None


def _item_lines(node: Node | None, n: int, default: int) -> list[int]:
    nodes = _item_nodes(node, n)
    if nodes is None:
        return [default] * n
    return [x.start_mark.line + 1 for x in nodes]


def _yaml_error(err: yaml.YAMLError, path: str) -> ManifestError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    msg = f"invalid YAML: {problem}"
    if context and context not in ("while constructing a mapping",):
        msg += f" ({context})"
    line = mark.line + 1 if mark is not None else 1
    return ManifestError(msg, f"{path}:{line}")


class _Fallback(Exception):
    """The fast path met a YAML feature it does not handle (anchors, tags, merge keys...)."""


_ScalarEvent = yaml.events.ScalarEvent
_MappingStartEvent = yaml.events.MappingStartEvent
_MappingEndEvent = yaml.events.MappingEndEvent
_SequenceStartEvent = yaml.events.SequenceStartEvent
_SequenceEndEvent = yaml.events.SequenceEndEvent
_DocumentStartEvent = yaml.events.DocumentStartEvent
_StreamEndEvent = yaml.events.StreamEndEvent
_NULL_TAG = "tag:yaml.org,2002:null"
_PLAIN_RESOLVED_OK = frozenset({
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", _NULL_TAG,
})


def _parse_yaml_fast(text: str, path: str) -> list[tuple[Any, int, dict[int, list[int]]]]:
    """Build documents straight from parser events: (data, line, item lines) per document.

    About twice as fast as composing nodes and constructing them, because it skips the
    node tree and caches the resolution of plain scalars. Raises :class:`_Fallback` on
    anything unusual (anchors/aliases, explicit tags, merge keys, complex or duplicate
    keys), and the caller then re-reads the file with the full loader, which also
    produces the canonical error messages.
    """
    loader = _Loader(text)
    get_event = loader.get_event
    plain_cache: dict[str, Any] = {}
    resolve = loader.resolve
    constructors = loader.yaml_constructors
    docs: list[tuple[Any, int, dict[int, list[int]]]] = []
    try:
        while True:
            ev = get_event()
            cls = ev.__class__
            if cls is _StreamEndEvent:
                return docs
            if cls is not _DocumentStartEvent:
                continue  # StreamStart, DocumentEnd
            # one document: iterative build with an explicit stack
            root: Any = None
            root_line = 0
            item_lines: dict[int, list[int]] = {}  # id(an "items" list) → its items' lines
            stack: list[Any] = []        # open containers
            keys: list[Any] = []         # per open container: pending key (mappings) or _NO_KEY
            while True:
                ev = get_event()
                cls = ev.__class__
                if cls is _ScalarEvent:
                    if ev.anchor is not None or (ev.tag is not None and ev.tag != "!"):
                        raise _Fallback
                    value = ev.value
                    if ev.implicit[0]:
                        try:
                            obj = plain_cache[value]
                        except KeyError:
                            tag = resolve(ScalarNode, value, (True, False))
                            if tag not in _PLAIN_RESOLVED_OK:
                                raise _Fallback from None
                            obj = constructors[tag](loader, ScalarNode(tag, value))
                            plain_cache[value] = obj
                    else:
                        obj = value
                    line = ev.start_mark.line
                elif cls is _MappingStartEvent or cls is _SequenceStartEvent:
                    if ev.anchor is not None or (ev.tag is not None and ev.tag != "!"):
                        raise _Fallback
                    line = ev.start_mark.line
                    new: Any = {} if cls is _MappingStartEvent else []
                    if stack:
                        top = stack[-1]
                        if top.__class__ is dict:
                            k = keys[-1]
                            if k is _NO_KEY:
                                raise _Fallback  # complex key
                            if k in top:
                                raise _Fallback  # duplicate key: full loader reports it
                            top[k] = new
                            keys[-1] = _NO_KEY
                            if k == "items" and cls is _SequenceStartEvent:
                                item_lines[id(new)] = []
                        else:
                            if item_lines:
                                tracked = item_lines.get(id(top))
                                if tracked is not None:
                                    tracked.append(line + 1)
                            top.append(new)
                    else:
                        root, root_line = new, line
                    stack.append(new)
                    keys.append(_NO_KEY)
                    continue
                elif cls is _MappingEndEvent or cls is _SequenceEndEvent:
                    stack.pop()
                    keys.pop()
                    continue
                elif cls is yaml.events.DocumentEndEvent:
                    break
                else:
                    raise _Fallback  # AliasEvent
                # a scalar
                if stack:
                    top = stack[-1]
                    if top.__class__ is dict:
                        k = keys[-1]
                        if k is _NO_KEY:
                            if obj.__class__ is not str:
                                obj = go_yaml_key(obj)
                            if obj in top:
                                raise _Fallback
                            keys[-1] = obj
                        else:
                            top[k] = obj
                            keys[-1] = _NO_KEY
                    else:
                        if item_lines:
                            tracked = item_lines.get(id(top))
                            if tracked is not None:
                                tracked.append(line + 1)
                        top.append(obj)
                else:
                    root, root_line = obj, line
            if root is None:
                continue  # empty document
            docs.append((root, root_line + 1, item_lines))
    except TypeError:
        raise _Fallback from None  # e.g. an unhashable key
    finally:
        loader.dispose()


_NO_KEY = object()


def _parse_yaml(text: str, path: str, col: _Collector) -> None:
    docs = _parse_yaml_rs(text)
    if docs is None:
        try:
            docs = _parse_yaml_fast(text, path)
        except (_Fallback, yaml.YAMLError, RecursionError):
            _parse_yaml_full(text, path, col)
            return
    for i, (data, line, item_lines) in enumerate(docs):
        col.add(data, path, line, None, item_lines, i)


# The yaml-rs path (YAML 1.2 core schema) is taken only when the text holds no anchor, alias,
# tag, merge key or complex key ("&", "*", "!", "<<", "? " anywhere: a cheap substring test;
# flow collections as keys) and no plain scalar
# that kubectl's go-yaml v2 (see ``go_yaml_scalar``) reads differently in the commonest
# cases: y/n/yes/no/on/off booleans, 0-prefixed integers (``defaultMode: 0644``, ``00008``),
# ``0b`` integers and numbers with ``_``. Anything else goes through PyYAML (with go-yaml's
# resolver). Remaining differences (``.inf``, an out-of-range integer) are so rare in manifests
# that a full scan (seconds on a dump) is not spent.
_YAML11_SCALAR = (r"(?:y|Y|n|N|yes|no|on|off|Yes|No|On|Off|YES|NO|ON|OFF|[-+]?0[0-9_]+|[-+]?0b[01_]+"
                  r"|[-+]?[0-9_]*_[0-9_.]*)(?=[ \t]*(?:[,}\]#]|$))")
_YAML11_RISK = tuple(re.compile(re.escape(prefix) + _YAML11_SCALAR, re.M) for prefix in (": ", "- ", ", ", "["))
_PYYAML_ONLY = ("&", "*", "!", "<<", "\n%", "\n...", "? ", "?\n")


def _flow_key(text: str) -> bool:
    """Maybe a flow collection used as a mapping key (``[a, b]: c``): ``]:`` or ``}:`` on a line
    whose key starts with ``[`` or ``{``, or anywhere when a flow collection opens inside a flow
    collection (``{[``, ``, {``...). managedFields' ``k:{"name":"c"}:`` keys are neither."""
    if ("]:" in text or "}:" in text) and any(x in text for x in ("{[", "{{", ", [", ", {")):
        return True
    for sub in ("]:", "}:"):
        i = text.find(sub)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            head = text[start:i].lstrip(" \t-")
            if head[:1] in ("[", "{"):
                return True
            i = text.find(sub, i + 2)
    return False


def _needs_pyyaml(text: str) -> bool:
    if any(c in text for c in _PYYAML_ONLY) or text.startswith("%") or _flow_key(text):
        return True
    return any(rx.search(text) for rx in _YAML11_RISK)


_CONTENT_LINE = re.compile(r"^[ \t]*[^\s#]", re.M)


def _find_all(text: str, sub: str, begin: int, end: int) -> list[int]:
    out = []
    i = text.find(sub, begin, end)
    while i >= 0:
        out.append(i)
        i = text.find(sub, i + 1, end)
    return out


def _doc_bounds(text: str) -> list[tuple[int, int]] | None:
    """``(begin, end)`` offsets of the documents of a stream split at ``---`` lines (str.find:
    a multi-line regex is ~50x slower on a dump); None when a ``---`` line holds content."""
    marks = _find_all(text, "\n---", 0, len(text))
    if text.startswith("---"):
        marks.insert(0, -1)
    bounds: list[tuple[int, int]] = []
    begin = 0
    for m in marks:
        start = m + 1
        eol = text.find("\n", start)
        eol = len(text) if eol < 0 else eol
        rest = text[start + 3:eol]
        if rest and not rest[0].isspace():
            continue  # "----" or "---x": not a marker
        if rest.strip() and not rest.strip().startswith("#"):
            return None
        bounds.append((begin, start))
        begin = eol
    bounds.append((begin, len(text)))
    return bounds


def _top_item_lines(text: str, begin: int, end: int, first_line: int) -> list[int] | None:
    """Lines of the entries of a top-level ``items:`` block sequence written at column 0 (as
    kubectl prints a List) within ``text[begin:end]``; None when not written that way."""
    key = text.find("\nitems:", max(begin - 1, 0), end)
    if key < 0 and text.startswith("items:", begin):
        key = begin
    if key < 0:
        return None
    starts = sorted(_find_all(text, "\n- ", key, end) + _find_all(text, "\n-\n", key, end))
    lines: list[int] = []
    pos, cur = begin, first_line
    for i in starts:
        cur += text.count("\n", pos, i + 1)
        pos = i + 1
        lines.append(cur)
    return lines


def _parse_yaml_rs(text: str) -> list[tuple[Any, int, dict[int, list[int]]]] | None:
    """Documents through yaml-rs (Rust; ~2x the libyaml event path, ~15x PyYAML's pure-Python
    loader): ``(data, line, item lines)`` per non-empty document, or None when the text holds
    something where the result could differ from the PyYAML paths (see ``_needs_pyyaml``), the
    document or List item lines cannot be found by a line scan, or yaml-rs reports an error
    (the PyYAML paths then give the canonical message and line)."""
    try:
        import yaml_rs
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    if _needs_pyyaml(text):
        return None
    bounds = _doc_bounds(text)
    if bounds is None:
        return None
    docs: list[tuple[Any, int, dict[int, list[int]]]] = []
    pos, pos_line = 0, 1  # line numbers counted incrementally: files may hold thousands of documents
    for begin, end in bounds:
        first = _CONTENT_LINE.search(text, begin, end)
        if first is None:
            continue  # empty or comments only
        try:
            data = yaml_rs.loads(text[begin:end], parse_datetime=False)
        except Exception:  # noqa: BLE001 - yaml-rs raises its own types; PyYAML re-reads
            return None
        if data is None:
            continue
        begin_line = pos_line + text.count("\n", pos, begin)
        line = begin_line + text.count("\n", begin, first.start())
        pos, pos_line = first.start(), line
        item_lines: dict[int, list[int]] = {}
        items = data.get("items") if isinstance(data, dict) else None
        if isinstance(items, list) and items:
            lines = _top_item_lines(text, begin, end, begin_line)
            if lines is None or len(lines) != len(items):
                return None
            if any(isinstance(it, dict) and "items" in it for it in items):
                return None  # nested Lists: the PyYAML paths know their items' lines
            item_lines[id(items)] = lines
        docs.append((data, line, item_lines))
    try:  # a key that is no string (y:, 80:, true:): only the PyYAML paths render it as kubectl (go_yaml_key)
        orjson.dumps([d for d, _, _ in docs])
    except TypeError:
        return None
    return docs


def _check_aliasing(node: Node, path: str) -> None:
    """Reject a "billion laughs" document as the API server's YAML decoder does
    (:func:`kubesched.api.yamllimits.excessive_aliasing`)."""
    if excessive_aliasing(node):
        raise ManifestError(f"error converting YAML to JSON: {EXCESSIVE_ALIASING}",
                            f"{path}:{node.start_mark.line + 1}")


def _parse_yaml_full(text: str, path: str, col: _Collector) -> None:
    loader = _Loader(text)
    check = "*" in text
    doc = 0
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
                continue  # empty document
            if check:
                _check_aliasing(node, path)
            data = loader.construct_document(node)
            col.add(data, path, node.start_mark.line + 1, node, None, doc)
            doc += 1
    except yaml.YAMLError as err:
        raise _yaml_error(err, path) from None
    except RecursionError:
        raise ManifestError("document is nested too deeply", f"{path}:1") from None
    finally:
        loader.dispose()


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"\s*:|"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _json_item_lines(text: str) -> list[int]:
    """Line numbers of the objects in the top-level ``"items"`` array of a JSON object."""
    lines: list[int] = []
    depth = 0
    last_key: str | None = None
    in_items = False
    line, pos = 1, 0
    for m in _JSON_TOKEN.finditer(text):
        tok = m.group()
        c = tok[0]
        if c == '"':
            if depth == 1 and tok.endswith(":"):
                last_key = tok[: tok.rindex('"') + 1]
            continue
        if c in "[{":
            if c == "[" and depth == 1 and last_key == '"items"':
                in_items = True
            elif c == "{" and depth == 2 and in_items:
                start = m.start()
                line += text.count("\n", pos, start)
                pos = start
                lines.append(line)
            depth += 1
        else:
            depth -= 1
            if depth == 1 and in_items and c == "]":
                in_items = False
                last_key = None
    return lines


def _parse_json(text: str, path: str, col: _Collector) -> None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ManifestError(f"invalid JSON: {err.msg}", f"{path}:{err.lineno}") from None
    except RecursionError:
        raise ManifestError("document is nested too deeply", f"{path}:1") from None
    stripped = text.lstrip()
    if not stripped:
        return
    line = text.count("\n", 0, len(text) - len(stripped)) + 1
    item_lines = None
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        item_lines = {id(data["items"]): _json_item_lines(text)}
    col.add(data, path, line, None, item_lines, 0)


# --------------------------------------------------------------------------- fast JSON read

_JSON_WS = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


def _read_json_fast(raw: bytes, path: str, col: _Collector) -> bool:
    """Read a JSON file with msgspec (one C pass, no ``str`` copy of the file); ``False`` when
    the file needs :func:`_parse_json` instead, which then gives the same result (or the
    canonical error message): invalid JSON or UTF-8, what only the stdlib reads (``NaN``,
    ``1e400``, lone surrogates), nesting at Python's recursion limit, and Lists whose item lines
    the fast scan cannot place (see :func:`_json_item_lines_fast`). msgspec, unlike orjson,
    keeps integers beyond 64 bits exact, as the stdlib does.
    """
    body = raw[3:] if raw.startswith(_BOM) else raw
    try:
        data = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    stripped = body.lstrip(_JSON_WS)
    line = body.count(b"\n", 0, len(body) - len(stripped)) + 1
    item_lines = None
    if isinstance(data, dict) and isinstance(data.get("items"), list):
        lines = _json_item_lines_fast(body, len(data["items"]))
        if lines is None:
            return False
        item_lines = {id(data["items"]): lines}
    col.add(data, path, line, None, item_lines)
    return True


_ITEMS_KEY_REST = re.compile(rb" *: *\[[ \t\r]*\n")


def _json_item_lines_fast(body: bytes, n: int) -> list[int] | None:
    """Lines of the ``n`` items of the top-level ``"items"`` array of pretty-printed JSON (as
    ``kubectl get -o json`` writes it), or ``None`` when the layout is anything else.

    A line that starts (after spaces) with ``{`` is always structural, since JSON strings hold
    no raw newline; with consistent indentation the items are exactly the lines ``{`` at the
    indentation of the first one, between ``"items": [`` (the least indented such line) and the
    ``]`` at that key's indentation. The result is used only when it counts ``n`` items. Only
    ``bytes.find``/``count`` and one regex scan run over the file (C; no Python step per byte or
    line, one ``count`` call per item); when the document is on one line, so is every item.
    """
    if n == 0:
        return []
    core = len(body) - len(body.lstrip(_JSON_WS))
    if body.find(b"\n", core, len(body.rstrip(_JSON_WS))) < 0:  # the document is on one line
        return [body.count(b"\n", 0, core) + 1] * n
    key_indent: int | None = None
    start = 0
    pos = body.find(b'"items"')
    while pos >= 0:
        bol = body.rfind(b"\n", 0, pos) + 1
        rest = _ITEMS_KEY_REST.match(body, pos + 7)
        if rest is not None and body.count(b" ", bol, pos) == pos - bol \
                and (key_indent is None or pos - bol < key_indent):
            key_indent, start = pos - bol, rest.end() - 1
        pos = body.find(b'"items"', pos + 7)
    if key_indent is None:
        return None
    bol = start + 1
    indent = 0
    while body[bol + indent:bol + indent + 1] == b" ":
        indent += 1
    if indent <= key_indent or body[bol + indent:bol + indent + 1] != b"{":
        return None
    end = body.find(b"\n" + b" " * key_indent + b"]", start)
    if end < 0:
        return None
    # the item openings: one regex pass (in C) from the newline before the first item (a match
    # lies wholly before ``end``; the needle holds one newline, so matches never overlap); then
    # each item's line is the first one's plus the newlines between consecutive openings,
    # counted and summed by map/accumulate without a Python loop per item
    needle = re.compile(re.escape(b"\n" + b" " * indent + b"{"))
    starts = [m.start() for m in needle.finditer(body, start, end)]
    if len(starts) != n:
        return None
    first = body.count(b"\n", 0, start) + 2  # the line after the newline before the first item
    gaps = map(body.count, itertools.repeat(b"\n"), [start, *starts[:-1]], starts)
    return list(itertools.accumulate(gaps, initial=first))[1:]


def _decode(raw: bytes, path: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise ManifestError("file is not valid UTF-8", f"{path}:{line}") from None


def parse_manifest_text(text: str, path: str = "<string>", *, json_format: bool = False) -> list[RawObject]:
    """Parse one file's text (YAML, or JSON when ``json_format``); for tests and stdin."""
    col = _Collector()
    (_parse_json if json_format else _parse_yaml)(text, path, col)
    return col.out


def _expand_paths(paths: Sequence[str]) -> Iterator[str]:
    seen: set[str] = set()

    def once(p: str) -> bool:
        key = os.path.realpath(p) if p != "-" else "-"
        if key in seen:
            return False
        seen.add(key)
        return True

    for p in paths:
        if p == "-":
            if once(p):
                yield p
            continue
        if os.path.isdir(p):
            found: list[tuple[tuple[str, ...], str]] = []
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
                for f in filenames:
                    if f.startswith(".") or not f.lower().endswith(MANIFEST_EXTENSIONS):
                        continue
                    full = os.path.join(dirpath, f)
                    found.append((Path(os.path.relpath(full, p)).parts, full))
            if not found:
                raise ManifestError(
                    "directory holds no manifest files (.yaml, .yml or .json)", p)
            for _, full in sorted(found):
                if once(full):
                    yield full
        elif os.path.exists(p):
            if once(p):
                yield p
        else:
            raise ManifestError("no such file or directory", p)


SCHEDULER_CONFIG_KIND = "KubeSchedulerConfiguration"


def load_manifests(paths: Sequence[str], *, allow_duplicates: bool = False,
                   configs: list[RawObject] | None = None) -> list[RawObject]:
    """Load every object from ``paths`` (files, directories, ``-`` for stdin), in order.

    Duplicates (same kind, namespace and name) are an error unless ``allow_duplicates``.
    With ``configs`` (a list), ``KubeSchedulerConfiguration`` documents found among the
    inputs go there instead (they have no ``metadata``). See the module docstring for the rules.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    col = _Collector(configs)
    for path in _expand_paths([os.fspath(p) for p in paths]):
        if path == "-":
            text, shown = sys.stdin.read(), "<stdin>"
            _STDIN_TEXT[:] = [text]
        else:
            try:
                with open(path, "rb") as fh:
                    raw = fh.read()
            except OSError as err:
                raise ManifestError(f"cannot read file: {err.strerror or err}", path) from None
            if path.lower().endswith(".json") and _read_json_fast(raw, path, col):
                continue
            text, shown = _decode(raw, path), path
        if shown.lower().endswith(".json"):
            _parse_json(text, shown, col)
        else:
            _parse_yaml(text, shown, col)
    if not allow_duplicates:
        check_duplicates(col.out)
    return col.out


def check_duplicates(objs: Iterable[RawObject]) -> None:
    """Raise ManifestError when two objects share kind, namespace and name.

    The error is located at the second occurrence and names the first one's source.
    """
    seen: dict[tuple[str, str | None, str], RawObject] = {}
    for obj in objs:
        key = obj.key
        first = seen.get(key)
        if first is not None:
            raise ManifestError(
                f"duplicate {obj.describe()}: already defined at {first.source}", obj.source)
        seen[key] = obj


# --------------------------------------------------------------------------- writing

def dump_yaml_all(docs: Iterable[dict]) -> str:
    """``docs`` as a YAML stream (``---``-separated, keys in given order) that
    :func:`parse_manifest_text` — and kubectl — read back as written: strings go-yaml would take for
    booleans or numbers are quoted, no anchors."""
    return yaml.dump_all(list(docs), **_YAML_OPTS)


def write_list(objs: Iterable[dict], fmt: Literal["yaml", "json"], stream: IO[str]) -> None:
    """Write ``objs`` as one ``v1 List`` in YAML (block style, keys in given order) or JSON.

    JSON is ``json.dump(doc, indent=2, ensure_ascii=False)`` byte for byte, each item encoded
    by :func:`encode_json` (orjson) and written in batches of about 4 MiB to the stream's
    binary buffer when it has a UTF-8 one, so memory does not grow with the output. YAML is
    ``yaml.dump(doc)``'s text, through libyaml (PyYAML's ``CSafeDumper``) when available, also
    item by item in 4 MiB batches. Raises :class:`~kubesched.errors.ManifestError` when an
    object is nested too deeply to be written (Python's recursion limit), naming the object:
    nothing is written then, unless the object comes after the first 4 MiB of output;
    ``ValueError`` for an unknown ``fmt``.
    """
    if fmt == "yaml":
        _write_yaml_list(objs, stream)
    elif fmt == "json":
        _write_json_list(objs, stream)
    else:
        raise ValueError(f"unknown format {fmt!r}: expected 'yaml' or 'json'")


# --------------------------------------------------------------------------- field lines

_STDIN_TEXT: list[str] = []  # the text read from "-", for locate()
_PATH_TOKEN = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


def _field_tokens(field_path: str) -> list[tuple[str, bool]]:
    """``spec.containers[0].resources.requests[cpu]`` → ``[(spec, F), (containers, F), (0, T),
    ...]`` (``True``: the token was in brackets — an index or a map key)."""
    return [(m.group(1), True) if m.group(1) is not None else (m.group(2), False)
            for m in _PATH_TOKEN.finditer(field_path)]


_Source = tuple[str, list[str], list[int]]  # text, lines, offset of each line
_LINES_CACHE: dict[str, tuple[float, _Source]] = {}


def _split_source(text: str) -> _Source:
    lines = text.split("\n")
    return text, lines, list(itertools.accumulate((len(x) + 1 for x in lines), initial=0))


def _file_lines(file: str) -> _Source:
    """A file's text, lines and line offsets, kept for the last file asked for
    (``--validate=warn`` locates one field per object of a dump: the file is read and split
    once, not once per warning)."""
    if file == "<stdin>":
        return _split_source(_STDIN_TEXT[-1] if _STDIN_TEXT else "")
    mtime = os.stat(file).st_mtime
    hit = _LINES_CACHE.get(file)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    with open(file, "rb") as fh:
        source = _split_source(fh.read().decode("utf-8-sig"))
    _LINES_CACHE.clear()
    _LINES_CACHE[file] = (mtime, source)
    return source


def _object_snippet(source: _Source, line: int, json_format: bool) -> tuple[str, int] | None:
    """The text of the object whose first line is ``line`` (1-based), standing alone, and the
    line it starts at: a List item (``- key: ...``) up to the next line indented no deeper
    than its dash; a document up to the next ``---``; a JSON object up to its closing brace."""
    text, lines, offsets = source
    if not 1 <= line <= len(lines):
        return None
    first = lines[line - 1]
    if json_format:
        offset = offsets[line - 1] + (len(first) - len(first.lstrip()))
        try:
            _, end = json.JSONDecoder().raw_decode(text, offset)
        except ValueError:
            return None
        return text[offset:end].replace("\t", " "), line
    m = re.match(r"^([ \t]*)((?:-[ \t]+)*)", first)
    assert m is not None
    out = [" " * len(m.group(0)) + first[m.end():] if m.group(2) else first]
    dash = len(m.group(1))
    for k in range(line, len(lines)):
        nxt = lines[k]
        stripped = nxt.strip()
        if m.group(2):
            if stripped and not stripped.startswith("#") and len(nxt) - len(nxt.lstrip()) <= dash:
                break
        elif nxt.startswith(("---", "...")) and (len(nxt) == 3 or nxt[3:4].isspace()):
            break
        out.append(nxt)
    return "\n".join(out) + "\n", line


def _walk_lines(node: Node, tokens: list[tuple[str, bool]]) -> int:
    """The 0-based line of the deepest node of ``tokens`` found under ``node``."""
    line = node.start_mark.line
    i = 0
    while i < len(tokens):
        tok, bracket = tokens[i]
        if isinstance(node, SequenceNode) and bracket and tok.isdigit() and int(tok) < len(node.value):
            node = node.value[int(tok)]
            line = node.start_mark.line
            i += 1
            continue
        if not isinstance(node, MappingNode):
            break
        found = None
        # a dotted key (status.allocatable.example.com/gpu) spans several tokens
        for j in range(i + 1, len(tokens) + 1):
            key = ".".join(t for t, _ in tokens[i:j])
            for k, v in node.value:
                if isinstance(k, ScalarNode) and k.value == key:
                    found = (k, v, j)
                    break
            if found or bracket:
                break
        if found is None:
            break
        k, node, i = found
        line = k.start_mark.line
    return line


def locate(raw: RawObject, field_path: str) -> str:
    """``file:line`` of the field ``field_path`` (upstream's field path syntax,
    ``spec.containers[0].resources.requests[cpu]``) of ``raw``, or of the deepest part of it
    that exists (a missing required field points at its parent); ``raw.source`` when the file
    cannot be read again or the object cannot be found in it.

    Lines are found on demand, only for errors: the object's text is cut out of its file (from
    its first line, by indentation) and composed alone, so a field in a 40 MB dump is found in
    milliseconds and loading keeps no per-field positions.
    """
    if not raw.file:
        return raw.source
    try:
        line = int(raw.source.rsplit(":", 1)[1])
        snippet = _object_snippet(_file_lines(raw.file), line, raw.file.lower().endswith(".json"))
        if snippet is None:
            return raw.source
        body, start = snippet
        node = yaml.compose(body, Loader=_Loader)
        if node is None:
            return raw.source
        tokens = _field_tokens(field_path)
        if raw.kind == "Node" and tokens[:2] == [("metadata", False), ("taints", False)]:
            tokens[0] = ("spec", False)  # upstream reports Node taint errors under metadata.taints
        return f"{raw.file}:{start + _walk_lines(node, tokens)}"
    except (OSError, ValueError, IndexError, yaml.YAMLError, RecursionError):
        return raw.source
_JSON_BATCH = 4 << 20
_YAML_OPTS: dict[str, Any] = {"Dumper": _Dumper, "sort_keys": False, "default_flow_style": False,
                              "allow_unicode": True}


def _write_yaml_list(objs: Iterable[dict], stream: IO[str]) -> None:
    """``yaml.dump`` of the List, one item at a time: ``items`` is a block sequence at column 0
    under the List's keys, so ``yaml.dump([item])`` is the item's exact text there (same
    columns, so the same line folding). Memory then holds one item's representation, not the
    whole document's node graph (3 GiB for 50,000 nodes and 30,000 pods)."""
    it = iter(objs)
    first = next(it, _NO_KEY)
    if first is _NO_KEY:
        stream.write(yaml.dump({"apiVersion": "v1", "kind": "List", "items": []}, **_YAML_OPTS))
        return
    parts = ["apiVersion: v1\nkind: List\nitems:\n"]
    size = 0
    for obj in itertools.chain((first,), it):
        try:
            text = yaml.dump([obj], **_YAML_OPTS)
        except RecursionError:
            raise _too_deep([obj], "YAML") from None
        parts.append(text)
        size += len(text)
        if size >= _JSON_BATCH:
            stream.write("".join(parts))
            parts.clear()
            size = 0
    stream.write("".join(parts))


def _write_json_list(objs: Iterable[dict], stream: IO[str]) -> None:
    buffer = getattr(stream, "buffer", None)
    if buffer is None or (getattr(stream, "encoding", "") or "").lower().replace("-", "") != "utf8":
        buffer = None
    else:
        stream.flush()
    parts: list[bytes] = [b'{\n  "apiVersion": "v1",\n  "kind": "List",\n  "items": [']
    size = 0
    sep = b"\n    "
    batch: list[Any] = []
    for obj in itertools.chain(objs, (_END,)):
        if obj is not _END:
            batch.append(obj)
            if len(batch) < _JSON_ITEMS:
                continue
        if not batch:
            break
        # items sit two levels down: json.dump's text of each is its own, every line indented by 4
        data = _encode_json_items(batch)
        batch.clear()
        parts.append(sep)
        parts.append(data)
        sep = b",\n    "
        size += len(data)
        if size >= _JSON_BATCH:
            _write_bytes(stream, buffer, b"".join(parts))
            parts.clear()
            size = 0
    parts.append(b"]\n}\n" if sep == b"\n    " else b"\n  ]\n}\n")
    _write_bytes(stream, buffer, b"".join(parts))
    if buffer is not None:
        buffer.flush()


_END = object()
_JSON_ITEMS = 256  # items per orjson call
_ITEMS_HEAD = b'{\n  "items": [\n    '
_ITEMS_TAIL = b"\n  ]\n}"


def _encode_json_items(items: list[Any]) -> bytes:
    """The items' :func:`encode_json` texts, every line indented by 4, joined by ``,\\n    ``:
    one orjson call for the lot (the items of ``{"items": [...]}`` sit at that indentation),
    item by item when orjson's text would not be the stdlib's for any of them."""
    try:
        data = orjson.dumps({"items": items}, option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson.JSONEncodeError included
        pass
    else:
        if not _orjson_float_differs(data) and (data.find(b"null") < 0 or not _has_non_finite_float(items)):
            return data[len(_ITEMS_HEAD):-len(_ITEMS_TAIL)]
    out = []
    for obj in items:
        data = encode_json(obj)
        out.append(data.replace(b"\n", b"\n    ") if b"\n" in data else data)
    return b",\n    ".join(out)


def _write_bytes(stream: IO[str], buffer: Any, data: bytes) -> None:
    if buffer is not None:
        buffer.write(data)
    else:
        stream.write(data.decode("utf-8", "surrogatepass"))


# What orjson writes differently from ``repr(float)`` is floats below 1e-4: ``0.00001`` and
# ``1e-7`` for ``1e-05`` and ``1e-07``. Any such number holds ``0.0000`` or digit-``e-``-digit,
# found with ``bytes.find`` for the former and, for the latter, one regex scan for ``e-``-digit
# (literal prefix: a fast C search, no copy of the data; such text is rare outside numbers)
# whose matches' preceding byte is then looked at; a match inside a string only costs the slow path.
_E_MINUS_DIGIT = re.compile(rb"e-[0-9]")


def _orjson_float_differs(data: bytes) -> bool:
    if b"0.0000" in data:
        return True
    for m in _E_MINUS_DIGIT.finditer(data):
        if m.start() > 0 and 48 <= data[m.start() - 1] <= 57:  # a digit before the e
            return True
    return False


def encode_json(doc: Any) -> bytes:
    """``json.dumps(doc, indent=2, ensure_ascii=False).encode()``, byte for byte, through orjson.

    orjson writes the same text for ``str`` keys, strings, ints within 64 bits, lists, dicts,
    ``bool``/``None`` and floats from 1e-4 up (both print the shortest repr that round-trips);
    whatever orjson rejects (non-``str`` keys, big ints, other types, nesting beyond 254 levels)
    and the floats it prints otherwise (below 1e-4, and NaN/Infinity, which it writes as
    ``null``; checked by a scan of the output, and a walk of the data only when it holds a
    ``null``) go through the stdlib encoder instead. Raises :class:`ManifestError` naming the
    object when the stdlib encoder exceeds Python's recursion limit, and the stdlib's
    ``TypeError`` for values JSON has no form for.
    """
    try:
        data = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson.JSONEncodeError included
        pass
    else:
        if not _orjson_float_differs(data) and (
                data.find(b"null") < 0 or not _has_non_finite_float(doc)):
            return data
    try:
        return json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except RecursionError:
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else None
        raise _too_deep(items if isinstance(items, list) else [doc], "JSON") from None


def _has_non_finite_float(obj: Any) -> bool:
    """Whether a NaN or infinite float is anywhere in ``obj`` (iterative: any depth)."""
    stack = [obj]
    while stack:
        o = stack.pop()
        t = o.__class__
        if t is dict:
            stack.extend(o.values())
        elif t is list or t is tuple:
            stack.extend(o)
        elif isinstance(o, float) and not math.isfinite(o):
            return True
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
    return False


def _depth(obj: Any) -> int:
    """Nesting depth of dicts/lists in ``obj`` (iterative)."""
    best = 0
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict):
            best = max(best, d)
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, (list, tuple)):
            best = max(best, d)
            stack.extend((v, d + 1) for v in o)
    return best


def _too_deep(items: list[Any], what: str) -> ManifestError:
    """The error for output that exceeds the recursion limit, naming the deepest object."""
    depths = [_depth(o) for o in items]
    i = max(range(len(depths)), key=depths.__getitem__) if depths else 0
    obj = items[i] if items else None
    name = "object"
    if isinstance(obj, dict):
        meta = obj.get("metadata")
        ns, nm = (meta.get("namespace"), meta.get("name")) if isinstance(meta, dict) else (None, None)
        name = f"{obj.get('kind', 'object')} {ns + '/' if isinstance(ns, str) and ns else ''}{nm}"
    levels = f" ({depths[i]} levels)" if depths else ""
    return ManifestError(f"{name} is nested too deeply to write as {what}{levels}")
