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


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(schema: dict[str, Any] | None, value: Any, path: str, out: list[str]) -> None:
    schema = schemas.resolve(schema)
    if schema is None:
        return
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if isinstance(props, dict):
            for key, sub in value.items():
                if key in props:
                    _walk(props[key], sub, _join(path, key), out)
                elif isinstance(extra, dict):
                    _walk(extra, sub, _join(path, key), out)
                elif extra is not True:
                    out.append(_join(path, key))
        elif isinstance(extra, dict):
            for key, sub in value.items():
                _walk(extra, sub, _join(path, key), out)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, sub in enumerate(value):
                _walk(items, sub, f"{path}[{i}]", out)
