"""Custom resources' ``x-kubernetes-validations`` (CEL rules) and string ``format``s, checked as
the apiextensions-apiserver checks them on create and update.

Follows k8s.io/apiextensions-apiserver@v0.37.2 ``pkg/apiserver/schema/cel/validation.go``
(``Validator.validate``/``validateExpressions``: rules evaluated where they sit in the schema
with ``self`` the value there — the root's ``self`` carries ``apiVersion``, ``kind`` and
``metadata.name``/``generateName`` —, ``oldSelf`` the correlated old value on update (through
object properties, map values and ``x-kubernetes-list-type: map`` lists; a rule using
``oldSelf`` is skipped where there is none), ``fieldPath``, ``reason``, ``message`` /
``messageExpression`` / ``failed rule: <rule>``, the value omitted for objects and arrays;
errors of a value unchanged since the old object ratcheted away (CRDValidationRatcheting)),
``pkg/registry/customresource/strategy.go`` ``hasBlockingErr`` (rules are not run on an object
with type/required/enum/size errors) and ``pkg/apiserver/validation/formats.go`` with
kube-openapi's ``strfmt`` (the supported formats; ``<path> in body must be of type <format>:
"<value>"``).

CEL is evaluated by the ``common-expression-language`` package (``cel``, as the DRA selectors;
the CEL spec's standard functions and macros) with Kubernetes' CEL libraries (quantity, url,
regex, ip/cidr, lists, cel-go's strings/sets/lists extensions) from :mod:`.cel_library`; their
errors read as upstream's (``min called on empty list evaluating rule: <rule>``). Upstream
rejects such CRDs up front when a rule does not compile; the box reports compile errors on the
object (``rule compile error: ...``), and has no cost budget.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from kubesched.api.validation import (
    DUPLICATE,
    FORBIDDEN,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    FieldError,
)
from kubesched.apiserver.cel_library import FUNCTIONS, library_error_text

__all__ = ["BLOCKED_MESSAGE", "cel_errors", "format_errors", "has_blocking_error", "has_rules"]

#: field.TypeInvalid renders as Invalid value (crd.py reports its type errors so too)
TYPE_INVALID = INVALID
#: strategy.go hasBlockingErr's error (path and value nil)
BLOCKED_MESSAGE = ("some validation rules were not checked because the object was invalid; correct the existing "
                   "errors to complete validation")
_REASONS = {"FieldValueForbidden": FORBIDDEN, "FieldValueRequired": REQUIRED, "FieldValueDuplicate": DUPLICATE}


@dataclass(frozen=True)
class _OmittedValueError(FieldError):
    """``field.Invalid`` with ``field.OmitValueType{}``: ``<path>: Invalid value: <detail>``."""

    def body(self) -> str:
        return f"Invalid value: {self.detail}" if self.detail else "Invalid value"


def _m(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def has_blocking_error(errs: list[FieldError]) -> bool:
    """``hasBlockingErr``: an enum, required, too-long, too-many or type error stops the rules."""
    return any(e.type in (NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY)
               or (e.type == TYPE_INVALID and " in body must be of type " in e.detail) for e in errs)


# ---------------------------------------------------------------------------------------- CEL


def has_rules(s: Any) -> bool:
    """Whether a schema holds any ``x-kubernetes-validations`` rule (then a CEL validator exists)."""
    if isinstance(s, Mapping):
        return bool(s.get("x-kubernetes-validations")) or any(has_rules(v) for v in s.values())
    if isinstance(s, list):
        return any(has_rules(v) for v in s)
    return False


@lru_cache(maxsize=1024)
def _program(rule: str) -> tuple[Any, str | None]:
    """``(program, None)`` or ``(None, compile error)``, cached per rule text."""
    import cel

    try:
        return cel.compile(rule), None
    except Exception as e:  # noqa: BLE001 - the library raises several types
        return None, " ".join(str(e).split())


def _eval_error_text(err: BaseException) -> str:
    """cel-go's wording for the common runtime errors (``no such key``, ``division by zero``)."""
    if isinstance(err, KeyError):
        return f"no such key: {err.args[0] if err.args else ''}"
    if isinstance(err, ZeroDivisionError):
        return "division by zero"
    lib = library_error_text(str(err))
    if lib is not None:
        return lib
    return str(err) or type(err).__name__


def _to_cel(x: Any, s: Mapping[str, Any] | None) -> Any:
    """A JSON value as CEL sees it under its schema: ``number`` fields are doubles."""
    s = _m(s)
    if isinstance(x, dict):
        props, addl = _m(s.get("properties")), s.get("additionalProperties")
        return {k: _to_cel(v, props.get(k) if k in props else (addl if isinstance(addl, Mapping) else None))
                for k, v in x.items()}
    if isinstance(x, list):
        return [_to_cel(v, _m(s.get("items"))) for v in x]
    if s.get("type") == "number" and isinstance(x, int) and not isinstance(x, bool):
        return float(x)
    return x


def _run(prg: Any, variables: dict[str, Any]) -> Any:
    import cel

    return prg.execute(cel.Context(variables=variables, functions=FUNCTIONS))


def _uses_old_self(rule: str) -> bool:
    return re.search(r"\boldSelf\b", rule) is not None


def _rule_error_string(rule: Mapping[str, Any]) -> str:
    return str(rule.get("message") or "").strip() or str(rule.get("rule") or "").strip()


def _rules_errors(s: Mapping[str, Any], x: Any, old: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    stype = str(s.get("type") or "")
    name = path or "<nil>"
    activation: dict[str, Any] | None = None
    for rule in s.get("x-kubernetes-validations") or ():
        rule = _m(rule)
        text = str(rule.get("rule") or "")
        if not text.strip():
            continue
        uses_old = _uses_old_self(text)
        if uses_old and old is None:
            continue  # transition rules run only when there is a comparable old value
        prg, compile_err = _program(text)
        if prg is None:
            errs.append(FieldError(name, INVALID, stype, f"rule compile error: {compile_err}"))
            continue
        if activation is None:
            activation = {"self": _to_cel(x, s)}
        act = dict(activation)
        if uses_old:
            act["oldSelf"] = _to_cel(old, s)
        try:
            result = _run(prg, act)
        except Exception as e:  # noqa: BLE001 - the library raises several types
            errs.append(FieldError(name, INVALID, stype,
                                   f"{_eval_error_text(e)} evaluating rule: {_rule_error_string(rule)}"))
            continue
        if result is True:
            continue
        if not uses_old and old is not None and x == old:
            continue  # ratcheting: an unchanged value keeps passing (a warning upstream)
        where = path
        fp = str(rule.get("fieldPath") or "")
        if fp:
            where = path + (fp if fp.startswith("[") else "." + fp.lstrip(".")) if path else fp.lstrip(".")
        detail = ""
        if rule.get("messageExpression"):
            mprg, _ = _program(str(rule["messageExpression"]))
            if mprg is not None:
                try:
                    out = _run(mprg, activation)
                    if isinstance(out, str) and out.strip() and "\n" not in out:
                        detail = out
                except Exception:  # noqa: BLE001 - upstream logs it and falls back to message
                    pass
        if not detail:
            detail = str(rule.get("message") or "").strip() or f"failed rule: {text.strip()}"
        reason = _REASONS.get(str(rule.get("reason") or ""))
        if reason in (FORBIDDEN, REQUIRED):
            errs.append(FieldError(where or "<nil>", reason, "", detail))
        elif reason == DUPLICATE:
            errs.append(FieldError(where or "<nil>", DUPLICATE, x))
        elif stype in ("object", "array"):
            errs.append(_OmittedValueError(where or "<nil>", INVALID, "", detail))
        else:
            errs.append(FieldError(where or "<nil>", INVALID, x, detail))
    return errs


def _map_key(item: Any, keys: list[str]) -> tuple[Any, ...] | None:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(k)) for k in keys)


def cel_errors(schema: Mapping[str, Any], obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """The ``x-kubernetes-validations`` errors of a custom resource ``obj`` (``old``: the stored
    object on update, else None) under its version's ``openAPIV3Schema``."""
    root = dict(obj)
    md = _m(obj.get("metadata"))
    root["metadata"] = {k: md[k] for k in ("name", "generateName") if k in md}
    old_root = None
    if old is not None:
        old_root = dict(old)
        omd = _m(old.get("metadata"))
        old_root["metadata"] = {k: omd[k] for k in ("name", "generateName") if k in omd}
    return _walk(schema, root, old_root, "")


def _walk(s: Mapping[str, Any], x: Any, old: Any, path: str) -> list[FieldError]:
    if x is None or not s:
        return []
    errs: list[FieldError] = []
    if s.get("x-kubernetes-validations"):
        errs.extend(_rules_errors(s, x, old, path))
    for sub in s.get("allOf") or ():
        errs.extend(_walk(_m(sub), x, None, path))
    if isinstance(x, dict):
        props, addl = _m(s.get("properties")), s.get("additionalProperties")
        for k, v in x.items():
            if not path and k == "metadata":
                continue
            sub_s = props.get(k) if k in props else (addl if isinstance(addl, Mapping) else None)
            if sub_s:
                errs.extend(_walk(_m(sub_s), v, old.get(k) if isinstance(old, dict) else None, _child(path, k)))
    elif isinstance(x, list):
        items = _m(s.get("items"))
        olds: dict[tuple[Any, ...], Any] = {}
        keys = [str(k) for k in s.get("x-kubernetes-list-map-keys") or ()]
        if s.get("x-kubernetes-list-type") == "map" and keys and isinstance(old, list):
            olds = {k: o for o in old if (k := _map_key(o, keys)) is not None}
        for i, v in enumerate(x):
            k = _map_key(v, keys) if olds else None
            errs.extend(_walk(items, v, olds.get(k) if k is not None else None, f"{path}[{i}]"))
    return errs


# ------------------------------------------------------------------------------------- formats

_UUID = {
    "uuid": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid3": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid4": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "uuid5": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
}
_HOSTNAME = re.compile(r"^([^\W_]((-?[^\W_]{0,62})?)|([^\W_](([\w-]{0,61}[^\W_])?)(\.)){1,}([^\W\d_]){2,63})$")
_DURATION_GO = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$")
_DURATION_SCALA = re.compile(r"^(\d+)\s*(ns|nanos?|nanoseconds?|us|micros?|microseconds?|ms|millis?|milliseconds?|"
                             r"s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?)$")
_MAC = re.compile(r"^([0-9A-Fa-f]{2}([:-])){5}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{2}([:-])){7}[0-9A-Fa-f]{2}$|"
                  r"^([0-9A-Fa-f]{4}\.){2}[0-9A-Fa-f]{4}$|^([0-9A-Fa-f]{4}\.){3}[0-9A-Fa-f]{4}$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$")


def _ok_ip(v: str, version: int) -> bool:
    try:
        ipaddress.ip_address(v)
    except ValueError:
        return False
    return ("." in v) if version == 4 else (":" in v)


def _ok_datetime(v: str) -> bool:
    if not _DATETIME.match(v):
        return False
    try:
        datetime.fromisoformat(v.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def _ok_byte(v: str) -> bool:
    try:
        base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _ok_date(v: str) -> bool:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        return False
    try:
        date.fromisoformat(v)
    except ValueError:
        return False
    return True


def _ok_uri(v: str) -> bool:
    # net/url.ParseRequestURI: an absolute URI (scheme:...) or an absolute path
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:\S*$", v) or (v.startswith("/") and " " not in v))


def _ok_cidr(v: str) -> bool:
    if "/" not in v:
        return False
    try:
        ipaddress.ip_network(v, strict=False)
    except ValueError:
        return False
    return True


_CHECKS: dict[str, Any] = {
    **{k: re.compile(p).match for k, p in _UUID.items()},
    "bsonobjectid": lambda v: re.fullmatch(r"[0-9a-fA-F]{24}", v) is not None,
    "uri": _ok_uri,
    "email": lambda v: re.fullmatch(r"[^@\s<>]+@[^@\s<>]+", v) is not None,
    "hostname": lambda v: len(v) <= 255 and _HOSTNAME.match(v) is not None,
    "ipv4": lambda v: _ok_ip(v, 4),
    "ipv6": lambda v: _ok_ip(v, 6),
    "cidr": _ok_cidr,
    "mac": lambda v: _MAC.match(v) is not None,
    "hexcolor": lambda v: re.fullmatch(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})", v) is not None,
    "byte": _ok_byte,
    "password": lambda v: True,
    "date": _ok_date,
    "duration": lambda v: _DURATION_GO.match(v) is not None or _DURATION_SCALA.match(v) is not None,
    "datetime": _ok_datetime,
    "k8sshortname": lambda v: len(v) <= 63 and _DNS_LABEL.match(v) is not None,
    "k8slongname": lambda v: len(v) <= 253 and _DNS_SUBDOMAIN.match(v) is not None,
}


def format_errors(x: Any, s: Mapping[str, Any], path: str = "") -> list[FieldError]:
    """kube-openapi's ``format`` checks of the strings of ``x`` under schema ``s`` (unsupported
    formats are stripped, as ``StripUnsupportedFormatsPostProcessorForVersion``)."""
    errs: list[FieldError] = []
    fmt = s.get("format")
    if isinstance(x, str) and isinstance(fmt, str) and s.get("type") in (None, "string"):
        check = _CHECKS.get(fmt.replace("-", ""))
        if check is not None and not check(x):
            name = path or "."
            errs.append(FieldError(path, TYPE_INVALID, x, f'{name} in body must be of type {fmt}: "{x}"'))
    elif isinstance(x, dict):
        props, addl = _m(s.get("properties")), s.get("additionalProperties")
        for k, v in x.items():
            sub = props.get(k) if k in props else (addl if isinstance(addl, Mapping) else None)
            if sub:
                errs.extend(format_errors(v, _m(sub), _child(path, k)))
    elif isinstance(x, list) and isinstance(s.get("items"), Mapping):
        for i, v in enumerate(x):
            errs.extend(format_errors(v, _m(s.get("items")), f"{path}[{i}]"))
    return errs
