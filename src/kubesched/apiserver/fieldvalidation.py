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
``rest.go``). The checks live in :mod:`kubesched.api.schemas` (upstream's definitions of the
emulated release — pass ``version=(1, 34)`` … ``(1, 37)``, default 1.37 — shared with the simulator);
maps (``additionalProperties``), free-form objects (``RawExtension``, ``FieldsV1``) and
``x-kubernetes-preserve-unknown-fields`` take any key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from kubesched.api.schemas import (
    decode_error,
    duplicate_fields,
    prune_unknown_fields,
    unknown_field_paths,
    unknown_fields,
)

__all__ = [
    "VALIDATION_DIRECTIVES",
    "decode_error",
    "decode_error_message",
    "duplicate_fields",
    "patch_strict_status",
    "prune_unknown_fields",
    "strict_decoding_error",
    "strict_errors",
    "unknown_field_paths",
    "unknown_fields",
    "warning_headers",
]

#: The accepted values of the ``fieldValidation`` query parameter (empty = server default).
VALIDATION_DIRECTIVES = ("Ignore", "Warn", "Strict")


def strict_errors(gvk: tuple[str, str, str], body: bytes, obj: Any,
                  version: tuple[int, int] | None = None) -> list[str]:
    """All strict-decoding messages for a request: ``duplicate field "..."`` for keys repeated
    in the JSON ``body`` (see :func:`duplicate_fields`), then ``unknown field "..."`` for the
    decoded ``obj`` under the API release ``version`` (upstream interleaves the two kinds in
    document order)."""
    return [f'duplicate field "{p}"' for p in duplicate_fields(body)] + unknown_fields(gvk, obj, version)


def strict_decoding_error(messages: Iterable[str]) -> str:
    """``runtime.NewStrictDecodingError(...).Error()``: ``strict decoding error: <m1>, <m2>``."""
    return "strict decoding error: " + ", ".join(messages)


def decode_error_message(kind: str, version: str, messages: Iterable[str] | str) -> str:
    """The 400 message of a create/update the decoder rejects: with the strict messages of
    ``fieldValidation=Strict`` (``Pod in version "v1" cannot be handled as a Pod: strict decoding
    error: unknown field "spec.foo"``) or with one :func:`decode_error` text (a ``str``)."""
    reason = messages if isinstance(messages, str) else strict_decoding_error(messages)
    return f'{kind} in version "{version}" cannot be handled as a {kind}: {reason}'


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
