"""Upstream-style field errors and name checks, for config validation.

Ports the message formats of ``staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go``
(``field.Error``, ``ErrorBody``) and the name rules of
``staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go`` (``IsQualifiedName``,
``IsDNS1123Subdomain``), plus ``IsExtendedResourceName`` from ``pkg/apis/core/v1/helper``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import msgspec

from kubesched.api.validation import is_qualified_name

__all__ = [
    "FieldError",
    "aggregate_message",
    "duplicate",
    "forbidden",
    "invalid",
    "is_extended_resource_name",
    "is_qualified_name",
    "label_name_errors",
    "not_supported",
    "required",
]

_OMIT = object()


def _go_value(value: Any) -> str:
    """Render a bad value like Go's ``ErrorBody``: %v for numbers/bools, %q for strings."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(msgspec.to_builtins(value), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, msgspec.EncodeError):
        return repr(value)


@dataclass(frozen=True)
class FieldError:
    """One validation error: ``<field>: <Type>[: <value>][: <detail>]`` as upstream prints it."""

    type: str
    field: str
    value: Any = _OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field path (upstream ``ErrorBody``)."""
        s = self.type
        if self.value is not _OMIT and self.type not in ("Required value", "Forbidden"):
            s = f"{s}: {_go_value(self.value)}"
        if self.detail:
            s = f"{s}: {self.detail}"
        return s

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}" if self.field else self.body()


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("Invalid value", path, value, detail)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError("Required value", path, _OMIT, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError("Forbidden", path, _OMIT, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError("Duplicate value", path, value)


def not_supported(path: str, value: Any, supported: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(json.dumps(v) for v in supported) if supported else ""
    return FieldError("Unsupported value", path, value, detail)


def aggregate_message(errors: list[FieldError]) -> str:
    """Upstream ``utilerrors.Aggregate`` text: the error itself, or ``[e1, e2, ...]``."""
    if len(errors) == 1:
        return str(errors[0])
    return "[" + ", ".join(str(e) for e in errors) + "]"


# --------------------------------------------------------------------------- names

# upstream IsQualifiedName: one implementation, shared with the API server's validation


def label_name_errors(path: str, value: str) -> list[FieldError]:
    """``metav1validation.ValidateLabelName``: one Invalid error per problem."""
    return [invalid(path, value, m) for m in is_qualified_name(value)]


def is_extended_resource_name(name: str) -> bool:
    """An extended resource: prefixed, not in ``kubernetes.io``, not ``requests.*``, quota-name valid."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)
