"""Server-side field validation: fields an object carries that its kind does not have.

The API server decodes request bodies strictly when asked (``fieldValidation=Strict``, which is
what kubectl 1.32 sends by default) and reports each unknown field by its path, in document
order, as ``sigs.k8s.io/json``'s strict decoder names it::

    unknown field "spec.containers[0].imagee"

``Strict`` rejects the request (400 ``BadRequest`` on create/update with
``Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "..."``
— see :func:`decode_error_message`), ``Warn`` adds one ``Warning`` header per field
(``299 - "unknown field \\"spec.foo\\""``, see :func:`warning_headers`), ``Ignore`` drops
nothing and says nothing (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go``,
``rest.go``). The schema is upstream's v1.34 definitions (:mod:`kubesched.apiserver.schemas`);
maps (``additionalProperties``), free-form objects (``RawExtension``, ``FieldsV1``) and
``x-kubernetes-preserve-unknown-fields`` take any key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from kubesched.apiserver import schemas

__all__ = [
    "VALIDATION_DIRECTIVES",
    "decode_error_message",
    "patch_strict_status",
    "strict_decoding_error",
    "unknown_field_paths",
    "unknown_fields",
    "warning_headers",
]

#: The accepted values of the ``fieldValidation`` query parameter (empty = server default).
VALIDATION_DIRECTIVES = ("Ignore", "Warn", "Strict")


def unknown_field_paths(gvk: tuple[str, str, str], obj: Any) -> list[str]:
    """Paths (``spec.foo``, ``spec.containers[0].imagee``) of the fields of ``obj`` that the
    kind ``gvk`` = ``(group, version, kind)`` does not define, in document order. An unknown
    kind yields ``[]`` (nothing to check against)."""
    name = schemas.definition_for_gvk(*gvk)
    if name is None or not isinstance(obj, dict):
        return []
    out: list[str] = []
    _walk(schemas.definitions()[name], obj, "", out)
    return out


def unknown_fields(gvk: tuple[str, str, str], obj: Any) -> list[str]:
    """The strict decoder's messages for ``obj``: ``unknown field "spec.foo"`` per field."""
    return [f'unknown field "{p}"' for p in unknown_field_paths(gvk, obj)]


def strict_decoding_error(messages: Iterable[str]) -> str:
    """``runtime.NewStrictDecodingError(...).Error()``: ``strict decoding error: <m1>, <m2>``."""
    return "strict decoding error: " + ", ".join(messages)


def decode_error_message(kind: str, version: str, messages: Iterable[str]) -> str:
    """The 400 message of a create/update rejected by ``fieldValidation=Strict``:
    ``Pod in version "v1" cannot be handled as a Pod: strict decoding error: ...``."""
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {strict_decoding_error(messages)}'


def patch_strict_status(content_type: str, patch_body: bytes, patched: Any, messages: Iterable[str]) -> dict[str, Any]:
    """The 422 ``Status`` of a PATCH whose result has unknown fields under ``fieldValidation=Strict``.

    As ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go``: ``errors.NewInvalid``
    with an empty kind and name and one ``patch`` field error whose value is, for a strategic
    merge patch, the decoded patch printed as Go's ``%+v`` (``map[spec:map[foo:1]]``), and for
    JSON/merge patches the patched object's JSON; the detail is the strict decoding error.
    """
    from kubesched.apiserver.patch import STRATEGIC_MERGE_PATCH, go_format

    media = content_type.split(";", 1)[0].strip().lower()
    if media == STRATEGIC_MERGE_PATCH:
        try:
            value = go_format(orjson.loads(patch_body))
        except orjson.JSONDecodeError:
            value = patch_body.decode("utf-8", "replace")
    else:
        value = orjson.dumps(patched).decode()
    detail = strict_decoding_error(messages)
    body = 'Invalid value: ' + _go_quote(value) + ": " + detail
    return {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f' "" is invalid: patch: {body}',
        "reason": "Invalid",
        "details": {"causes": [{"reason": "FieldValueInvalid", "message": body, "field": "patch"}]},
        "code": 422,
    }


def _go_quote(s: str) -> str:
    return orjson.dumps(s).decode()


def warning_headers(messages: Iterable[str]) -> list[str]:
    """``Warning`` header values for ``fieldValidation=Warn`` (RFC 7234 warn-code 299)."""
    out = []
    for m in messages:
        escaped = m.replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'299 - "{escaped}"')
    return out


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


def _compile(schema: dict[str, Any] | None) -> _Node | None:
    """Compile (once per schema object; definitions are cached for the process) into a node,
    or None for leaves that accept anything (scalars, free-form objects)."""
    schema = schemas.resolve(schema)
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
        node.props = {k: _compile(v) for k, v in props.items()}
        if isinstance(extra, dict):
            node.extra = _compile(extra)
            node.free = node.extra is None
        elif extra is True:
            node.free = True
    elif isinstance(extra, dict):
        node.extra = _compile(extra)
        node.free = node.extra is None
    else:
        node.free = True
    if isinstance(items, dict):
        node.items = _compile(items)
    if node.props is None and node.extra is None and node.items is None:
        _COMPILED[key] = None  # a leaf: nothing below it to check
        return None
    return node


def _walk(schema: dict[str, Any] | None, value: Any, path: str, out: list[str]) -> None:
    _walk_node(_compile(schema), value, path, out)


def _walk_node(node: _Node | None, value: Any, path: str, out: list[str]) -> None:
    if node is None:
        return
    if isinstance(value, dict):
        props = node.props
        if props is not None:
            for key, sub in value.items():
                if key in props:
                    child = props[key]
                    if child is not None:
                        _walk_node(child, sub, f"{path}.{key}" if path else key, out)
                elif node.extra is not None:
                    _walk_node(node.extra, sub, f"{path}.{key}" if path else key, out)
                elif not node.free:
                    out.append(f"{path}.{key}" if path else key)
        elif node.extra is not None:
            for key, sub in value.items():
                _walk_node(node.extra, sub, f"{path}.{key}" if path else key, out)
    elif isinstance(value, list) and node.items is not None:
        for i, sub in enumerate(value):
            _walk_node(node.items, sub, f"{path}[{i}]", out)
