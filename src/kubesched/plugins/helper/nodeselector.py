"""Vectorised node-selector matching over the columnar :class:`NodeTable`.

The batch counterpart of :mod:`kubesched.api.nodeselector` (upstream
``component-helpers/scheduling/corev1/nodeaffinity``): every function takes the table and
``rows`` (``int64[M]`` of table rows) and answers for all of them at once, with the same
semantics as the per-node matchers, which are the reference the tests compare against:

* label requirements run on the dictionary-encoded label columns: ``In``/``=``/``==`` and
  ``NotIn``/``!=`` compare value ids, ``Exists``/``DoesNotExist`` test for ``-1`` (absent);
  ``NotIn``/``!=``/``DoesNotExist`` match a node without the label; ``Gt``/``Lt`` compare the
  label parsed as a Go ``int64`` (absent or not an integer → no match);
* ``matchFields`` compare ``metadata.name`` (any other field reads as ``""``);
* the requirements of a term are ANDed, the terms of a selector ORed; a term with no
  requirements, or with a parse error, matches nothing.

Gt/Lt parse label values exactly as upstream's ``strconv.ParseInt`` (int64; no ``"1_0"``, no
spaces), once per label key (cached per table, extended as the key's value dictionary grows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kubesched.api import labels as _l
from kubesched.api.labels import Requirement, parse_go_int64

if TYPE_CHECKING:  # pragma: no cover
    from kubesched.api.nodeselector import (
        FieldRequirement,
        NodeSelectorMatcher,
        ParsedTerm,
        PreferredSchedulingTerms,
        RequiredNodeAffinity,
    )
    from kubesched.framework.node_table import NodeTable

__all__ = [
    "field_requirement_mask",
    "label_selector_mask",
    "node_selector_mask",
    "preferred_score",
    "required_affinity_mask",
    "requirement_mask",
    "term_mask",
]

_EQ_OPS = frozenset({_l.IN, _l.EQUALS, _l.DOUBLE_EQUALS})
_NEQ_OPS = frozenset({_l.NOT_IN, _l.NOT_EQUALS})
_ABSENT_MATCHES = frozenset({_l.NOT_IN, _l.NOT_EQUALS, _l.DOES_NOT_EXIST})

# per table (table.derived): label key → (number of values parsed, int64[V+1] values, bool[V+1]
# valid); the extra trailing slot stands for "absent" (value id -1) and is never valid.
_INTS_KEY = (__name__, "label_ints")


def _new_ints(table: NodeTable) -> dict[str, tuple[int, np.ndarray, np.ndarray]]:
    return {}


def _label_ints(table: NodeTable, key: str) -> tuple[np.ndarray, np.ndarray]:
    values = table.label_values[key]
    per_table = table.derived(_INTS_KEY, _new_ints)
    cached = per_table.get(key)
    n = len(values)
    if cached is not None and cached[0] == n:
        return cached[1], cached[2]
    start = 0 if cached is None else cached[0]
    ints = np.zeros(n + 1, np.int64)
    valid = np.zeros(n + 1, bool)
    if cached is not None:
        ints[:start] = cached[1][:start]
        valid[:start] = cached[2][:start]
    for i in range(start, n):
        v = parse_go_int64(values[i])
        if v is not None:
            ints[i] = v
            valid[i] = True
    per_table[key] = (n, ints, valid)
    return ints, valid


def requirement_mask(table: NodeTable, rows: np.ndarray, req: Requirement) -> np.ndarray:
    """``bool[M]``: which ``rows`` satisfy one label requirement ``(key, op, values)``.

    ``op`` is a :mod:`kubesched.api.labels` operator (``in``, ``notin``, ``exists``, ``!``,
    ``gt``, ``lt``, ``=``, ``==``, ``!=``), as produced by ``make_requirement``.
    """
    key, op, values = req
    m = len(rows)
    col = table.label_column(key)
    if col is None:
        return np.full(m, op in _ABSENT_MATCHES)
    ids = col[rows]
    if op in _EQ_OPS or op in _NEQ_OPS:
        vids = [v for v in (table.label_value_id(key, s) for s in values) if v >= 0]
        if not vids:
            hit = np.zeros(m, bool)
        elif len(vids) <= 4:
            hit = ids == vids[0]
            for v in vids[1:]:
                hit |= ids == v
        else:
            # lookup table over the key's value ids; the extra last slot is "absent" (id -1)
            lut = np.zeros(len(table.label_values[key]) + 1, bool)
            lut[vids] = True
            hit = lut[ids]
        return hit if op in _EQ_OPS else ~hit
    if op == _l.EXISTS:
        return ids >= 0
    if op == _l.DOES_NOT_EXIST:
        return ids < 0
    if op == _l.GREATER_THAN or op == _l.LESS_THAN:
        if len(values) != 1:
            return np.zeros(m, bool)
        want = parse_go_int64(next(iter(values)))
        if want is None:
            return np.zeros(m, bool)
        ints, valid = _label_ints(table, key)
        # per value id (last slot = absent, never valid), then one gather over the rows
        lut = valid & (ints > want) if op == _l.GREATER_THAN else valid & (ints < want)
        return lut[ids]
    return np.zeros(m, bool)


def field_requirement_mask(table: NodeTable, rows: np.ndarray, req: FieldRequirement) -> np.ndarray:
    """``bool[M]``: one ``matchFields`` requirement ``(field, equal, value)``; only
    ``metadata.name`` is a known field (others read as ``""``)."""
    key, equal, value = req
    m = len(rows)
    if key != "metadata.name":
        return np.full(m, (value == "") == equal)
    row = table.row_of.get(value)
    hit = np.zeros(m, bool) if row is None else rows == row
    return hit if equal else ~hit


def term_mask(table: NodeTable, rows: np.ndarray, term: ParsedTerm) -> np.ndarray:
    """``bool[M]``: one parsed node-selector term (its requirements ANDed)."""
    m = len(rows)
    labels_ = term.label_requirements
    fields = term.field_requirements
    if term.errors or (labels_ is None and fields is None):
        return np.zeros(m, bool)
    out = np.ones(m, bool)
    for req in labels_ or ():
        out &= requirement_mask(table, rows, req)
        if not out.any():
            return out
    for freq in fields or ():
        out &= field_requirement_mask(table, rows, freq)
    return out


def node_selector_mask(table: NodeTable, rows: np.ndarray, matcher: NodeSelectorMatcher) -> np.ndarray:
    """``bool[M]``: a parsed ``v1.NodeSelector`` (terms ORed; no terms → nothing matches)."""
    m = len(rows)
    terms = matcher.terms
    if len(terms) == 1:
        return term_mask(table, rows, terms[0])
    out = np.zeros(m, bool)
    for term in terms:
        if out.all():
            break
        rest = ~out
        sub = rows[rest]
        out[rest] = term_mask(table, sub, term)
    return out


def label_selector_mask(table: NodeTable, rows: np.ndarray, selector: _l.Selector) -> np.ndarray:
    """``bool[M]``: a :class:`~kubesched.api.labels.Selector` (requirements ANDed)."""
    if selector.is_nothing:
        return np.zeros(len(rows), bool)
    out = np.ones(len(rows), bool)
    for req in selector.requirements:
        out &= requirement_mask(table, rows, req)
    return out


def required_affinity_mask(table: NodeTable, rows: np.ndarray, required: RequiredNodeAffinity) -> np.ndarray:
    """``bool[M]``: the pod's ``spec.nodeSelector`` AND its required node-affinity terms
    (upstream ``RequiredNodeAffinity.Match``, parse errors ignored → the term never matches)."""
    if required.label_selector is not None:
        out = label_selector_mask(table, rows, required.label_selector)
    else:
        out = np.ones(len(rows), bool)
    ns = required.node_selector
    if ns is not None:
        if out.all():
            out = node_selector_mask(table, rows, ns)
        elif out.any():
            out[out] = node_selector_mask(table, rows[out], ns)
    return out


def preferred_score(table: NodeTable, rows: np.ndarray, terms: PreferredSchedulingTerms | None) -> np.ndarray:
    """``int64[M]``: Σ weights of the preferred terms each row matches."""
    out = np.zeros(len(rows), np.int64)
    if terms is None:
        return out
    for parsed, weight in terms.terms:
        out += term_mask(table, rows, parsed) * np.int64(weight)
    return out
