"""PATCH bodies applied as the API server applies them.

``apply_patch(content_type, original, body, gvk=...)`` dispatches on the request's media type,
as ``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go`` (``patchMechanism``):

* ``application/json-patch+json`` — RFC 6902 through the ``jsonpatch`` library. A body that
  does not decode as a patch → 400 BadRequest; an operation that fails on the object
  (missing path, failed ``test``) → 422 (``jsonPatcher.applyJSPatch``).
* ``application/merge-patch+json`` — RFC 7386 (``null`` deletes a key, objects merge
  recursively, everything else replaces).
* ``application/strategic-merge-patch+json`` — apimachinery's strategic merge patch
  (``staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go``,
  ``StrategicMergeMapPatch`` with ``MergeParallelList`` and ``IgnoreUnmatchedNulls``), driven by
  upstream's schema (:mod:`kubesched.api.schemas`, the v1.37 definitions: the patch strategies
  and merge keys of the served ``v1`` kinds are the same in every release 1.34 … 1.37; fields a
  release lacks are then rejected or pruned by that release's decoding): a list field whose schema says
  ``x-kubernetes-patch-strategy: merge`` merges — by ``x-kubernetes-patch-merge-key`` for lists
  of objects (``containers`` by ``name``, ``conditions`` by ``type``, ``tolerations`` ...),
  as a set union for lists of scalars (``finalizers``) — other lists replace; maps merge
  recursively and ``null`` deletes; directives ``$patch: replace|delete`` (on a map),
  ``$patch: replace|delete`` (on an element of a merge list), ``$setElementOrder/<field>``,
  ``$deleteFromPrimitiveList/<field>`` and ``$retainKeys``.
  A field the schema does not know merges as in a JSON merge patch (maps merge, lists
  replace), the way ``PatchMetaFromOpenAPI`` treats schema-less fields; unknown fields are
  reported separately by :mod:`kubesched.apiserver.fieldvalidation`.
* anything else (``application/apply-patch+yaml`` included: server-side apply is not
  implemented) → 415 UnsupportedMediaType with upstream's message.

Errors raise :class:`PatchError` ``(status_code, message, reason)`` mapped as upstream's
``interpretStrategicMergePatchError``: malformed JSON and malformed directives → 400
``BadRequest``; lists of lists / retainKeys mismatches → 422 ``Invalid``; any other merge
failure (a list element without its merge key, an unknown ``$patch`` value) → 500 with an
empty reason, as the API server turns a plain error into a ``Status``.

The original object is never mutated; the result is a new dict.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import orjson

from kubesched.api import schemas

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MAX_JSON_PATCH_OPERATIONS",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "SUPPORTED_PATCH_TYPES",
    "PatchError",
    "apply_patch",
    "go_format",
    "json_merge_patch",
    "strategic_merge_patch",
    "strategic_merge_patch_with_schema",
]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
#: The patch media types this server accepts (what the API server advertises, minus apply).
SUPPORTED_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)

_DIRECTIVE = "$patch"
_DELETE = "delete"
_REPLACE = "replace"
_MERGE = "merge"
_RETAIN_KEYS = "retainKeys"
_RETAIN_KEYS_DIRECTIVE = "$retainKeys"
_DELETE_PRIMITIVE_PREFIX = "$deleteFromPrimitiveList"
_SET_ORDER_PREFIX = "$setElementOrder"

# mergepatch/errors.go texts
_ERR_BAD_JSON_DOC = "invalid JSON document"
_ERR_NO_LIST_OF_LISTS = "lists of lists are not supported"
_ERR_PRIMITIVE_LIST = "invalid patch format of primitive list"
_ERR_RETAIN_KEYS = "invalid patch format of retainKeys"
_ERR_SET_ORDER = "invalid patch format of setElementOrder list"
_ERR_RETAIN_KEYS_CONTENT = "patch content doesn't match retainKeys list"

_REASONS = {400: "BadRequest", 413: "RequestEntityTooLarge", 415: "UnsupportedMediaType", 422: "Invalid", 500: ""}
#: ``maxJSONPatchOperations`` of staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go.
MAX_JSON_PATCH_OPERATIONS = 10000
#: ``JSONPatchMaxCopyBytes`` (apiserver ``server/config.go``: 3 MiB), installed as json-patch's
#: ``AccumulatedCopySizeLimit``: the bytes all ``copy`` operations of one patch may add.
JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024


class PatchError(Exception):
    """A PATCH that cannot be applied.

    ``status_code``: the HTTP code (400, 413, 415, 422 or 500); ``message``: upstream's text;
    ``reason``: the ``Status.reason`` the API server gives (``BadRequest``,
    ``UnsupportedMediaType``, ``Invalid``, or ``""`` for a 500 from a plain merge error).
    """

    def __init__(self, status_code: int, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.reason = _REASONS.get(status_code, "") if reason is None else reason

    def __repr__(self) -> str:
        return f"PatchError({self.status_code}, {self.message!r})"

    @property
    def status(self) -> dict[str, Any]:
        """The complete ``Status`` body kube-apiserver answers with.

        422 is upstream's ``errors.NewGenericServerResponse(422, ...)``: message "the server
        rejected our request due to an error in our request", reason ``Invalid`` and the merge
        error as an ``UnexpectedServerResponse`` cause (what kubectl prints as "The request is
        invalid"); 500 is ``ErrorToAPIStatus`` of a plain error (empty reason)."""
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
        if self.status_code == 422:
            body["message"] = "the server rejected our request due to an error in our request"
            body["reason"] = "Invalid"
            body["details"] = {"causes": [{"reason": "UnexpectedServerResponse", "message": self.message}]}
        else:
            body["message"] = self.message
            if self.reason:
                body["reason"] = self.reason
        body["code"] = self.status_code
        return body


def _clone(obj: Any) -> Any:
    """A deep copy of a JSON value (orjson round trip: ~10x ``copy.deepcopy``)."""
    try:
        return orjson.loads(orjson.dumps(obj))
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(obj)


class _MergeError(Exception):
    """Internal: a strategic-merge failure with its HTTP code."""

    def __init__(self, message: str, code: int = 500) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------------------------
# entry point


def apply_patch(
    content_type: str, original: dict[str, Any], body: bytes, *, gvk: tuple[str, str, str]
) -> dict[str, Any]:
    """Apply a PATCH request body of media type ``content_type`` to ``original``.

    ``gvk`` = ``(group, version, kind)`` of the object (``("", "v1", "Pod")``), used to find the
    strategic-merge schema. ``content_type`` may carry parameters (``; charset=utf-8``).
    Returns the patched object (a new dict). Raises :class:`PatchError`.
    """
    media = content_type.split(";", 1)[0].strip().lower()
    if media == JSON_PATCH:
        return _apply_json_patch(original, body)
    if media == MERGE_PATCH:
        patch = _decode(body)
        result = json_merge_patch(_clone(original), patch)
        if not isinstance(result, dict):
            raise PatchError(400, "the patch did not produce an object")
        return result
    if media == STRATEGIC_MERGE_PATCH:
        patch = _decode(body)
        if not isinstance(patch, dict):
            raise PatchError(400, _ERR_BAD_JSON_DOC)
        if schemas.definition_for_gvk(*gvk) is None:
            raise PatchError(415, "the body of the request was in an unknown format - accepted media types include: "
                             f"{JSON_PATCH}, {MERGE_PATCH}")
        return strategic_merge_patch(original, patch, gvk=gvk)
    raise PatchError(
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(SUPPORTED_PATCH_TYPES),
    )


def _decode(body: bytes) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise PatchError(400, f"error decoding patch: {exc}") from None


def _apply_json_patch(original: dict[str, Any], body: bytes) -> dict[str, Any]:
    ops = _decode(body)
    if not isinstance(ops, list):
        kind = "object" if isinstance(ops, dict) else "string" if isinstance(ops, str) else "number" \
            if isinstance(ops, (int, float)) and not isinstance(ops, bool) \
            else "bool" if isinstance(ops, bool) else "null"
        raise PatchError(400, f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(413, "Request entity too large: The allowed maximum operations in a JSON patch is "
                              f"{MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}")
    if not all(isinstance(op, dict) for op in ops):
        raise PatchError(400, "json: cannot unmarshal array into Go value of type jsonpatch.Operation")
    try:
        if any(op.get("op") == "copy" for op in ops):
            result = _apply_counting_copies(ops, _clone(original))
        else:
            result = jsonpatch.JsonPatch(ops).apply(_clone(original), in_place=True)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        raise PatchError(422, str(exc)) from None
    except (TypeError, KeyError, IndexError, ValueError) as exc:
        raise PatchError(422, f"invalid JSON patch: {exc}") from None
    if not isinstance(result, dict):
        raise PatchError(422, "the patch did not produce an object")
    return result


def _go_json_size(value: Any) -> int:
    """``len(json.Marshal(value))`` in Go: compact JSON with ``<``, ``>``, ``&`` escaped (6 bytes each)."""
    raw = orjson.dumps(value)
    return len(raw) + 5 * (raw.count(b"<") + raw.count(b">") + raw.count(b"&"))


def _apply_counting_copies(ops: list[dict[str, Any]], doc: Any) -> Any:
    """Apply ``ops`` one at a time, adding up what ``copy`` operations copy as evanphx/json-patch
    v4 ``patch.copy`` does (``deepCopy`` size), and stop past :data:`JSON_PATCH_MAX_COPY_BYTES`
    with its error (``AccumulatedCopySizeError``): a few ``copy`` ops doubling a value each must not
    build a huge object."""
    accumulated = 0
    for op in ops:
        if op.get("op") == "copy":
            try:
                value = jsonpatch.JsonPointer(op.get("from", "")).resolve(doc)
            except (jsonpatch.JsonPointerException, TypeError):
                value = None  # the copy below fails with the library's own error
            else:
                accumulated += _go_json_size(value)
                if accumulated > JSON_PATCH_MAX_COPY_BYTES:
                    raise PatchError(422, "Unable to complete the copy, the accumulated size increase of copy is "
                                          f"{accumulated}, exceeding the limit {JSON_PATCH_MAX_COPY_BYTES}")
        doc = jsonpatch.JsonPatch([op]).apply(doc, in_place=True)
    return doc


def json_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 merge of ``patch`` into ``target`` (mutates and returns ``target`` when both are
    objects; a non-object patch replaces)."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = json_merge_patch(target.get(key), value)
    return target


# --------------------------------------------------------------------------------------------
# strategic merge patch (server side: StrategicMergeMapPatch)


def strategic_merge_patch(
    original: dict[str, Any], patch: dict[str, Any], *, gvk: tuple[str, str, str]
) -> dict[str, Any]:
    """Apply a decoded strategic merge patch to ``original`` (neither is mutated).

    Raises :class:`PatchError` as documented in the module docstring.
    """
    name = schemas.definition_for_gvk(*gvk)
    schema = schemas.definitions().get(name) if name else None
    return strategic_merge_patch_with_schema(original, patch, schema)


def strategic_merge_patch_with_schema(
    original: dict[str, Any], patch: dict[str, Any], schema: dict[str, Any] | None
) -> dict[str, Any]:
    """Apply a decoded strategic merge patch under an explicit JSON schema (``properties``,
    ``items``, ``additionalProperties``, ``$ref`` into :func:`schemas.definitions`, and the
    ``x-kubernetes-patch-*`` extensions). ``schema=None`` merges as a JSON merge patch would,
    except for the directives. Neither argument is mutated. Raises :class:`PatchError`."""
    try:
        return _merge_map(_clone(original), _clone(patch), schema)
    except _MergeError as exc:
        raise PatchError(exc.code, str(exc)) from None
    except RecursionError:
        raise PatchError(400, "patch nesting too deep") from None


# ---- schema lookups (PatchMetaFromOpenAPI / forked json LookupPatchMetadata) ----------------


def _field_schema(schema: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    if schema is None:
        return None
    props = schema.get("properties")
    if props is not None and key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    return None


def _meta(field: dict[str, Any] | None) -> tuple[list[str], str]:
    if field is None:
        return [], ""
    strategy = field.get("x-kubernetes-patch-strategy")
    strategies = strategy.split(",") if isinstance(strategy, str) and strategy else []
    return strategies, field.get("x-kubernetes-patch-merge-key", "") or ""


def _lookup_struct(schema: dict[str, Any] | None, key: str) -> tuple[dict[str, Any] | None, list[str], str]:
    field = _field_schema(schema, key)
    strategies, merge_key = _meta(field)
    return schemas.resolve(field), strategies, merge_key


def _lookup_slice(schema: dict[str, Any] | None, key: str) -> tuple[dict[str, Any] | None, list[str], str]:
    field = _field_schema(schema, key)
    strategies, merge_key = _meta(field)
    items = field.get("items") if field is not None else None
    return schemas.resolve(items if isinstance(items, dict) else None), strategies, merge_key


def _retain_keys_strategy(strategies: list[str]) -> tuple[bool, str]:
    """extractRetainKeysPatchStrategy: (has retainKeys, the other strategy)."""
    if not strategies:
        return False, ""
    if len(strategies) == 1:
        return (True, "") if strategies[0] == _RETAIN_KEYS else (False, strategies[0])
    if len(strategies) == 2:
        if strategies[0] == _RETAIN_KEYS:
            return True, strategies[1]
        if strategies[1] == _RETAIN_KEYS:
            return True, strategies[0]
    raise _MergeError(f"unexpected patch strategy: {_go_fmt(strategies)}")


# ---- Go-like helpers -------------------------------------------------------------------------


def _kind(v: Any) -> str:
    """The Go dynamic type of a decoded JSON value (reflect.TypeOf after json.Unmarshal)."""
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "float64"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, list):
        return "slice"
    return type(v).__name__


def _scalar_key(v: Any) -> Any:
    """Hashable identity of a scalar as Go's interface equality sees it (true != 1)."""
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, (int, float)):
        return ("n", v)
    if isinstance(v, (dict, list)):
        return ("x", id(v))
    return ("s", v)


def _eq(a: Any, b: Any) -> bool:
    return _scalar_key(a) == _scalar_key(b)


def _go_fmt(v: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (maps print with sorted keys)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_go_fmt(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_go_fmt(x) for x in v) + "]"
    return str(v)


def go_format(v: Any) -> str:
    """Go's ``%v`` (and ``%+v``) of a decoded JSON value: ``map[a:1 b:[x y]]``."""
    return _go_fmt(v)


def _no_merge_key(m: Any, key: str) -> _MergeError:
    return _MergeError(f"map: {_go_fmt(m)} does not contain declared merge key: {key}")


def _bad_arg_type(expected: str, actual: Any) -> _MergeError:
    names = {"map": "map[string]interface {}", "slice": "[]interface {}", "float64": "float64",
             "string": "string", "bool": "bool", "nil": "<nil>"}
    return _MergeError(
        f"expected a {names.get(expected, expected)}, but received a {names.get(_kind(actual), _kind(actual))}"
    )


def _extract_key(s: str, prefix: str) -> str:
    parts = s.split("/", 1)
    if len(parts) <= 1 or parts[0] != prefix:
        if prefix == _DELETE_PRIMITIVE_PREFIX:
            raise _MergeError(_ERR_PRIMITIVE_LIST, 400)
        if prefix == _SET_ORDER_PREFIX:
            raise _MergeError(_ERR_SET_ORDER, 400)
        raise _MergeError(f"fail to find unknown prefix {prefix!r} in {s}")
    return parts[1]


# ---- mergeMap -------------------------------------------------------------------------------


def _merge_map(original: dict[str, Any] | None, patch: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == _REPLACE:
            del patch[_DIRECTIVE]
            return patch
        if directive == _DELETE:
            return {}
        raise _MergeError(f"unknown patch type: {_go_fmt(directive)} in map: {_go_fmt(patch)}")
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _merge_set_element_order(original, patch, schema)

    for key in list(patch):
        if key not in patch:
            continue
        patch_v = patch[key]
        is_delete_list = False
        if key.startswith(_DELETE_PRIMITIVE_PREFIX):
            key = _extract_key(key, _DELETE_PRIMITIVE_PREFIX)
            is_delete_list = True
        if patch_v is None:
            original.pop(key, None)
            continue
        if key not in original:
            if not is_delete_list:
                _discard_nulls(patch_v)
                value, keep = _remove_directives(patch_v)
                if keep:
                    original[key] = value
            continue
        orig_v = original[key]
        if _kind(orig_v) != _kind(patch_v):
            if not is_delete_list:
                _discard_nulls(patch_v)
                value, keep = _remove_directives(patch_v)
                if keep:
                    original[key] = value
                else:
                    del original[key]
            continue
        if isinstance(orig_v, dict):
            sub, strategies, _mk = _lookup_struct(schema, key)
            _, strategy = _retain_keys_strategy(strategies)
            if strategy != _REPLACE:
                original[key] = _merge_map(orig_v, patch_v, sub)
            else:
                original[key] = patch_v
        elif isinstance(orig_v, list):
            sub, strategies, merge_key = _lookup_slice(schema, key)
            _, strategy = _retain_keys_strategy(strategies)
            original[key] = _merge_slice_handler(orig_v, patch_v, sub, strategy, merge_key, is_delete_list)
        else:
            value, keep = _remove_directives(patch_v)
            if keep:
                original[key] = value
            else:
                del original[key]
    return original


def _discard_nulls(v: Any) -> None:
    if isinstance(v, dict):
        for k in [k for k, x in v.items() if x is None]:
            del v[k]
        for x in v.values():
            _discard_nulls(x)
    elif isinstance(v, list):
        for x in v:
            _discard_nulls(x)


def _remove_directives(obj: Any) -> tuple[Any, bool]:
    """removeDirectives: drop maps carrying ``$patch`` (and their keys) from a new value."""
    if isinstance(obj, dict):
        if _DIRECTIVE in obj:
            return None, False
        for k in list(obj):
            value, keep = _remove_directives(obj[k])
            if keep:
                obj[k] = value
            else:
                del obj[k]
        return obj, True
    if isinstance(obj, list):
        out = []
        for x in obj:
            value, keep = _remove_directives(x)
            if keep:
                out.append(value)
        return out, True
    return obj, True


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if _RETAIN_KEYS_DIRECTIVE not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS_DIRECTIVE)
    if not isinstance(retain, list):
        raise _MergeError(_ERR_RETAIN_KEYS, 400)
    keep = {_scalar_key(v) for v in retain}
    for k, v in patch.items():
        if v is None or k.startswith((_DELETE_PRIMITIVE_PREFIX, _SET_ORDER_PREFIX)):
            continue
        if _scalar_key(k) not in keep:
            raise _MergeError(_ERR_RETAIN_KEYS, 400)
    for k in list(original):
        if _scalar_key(k) not in keep:
            del original[k]


def _merge_set_element_order(original: dict[str, Any], patch: dict[str, Any], schema: dict[str, Any] | None) -> None:
    """mergePatchIntoOriginal: merge the lists that carry a ``$setElementOrder`` and order them."""
    for key in [k for k in patch if k.startswith(_SET_ORDER_PREFIX)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _bad_arg_type("slice", order)
        field = _extract_key(key, _SET_ORDER_PREFIX)
        found_original = field in original
        found_patch = field in patch
        original_list: list[Any] = []
        patch_list: list[Any] = []
        if found_original:
            if not isinstance(original[field], list):
                raise _bad_arg_type("slice", original[field])
            original_list = original[field]
        if found_patch:
            if not isinstance(patch[field], list):
                raise _bad_arg_type("slice", patch[field])
            patch_list = patch[field]
        sub, strategies, merge_key = _lookup_slice(schema, field)
        _, strategy = _retain_keys_strategy(strategies)
        _validate_patch_with_set_order(patch_list, order, merge_key)
        if found_original and not found_patch:
            merged = original_list
        elif not found_original and found_patch:
            value, keep = _remove_directives(patch_list)
            if not keep:
                continue
            merged = value
        elif found_original and found_patch:
            merged = _merge_slice_handler(original_list, patch_list, sub, strategy, merge_key, False)
        else:
            continue
        if not merge_key:
            patch_items, server_only = _partition_primitives(merged, order)
        else:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        kind = _slice_element_kind(original_list, patch_list)
        server_order = original_list
        if found_original and found_patch and merge_key and kind == "map" and strategy == _MERGE:
            server_order = _aliased_server_order(original_list, patch_list, merge_key)
        original[field] = _normalize_element_order(patch_items, server_only, order, server_order, merge_key, kind)
        patch.pop(field, None)


def _aliased_server_order(original: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    """The server order upstream's mergePatchIntoOriginal really uses for a merge list.

    Upstream passes its ``originalFieldValue`` slice to the merge, which deletes entries with
    ``append(s[:i], s[i+1:]...)`` and adds new ones with ``append`` — both write into the
    same backing array, so the slice it later orders by reads: the kept entries, then the
    added ones, then stale tail entries. Reproduced here so the resulting order is upstream's
    (patch_test.go "add map and delete map from merging list").
    """
    n = len(original)
    view = list(original)
    length = n
    replace = False
    for item in patch:
        if not isinstance(item, dict) or _DIRECTIVE not in item:
            continue
        if item[_DIRECTIVE] == _REPLACE:
            replace = True
        elif item[_DIRECTIVE] == _DELETE and merge_key in item:
            i = 0
            while i < length:
                entry = view[i]
                if isinstance(entry, dict) and merge_key in entry and _eq(entry[merge_key], item[merge_key]):
                    view[i : length - 1] = view[i + 1 : length]
                    length -= 1
                else:
                    i += 1
    if replace:
        return view
    current = view[:length]
    for item in patch:
        if not isinstance(item, dict) or _DIRECTIVE in item or merge_key not in item:
            continue
        if _find_by_key(current, merge_key, item[merge_key]) < 0:
            current.append(item)
            if length < n:
                view[length] = item
                length += 1
    return view


def _validate_patch_with_set_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    if not order or not patch_list:
        return
    non_delete = _extract_to_delete(patch_list)[0] if merge_key else patch_list
    pi = si = 0
    while pi < len(non_delete) and si < len(order):
        item = non_delete[pi]
        if isinstance(item, dict) and _DIRECTIVE in item:
            pi += 1
            continue
        if _merge_key_equal(item, order[si], merge_key):
            pi += 1
        si += 1
    if pi < len(non_delete) and si >= len(order):
        raise _MergeError(
            f"The order in patch list:\n{_go_fmt(patch_list)}\n"
            f" doesn't match {_SET_ORDER_PREFIX} list:\n{_go_fmt(order)}\n"
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _eq(left, right)
    if not isinstance(left, dict):
        raise _bad_arg_type("map", left)
    if not isinstance(right, dict):
        raise _bad_arg_type("map", right)
    if merge_key not in left:
        raise _no_merge_key(left, merge_key)
    if merge_key not in right:
        raise _no_merge_key(right, merge_key)
    return _eq(left[merge_key], right[merge_key])


def _extract_to_delete(items: list[Any]) -> tuple[list[Any], list[Any]]:
    non_delete: list[Any] = []
    to_delete: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map", v)
        if v.get(_DIRECTIVE) == _DELETE:
            to_delete.append(v)
        else:
            non_delete.append(v)
    return non_delete, to_delete


def _merge_slice_handler(
    original: Any, patch: Any, schema: dict[str, Any] | None, strategy: str, merge_key: str, is_delete_list: bool
) -> list[Any]:
    if not isinstance(original, list):
        raise _bad_arg_type("slice", original)
    if not isinstance(patch, list):
        raise _bad_arg_type("slice", patch)
    if strategy == _MERGE or is_delete_list:
        return _merge_slice(original, patch, schema, merge_key, is_delete_list)
    return patch


def _slice_element_kind(*lists: list[Any]) -> str:
    prev = None
    for items in lists:
        for v in items:
            k = _kind(v)
            if prev is None:
                prev = k
                if k == "slice":
                    raise _MergeError(_ERR_NO_LIST_OF_LISTS, 422)
            elif prev != k:
                raise _MergeError(f"list element types are not identical: {_go_fmt(list(lists))}")
    if prev is None:
        raise _MergeError("no elements in any of the given slices")
    return prev


def _merge_slice(
    original: list[Any], patch: list[Any], schema: dict[str, Any] | None, merge_key: str, is_delete_list: bool
) -> list[Any]:
    if not original and not patch:
        return original
    kind = _slice_element_kind(original, patch)
    if kind != "map":
        if is_delete_list:
            drop = {_scalar_key(v) for v in patch}
            return [v for v in original if _scalar_key(v) not in drop]
        merged = _dedupe_scalars(original + patch)
    else:
        if not merge_key:
            raise _MergeError(f"cannot merge lists without merge key for {_schema_name(schema)}")
        original, patch = _merge_slice_special(original, patch, merge_key)
        merged = _merge_slice_plain(original, patch, merge_key, schema)
    if not merge_key:
        patch_items, server_only = _partition_primitives(merged, patch)
    else:
        patch_items, server_only = _partition_maps(merged, patch, merge_key)
    return _normalize_element_order(patch_items, server_only, patch, original, merge_key, kind)


def _schema_name(schema: dict[str, Any] | None) -> str:
    if schema is None:
        return ""
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    return str(t) if t else "Struct"


def _dedupe_scalars(items: list[Any]) -> list[Any]:
    """deduplicateScalars (keeps upstream's swap-with-last order)."""
    s = list(items)
    length = len(s) - 1
    i = 0
    while i < length:
        j = i + 1
        while j <= length:
            if _eq(s[i], s[j]):
                s[j] = s[length]
                s = s[:length]
                length -= 1
                j -= 1
            j += 1
        i += 1
    return s


def _merge_slice_special(original: list[Any], patch: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    plain: list[Any] = []
    replace = False
    for v in patch:
        if not isinstance(v, dict):
            raise _bad_arg_type("map", v)
        if _DIRECTIVE not in v:
            plain.append(v)
            continue
        directive = v[_DIRECTIVE]
        if directive == _DELETE:
            if merge_key not in v:
                raise _no_merge_key(v, merge_key)
            value = v[merge_key]
            original = [
                o for o in original if not (isinstance(o, dict) and merge_key in o and _eq(o[merge_key], value))
            ]
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise _MergeError("merging lists cannot yet be specified in the patch")
        else:
            raise _MergeError(f"unknown patch type: {_go_fmt(directive)} in map: {_go_fmt(v)}")
    if replace:
        return plain, []
    return original, plain


def _find_by_key(items: list[Any], merge_key: str, value: Any) -> int:
    for i, v in enumerate(items):
        if not isinstance(v, dict):
            raise _MergeError(f"value for key {i} is not a map")
        if merge_key in v and _eq(v[merge_key], value):
            return i
    return -1


def _merge_slice_plain(
    original: list[Any], patch: list[Any], merge_key: str, schema: dict[str, Any] | None
) -> list[Any]:
    original = list(original)
    for v in patch:
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        idx = _find_by_key(original, merge_key, v[merge_key])
        if idx >= 0:
            original[idx] = _merge_map(original[idx], v, schema)
        else:
            original.append(v)
    return original


def _partition_primitives(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    in_patch = {_scalar_key(v) for v in by}
    patch_items = [v for v in items if _scalar_key(v) in in_patch]
    server_only = [v for v in items if _scalar_key(v) not in in_patch]
    return patch_items, server_only


def _partition_maps(items: list[Any], by: list[Any], merge_key: str) -> tuple[list[Any], list[Any]]:
    patch_items: list[Any] = []
    server_only: list[Any] = []
    for v in items:
        if not isinstance(v, dict):
            raise _bad_arg_type("map", v)
        if merge_key not in v:
            raise _no_merge_key(v, merge_key)
        if _find_by_key(by, merge_key, v[merge_key]) >= 0:
            patch_items.append(v)
        else:
            server_only.append(v)
    return patch_items, server_only


def _index(items: list[Any], value: Any, merge_key: str, kind: str) -> int:
    if kind == "map":
        target = value.get(merge_key) if isinstance(value, dict) else None
        for i, v in enumerate(items):
            if _eq(target, v.get(merge_key) if isinstance(v, dict) else None):
                return i
        return -1
    for i, v in enumerate(items):
        if _eq(value, v):
            return i
    return -1


def _normalize_slice_order(to_sort: list[Any], order: list[Any], merge_key: str, kind: str) -> list[Any]:
    to_delete: list[Any] = []
    if kind == "map":
        for lst in (to_sort, order):
            for item in lst:
                if not isinstance(item, dict):
                    raise _bad_arg_type("map", item)
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
        to_sort, to_delete = _extract_to_delete(to_sort)
    # sort.SliceStable by the position in `order`. Upstream's comparator answers "less" for any
    # pair with an item missing from `order`; every caller passes lists whose items are all in
    # `order` when the patch is well-formed, so a stable sort by position is the same result.
    # Items missing from `order` (malformed patches only) keep their slots here.
    known = [(i, v) for i, v in enumerate(to_sort) if _index(order, v, merge_key, kind) >= 0]
    known_sorted = sorted(known, key=lambda iv: _index(order, iv[1], merge_key, kind))
    out = list(to_sort)
    slots = [i for i, _ in known]
    for slot, (_, v) in zip(slots, known_sorted, strict=True):
        out[slot] = v
    return out + to_delete


def _normalize_element_order(
    patch_items: list[Any], server_only: list[Any], patch_order: list[Any], server_order: list[Any],
    merge_key: str, kind: str,
) -> list[Any]:
    patch_items = _normalize_slice_order(patch_items, patch_order, merge_key, kind)
    server_only = _normalize_slice_order(server_only, server_order, merge_key, kind)
    return _merge_sorted(server_only, patch_items, server_order, merge_key, kind)


def _merge_sorted(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str, kind: str) -> list[Any]:
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li = _index(server_order, left[i], merge_key, kind)
            ri = _index(server_order, right[j], merge_key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
