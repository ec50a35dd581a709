"""Label selectors: ``k8s.io/apimachinery/pkg/labels`` and ``metav1.LabelSelectorAsSelector``.

A :class:`Selector` is an immutable, hashable conjunction of requirements
``(key, op, frozenset(values))`` sorted by key, where ``op`` is one of upstream's
``selection.Operator`` strings: ``"="``, ``"=="``, ``"!="``, ``"in"``, ``"notin"``,
``"exists"``, ``"!"`` (does not exist), ``"gt"``, ``"lt"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from kubesched.errors import SelectorError

if TYPE_CHECKING:
    from kubesched.api.objects import LabelSelector

__all__ = [
    "DOES_NOT_EXIST",
    "DOUBLE_EQUALS",
    "EQUALS",
    "EXISTS",
    "GREATER_THAN",
    "IN",
    "LESS_THAN",
    "NOT_EQUALS",
    "NOT_IN",
    "Requirement",
    "Selector",
    "make_requirement",
    "parse_go_int64",
    "requirement_matches",
    "selector_from_label_selector",
    "selector_from_set",
]

EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "=", "==", "!="
IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "in", "notin", "exists", "!"
GREATER_THAN, LESS_THAN = "gt", "lt"

#: (key, operator, values)
Requirement = tuple[str, str, frozenset[str]]

_NAME = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(?:\.{_DNS1123_LABEL})*")
_VALUE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def parse_go_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: the integer, or None (no spaces, no ``_``, int64 range)."""
    if not _GO_INT.fullmatch(s):
        return None
    v = int(s)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _validate_key(key: str) -> None:
    """Qualified-name check of upstream ``validateLabelKey`` (``IsQualifiedName``)."""
    prefix, sep, name = key.rpartition("/")
    problems = []
    if sep and not prefix:
        problems.append("prefix part must be non-empty")
    elif sep and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        problems.append("prefix part must be a lowercase RFC 1123 subdomain")
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > 63:
        problems.append("name part must be no more than 63 characters")
    elif not _NAME.fullmatch(name):
        problems.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    if problems:
        raise SelectorError(f"invalid label key {key!r}: " + "; ".join(problems))


def _validate_value(key: str, v: str) -> None:
    if len(v) > 63 or not _VALUE.fullmatch(v):
        raise SelectorError(
            f"invalid label value {v!r} for key {key!r}: must be 63 characters or less and be empty "
            "or consist of alphanumeric characters, '-', '_' or '.', starting and ending with an "
            "alphanumeric character"
        )


def make_requirement(key: str, op: str, values: Iterable[str]) -> Requirement:
    """Validated requirement, per upstream ``labels.NewRequirement``.

    Raises :class:`SelectorError`: invalid key; In/NotIn with no values; =/==/!= without
    exactly one value; Exists/DoesNotExist with values; Gt/Lt without exactly one int64 value;
    an invalid label value; an unknown operator.
    """
    vals = list(values)
    _validate_key(key)
    if op in (IN, NOT_IN):
        if not vals:
            raise SelectorError(f"key {key!r}: for 'in', 'notin' operators, values set can't be empty")
    elif op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            raise SelectorError(f"key {key!r}: exact-match compatibility requires one single value")
    elif op in (EXISTS, DOES_NOT_EXIST):
        if vals:
            raise SelectorError(f"key {key!r}: values set must be empty for exists and does not exist")
    elif op in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            raise SelectorError(f"key {key!r}: for 'Gt', 'Lt' operators, exactly one value is required")
        if parse_go_int64(vals[0]) is None:
            raise SelectorError(f"key {key!r}: for 'Gt', 'Lt' operators, the value must be an integer")
    else:
        raise SelectorError(f"operator {op!r} is not recognized")
    for v in vals:
        _validate_value(key, v)
    return (key, op, frozenset(vals))


def requirement_matches(req: Requirement, labels: Mapping[str, str]) -> bool:
    """Upstream ``Requirement.Matches``: NotIn/!=/DoesNotExist match an absent key; Gt/Lt need an integer label."""
    key, op, values = req
    if op in (IN, EQUALS, DOUBLE_EQUALS):
        v = labels.get(key)
        return v is not None and v in values
    if op in (NOT_IN, NOT_EQUALS):
        v = labels.get(key)
        return v is None or v not in values
    if op == EXISTS:
        return key in labels
    if op == DOES_NOT_EXIST:
        return key not in labels
    if op in (GREATER_THAN, LESS_THAN):
        v = labels.get(key)
        if v is None or len(values) != 1:
            return False
        have = parse_go_int64(v)
        want = parse_go_int64(next(iter(values)))
        if have is None or want is None:
            return False
        return have > want if op == GREATER_THAN else have < want
    return False


class Selector:
    """An immutable label selector (upstream ``labels.Selector``).

    ``Selector.everything()`` has no requirements and matches all label sets;
    ``Selector.nothing()`` matches none. Hashable, so usable as a cache key.
    """

    __slots__ = ("_requirements", "_nothing", "_hash")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        reqs = tuple(sorted(requirements, key=lambda r: r[0]))  # stable: ties keep input order
        self._requirements: tuple[Requirement, ...] = reqs
        self._nothing = nothing
        self._hash = hash((reqs, nothing))

    @classmethod
    def everything(cls) -> Selector:
        return _EVERYTHING

    @classmethod
    def nothing(cls) -> Selector:
        return _NOTHING

    @property
    def requirements(self) -> tuple[Requirement, ...]:
        """Requirements ``(key, op, frozenset(values))``, sorted by key."""
        return self._requirements

    @property
    def is_empty(self) -> bool:
        """True for a selector with no requirements (matches everything), as upstream ``Empty()``."""
        return not self._nothing and not self._requirements

    @property
    def is_nothing(self) -> bool:
        return self._nothing

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self._nothing:
            return False
        for req in self._requirements:
            if not requirement_matches(req, labels):
                return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Selector):
            return NotImplemented
        return self._nothing == other._nothing and self._requirements == other._requirements

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        if self._nothing:
            return "<nothing>"
        parts = []
        for key, op, values in self._requirements:
            vals = sorted(values)
            if op == EXISTS:
                parts.append(key)
            elif op == DOES_NOT_EXIST:
                parts.append(f"!{key}")
            elif op in (IN, NOT_IN):
                parts.append(f"{key} {op} ({','.join(vals)})")
            elif op in (GREATER_THAN, LESS_THAN):
                parts.append(f"{key}{'>' if op == GREATER_THAN else '<'}{vals[0]}")
            else:
                parts.append(f"{key}{op}{vals[0]}")
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"Selector({str(self)!r})"


_EVERYTHING = Selector()
_NOTHING = Selector(nothing=True)

_LABEL_SELECTOR_OPS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def selector_from_label_selector(sel: LabelSelector | None) -> Selector:
    """Convert a ``metav1.LabelSelector`` (upstream ``metav1.LabelSelectorAsSelector``).

    ``None`` → :meth:`Selector.nothing`; no matchLabels and no matchExpressions →
    :meth:`Selector.everything`. matchLabels become ``=`` requirements; matchExpressions
    accept In, NotIn, Exists, DoesNotExist. Raises :class:`SelectorError` for an unknown
    operator (``"Foo" is not a valid label selector operator``) or invalid key/values.
    """
    if sel is None:
        return _NOTHING
    if not sel.match_labels and not sel.match_expressions:
        return _EVERYTHING
    reqs = [make_requirement(k, EQUALS, (v,)) for k, v in sel.match_labels.items()]
    for expr in sel.match_expressions:
        op = _LABEL_SELECTOR_OPS.get(expr.operator)
        if op is None:
            raise SelectorError(f'"{expr.operator}" is not a valid label selector operator')
        reqs.append(make_requirement(expr.key, op, expr.values))
    return Selector(reqs)


def selector_from_set(d: Mapping[str, str] | None) -> Selector:
    """A selector matching exactly the label set ``d`` (upstream ``labels.SelectorFromSet``).

    No validation (as upstream). An empty or ``None`` set gives :meth:`Selector.everything`;
    callers for which an empty selector must select nothing (e.g. topology-spread system
    defaults from a Service with an empty selector) must check that themselves.
    """
    if not d:
        return _EVERYTHING
    return Selector((k, EQUALS, frozenset((v,))) for k, v in d.items())
