"""Parsing the ``labelSelector`` and ``fieldSelector`` query parameters.

Label selectors follow ``k8s.io/apimachinery/pkg/labels/selector.go`` ``Parse`` (``a=b``,
``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``, ``a>1``, ``a<1``; commas
inside parentheses belong to the value set) and build :class:`kubesched.api.labels.Selector`.
Field selectors follow ``pkg/fields/selector.go`` ``ParseSelector`` (``f=v``, ``f==v``,
``f!=v``, backslash escapes ``\\,`` ``\\=`` ``\\\\``). Both raise :class:`SelectorParseError`
with upstream's wording; the server turns it into ``400 BadRequest``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kubesched.api.labels import (
    DOES_NOT_EXIST,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    Selector,
    make_requirement,
)
from kubesched.errors import SelectorError

__all__ = ["FieldSelector", "SelectorParseError", "parse_field_selector", "parse_label_selector"]


class SelectorParseError(ValueError):
    """An unparsable selector; ``str()`` is the message for the 400 Status."""


def _split_top(s: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


_SET_RE = re.compile(r"^\s*(\S+)\s+(in|notin)\s*\((.*)\)\s*$")
_OP_RE = re.compile(r"^\s*([^=!<>\s]+)\s*(==|=|!=|>|<)\s*(.*?)\s*$")


def parse_label_selector(s: str) -> Selector:
    """Parse a label selector string; "" selects everything."""
    s = s.strip()
    if not s:
        return Selector.everything()
    reqs = []
    try:
        for part in _split_top(s):
            p = part.strip()
            if not p:
                raise SelectorParseError(f"unable to parse requirement: found '', expected: identifier in {s!r}")
            m = _SET_RE.match(p)
            if m:
                key, op, vals = m.group(1), m.group(2), [v.strip() for v in m.group(3).split(",")]
                reqs.append(make_requirement(key, IN if op == "in" else NOT_IN, [v for v in vals]))
                continue
            if p.startswith("!"):
                reqs.append(make_requirement(p[1:].strip(), DOES_NOT_EXIST, ()))
                continue
            m = _OP_RE.match(p)
            if m:
                key, op, val = m.group(1), m.group(2), m.group(3)
                kop = {"=": EQUALS, "==": EQUALS, "!=": NOT_EQUALS, ">": GREATER_THAN, "<": LESS_THAN}[op]
                reqs.append(make_requirement(key, kop, (val,)))
                continue
            if re.fullmatch(r"[^\s=!<>(),]+", p):
                reqs.append(make_requirement(p, EXISTS, ()))
                continue
            raise SelectorParseError(f"unable to parse requirement: {p!r}")
    except SelectorError as e:
        raise SelectorParseError(str(e)) from e
    return Selector(reqs)


class FieldSelector:
    """A conjunction of ``(field, op, value)`` with op ``=`` or ``!=``."""

    __slots__ = ("terms",)

    def __init__(self, terms: list[tuple[str, str, str]]) -> None:
        self.terms = terms

    @property
    def empty(self) -> bool:
        return not self.terms

    def matches(self, fields: Mapping[str, str]) -> bool:
        for f, op, v in self.terms:
            have = fields.get(f, "")
            if (have == v) != (op == "="):
                return False
        return True

    def names(self) -> list[str]:
        return [t[0] for t in self.terms]

    def value_of(self, name: str) -> str | None:
        """The value required by an ``=`` term on ``name``, if any (for exact-key lookups)."""
        for f, op, v in self.terms:
            if f == name and op == "=":
                return v
        return None


def _split_unescaped(s: str, sep: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            cur.append(s[i : i + 2])
            i += 2
            continue
        if ch == sep:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    out.append("".join(cur))
    return out


def _unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            if s[i + 1] not in "\\,=":
                raise SelectorParseError(f"invalid field selector: invalid escape sequence: {s[i:i+2]}")
            out.append(s[i + 1])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def parse_field_selector(s: str) -> FieldSelector:
    """Parse a field selector string; "" selects everything."""
    terms: list[tuple[str, str, str]] = []
    if not s.strip():
        return FieldSelector(terms)
    for part in _split_unescaped(s, ","):
        if not part:
            continue
        for op, kop in (("!=", "!="), ("==", "="), ("=", "=")):
            idx = _find_unescaped(part, op)
            if idx >= 0:
                terms.append((part[:idx].strip(), kop, _unescape(part[idx + len(op):])))
                break
        else:
            raise SelectorParseError(f"invalid selector: '{s}'; can't understand '{part}'")
    return FieldSelector(terms)


def _find_unescaped(s: str, op: str) -> int:
    i = 0
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s.startswith(op, i):
            return i
        i += 1
    return -1
